#!/usr/bin/env bash
# Two sharemgrd heads on one PostgreSQL (issue 46), as an administrator
# runs them on one machine: each its own --db (its copy), --socket and
# mount port; head A registers with rpcbind (showmount -e), head B does not
# (--no-rpcbind; asked with mountprobe on its port).
#  - 15,000 shares added on A in one batch: B serves them at the same
#    generation (its MOUNT EXPORT list, `check`, `list`), and the two
#    dumps are the same;
#  - a change on B reaches A; `stats` names the engine on both;
#  - the engine stopped: both heads go on serving their copies; a change
#    is refused with exit 3 naming the engine; nothing changed;
#  - the engine back: the change goes through and both heads converge;
#  - a password in --store is refused at start, naming where it belongs.
source "$(dirname "$0")/../support/daemon_lib.sh"
PG_SERVER=$(cd "$(dirname "$0")/../support" && pwd)/pg_server.sh
sm_setup
ensure_rpcbind
url=$("$PG_SERVER" start "$SM_DIR/pg")
on_exit "\"$PG_SERVER\" stop \"$SM_DIR/pg\" immediate >/dev/null 2>&1"

# Head B: started by hand beside the lib's head A.
B_SOCKET=$SM_DIR/b.sock B_LOG=$SM_DIR/b.log B_PID=
on_exit '[[ -n $B_PID ]] && kill -KILL $B_PID 2>/dev/null'
start_b() {
  echo "=== start" >>"$B_LOG"
  "$SHAREMGRD" --foreground --db "$SM_DIR/b.db" --socket "$B_SOCKET" \
    --sharetab "$SM_DIR/b.sharetab" --mount-port 0 --no-rpcbind \
    --store "$url" --head b 2>>"$B_LOG" &
  B_PID=$!
  local i
  for ((i = 0; i < 600; i++)); do
    B_PORT=$(sed -n 's/^sharemgrd: serving.*mount port \([0-9]*\).*/\1/p' "$B_LOG" | tail -1)
    [[ -n $B_PORT ]] && return 0
    kill -0 "$B_PID" 2>/dev/null || { cat "$B_LOG"; fail "head b exited"; }
    sleep 0.05
  done
  fail "head b did not start"
}
scb() { "$SHARECTL" --socket "$B_SOCKET" "$@"; }
generation_of() {  # SHARECTL-FUNCTION
  "$@" --json stats | jq -r .generation
}
wait_generation() {  # WANT SHARECTL-FUNCTION
  local want=$1 i; shift
  for ((i = 0; i < 200; i++)); do
    [[ $(generation_of "$@") == "$want" ]] && return 0
    sleep 0.05
  done
  fail "generation $(generation_of "$@"), not $want, after 10 s"
}

SM_RPCBIND=1 start_daemon --store "$url" --head a
start_b

mkdir -p "$SM_DIR/homes"
{
  echo "create -o rw homes"
  for i in $(seq 1 15000); do
    mkdir "$SM_DIR/homes/u$i"
    echo "add-share -s $SM_DIR/homes/u$i homes"
  done
} >"$SM_DIR/batch"
sc batch "$SM_DIR/batch" >/dev/null || fail "batch on head a refused"
gen=$(generation_of sc)
wait_generation "$gen" scb
assert_eq 15000 "$(scb --json stats | jq -r .shares)" "shares on head b"
exports=$("$MOUNTPROBE" --server 127.0.0.1 --port "$B_PORT" export | grep -c "^$SM_DIR/homes/u" || true)
assert_eq 15000 "$exports" "head b's MOUNT EXPORT list"
assert_eq 15000 "$(showmount -e 127.0.0.1 | grep -c "^$SM_DIR/homes/u")" \
  "head a's showmount -e"
scb check 127.0.0.1 "$SM_DIR/homes/u15000" | grep -q "^access: *rw" ||
  fail "head b's check of the last share"
assert_eq "$(sc dump | sha256sum)" "$(scb dump | sha256sum)" "the two dumps"

# A change on B reaches A.
scb remove-share -s "$SM_DIR/homes/u7" || fail "remove on head b refused"
wait_generation $((gen + 1)) sc
assert_eq 14999 "$(sc --json stats | jq -r .shares)" "shares on head a"
sc check 127.0.0.1 "$SM_DIR/homes/u7" >/dev/null 2>&1 &&
  fail "head a still grants u7 after its removal on head b"
st=$(sc --json stats)
assert_eq postgresql "$(jq -r .store.kind <<<"$st")" "store kind"
assert_contains "$(jq -r .store.engine <<<"$st")" "PostgreSQL at $SM_DIR/pg:5432" "engine"
assert_eq a "$(jq -r .store.head <<<"$st")" "head name"
assert_eq 0 "$(jq -r .store.lag <<<"$st")" "lag"
sc stats | grep -q "engine reachable: *yes" || fail "text stats"

# The engine away: served from the copies, changes refused (exit 3).
"$PG_SERVER" stop "$SM_DIR/pg" immediate
rc=0
out=$(scb remove-share -s "$SM_DIR/homes/u8" 2>&1) || rc=$?
assert_eq 3 "$rc" "exit code of a change without the engine"
assert_contains "$out" "engine is unreachable" "refusal"
assert_contains "$out" "PostgreSQL at $SM_DIR/pg:5432" "refusal names the engine"
"$MOUNTPROBE" --server 127.0.0.1 --port "$B_PORT" --reserved mnt "$SM_DIR/homes/u8" >/dev/null ||
  fail "head b does not serve u8 without the engine"
scb --json stats | jq -e '.store.reachable == false and .store.unreachable_since != null' >/dev/null ||
  fail "head b's stats do not say the engine is away"
"$PG_SERVER" start "$SM_DIR/pg" >/dev/null
scb remove-share -s "$SM_DIR/homes/u8" || fail "remove after the engine came back"
wait_generation $((gen + 2)) sc
assert_eq "$(sc dump | sha256sum)" "$(scb dump | sha256sum)" "dumps after"

# A head restarted while the engine is down serves its copy.
kill -KILL "$B_PID"; wait "$B_PID" 2>/dev/null || true; B_PID=
"$PG_SERVER" stop "$SM_DIR/pg" immediate
: >"$B_LOG"
start_b
assert_eq 14998 "$(scb --json stats | jq -r .shares)" "head b's copy"
"$PG_SERVER" start "$SM_DIR/pg" >/dev/null

# A password on the command line is refused before anything starts.
rc=0
out=$("$SHAREMGRD" --foreground --db "$SM_DIR/c.db" --socket "$SM_DIR/c.sock" \
  --no-rpcbind --store "postgresql://u:secret@localhost/db" 2>&1) || rc=$?
assert_eq 2 "$rc" "exit code for a password in --store"
assert_contains "$out" ".pgpass" "where the password belongs"
[[ -e $SM_DIR/c.db ]] && fail "a refused start made its store"
echo "ok"
