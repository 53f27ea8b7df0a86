#!/usr/bin/env bash
# A start that fails (here: the MOUNT port is taken, or a followed
# exports file cannot be read once the socket is bound) removes what it
# created: store, lock files, socket, sharetab view and the folders made
# for them; files that were there before stay, and so does another
# daemon's lock.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
port=$(free_port)
python3 -c "
import socket, sys, time
s = socket.socket(); s.bind(('0.0.0.0', $port)); s.listen()
open(sys.argv[1], 'w').close(); time.sleep(60)" "$SM_DIR/taken" &
holder=$!
on_exit "kill $holder 2>/dev/null"
for _ in $(seq 100); do [[ -e $SM_DIR/taken ]] && break; sleep 0.05; done
[[ -e $SM_DIR/taken ]] || fail "could not take port $port"

start_fails() {  # STATE RUN: a start on these folders that must fail
  if "$SHAREMGRD" --foreground --no-rpcbind --kernel=off --mount-port "$port" \
      --db "$1/shares.db" --socket "$2/sock" --sharetab "$2/sharetab" \
      2>"$SM_DIR/err"; then
    fail "sharemgrd started on a taken port"
  fi
  assert_contains "$(cat "$SM_DIR/err")" "cannot bind MOUNT TCP port" "why"
}

# Folders that did not exist: nothing of them is left.
start_fails "$SM_DIR/new/state" "$SM_DIR/new/run"
[[ ! -e $SM_DIR/new ]] || fail "failed start left: $(find "$SM_DIR/new")"

# A start that fails after binding its socket (a followed exports file in
# a folder that does not exist): no socket, no folder left either.
if "$SHAREMGRD" --foreground --no-rpcbind --kernel=off --mount-port 0 \
    --db "$SM_DIR/late/state/shares.db" --socket "$SM_DIR/late/run/sock" \
    --sharetab "$SM_DIR/late/run/sharetab" \
    --follow-exports "$SM_DIR/nonexistent/exports" 2>"$SM_DIR/err"; then
  fail "sharemgrd started with an unreadable --follow-exports"
fi
assert_contains "$(cat "$SM_DIR/err")" "--follow-exports" "why"
[[ ! -e $SM_DIR/late ]] || fail "failed late start left: $(find "$SM_DIR/late")"

# Existing, empty folders: they stay, empty.
mkdir -p "$SM_DIR/state" "$SM_DIR/run"
start_fails "$SM_DIR/state" "$SM_DIR/run"
assert_eq "" "$(ls -A "$SM_DIR/state" "$SM_DIR/run" | grep -v ':$' | grep -v '^$' || true)" \
  "files left in existing folders"

# An existing store is kept, with its shares.
mkdir -p "$SM_DIR/e/a"
start_daemon
sc create homes && sc add-share -s "$SM_DIR/e/a" homes
stop_daemon
before=$(cd "$SM_DIR" && ls -A)
start_fails "$SM_DIR" "$SM_DIR"
assert_eq "$before" "$(cd "$SM_DIR" && ls -A)" "files of an existing setup"
start_daemon
assert_eq 1 "$(sc --json stats | jq .shares)" "the store survived a failed start"

# A second daemon (refused: the lock is held) removes nothing of the first.
before=$(cd "$SM_DIR" && ls -A)
"$SHAREMGRD" --foreground --no-rpcbind --kernel=off --db "$SM_DB" \
  --socket "$SM_SOCKET" --sharetab "$SM_SHARETAB" 2>"$SM_DIR/err2" &&
  fail "second daemon started"
: # the first still serves, with its files
assert_eq "$before" "$(cd "$SM_DIR" && ls -A | grep -v '^err2$')" "files after a refused second daemon"
sc list >/dev/null || fail "first daemon unreachable after a refused second start"
stop_daemon
echo "ok"
