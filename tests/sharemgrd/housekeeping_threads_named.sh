#!/usr/bin/env bash
# The daemon's housekeeping threads (the fs_watch round, the sharetab view,
# the mount-record flush, the store's checkpoints) carry names, so ps -L,
# top and perf tell them apart from the threads that answer calls; their
# priority is the daemon's own (not lowered: two of them hold the catalog's
# read lock while they copy the table, and a starved one would hold up
# commits).
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon --kernel=off
mkdir -p "$SM_DIR/e/a"
sc create -o rw=@127.0.0.0/8 homes
sc add-share -s "$SM_DIR/e/a" homes   # starts the sharetab writer
wait_sharetab
# Field 19 of stat is the nice value; the name (field 2) may hold spaces,
# so count from the closing parenthesis.
nice_of_stat() { awk '{ print $17 }' <<<"${1##*) }"; }
main_nice=$(nice_of_stat "$(<"/proc/$DAEMON_PID/stat")")
declare -A nice_of
for t in /proc/"$DAEMON_PID"/task/*; do
  nice_of[$(<"$t/comm")]=$(nice_of_stat "$(<"$t/stat")")
done
for name in sm-fswatch sm-sharetab sm-mountflush sm-checkpoint; do
  [[ -n ${nice_of[$name]:-} ]] ||
    fail "no thread named $name (threads: ${!nice_of[*]})"
  assert_eq "$main_nice" "${nice_of[$name]}" "nice of $name"
done
stop_daemon
echo "ok"
