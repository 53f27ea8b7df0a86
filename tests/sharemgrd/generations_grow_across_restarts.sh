#!/usr/bin/env bash
# Generations only grow, across restarts too; `sharectl changes --since`
# answers from the daemon's log, and "too old" for what it does not hold.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
mkdir -p "$SM_DIR/e/a" "$SM_DIR/e/b"
sc create homes
sc add-share -s "$SM_DIR/e/a" homes
g1=$(sc --json stats | jq .generation)
sc --json add-share -s "$SM_DIR/e/b" homes >"$SM_DIR/reply" || fail "add refused"
g2=$(jq .generation "$SM_DIR/reply")
(( g2 == g1 + 1 )) || fail "generation did not grow by one: $g1 -> $g2"

changes=$(sc --json changes --since "$g1")
assert_eq 1 "$(jq '.batches | length' <<<"$changes")" "batches since g1"
assert_eq "$g2" "$(jq '.batches[0].generation' <<<"$changes")" "its generation"
assert_eq "$(id -u)" "$(jq '.batches[0].uid' <<<"$changes")" "its uid"
assert_eq add-share "$(jq -r '.batches[0].origin' <<<"$changes")" "its origin"
assert_eq "added $SM_DIR/e/b" \
  "$(jq -r '.batches[0].shares[] | "\(.change) \(.path)"' <<<"$changes")" "its share"
assert_eq 0 "$(sc --json changes --since "$g2" | jq '.batches | length')" \
  "nothing since now"
out=$(sc changes --since $((g2 + 5)) 2>&1) && fail "a future generation accepted"
assert_contains "$out" "ahead of the table's" "future generation"

restart_daemon
assert_contains "$(grep '^sharemgrd: serving' "$SM_LOG" | tail -n1)" \
  "serving 2 shares in 1 group (" "the serving line's counts"
g3=$(sc --json stats | jq .generation)
(( g3 >= g2 )) || fail "generation went back after restart: $g2 -> $g3"
out=$(sc changes --since "$g1" 2>&1) && fail "changes from before the start answered"
assert_contains "$out" "no longer reaches back to generation $g1" "too old"
sc disable homes
g4=$(sc --json stats | jq .generation)
(( g4 > g2 )) || fail "first change after restart reused a generation: $g2 -> $g4"
changes=$(sc --json changes --since "$g3")
assert_eq 2 "$(jq '.batches[0].shares | length' <<<"$changes")" \
  "disable lists the group's shares"
assert_eq "changed false" \
  "$(jq -r '.batches[0].shares[0] | "\(.change) \(.active)"' <<<"$changes")" "disabled share"
# Shares loaded at start carry the stored generation, not 1.
gen_a=$(sc --json show homes | jq ".groups[0].shares[] | select(.path==\"$SM_DIR/e/a\") | .generation")
(( gen_a > 1 )) || fail "a loaded share has generation $gen_a"
stop_daemon
echo "ok"
