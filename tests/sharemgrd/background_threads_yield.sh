#!/usr/bin/env bash
# The daemon's O(N) housekeeping threads (the fs_watch round, the sharetab
# view, the mount-record flush) are named and run at nice 19, so a change's
# reply, the caller's exit and MNT replies are not preempted by the work a
# change wakes; the other threads keep the daemon's own priority.
source "$(dirname "$0")/lib.sh"
sm_setup
start_daemon --kernel=off
mkdir -p "$SM_DIR/e/a"
sc create -o rw=@127.0.0.0/8 homes
sc add-share -s "$SM_DIR/e/a" homes   # starts the sharetab writer
wait_sharetab
declare -A nice_of
for t in /proc/"$DAEMON_PID"/task/*; do
  name=$(<"$t/comm")
  # Field 19 of stat is the nice value; the name (field 2) may hold spaces,
  # so count from the closing parenthesis.
  stat=$(<"$t/stat")
  nice=$(awk '{ print $17 }' <<<"${stat##*) }")
  nice_of[$name]=$nice
done
for name in sm-fswatch sm-sharetab sm-mountflush; do
  [[ -n ${nice_of[$name]:-} ]] ||
    fail "no thread named $name (threads: ${!nice_of[*]})"
  assert_eq 19 "${nice_of[$name]}" "nice of $name"
done
# The main thread keeps the priority it was started with (this shell's:
# scripts/test runs the suite at nice 19 beside the kernel guest).
main_nice=$(awk '{ print $17 }' <<<"$(sed 's/.*) //' /proc/"$DAEMON_PID"/stat)")
assert_eq "$(nice)" "$main_nice" "nice of the daemon's main thread"
stop_daemon
echo "ok"
