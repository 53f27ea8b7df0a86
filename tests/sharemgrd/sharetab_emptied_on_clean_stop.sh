#!/usr/bin/env bash
# Without the kernel mode nothing is served once the daemon stops: a clean
# stop empties the sharetab view; the next start writes it again.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon --kernel=off
mkdir -p "$SM_DIR/e/a" "$SM_DIR/e/b"
sc create homes
sc add-share -s "$SM_DIR/e/a" homes
sc add-share -s "$SM_DIR/e/b" homes
wait_sharetab
assert_eq 2 "$(wc -l <"$SM_SHARETAB")" "sharetab lines while serving"
stop_daemon || fail "stop failed"
[[ -f $SM_SHARETAB ]] || fail "sharetab view removed instead of emptied"
assert_eq 0 "$(wc -c <"$SM_SHARETAB")" "sharetab bytes after a clean stop"
start_daemon --kernel=off
for _ in $(seq 100); do [[ -s $SM_SHARETAB ]] && break; sleep 0.05; done
assert_eq 2 "$(wc -l <"$SM_SHARETAB")" "sharetab lines after the restart"
stop_daemon
echo "ok"
