# Shared by the cluster scripts that run two heads on one PostgreSQL:
# source it after nothing else.
#   cluster_setup    the test's folder (sm_setup), its PostgreSQL ($url),
#                    head B (socket $SM_DIR/b.sock, --no-rpcbind) and head A
#                    (lib.sh's daemon), both on it; group g made on A
#   scb ARGS         sharectl against head B
#   engine SQL       rows of SQL run on the engine
source "$(dirname "${BASH_SOURCE[0]}")/../support/daemon_lib.sh"
PG_SERVER=$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/pg_server.sh
B_PID=

scb() { "$SHARECTL" --socket "$SM_DIR/b.sock" "$@"; }
engine() { "$PG_SERVER" psql "$SM_DIR/pg" "$1"; }

cluster_setup() {
  sm_setup
  url=$("$PG_SERVER" start "$SM_DIR/pg")
  on_exit "\"$PG_SERVER\" stop \"$SM_DIR/pg\" immediate >/dev/null 2>&1"
  on_exit '[[ -n $B_PID ]] && kill -KILL $B_PID 2>/dev/null'
  "$SHAREMGRD" --foreground --db "$SM_DIR/b.db" --socket "$SM_DIR/b.sock" \
    --sharetab "$SM_DIR/b.sharetab" --mount-port 0 --no-rpcbind \
    --store "$url" --head b 2>"$SM_DIR/b.log" &
  B_PID=$!
  for _ in $(seq 200); do scb stats >/dev/null 2>&1 && break; sleep 0.05; done
  start_daemon --store "$url" --head a
  sc create g >/dev/null 2>&1
}
