#!/usr/bin/env bash
# A share of a plain folder (nothing mounted at it) whose parent file
# system is remounted right after the add, before a round recorded it (a
# round starts at least 50 ms after a change): its path is on another
# device than when it was added, with nothing mounted at it, as for a
# dataset unmounted in that window (unmounted_before_recorded_not_served).
# But when it was added no file system was mounted at it: the folder is
# what was shared, on its parent's file system mounted anew. MNT and check
# serve it at once, and the round records the new file system as its own.
source "$(dirname "$0")/lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || fail "needs root (mounts a tmpfs)"
read -r home <<<"$(make_dirs home)"
vol=$home/vol
hold=$SM_DIR/hold
mkdir -p "$vol" "$hold"
# The same source each time, as a dataset remounted: had a round recorded
# the first mount, the second would be served as the same file system.
mount_vol() { mount -t tmpfs -o size=1m sm_vol "$vol" || fail "mount tmpfs"; }
mount_vol
on_exit "umount '$vol' 2>/dev/null; umount '$vol' 2>/dev/null; umount '$hold' 2>/dev/null"
start_daemon
sc create -o rw g 2>/dev/null || fail "create"
sc add-share -s "$home" g 2>/dev/null || fail "add-share $home"
wait_recorded "$home"

# Added, then its parent file system unmounted and mounted again (the
# folder made again in it), all within 45 ms of starting the add: no
# round came between (one starts 50 ms after a change at the earliest).
# On a machine too slow for that, again with a new folder.
now_us() { echo "${EPOCHREALTIME/./}"; }
for attempt in 1 2 3 4 5; do
  carol=$vol/carol$attempt
  mkdir "$carol" || fail "mkdir $carol"
  dev_before=$(stat -c %d "$carol")
  t0=$(now_us)
  sc add-share -s "$carol" g 2>/dev/null || fail "add-share $carol"
  umount "$vol" || fail "umount"
  # A tmpfs takes the lowest free device number: another one takes the
  # number just freed, so that the remount gets a new one, as a real
  # remount may.
  mount -t tmpfs -o size=1m sm_hold "$hold" || fail "mount the holder"
  mount_vol
  umount "$hold" || fail "umount the holder"
  mkdir "$carol" || fail "mkdir $carol again"
  [[ $(stat -c %d "$carol") != "$dev_before" ]] ||
    fail "the remount kept device number $dev_before"
  took=$(($(now_us) - t0))
  ((took < 45000)) && break
  echo "note: add and remount took $((took / 1000)) ms; again" >&2
done
((took < 45000)) || fail "add and remount took 45 ms or more in 5 attempts"

out=$(sc check 127.0.0.1 "$carol") || fail "check refused $carol at once: $out"
assert_not_contains "$out" "not served" "check at once"
assert_contains "$(probe mnt "$carol")" "MNT3_OK" "MNT at once"

# The round records the file system the folder is on now.
wait_recorded "$carol"
assert_eq "$vol" "$(recorded_mount "$carol")" "recorded place"
assert_contains "$(probe mnt "$carol")" "MNT3_OK" "MNT after the round"
sc check 127.0.0.1 "$carol" >/dev/null || fail "check refused $carol after the round"
assert_not_contains "$(cat "$SM_LOG")" "$carol: not served" "the log"
echo ok
