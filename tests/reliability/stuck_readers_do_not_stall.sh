#!/usr/bin/env bash
# 70 MOUNT connections from unreserved ports each pipeline 40 EXPORT calls
# (a big export list) and never read a reply. A legitimate MNT and
# `sharectl stats` made meanwhile are answered within a second (they once
# waited ~9 s: every worker blocked up to 10 s writing to a stuck client),
# and the daemon closes the stuck connections itself.
source "$(dirname "$0")/lib.sh"
sm_setup
shares=${SHAREMGR_STUCK_SHARES:-15000}
make_many_dirs "$shares"
start_daemon --insecure --threads 4
{
  echo "create g"
  seq -f "add-share -s $SM_DIR/export/d%05g g" 0 $((shares - 1))
} >"$SM_DIR/batch"
sc batch "$SM_DIR/batch" >/dev/null || fail "setup batch refused"
a=$SM_DIR/export/d00000

# Milliseconds that COMMAND takes.
ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null || return 1
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
base_fds=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
hold=$SM_DIR/hold
python3 "$(dirname "$0")/rpc_driver.py" stuck --port "$MOUNT_PORT" \
  --count "${SHAREMGR_STUCK_CONNECTIONS:-70}" --calls 40 --hold-file "$hold" >"$SM_DIR/stuck.out" 2>&1 &
stuck_pid=$!
on_exit "rm -f '$hold'; kill $stuck_pid 2>/dev/null"
for ((i = 0; i < 600; i++)); do
  [[ -f $hold ]] && break
  kill -0 "$stuck_pid" 2>/dev/null || fail "stuck driver: $(cat "$SM_DIR/stuck.out")"
  sleep 0.05
done
[[ -f $hold ]] || fail "stuck connections not opened in time"
sleep 1  # the daemon has served what it will and queued the replies
rss_stuck=$(rss_kib)

worst=0
for ((round = 0; round < 5; round++)); do
  m=$(ms probe mnt "$a") || fail "MNT not served while clients are stuck"
  s=$(ms sc stats) || fail "sharectl stats failed while clients are stuck"
  echo "round $round: MNT $m ms, stats $s ms"
  ((m > worst)) && worst=$m
  ((s > worst)) && worst=$s
  sleep 0.5
done
((worst < 1000)) ||
  fail "a call took $worst ms while clients did not read their replies"

# The stuck connections are closed by the daemon (no send progress for
# 10 s), while the clients still hold them.
closed=0
for ((i = 0; i < 300; i++)); do
  fds=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
  if ((fds <= base_fds + 5)); then
    closed=1
    break
  fi
  sleep 0.1
done
((closed)) || fail "stuck connections still open after 30 s ($fds fds, $base_fds before)"
rss=$(rss_kib)
echo "worst latency ${worst} ms; daemon fds $base_fds before, $fds after; RSS ${rss_stuck} KiB with the stuck clients, ${rss} KiB after"
rm -f "$hold"
wait "$stuck_pid" || fail "stuck driver failed: $(cat "$SM_DIR/stuck.out")"
out=$(probe mnt "$a") || fail "MNT after the stuck clients"
assert_contains "$out" "MNT3_OK" "MNT after the stuck clients"
echo "ok"
