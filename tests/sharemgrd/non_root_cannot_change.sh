#!/usr/bin/env bash
# A caller that is neither root nor in --admin-group gets a clear
# permission error for every change, and nothing changes; it can still read.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to run as nobody"; exit 0; }
start_daemon
read -r a b <<<"$(make_dirs a b)"
sc create g && sc add-share -s "$a" g || fail "setup refused"
chmod 0666 "$SM_SOCKET"
before=$(sc --json show -v)

nobody() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$SHARECTL" --socket "$SM_SOCKET" "$@"
}
echo "add-share -s $b g" >"$SM_DIR/batch"
chmod 0644 "$SM_DIR/batch"
for cmd in "create h" "delete -f g" "disable g" "add-share -s $b g" \
           "remove-share -s $a g" "set -o ro g" "batch $SM_DIR/batch" \
           "exportfs -ra" "exportfs -o rw 10.0.0.1:$b" \
           "exportfs -f"; do
  rc=0
  # shellcheck disable=SC2086
  err=$(nobody $cmd 2>&1) || rc=$?
  assert_eq 1 "$rc" "exit code of '$cmd' as nobody"
  [[ ${err,,} == *permission* || ${err,,} == *not\ allowed* || ${err,,} == *denied* ]] ||
    fail "'$cmd' as nobody: unclear error: $err"
done
assert_eq "$before" "$(sc --json show -v)" "shares after refused changes"

out=$(nobody list) || fail "list as nobody failed"
assert_contains "$out" "g" "list as nobody"
out=$(nobody --json show) || fail "show as nobody failed"
assert_contains "$out" "$a" "show as nobody"
nobody --json check 127.0.0.1 "$a" >/dev/null || fail "check as nobody failed"
echo "ok"
