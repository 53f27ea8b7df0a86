#!/usr/bin/env bash
# A share of a plain folder (nothing mounted at it) whose parent file
# system is remounted right after the add, before a round recorded it (a
# round starts at least 50 ms after a change): its path is on another
# device than when it was added, with nothing mounted at it, as for a
# dataset unmounted in that window (unmounted_before_recorded_not_served).
# But when it was added no file system was mounted at it: the folder is
# what was shared, on its parent's file system mounted anew. MNT and check
# serve it at once, and the round records the new file system as its own.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || fail "needs root (mounts a tmpfs)"
read -r home <<<"$(make_dirs home)"
vol=$home/vol
hold=$SM_DIR/hold
mkdir -p "$vol" "$hold"
mount_vol() { mount -t tmpfs -o size=1m "sm_vol$1" "$vol" || fail "mount tmpfs"; }
mount_vol 0
on_exit "umount '$vol' 2>/dev/null; umount '$vol' 2>/dev/null; umount '$hold' 2>/dev/null"
start_daemon
sc create -o rw g 2>/dev/null || fail "create"
sc add-share -s "$home" g 2>/dev/null || fail "add-share $home"
wait_recorded "$home"

# Added, then its parent file system unmounted and another mounted in its
# place (the folder made again in it). A round that came before the
# remount recorded the first one, and the share is then refused as "recorded
# on" it: the scenario did not happen (a slow machine), again with a new
# folder. A round after the remount, or none yet, is the scenario: without
# a record, the add's device against the path's now.
for attempt in 1 2 3 4 5; do
  carol=$vol/carol$attempt
  mkdir "$carol" || fail "mkdir $carol"
  dev_before=$(stat -c %d "$carol")
  # The remount, made the moment the add is applied (each mount change
  # wakes a round 20 ms later: five `mount` and `umount` processes took
  # longer than that on a loaded machine). The old tmpfs stays alive
  # (bound at $hold) while the new one is mounted, so that the new one
  # gets another device number (a tmpfs takes the lowest number free).
  sc_then_mount "add-share -s \"$carol\"" \
    bind "$vol" "$hold" umount "$vol" tmpfs "sm_vol$attempt" "$vol" \
    mkdir "$carol" umount "$hold" -- add-share -s "$carol" g
  [[ $(stat -c %d "$carol") != "$dev_before" ]] ||
    fail "the remount kept device number $dev_before"
  out=$(sc check 127.0.0.1 "$carol") && break
  [[ $out == *"not served: recorded on "* ]] ||
    fail "check refused $carol after the remount: $out"
  echo "note: a round recorded $carol before the remount; again" >&2
done
[[ $out != *"not served"* ]] || fail "a round came before the remount in 5 attempts"
assert_contains "$(probe mnt "$carol")" "MNT3_OK" "MNT after the remount"

# The round records the file system the folder is on now.
wait_recorded "$carol"
assert_eq "$vol" "$(recorded_mount "$carol")" "recorded place"
assert_contains "$(probe mnt "$carol")" "MNT3_OK" "MNT after the round"
sc check 127.0.0.1 "$carol" >/dev/null || fail "check refused $carol after the round"
# Never refused for the remount. A round that came while the folder was
# away (between the umount and the mkdir) rightly said it did not exist,
# and served it again once it was back (above).
refused=$(grep -F "$carol: not served" "$SM_LOG" |
  grep -vF "$carol: not served: the folder does not exist" || true)
[[ -z $refused ]] || fail "the log refuses $carol: $refused"
echo ok
