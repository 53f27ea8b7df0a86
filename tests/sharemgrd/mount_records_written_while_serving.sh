#!/usr/bin/env bash
# Mount records reach the store while the daemon serves, not only at its
# stop: once the MNTs pause, and about every second during a storm that
# does not pause (a new client address every call, for 6 s). A daemon
# killed with SIGKILL after that has them all again once restarted.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ -x $MOUNT_LOAD ]] || fail "program not built: $MOUNT_LOAD"
start_daemon
read -r p <<<"$(make_dirs p)"
sc create -o rw g || fail "create refused"
sc add-share -s "$p" g || fail "add-share $p refused"

# Rows of the store's mount records for $p.
stored() {
  python3 - "$SM_DB" "$p" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("SELECT count(*) FROM mounts WHERE path = ?",
                 (sys.argv[2],)).fetchone()[0])
PY
}
# Waits (up to 10 s) until the store holds at least N records of $p.
wait_stored() {  # N WHAT
  local deadline=$((SECONDS + 10))
  while ((SECONDS < deadline)); do
    (($(stored) >= $1)) && return 0
    sleep 0.05
  done
  fail "$2: $(stored) of $1 records in the store after 10 s"
}

[[ $(probe --source 127.0.2.5 mnt "$p") == MNT3_OK\ * ]] || fail "MNT $p refused"
wait_stored 1 "one MNT, then a pause"

# The storm: 2 clients, every call from a new address (a new record), for
# 6 s; some of its records must reach the store while it goes on.
"$MOUNT_LOAD" --server 127.0.0.1 --port "$MOUNT_PORT" --clients 2 \
  --path "$p" --duration 6 --cold --no-cleanup --source-base 127.0.3.1 \
  >"$SM_DIR/load.json" 2>"$SM_DIR/load.err" &
load=$!
t0=$(date +%s%N)
during= after_ms=
while kill -0 "$load" 2>/dev/null; do
  n=$(stored) || fail "cannot read the store"
  if ((n > 1)) && kill -0 "$load" 2>/dev/null; then
    during=$n after_ms=$((($(date +%s%N) - t0) / 1000000))
    break
  fi
  sleep 0.1
done
wait "$load" || fail "mount_load failed: $(cat "$SM_DIR/load.err" "$SM_DIR/load.json")"
[[ -n $during ]] || fail "no record of the storm reached the store while it ran (6 s)"
# About a second into the storm (its calls never pause), well before its
# end: not the write that follows its last call.
((after_ms <= 4500)) ||
  fail "the storm's first records reached the store only $after_ms ms after its start"
ok=$(jq -r .ok <"$SM_DIR/load.json")
echo "storm: $ok MNTs; $((during - 1)) of its records stored $after_ms ms into it"
# Every record the daemon kept reaches the store once the storm is over
# (what its limit did not keep, `sharectl stats` counts apart).
kept=$(sc --json stats | jq .mounts)
((kept > 1)) || fail "the daemon kept $kept records after the storm"
wait_stored "$kept" "after the storm"

kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
start_daemon
assert_eq "$kept" "$(sc --json stats | jq .mounts)" \
  "records loaded after SIGKILL and restart"
assert_contains "$(probe dump)" "127.0.2.5 $p" "DUMP after SIGKILL and restart"
echo "ok"
