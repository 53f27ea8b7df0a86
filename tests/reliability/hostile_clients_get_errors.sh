#!/usr/bin/env bash
# Garbage, truncated records, 2 GiB / 4 GiB record marks, huge XDR lists
# and a 1,025-byte path, sent to MOUNT over TCP and UDP and to the
# management socket: each gets an RPC error or a closed connection, RSS
# stays bounded, and a well-behaved client (the driver's own, mountprobe,
# sharectl) is served throughout.
# SHAREMGR_HOSTILE_ROUNDS (default 5) sets how many times every case runs.
source "$(dirname "$0")/lib.sh"
sm_setup
read -r a <<<"$(make_dirs a)"
start_daemon --insecure
sc create g && sc add-share -s "$a" g || fail "setup refused"
rss_before=$(rss_kib)
bound=8192
# grep reads all of ldd's output: "grep -q" may exit first, and under
# pipefail ldd's SIGPIPE then fails the pipeline (the bound stayed 8 MiB
# under ASan in one scripts/test run).
ldd "$SHAREMGRD" 2>/dev/null | grep libasan >/dev/null && bound=131072
python3 "$(dirname "$0")/rpc_driver.py" hostile --port "$MOUNT_PORT" \
  --socket "$SM_SOCKET" --pid "$DAEMON_PID" --share "$a" \
  --rounds "${SHAREMGR_HOSTILE_ROUNDS:-5}" --rss-bound-kib "$bound" >"$SM_DIR/hostile.json" ||
  fail "hostile driver: $(cat "$SM_DIR/hostile.json")"
kill -0 "$DAEMON_PID" || fail "daemon died"
out=$(probe mnt "$a") || fail "mountprobe MNT failed after the hostile clients"
assert_contains "$out" "MNT3_OK" "mountprobe MNT"
probe --udp null >/dev/null || fail "UDP NULL failed"
sc list >/dev/null || fail "sharectl list failed after the hostile clients"
echo "RSS before: $rss_before KiB, after: $(rss_kib) KiB"
jq -c '{rounds, well_behaved_rounds_served, rss_kib}' "$SM_DIR/hostile.json"
echo "ok"
