#!/usr/bin/env bash
# A batch with one bad operation is refused whole: nothing changes, and the
# bad line is named.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
read -r a b c <<<"$(make_dirs a b c)"
sc create g && sc add-share -s "$a" g || fail "setup refused"

before_raw=$(sc --json show -v)
before_show=$(show_state)
before_list=$(sc list -v)
wait_sharetab
before_tab=$(cat "$SM_SHARETAB")
before_gen=$(sc --json stats | jq .generation)

cat >"$SM_DIR/batch" <<B
# good lines, then one bad line
create h
add-share -s $b h
set -o ro -s $a g
add-share -s $SM_DIR/export/does-not-exist h
add-share -s $c h
B
rc=0
err=$(sc batch "$SM_DIR/batch" 2>&1) || rc=$?
assert_eq 1 "$rc" "exit code of the bad batch"
assert_contains "$err" "5:" "error names the bad line"
assert_contains "$err" "does-not-exist" "error names the bad path"

assert_eq "$before_raw" "$(sc --json show -v)" "show -v after the bad batch"
assert_eq "$before_list" "$(sc list -v)" "list -v after the bad batch"
assert_eq "$before_tab" "$(cat "$SM_SHARETAB")" "sharetab file after the bad batch"
assert_eq "$before_gen" "$(sc --json stats | jq .generation)" "generation"
restart_daemon
assert_eq "$before_show" "$(show_state)" "show -v after restart"
echo "ok"
