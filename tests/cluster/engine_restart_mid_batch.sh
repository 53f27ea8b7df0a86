#!/usr/bin/env bash
# The engine restarted as a crash (pg_ctl restart -m immediate) in the
# middle of a 60,000-share batch on head A (issue 46): the batch is
# committed whole or refused whole (sharectl says which: exit 0, or a
# commit error naming the engine), the engine holds none of it or all of
# it, head B follows exactly the engine, and once the engine is back the
# heads take changes again and agree.
source "$(dirname "$0")/cluster_lib.sh"
cluster_setup
n=60000
mkdir -p "$SM_DIR/d"
(cd "$SM_DIR/d" && seq -f 's%.0f' 1 $n | xargs mkdir)
for i in $(seq 1 $n); do echo "add-share -s $SM_DIR/d/s$i g"; done >"$SM_DIR/batch"
for i in $(seq 1 $n); do echo "remove-share -s $SM_DIR/d/s$i"; done >"$SM_DIR/unbatch"

for delay in 0.05 0.2 0.5; do
  before=$(engine "SELECT count(*) FROM sharemgr_shares")
  rc=0
  sc batch "$SM_DIR/batch" >"$SM_DIR/out" 2>&1 &
  sender=$!
  sleep "$delay"
  "$PG_SERVER" stop "$SM_DIR/pg" immediate
  "$PG_SERVER" start "$SM_DIR/pg" >/dev/null
  wait "$sender" || rc=$?
  rows=$(engine "SELECT count(*) FROM sharemgr_shares")
  gen=$(engine "SELECT generation FROM sharemgr_cluster")
  if [[ $rc == 0 ]]; then
    assert_eq $((before + n)) "$rows" "engine rows after a batch said committed (restart at ${delay}s)"
  else
    assert_eq 3 "$rc" "sharectl's exit code when the engine went away (restart at ${delay}s)"
    assert_contains "$(cat "$SM_DIR/out")" "PostgreSQL at $SM_DIR/pg" "the refusal names the engine"
    assert_eq "$before" "$rows" "engine rows after a refused batch (restart at ${delay}s)"
  fi
  for _ in $(seq 200); do
    [[ $(scb --json stats | jq -r .generation) == "$gen" && $(sc --json stats | jq -r .generation) == "$gen" ]] && break
    sleep 0.05
  done
  assert_eq "$rows" "$(scb --json stats | jq -r .shares)" "head b's shares (restart at ${delay}s)"
  assert_eq "$rows" "$(sc --json stats | jq -r .shares)" "head a's shares (restart at ${delay}s)"
  echo "restart at ${delay}s: sharectl exit $rc, engine generation $gen, $rows shares; both heads the same"
  # Back to empty for the next round, through head A.
  if [[ $rows != 0 ]]; then
    sc batch "$SM_DIR/unbatch" >/dev/null 2>&1 || fail "the heads take no change after the restart"
  fi
done
echo "ok"
