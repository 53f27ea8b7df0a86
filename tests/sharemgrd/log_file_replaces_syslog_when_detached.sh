#!/usr/bin/env bash
# --log-file: a detached daemon logs there (timestamped), SIGHUP reopens
# it by name after a rotation, and a log file that cannot be opened is a
# start failure said on the terminal.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
LOGF=$SM_DIR/sharemgrd-file.log
"$SHAREMGRD" --no-rpcbind --kernel=off --mount-port 0 --db "$SM_DB" \
  --socket "$SM_SOCKET" --sharetab "$SM_SHARETAB" \
  --pid-file "$SM_DIR/pid" --log-file "$LOGF" 2>"$SM_DIR/err" ||
  fail "detached start failed: $(cat "$SM_DIR/err")"
pid=$(cat "$SM_DIR/pid")
on_exit "kill $pid 2>/dev/null"
assert_contains "$(cat "$LOGF")" "sharemgrd[$pid]: serving 0 shares" "serving line in the file"
sc create homes
assert_contains "$(cat "$LOGF")" "(create): 1 operation applied" "audit line in the file"

mv "$LOGF" "$LOGF.1"
kill -HUP "$pid"
for _ in $(seq 100); do [[ -s $LOGF ]] && break; sc list >/dev/null; sleep 0.05; done
sc create later
for _ in $(seq 100); do grep -q '(create): 1 operation' "$LOGF" 2>/dev/null && break; sleep 0.05; done
assert_contains "$(cat "$LOGF")" "(create): 1 operation applied" "after SIGHUP: the new file"
assert_not_contains "$(cat "$LOGF.1")" "generation 3" "after SIGHUP: the rotated file"

kill -TERM "$pid"
for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
assert_contains "$(cat "$LOGF")" "stopped" "stop logged in the file"

# A log file that cannot be opened: exit 1, said on the terminal.
if "$SHAREMGRD" --foreground --no-rpcbind --db "$SM_DB" --socket "$SM_SOCKET" \
    --sharetab "$SM_SHARETAB" --log-file "$SM_DIR/no/such/dir/log" 2>"$SM_DIR/err"; then
  fail "started with a log file it cannot open"
fi
assert_contains "$(cat "$SM_DIR/err")" "--log-file $SM_DIR/no/such/dir/log" "error names the file"
# A start that fails after the file is open: the reason is in the file
# too (here: --kernel=on on a host whose nfsd is not mounted).
if [[ ! -e /proc/fs/nfsd/exports ]]; then
  "$SHAREMGRD" --no-rpcbind --kernel=on --mount-port 0 --db "$SM_DB" \
    --socket "$SM_SOCKET" --sharetab "$SM_SHARETAB" --pid-file "$SM_DIR/pid" \
    --log-file "$SM_DIR/failed.log" 2>"$SM_DIR/err" &&
    fail "--kernel=on started without /proc/fs/nfsd"
  assert_contains "$(cat "$SM_DIR/err")" "/proc/fs/nfsd" "failure said on the terminal"
  assert_contains "$(cat "$SM_DIR/failed.log")" "/proc/fs/nfsd" "failure kept in the log file"
fi
echo "ok"
