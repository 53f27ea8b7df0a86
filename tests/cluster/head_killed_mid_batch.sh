#!/usr/bin/env bash
# kill -9 of head A in the middle of a big batch (issue 46): head B never
# sees part of it. A 60,000-share batch is sent to A and A is killed at
# several moments (during validation and the engine's writes, around the
# commit); after each kill B's table has either none of the batch or all
# of it, at the generation the engine has; A, restarted, agrees with B,
# and a batch then goes through.
source "$(dirname "$0")/cluster_lib.sh"
cluster_setup

n=60000
mkdir -p "$SM_DIR/d"
for i in $(seq 1 $n); do echo "add-share -s $SM_DIR/d/s$i g"; done >"$SM_DIR/batch"
(cd "$SM_DIR/d" && seq -f 's%.0f' 1 $n | xargs mkdir)
before=$(engine "SELECT count(*) FROM sharemgr_shares")
for delay in 0.1 0.25 0.4 0.6; do
  sc batch "$SM_DIR/batch" >/dev/null 2>&1 &
  sender=$!
  sleep "$delay"
  kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
  wait "$sender" 2>/dev/null || true
  gen=$(engine "SELECT generation FROM sharemgr_cluster")
  rows=$(engine "SELECT count(*) FROM sharemgr_shares")
  [[ $rows == "$before" || $rows == $((before + n)) ]] ||
    fail "the engine holds $rows rows after a kill at ${delay}s (not $before or $((before + n)))"
  # B reaches the engine's generation with the engine's rows, never a part.
  for _ in $(seq 200); do
    [[ $(scb --json stats | jq -r .generation) == "$gen" ]] && break
    sleep 0.05
  done
  assert_eq "$gen" "$(scb --json stats | jq -r .generation)" "head b's generation (kill at ${delay}s)"
  assert_eq "$rows" "$(scb --json stats | jq -r .shares)" "head b's shares (kill at ${delay}s)"
  echo "kill at ${delay}s: engine generation $gen, $rows shares; head b the same"
  start_daemon --store "$url" --head a
  assert_eq "$rows" "$(sc --json stats | jq -r .shares)" "head a after its restart"
  if [[ $rows != "$before" ]]; then
    sc delete -f g >/dev/null 2>&1 || fail "delete -f g refused"
    sc create g >/dev/null 2>&1 || fail "create g refused"
  fi
  before=$(engine "SELECT count(*) FROM sharemgr_shares")
done
echo "ok"
