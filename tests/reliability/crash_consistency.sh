#!/usr/bin/env bash
# SIGKILL at a random moment while a batch of 15,000 operations is in
# flight (or while the daemon loads 15,000 shares at start-up): after a
# restart the table (show -v --json), the sharetab view and EXPORT all
# equal the state before the batch (A) or after it (B), never a mix; and a
# batch that sharectl reported as committed is never lost.
#
# SHAREMGR_CRASH_ROUNDS (default 50) sets the number of rounds; long mode:
#   SHAREMGR_CRASH_ROUNDS=500 bash tests/reliability/crash_consistency.sh
# SHAREMGR_CRASH_OPS (default 15000) sets the batch size.
source "$(dirname "$0")/lib.sh"
sm_setup
ROUNDS=${SHAREMGR_CRASH_ROUNDS:-50}
OPS=${SHAREMGR_CRASH_OPS:-15000}
export SM_START_TIMEOUT=60

make_many_dirs "$OPS" d
mkdir -p "$SM_DIR/base"
{
  for ((i = 0; i < OPS; i++)); do
    printf 'add-share -s %s/export/d%05d g\n' "$SM_DIR" "$i"
  done
} >"$SM_DIR/add.batch"
sed 's/^add-share/remove-share/' "$SM_DIR/add.batch" >"$SM_DIR/remove.batch"

start_daemon --insecure
sc create g || fail "create refused"
sc add-share -d base -s "$SM_DIR/base" g || fail "add-share refused"
declare -A DIGEST
DIGEST[A]=$(state_digest) || fail "state A unreadable"
t0=$(date +%s%N)
sc batch "$SM_DIR/add.batch" || fail "add batch refused"
batch_ms=$((($(date +%s%N) - t0) / 1000000))
# Kill moments spread over the whole batch, sharectl's parsing included:
# 0..max(300 ms, 1.2 x a clean batch), or as told.
MAX_DELAY_MS=${SHAREMGR_CRASH_MAX_DELAY_MS:-$((batch_ms * 6 / 5 > 300 ? batch_ms * 6 / 5 : 300))}
echo "a clean batch of $OPS adds took $batch_ms ms; kills land 0..$MAX_DELAY_MS ms into a batch"
DIGEST[B]=$(state_digest) || fail "state B unreadable"
[[ ${DIGEST[A]} != "${DIGEST[B]}" ]] || fail "A and B look the same"
t0=$(date +%s%N)
restart_daemon --insecure
start_ms=$((($(date +%s%N) - t0) / 1000000))
echo "a clean restart with $OPS shares took $start_ms ms (stop, start, serving)"
assert_eq "${DIGEST[B]}" "$(state_digest)" "state B after a clean restart"
sc batch "$SM_DIR/remove.batch" || fail "remove batch refused"
assert_eq "${DIGEST[A]}" "$(state_digest)" "state A after the remove batch"
state=A

which_state() {  # DIGEST -> A, B or "mix"
  local s
  for s in A B; do
    [[ $1 == "${DIGEST[$s]}" ]] && { echo "$s"; return; }
  done
  echo mix
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
stayed=0 moved=0 startup_kills=0 killed_in_load=0 restart_ms=0 check_ms=0
t_start=$(now_ms)
for ((r = 1; r <= ROUNDS; r++)); do
  delay_ms=$((RANDOM % (MAX_DELAY_MS + 1)))
  delay=$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))
  if ((r % 3 == 0)) && [[ $state == B ]]; then
    # Kill during the start-up load of $OPS shares.
    stop_daemon || fail "round $r: sharemgrd exited non-zero on SIGTERM"
    start_daemon_nowait --insecure
    # 0..the time a clean restart takes, so most kills land in the load.
    ms=$((RANDOM % (start_ms + 1)))
    sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
    from=$(grep -n '^=== start' "$SM_LOG" | tail -n1 | cut -d: -f1)
    tail -n +"$from" "$SM_LOG" | grep '^sharemgrd: serving' >/dev/null ||
      killed_in_load=$((killed_in_load + 1))
    kill_daemon
    startup_kills=$((startup_kills + 1))
    start_daemon --insecure
    got=$(which_state "$(state_digest)")
    assert_eq "$state" "$got" "round $r (kill during start-up): state"
    continue
  fi
  if [[ $state == A ]]; then file=add.batch next=B; else file=remove.batch next=A; fi
  sc batch "$SM_DIR/$file" >/dev/null 2>&1 &
  batch_pid=$!
  sleep "$delay"
  kill_daemon
  batch_rc=0
  wait "$batch_pid" || batch_rc=$?
  t1=$(now_ms)
  start_daemon --insecure
  t2=$(now_ms)
  digest=$(state_digest) || fail "round $r: state unreadable after restart"
  t3=$(now_ms)
  restart_ms=$((restart_ms + t2 - t1)) check_ms=$((check_ms + t3 - t2))
  got=$(which_state "$digest")
  case $got in
    "$state") stayed=$((stayed + 1)) ;;
    "$next") moved=$((moved + 1)) ;;
    *) fail "round $r (kill ${delay_ms} ms into the $file): a mix of A and B:
$digest
A:
${DIGEST[A]}
B:
${DIGEST[B]}" ;;
  esac
  if [[ $batch_rc == 0 && $got != "$next" ]]; then
    fail "round $r: sharectl reported the $file committed, but after the kill the state is $got"
  fi
  state=$got
done
echo "ok: $ROUNDS rounds of $OPS operations: $stayed kept the old state," \
  "$moved the new one; $startup_kills kills during start-up" \
  "($killed_in_load before the serving line); $(($(now_ms) - t_start)) ms in" \
  "all, restarts $restart_ms ms, state checks $check_ms ms"
