#!/usr/bin/env bash
# The store's file system is full when a batch commits: the caller gets a
# clear error (exit 1, naming the commit / the disk), the table and the
# store stay at the old state, the daemon keeps serving MNT and reads, and
# once space is freed the next batch commits.
source "$(dirname "$0")/lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to mount a small tmpfs"; exit 0; }
mkdir -p "$SM_DIR/small"
# mode=0755: a tmpfs root is 1777 by default, and sharemgrd refuses a
# store folder that others may write.
if ! mount -t tmpfs -o size=2m,mode=0755 tmpfs "$SM_DIR/small" \
  2>"$SM_DIR/mount.err"; then
  echo "SKIP: cannot mount a tmpfs here: $(cat "$SM_DIR/mount.err")"
  exit 0
fi
on_exit "umount -l '$SM_DIR/small'"
SM_DB=$SM_DIR/small/shares.db

make_many_dirs 6000 d
mkdir -p "$SM_DIR/base"
start_daemon --insecure
sc create g && sc add-share -s "$SM_DIR/base" g || fail "setup refused"
before=$(state_digest) || fail "state unreadable"
before_show=$(show_state)

# Fill the file system (the WAL and db keep what they hold).
dd if=/dev/zero of="$SM_DIR/small/fill" bs=4k 2>/dev/null || true
avail=$(df --output=avail -k "$SM_DIR/small" | tail -n1 | tr -d ' ')
[[ $avail -le 4 ]] || fail "tmpfs not full: $avail KiB free"

{
  for ((i = 0; i < 6000; i++)); do
    printf 'add-share -d "share number %d" -s %s/export/d%05d g\n' "$i" "$SM_DIR" "$i"
  done
} >"$SM_DIR/add.batch"
rc=0
err=$(sc batch "$SM_DIR/add.batch" 2>&1 >/dev/null) || rc=$?
assert_eq 1 "$rc" "exit code of a batch on a full disk"
[[ ${err,,} == *full* || ${err,,} == *disk* || ${err,,} == *space* || ${err,,} == *commit* ]] ||
  fail "unclear error for a full disk: $err"
echo "error shown to the caller: $err"

assert_eq "$before" "$(state_digest)" "state after the failed batch"
out=$(probe mnt "$SM_DIR/base") || fail "MNT failed after the failed batch"
assert_contains "$out" "MNT3_OK" "MNT after the failed batch"
sc list >/dev/null || fail "list failed after the failed batch"
kill -0 "$DAEMON_PID" || fail "daemon died"

# A second failing batch, a small one, fails the same way.
printf 'create h\nadd-share -s %s/export/d00001 h\n' "$SM_DIR" >"$SM_DIR/small.batch"
rc=0
sc batch "$SM_DIR/small.batch" >/dev/null 2>&1 || rc=$?
if [[ $rc == 0 ]]; then
  echo "note: the small batch fitted in the existing WAL; undoing it"
  printf 'delete -f h\n' | sc batch - || fail "cannot undo the small batch"
else
  assert_eq 1 "$rc" "exit code of a small batch on a full disk"
fi
assert_eq "$before" "$(state_digest)" "state after the second failed batch"

rm -f "$SM_DIR/small/fill"
restart_daemon --insecure
assert_eq "$before_show" "$(show_state)" "store after restart"
sc batch "$SM_DIR/add.batch" >/dev/null || fail "batch refused after space was freed"
assert_eq 6001 "$(sc --json stats | jq .shares)" "shares after the batch"
echo "ok"
