#!/usr/bin/env bash
# A second daemon on the same store and socket refuses to start, says why,
# and the first keeps serving.
source "$(dirname "$0")/lib.sh"
sm_setup
start_daemon
sc create g || fail "create refused"

rc=0
err=$(timeout 20 "$SHAREMGRD" --foreground --no-rpcbind --mount-port 0 \
  --db "$SM_DB" --socket "$SM_SOCKET" --sharetab "$SM_DIR/sharetab2" 2>&1) || rc=$?
echo "second daemon: rc=$rc: $err"
[[ $rc != 0 && $rc != 124 ]] || fail "second daemon did not refuse (rc=$rc)"
[[ $err == *"$SM_DB"* || $err == *"$SM_SOCKET"* || ${err,,} == *already* ]] ||
  fail "second daemon's message names neither the store nor the socket: $err"

out=$(sc list) || fail "first daemon stopped answering"
assert_contains "$out" "g" "list from the first daemon"
rc=0
stop_daemon || rc=$?
assert_eq 0 "$rc" "first daemon's exit code"
echo "ok"
