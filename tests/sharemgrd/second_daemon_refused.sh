#!/usr/bin/env bash
# A second daemon on the same store and socket, or on the same sharetab
# view, refuses to start, says why, and the first keeps serving.
source "$(dirname "$0")/../support/daemon_lib.sh"
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

# Its own store and socket, but the first's sharetab view: refused too,
# and the view is left as the first wrote it.
for ((i = 0; i < 100; i++)); do [[ -e $SM_SHARETAB ]] && break; sleep 0.05; done
view=$(cat "$SM_SHARETAB")
rc=0
err=$(timeout 20 "$SHAREMGRD" --foreground --no-rpcbind --mount-port 0 \
  --db "$SM_DIR/other/db" --socket "$SM_DIR/other/sock" \
  --sharetab "$SM_SHARETAB" 2>&1) || rc=$?
[[ $rc != 0 && $rc != 124 ]] || fail "daemon on the same sharetab did not refuse (rc=$rc)"
assert_contains "$err" "$SM_SHARETAB is in use by another sharemgrd" "why"
assert_eq "$view" "$(cat "$SM_SHARETAB")" "the first daemon's view"
[[ ! -e $SM_DIR/other ]] || fail "refused start left: $(find "$SM_DIR/other")"

out=$(sc list) || fail "first daemon stopped answering"
assert_contains "$out" "g" "list from the first daemon"
rc=0
stop_daemon || rc=$?
assert_eq 0 "$rc" "first daemon's exit code"
echo "ok"
