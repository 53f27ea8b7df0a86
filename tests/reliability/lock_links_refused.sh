#!/usr/bin/env bash
# Root never writes through a lock file it did not make: a symbolic link or
# a hard link planted at SOCKET.lock (by a member of the administrators'
# group, who may write the socket's folder) or at DB.lock makes the daemon
# refuse to start, naming the file, and leaves the link's target as it
# was; a lock file another user owns (a squatter, holding a lock on it or
# not) is refused naming its owner, never reported as "in use by another
# sharemgrd" with the squatter's pid.
source "$(dirname "$0")/lib.sh"
sm_setup
attacker_setup
# A group-writable socket folder is allowed (an administrators' group), so
# its members can plant names in it. The store's folder may not be group
# writable (unsafe_files_refused.sh): links at DB.lock are planted by root
# there, as a check that does not rely on the folder's mode.
run=$(attacker_folder run) || exit 1
SM_SOCKET=$run/sharemgrd.sock
victim=$(make_victim victim)
victim_before=$(file_state "$victim")

for lock in "$SM_DB.lock" "$SM_SOCKET.lock"; do
  if [[ $lock == "$SM_DB.lock" ]]; then
    ln -s "$victim" "$lock"
  else
    as_attacker ln -s "$victim" "$lock" || fail "cannot plant $lock"
  fi
  expect_refused_start "a symbolic link at $lock"
  assert_eq "$victim_before" "$(file_state "$victim")" "target of $lock"
  out=$(cat "$SM_DIR/start.out")
  assert_contains "$out" "$lock" "refusal of a link at $lock"
  assert_contains "$out" "symbolic link" "refusal of a link at $lock"
  rm -f "$lock"
done
rm -f "$SM_DB.lock"  # made by the start refused at the socket's lock

# A hard link to a root file (possible where fs.protected_hardlinks is 0;
# planted by root here, as the sysctl is on).
ln "$victim" "$SM_DB.lock"
expect_refused_start "a hard link at $SM_DB.lock"
assert_contains "$(cat "$SM_DIR/start.out")" "$SM_DB.lock" "refusal of a hard link"
rm -f "$SM_DB.lock"
assert_eq "$victim_before" "$(file_state "$victim")" "target of the hard link"

# A squatter: nobody's own lock file with a pid of its choosing, first held
# with flock (as a running daemon would), then not held.
as_attacker sh -c "echo 1 >'$SM_SOCKET.lock'" || fail "cannot plant $SM_SOCKET.lock"
squatter_before=$(file_state "$SM_SOCKET.lock")
# One process (setpriv execs bash execs sleep) holds the lock, so killing
# it releases the lock and leaves nothing behind.
as_attacker bash -c 'exec 9<"$1" && flock 9 && exec sleep 60' _ "$SM_SOCKET.lock" \
  >/dev/null 2>&1 &
holder=$!
on_exit "kill $holder 2>/dev/null; wait $holder 2>/dev/null"
sleep 0.3
expect_refused_start "a squatter holding $SM_SOCKET.lock"
out=$(cat "$SM_DIR/start.out")
assert_contains "$out" "$SM_SOCKET.lock" "refusal of a squatter's lock"
assert_contains "$out" "owned by uid 65534" "refusal of a squatter's lock"
assert_not_contains "$out" "pid 1)" "refusal of a squatter's lock"
kill "$holder"
wait "$holder" 2>/dev/null || true
expect_refused_start "a squatter's $SM_SOCKET.lock not held"
assert_contains "$(cat "$SM_DIR/start.out")" "owned by uid 65534" \
  "refusal of a squatter's lock not held"
assert_eq "$squatter_before" "$(file_state "$SM_SOCKET.lock")" "the squatter's file"
rm -f "$SM_SOCKET.lock"

# Once the names are free the daemon starts and its locks are its own.
start_daemon
for lock in "$SM_DB.lock" "$SM_SOCKET.lock"; do
  assert_eq "644 root 1" "$(stat -c '%a %U %h' "$lock")" "mode, owner, links of $lock"
  assert_eq "$DAEMON_PID" "$(cat "$lock")" "pid in $lock"
done
stop_daemon || fail "sharemgrd exited non-zero"
echo "ok"
