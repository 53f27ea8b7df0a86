#!/usr/bin/env bash
# `sharectl batch` of a big file (2 MiB or more) says so to the daemon
# before it reads and parses the file (PREPARE_BATCH): the daemon answers
# and changes nothing, and the batch is applied as any other. A caller who
# may not change shares has its announcement and its batch refused as
# before; a small file is not announced.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to run as nobody"; exit 0; }
start_daemon --log-file "$SM_DIR/audit.log"
n=4000
mkdir -p "$SM_DIR"/e/u{1..4000} "$SM_DIR"/e/s{1..200}
# 4,000 adds and comments: over the 2 MiB of file that are announced.
pad=$(printf '#%.0s' {1..1000})
{
  echo "create big"
  printf "add-share -s $SM_DIR/e/u%d big\n" $(seq 1 $n)
  for _ in {1..2100}; do echo "$pad"; done
} >"$SM_DIR/big.batch"
(($(stat -c %s "$SM_DIR/big.batch") >= 2097152)) || fail "batch file too small"
shares() { sc --json stats | grep -o '"shares": *[0-9]*' | grep -o '[0-9]*$'; }
# A batch of 100 adds from a small file (not announced), applied.
small=0
small_batch() {
  local i
  small=$((small + 1))
  {
    # The first makes the group.
    ((small == 1)) && echo "create big"
    for i in $(seq $((small * 100 - 99)) $((small * 100))); do
      echo "add-share -s $SM_DIR/e/s$i big"
    done
  } >"$SM_DIR/small.batch"
  sc batch "$SM_DIR/small.batch" >/dev/null 2>&1 || fail "small batch $small $1 refused"
}

chmod 0666 "$SM_SOCKET"
chmod 0755 "$SM_DIR"
chmod 0644 "$SM_DIR/big.batch"
rc=0
err=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
  "$SHARECTL" --socket "$SM_SOCKET" batch "$SM_DIR/big.batch" 2>&1) || rc=$?
assert_eq 1 "$rc" "exit code of a big batch as nobody"
assert_contains "${err,,}" "permission denied" "a big batch as nobody"
small_batch "after a refused announcement"
assert_eq 100 "$(shares)" "shares after the refused batch and one of 100"

sed -i 1d "$SM_DIR/big.batch"  # the group exists
out=$(sc batch "$SM_DIR/big.batch" 2>&1) || fail "big batch refused: $out"
assert_contains "$out" "$n operations applied" "the batch's summary"
grep -q "add-share $n (" "$SM_DIR/audit.log" ||
  fail "no audit line: $(cat "$SM_DIR/audit.log")"
small_batch "after the announced one"
assert_eq "$((n + 100 * small))" "$(shares)" "shares after the batches"
echo "ok"
