#!/usr/bin/env bash
# SIGTERM while a resolver call is stalled (a test-only 60 s delay, with a
# MNT from the stalled host in flight): the daemon exits 0 within the
# lookup timeout (5 s) plus a margin, not after the stalled call returns;
# the mount made just before by another host still reaches the store.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
A=127.0.4.1 B=127.0.4.2
cat >"$SM_DIR/hosts" <<H
$A hosta.example.com
$B hostb.example.com
H
start_daemon --hosts "$SM_DIR/hosts" --debug-resolver-delay "$A=60000"
read -r p <<<"$(make_dirs p)"
sc create g && sc add-share -o rw=hostb.example.com -s "$p" g || fail "setup refused"
[[ $(probe --source $B mnt "$p") == MNT3_OK\ * ]] || fail "B refused"

count() { sc --json stats | jq '.cache.misses + .cache.lookups'; }
base=$(count)
probe --source $A --timeout 90000 mnt "$p" >/dev/null 2>&1 &
a_pid=$!
on_exit "kill $a_pid 2>/dev/null"
for i in $(seq 1 100); do
  (($(count) > base)) && break
  sleep 0.02
done
(($(count) > base)) || fail "A's MNT never reached the daemon"
sleep 0.2  # A's lookup is now sleeping in the resolver

t0=$(date +%s%N)
kill -TERM "$DAEMON_PID"
for i in $(seq 1 300); do
  kill -0 "$DAEMON_PID" 2>/dev/null || break
  sleep 0.05
done
kill -0 "$DAEMON_PID" 2>/dev/null && fail "still running 15 s after SIGTERM"
ms=$((($(date +%s%N) - t0) / 1000000))
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
assert_eq 0 "$rc" "exit code after SIGTERM"
grep -q '^sharemgrd: stopped' "$SM_LOG" || fail "no 'stopped' line"

start_daemon --hosts "$SM_DIR/hosts"
grep -q " $p\$" <<<"$(probe dump)" || fail "B's mount lost across the stop"
echo "ok: exited in $ms ms with a lookup stalled for 60 s"
