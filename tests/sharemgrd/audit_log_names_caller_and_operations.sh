#!/usr/bin/env bash
# Every committed change is logged with the caller's uid and pid, its
# origin and what it did: operation by operation for a small batch, counts
# per command for a big one. Refused batches say so; dry runs are not
# logged as changes.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon --log-file "$SM_DIR/audit.log"
uid=$(id -u)
mkdir -p "$SM_DIR/e/a"

sc create -o ro homes || fail "create refused"
sc add-share -d 'it"s' -s "$SM_DIR/e/a" homes || fail "add-share refused"
log=$(cat "$SM_DIR/audit.log")
assert_contains "$log" "change generation 2 by uid $uid" "create logged with the caller"
line=$(grep -m1 "by uid $uid .* pid [0-9][0-9]* (add-share): 1 operation applied" "$SM_DIR/audit.log") ||
  fail "add-share not logged with uid, pid and origin: $log"
assert_contains "$(grep 'change generation 3: ' "$SM_DIR/audit.log")" \
  "add-share -d \"it\\\"s\" -s \"$SM_DIR/e/a\" \"homes\"" "the operation itself"
# Log file lines carry a timestamp and the daemon's pid.
[[ $line =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\ sharemgrd\[$DAEMON_PID\]:\  ]] ||
  fail "log file line without timestamp and pid: $line"

# set-share and unset name the share and what they change.
sc set-share -o ro -d 'x' -s "$SM_DIR/e/a" homes || fail "set-share refused"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "set-share -o \"ro\" -d \"x\" -s \"$SM_DIR/e/a\" \"homes\"" "set-share logged"
sc unset -p ro -s "$SM_DIR/e/a" homes || fail "unset refused"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "unset -p \"ro\" -s \"$SM_DIR/e/a\" \"homes\"" "unset logged"
assert_contains "$(sc changes --since 3)" "$SM_DIR/e/a" "changes names the share"

# A batch that changes nothing (enabling an enabled group) says so under
# the generation it leaves, and does not claim a change.
gen=$(grep -o 'change generation [0-9]*' "$SM_DIR/audit.log" | tail -1 | awk '{print $3}')
sc enable homes || fail "enable of an enabled group refused"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "no change at generation $gen by uid $uid" "a no-op batch names the generation it left"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "(enable): 1 operation changed nothing in" "a no-op batch says it changed nothing"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "no change at generation $gen: enable \"homes\"" "its operation listed"
[[ $(grep -c "change generation $gen: " "$SM_DIR/audit.log") == 1 ]] ||
  fail "the no-op batch claimed generation $gen: $(grep "generation $gen" "$SM_DIR/audit.log")"

# A big batch: counts per command and its origin, not 25 lines.
mkdir -p "$SM_DIR/e/big"
for i in $(seq 1 25); do
  mkdir -p "$SM_DIR/e/big/u$i"
  echo "add-share -s $SM_DIR/e/big/u$i homes"
done >"$SM_DIR/big.batch"
echo "create other" >>"$SM_DIR/big.batch"
# Given by a relative name from another folder: the origin is absolute
# (the log is read far from the caller's folder).
mkdir -p "$SM_DIR/sub"
(cd "$SM_DIR/sub" && sc batch ./../big.batch 2>/dev/null) || fail "big batch refused"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "(batch $SM_DIR/big.batch): 26 operations applied in" "big batch origin, absolute"
assert_contains "$(cat "$SM_DIR/audit.log")" ": create 1, add-share 25" \
  "big batch counted by command"
[[ $(grep -o 'add-share 25 (decoding [0-9]* ms, validation [0-9]* ms, commit [0-9]* ms, linking [0-9]* ms, change list [0-9]* ms)$' \
     "$SM_DIR/audit.log") ]] || fail "big batch line ends with where its time went"
assert_eq 0 "$(grep -c 'change generation 6: ' "$SM_DIR/audit.log" || true)" \
  "no per-operation lines for a big batch"

# Dry runs commit nothing and log no change; refusals are logged as such.
before=$(grep -c 'change generation' "$SM_DIR/audit.log")
sc create -n dry 2>/dev/null || fail "dry run refused"
assert_eq "$before" "$(grep -c 'change generation' "$SM_DIR/audit.log")" "dry run logged"
sc add-share -s "$SM_DIR/e/missing" homes 2>/dev/null && fail "missing folder accepted"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "batch by uid $uid" "refused batch logged with the caller"
assert_contains "$(cat "$SM_DIR/audit.log")" \
  "(add-share) refused, nothing changed: 1 of 1 operations refused" "refusal"

# Foreground: stderr has the same lines.
assert_contains "$(cat "$SM_LOG")" "(add-share): 1 operation applied" "stderr log"
stop_daemon
echo "ok"
