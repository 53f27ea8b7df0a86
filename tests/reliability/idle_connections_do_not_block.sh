#!/usr/bin/env bash
# 1,100 idle TCP connections (half of them holding a partial record) are
# held open: other MOUNT clients and sharectl are still served.
source "$(dirname "$0")/lib.sh"
sm_setup
# Started with the usual soft RLIMIT_NOFILE of 1024, fewer descriptors than
# the idle connections need: the daemon must raise its own limit (it once
# ran out: accept EMFILE, new clients timed out). The driver raises its own.
ulimit -S -n 1024 2>/dev/null || true
read -r a <<<"$(make_dirs a)"
start_daemon --insecure
sc create g && sc add-share -s "$a" g || fail "setup refused"
hold=$SM_DIR/hold
python3 "$(dirname "$0")/rpc_driver.py" idle --port "$MOUNT_PORT" \
  --count "${SHAREMGR_IDLE_CONNECTIONS:-1100}" --hold-file "$hold" \
  >"$SM_DIR/idle.out" 2>&1 &
idle_pid=$!
on_exit "rm -f '$hold'; kill $idle_pid 2>/dev/null"
for ((i = 0; i < 600; i++)); do
  [[ -f $hold ]] && break
  kill -0 "$idle_pid" 2>/dev/null || fail "idle driver: $(cat "$SM_DIR/idle.out")"
  sleep 0.05
done
[[ -f $hold ]] || fail "idle connections not opened in time"
fds=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
served=0
for ((i = 0; i < 20; i++)); do
  out=$(probe mnt "$a") || fail "MNT $i not served with idle connections open"
  assert_contains "$out" "MNT3_OK" "MNT with idle connections"
  probe --udp null >/dev/null || fail "UDP NULL not served"
  sc list >/dev/null || fail "sharectl list not served"
  served=$((served + 1))
done
rm -f "$hold"
wait "$idle_pid" || fail "idle driver failed: $(cat "$SM_DIR/idle.out")"
echo "daemon fds with the idle connections: $fds; $served rounds of MNT+NULL+list served"
cat "$SM_DIR/idle.out"
limit=$(awk '/Max open files/ {print $4}' "/proc/$DAEMON_PID/limits")
echo "daemon soft descriptor limit: $limit"
# The limits are documented options.
help=$("$SHAREMGRD" --help 2>&1 || true)
for o in --max-connections --idle-timeout --mgmt-idle-timeout; do
  grep -q -- "$o" <<<"$help" || fail "sharemgrd --help does not list $o"
done
echo "ok"
