#!/usr/bin/env bash
# Rows written into the store behind the daemon's back (sqlite3) obey the
# rules add-share applies, or sharemgrd refuses to start naming the row:
# a relative path, "/" above a share on the same file system, a newline in
# a description, an escape in a resource, a path stored twice (the store
# has no index by path since schema 5). Fixing the row lets it start.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed"
start_daemon
read -r a <<<"$(make_dirs a)"
sc create g || fail "create"
sc add-share -s "$a" g || fail "add-share"
stop_daemon || fail "stop"
dev=$(sqlite3 "$SM_DB" "SELECT dev FROM shares WHERE path='$a'")
[[ -n $dev ]] || fail "no dev stored for $a"

# Starts the daemon expecting a refusal; prints its stderr.
refused_start() {
  local err=$SM_DIR/start.err rc=0
  timeout 20 "$SHAREMGRD" --foreground --db "$SM_DB" --socket "$SM_SOCKET" \
    --sharetab "$SM_SHARETAB" --mount-port 0 --no-rpcbind 2>"$err" &
  local pid=$!
  wait "$pid" || rc=$?
  [[ $rc != 0 && $rc != 124 ]] || fail "sharemgrd started (rc $rc) with $1: $(cat "$err")"
  cat "$err"
}

row() {  # ID PATH DEV DESCRIPTION RESOURCE
  sqlite3 "$SM_DB" "INSERT INTO shares(id, path, \"group\", dev, description, resource)
                    VALUES($1, '$2', 'g', $3, $4, $5)"
}
drop() { sqlite3 "$SM_DB" "DELETE FROM shares WHERE id=$1"; }

row 90 srv/relative 1 "''" "''"
err=$(refused_start "a relative path")
assert_contains "$err" "store row 90"
assert_contains "$err" "srv/relative"
drop 90

row 91 / "$dev" "''" "''"
err=$(refused_start "/ above $a on the same device")
assert_contains "$err" "inside share /"
drop 91

row 92 "$SM_DIR/export/b" 1 "'two' || char(10) || 'lines'" "''"
err=$(refused_start "a newline in a description")
assert_contains "$err" "store row 92"
assert_contains "$err" "description contains a control character"
drop 92

row 93 "$SM_DIR/export/c" 1 "''" "'x' || char(27) || '[2J'"
err=$(refused_start "an escape in a resource")
assert_contains "$err" "resource contains a control character"
drop 93

row 94 "$a" "$dev" "''" "''"
err=$(refused_start "$a stored twice")
assert_contains "$err" "$a: path is also row"
assert_contains "$err" "fix or delete the row"
drop 94

start_daemon
assert_contains "$(sc show -v g)" "$a"
echo ok
