#!/usr/bin/env bash
# The pid file is written through a temporary file of the daemon's own: a
# symbolic link planted at PID.tmp (by a member of the administrators'
# group, who may write the folder) is not followed, a 0666 PID.tmp planted
# there does not become the pid file, the pid file is root's with mode 0644;
# a pid-file folder writable by others is refused at start.
source "$(dirname "$0")/lib.sh"
sm_setup
attacker_setup
run=$(attacker_folder run) || exit 1
pid_file=$run/sharemgrd.pid
victim=$(make_victim victim)
victim_before=$(file_state "$victim")

as_attacker ln -s "$victim" "$pid_file.tmp" || fail "cannot plant $pid_file.tmp"
start_daemon --pid-file "$pid_file"
assert_eq "$victim_before" "$(file_state "$victim")" "target of $pid_file.tmp"
assert_eq "$DAEMON_PID" "$(cat "$pid_file")" "pid file content"
assert_eq "644 root root 1" "$(stat -c '%a %U %G %h' "$pid_file")" \
  "pid file mode, owner, group, links"
stop_daemon || fail "sharemgrd exited non-zero"
rm -f "$pid_file.tmp"

as_attacker sh -c "umask 0; echo 1 >'$pid_file.tmp'" || fail "cannot plant $pid_file.tmp"
start_daemon --pid-file "$pid_file"
assert_eq "644 root root 1" "$(stat -c '%a %U %G %h' "$pid_file")" \
  "pid file mode, owner, group, links with a planted 0666 PID.tmp"
if as_attacker sh -c "echo 1 >'$pid_file'" 2>/dev/null; then
  fail "a group member rewrote the pid file"
fi
assert_eq "$DAEMON_PID" "$(cat "$pid_file")" "pid file content"
stop_daemon || fail "sharemgrd exited non-zero"
rm -f "$pid_file.tmp"

chmod 0777 "$run"
expect_refused_start "a pid-file folder writable by others" --pid-file "$pid_file"
out=$(cat "$SM_DIR/start.out")
assert_contains "$out" "$run" "refusal of the pid-file folder"
assert_contains "$out" "writable by others" "refusal of the pid-file folder"
[[ ! -e $pid_file ]] || fail "pid file written although the start was refused"
chmod 1777 "$run"  # sticky, as /tmp: nobody can replace root's files there
start_daemon --pid-file "$pid_file"
assert_eq "$DAEMON_PID" "$(cat "$pid_file")" "pid file in a sticky folder"
stop_daemon || fail "sharemgrd exited non-zero"
echo "ok"
