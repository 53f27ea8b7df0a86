#!/usr/bin/env bash
# A batch bigger than the 256 MiB sharemgrd accepts in one call is refused
# by sharectl before sending, with an error saying so (exit 1), and nothing
# changes; it once failed as "Broken pipe", exit 3 (daemon unreachable),
# although the daemon was fine.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
sc create g || fail "setup refused"
long=$(printf 'x%.0s' {1..1000})
seq -f "add-share -s /srv/$long/%06g g" 0 279999 >"$SM_DIR/batch"
rc=0
err=$(sc batch "$SM_DIR/batch" 2>&1) || rc=$?
echo "$err"
assert_eq 1 "$rc" "exit code of an oversized batch"
assert_contains "$err" "MiB" "error of an oversized batch"
assert_not_contains "$err" "Broken pipe" "error of an oversized batch"
kill -0 "$DAEMON_PID" || fail "daemon gone"
n=$(sc --json show | grep -c '"path"' || true)
assert_eq 0 "$n" "shares after the refused batch"
echo "ok"
