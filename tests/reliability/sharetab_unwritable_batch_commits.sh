#!/usr/bin/env bash
# The sharetab view cannot be written (its folder is a regular file, then a
# read-only file system): batches still commit, the error is logged and
# shown in `stats --json` (sharetab_error), and the view is rewritten as
# soon as it can be.
source "$(dirname "$0")/lib.sh"
sm_setup
read -r a b c <<<"$(make_dirs a b c)"

# The view is written after the reply, in the background: waits (up to
# 10 s) until stats shows a sharetab_error (set) or none (clear).
wait_sharetab_error() {  # set|clear
  local i err
  for ((i = 0; i < 200; i++)); do
    err=$(sc --json stats | jq -r '.sharetab_error // ""')
    [[ $1 == set && -n $err ]] && return 0
    [[ $1 == clear && -z $err ]] && return 0
    sleep 0.05
  done
  fail "stats: sharetab_error not ${1} after 10 s (now '$err')"
}

# 1. The view's parent is a regular file: no root privilege helps.
: >"$SM_DIR/notadir"
SM_SHARETAB=$SM_DIR/notadir/sharetab
start_daemon --insecure
sc create g || fail "create refused"
sc add-share -s "$a" g || fail "add-share refused while the view is unwritable"
sc --json show | grep "$a" >/dev/null || fail "share not committed"
wait_sharetab_error set
err=$(sc --json stats | jq -r '.sharetab_error // ""')
[[ -n $err ]] || fail "stats shows no sharetab_error"
assert_contains "$err" "$SM_SHARETAB" "sharetab_error"
grep -q "sharetab" "$SM_LOG" || fail "no sharetab error in the log"
rm "$SM_DIR/notadir" && mkdir "$SM_DIR/notadir"
sc add-share -s "$b" g || fail "add-share refused"
wait_sharetab_error clear
wait_sharetab
grep -q "^$a	" "$SM_SHARETAB" && grep -q "^$b	" "$SM_SHARETAB" ||
  fail "view not rewritten: $(cat "$SM_SHARETAB")"
stop_daemon || fail "sharemgrd exited non-zero"

# 2. A read-only file system under the view (root only).
if [[ $(id -u) == 0 ]]; then
  mkdir -p "$SM_DIR/view"
  if mount -t tmpfs -o size=1m tmpfs "$SM_DIR/view" 2>/dev/null; then
    on_exit "umount -l '$SM_DIR/view'"
    SM_SHARETAB=$SM_DIR/view/sharetab
    start_daemon --insecure
    mount -o remount,ro "$SM_DIR/view" || fail "cannot remount read-only"
    sc add-share -s "$c" g || fail "add-share refused on a read-only view"
    wait_sharetab_error set
    grep -q "^$c	" "$SM_SHARETAB" && fail "view written on a read-only fs?"
    mount -o remount,rw "$SM_DIR/view" || fail "cannot remount read-write"
    # A restart rewrites the view from the store.
    restart_daemon --insecure
    grep -q "^$c	" "$SM_SHARETAB" || fail "view not rewritten at start-up"
    assert_eq "" "$(sc --json stats | jq -r '.sharetab_error // ""')" "sharetab_error after restart"
  else
    echo "note: cannot mount a tmpfs; read-only view case skipped"
  fi
fi
echo "ok"
