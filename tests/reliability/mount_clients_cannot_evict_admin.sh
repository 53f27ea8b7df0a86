#!/usr/bin/env bash
# With --max-connections 64 taken by 64 chatty MOUNT clients that keep
# reconnecting (each new connection at the limit closes the idlest one),
# `sharectl batch` still succeeds: management connections have their own
# limit, and a connection with a call in progress is never evicted. (The
# batch once failed 3 of 3 times: "connection closed by the daemon".)
source "$(dirname "$0")/lib.sh"
sm_setup
make_many_dirs 3000
start_daemon --insecure --max-connections 64
sc create g || fail "setup refused"
hold=$SM_DIR/hold
python3 "$(dirname "$0")/rpc_driver.py" churn --port "$MOUNT_PORT" \
  --clients 64 --hold-file "$hold" >"$SM_DIR/churn.out" 2>&1 &
churn_pid=$!
on_exit "rm -f '$hold'; kill $churn_pid 2>/dev/null"
for ((i = 0; i < 200; i++)); do
  [[ -f $hold ]] && break
  sleep 0.05
done
[[ -f $hold ]] || fail "churning clients not started"
sleep 1
for round in 0 1 2; do
  {
    seq -f "add-share -s $SM_DIR/export/d%05g g" $((round * 1000)) \
      $((round * 1000 + 999))
  } >"$SM_DIR/batch$round"
  err=$(sc batch "$SM_DIR/batch$round" 2>&1) ||
    fail "batch $round failed while MOUNT clients churn: $err"
done
n=$(sc --json show | grep -o '"path"' | wc -l)
assert_eq 3000 "$n" "shares after three batches"
rm -f "$hold"
wait "$churn_pid"
cat "$SM_DIR/churn.out"
grep -q '"calls": [1-9]' "$SM_DIR/churn.out" || fail "the MOUNT clients made no calls"
echo "ok"
