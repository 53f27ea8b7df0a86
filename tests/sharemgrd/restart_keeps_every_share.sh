#!/usr/bin/env bash
# A restart keeps every group, share, option and state.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
{
  for g in 1 2 3; do
    echo "create -o ro g$g"
    for i in $(seq 1 100); do
      d=$SM_DIR/export/g$g/u$i
      mkdir -p "$d"
      echo "add-share -o rw=@10.$g.0.0/16 -d 'user $i' -s $d g$g"
    done
  done
  echo "disable g3"
} >"$SM_DIR/batch"
sc batch "$SM_DIR/batch" || fail "batch refused"

before_show=$(show_state)
before_list=$(sc list -v)
before_share=$(sc share)
count=$(sc --json stats | jq .shares)
assert_eq 300 "$count" "shares before restart"

restart_daemon
assert_eq "$before_show" "$(show_state)" "show -v after restart"
assert_eq "$before_list" "$(sc list -v)" "list -v after restart"
assert_eq "$before_share" "$(sc share)" "sharetab view after restart"
assert_eq 300 "$(sc --json stats | jq .shares)" "shares after restart"
echo "ok"
