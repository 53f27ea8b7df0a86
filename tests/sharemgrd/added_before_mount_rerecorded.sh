#!/usr/bin/env bash
# A share added before its file system was mounted is recorded on the
# parent's; once its own is mounted it is not served, and the reason names
# the remedy: `sharectl rerecord -s PATH` records the file system mounted
# there now, says what it recorded and what was before, and the share is
# served at once (and after a restart: the record is kept). A path that
# is no share is refused naming it, and changes nothing.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || fail "needs root (mounts a tmpfs)"
read -r home <<<"$(make_dirs home)"
alice=$home/alice
mkdir -p "$alice"
start_daemon
sc create g || fail "create"
sc add-share -s "$alice" g || fail "add-share $alice (a plain folder still)"
# The round after the batch (50 ms after it, paced) records the parent's
# file system; a share whose folder is mounted on before that round is
# recorded where it is then, and needs no remedy.
sleep 1
assert_contains "$(probe mnt "$alice")" "MNT3_OK" "served on the parent's file system"

mount -t tmpfs -o size=1m sm_alice "$alice" || fail "mount tmpfs"
on_exit "umount '$alice' 2>/dev/null"
for ((i = 0; i < 100; i++)); do
  out=$(sc check 127.0.0.1 "$alice" 2>&1) || true
  [[ $out == *"recorded on"* ]] && break  # after "probing again"
  sleep 0.05
done
assert_contains "$out" "recorded on a file system mounted at " "check says where it was recorded"
assert_contains "$out" "now $alice (mounted since the share was added; if the share is meant to be on it, sharectl rerecord -s $alice records it)" \
  "and names the remedy"
assert_contains "$(probe mnt "$alice")" "MNT3ERR_ACCES" "not served on the file system mounted since"

out=$(sc rerecord -s "$home/none" 2>&1) && fail "rerecord of a path that is no share passed: $out"
assert_contains "$out" "$home/none: no share has this path" "a path that is no share is named"
rc=0; out=$(sc rerecord 2>&1) || rc=$?
assert_eq 2 "$rc" "rerecord without -s is a usage error"

out=$(sc rerecord -s "$alice/") || fail "rerecord refused: $out"
assert_contains "$out" "$alice: recorded on sm_alice (tmpfs) mounted at $alice (was " "says what it recorded and what was before"
sc check 127.0.0.1 "$alice" >/dev/null || fail "check after rerecord: $(sc check 127.0.0.1 "$alice" 2>&1)"
assert_contains "$(probe mnt "$alice")" "MNT3_OK" "served at once"
assert_contains "$(cat "$SM_LOG")" "rerecord: $alice: recorded on sm_alice (tmpfs)" "the log says so"

restart_daemon
for ((i = 0; i < 100; i++)); do
  sc --json stats | jq -e '.shares_served == 1' >/dev/null && break
  sleep 0.05
done
assert_contains "$(probe mnt "$alice")" "MNT3_OK" "still served after a restart"
echo "ok"
