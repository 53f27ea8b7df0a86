#!/usr/bin/env bash
# A dataset unmounted right after its share was added, before a round
# recorded its file system (a round starts at least 50 ms after a change):
# its path is now the parent's empty mountpoint folder, on another device
# than when the share was added and with nothing mounted at it. MNT and
# check refuse it at once, the round neither serves it nor records the
# parent's file system as its own, and once a file system is mounted at
# the path again it is served and that one recorded, with no admin step.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || fail "needs root (mounts a tmpfs)"
read -r home <<<"$(make_dirs home)"
start_daemon
sc create -o rw g 2>/dev/null || fail "create"
sc add-share -s "$home" g 2>/dev/null || fail "add-share $home"
wait_recorded "$home"

# Added, then unmounted with no round between: nothing recorded yet. A
# round starts at least 50 ms after the add; if one came first anyway (a
# very slow machine), the scenario did not happen: again with a new path.
for attempt in 1 2 3; do
  alice=$home/alice$attempt
  mkdir -p "$alice"
  mount -t tmpfs -o size=1m "sm_alice_early$attempt" "$alice" || fail "mount tmpfs"
  on_exit "umount '$alice' 2>/dev/null"
  sc_then_mount "add-share -s \"$alice\"" umount "$alice" -- \
    add-share -s "$alice" g
  rec=$(recorded_mount "$alice")
  [[ $rec == "$alice" ]] || break
  echo "note: a round recorded $alice before its unmount; again" >&2
done
[[ $rec != "$alice" ]] || fail "a round came before the unmount in 3 attempts"
mount_alice() { mount -t tmpfs -o size=1m sm_alice_again "$alice" || fail "mount tmpfs"; }
[[ -z $rec ]] || fail "the parent's file system ($rec) was recorded for $alice"
reason="the folder is on another file system than when the share was added, and none is mounted at it"
out=$(sc check 127.0.0.1 "$alice") && fail "check exited 0 at once after the unmount"
assert_contains "$out" "$alice: not served: $reason" "check at once"
assert_contains "$(probe mnt "$alice")" "MNT3ERR_ACCES" "MNT at once"
assert_contains "$(probe mnt "$home")" "MNT3_OK" "MNT of the parent share"

# The round: still refused, the log says why, nothing recorded for it.
for ((i = 0; i < 100; i++)); do
  grep -qF "$alice: not served: $reason" "$SM_LOG" && break
  sleep 0.05
done
assert_contains "$(cat "$SM_LOG")" "$alice: not served: $reason" "the round's log line"
assert_contains "$(probe mnt "$alice")" "MNT3ERR_ACCES" "MNT after the round"
out=$(sc check 127.0.0.1 "$alice") && fail "check exited 0 after the round"
assert_contains "$out" "$reason" "check after the round"
assert_not_contains "$(sc share)" "$alice" "sharectl share after the round"
assert_eq "" "$(recorded_mount "$alice")" "nothing recorded for $alice"

# Mounted again (a new tmpfs: another device number): served, recorded.
mount_alice
wait_check "$alice" 0
assert_contains "$(probe mnt "$alice")" "MNT3_OK" "MNT mounted again"
wait_recorded "$alice"
assert_eq "$alice" "$(recorded_mount "$alice")" "recorded mounted again"
echo ok
