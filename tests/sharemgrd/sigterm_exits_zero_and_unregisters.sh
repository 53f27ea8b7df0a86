#!/usr/bin/env bash
# SIGTERM: the daemon exits 0 and its MOUNT registrations leave rpcbind.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
ensure_rpcbind
SM_RPCBIND=1 start_daemon
grep -Eq '^ *100005 ' <<<"$(rpcinfo -p 127.0.0.1)" ||
  fail "100005 not registered while serving"

rc=0
stop_daemon || rc=$?
assert_eq 0 "$rc" "exit code after SIGTERM"
out=$(rpcinfo -p 127.0.0.1)
assert_not_contains "$out" " 100005 " "rpcinfo -p after SIGTERM"
echo "ok"
