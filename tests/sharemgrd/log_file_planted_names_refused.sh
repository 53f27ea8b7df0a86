#!/usr/bin/env bash
# --log-file never waits on, nor writes through, a name someone else
# planted (issue 48, item 12). At start, a FIFO (read or not), a symbolic
# link, a file another user owns, a file with a second link, a
# group-writable file and a folder others may write are each refused at
# once, naming the file and why. After a rotation in which a FIFO took the
# name, SIGHUP keeps the old file, nothing reaches the FIFO's reader, and
# the daemon goes on answering.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || skip "needs root (files owned by another user)"

check_refused() {  # NAME LOG_PATH WHY
  local rc=0
  timeout 10 "$SHAREMGRD" --foreground --no-rpcbind --kernel=off \
    --mount-port 0 --db "$SM_DIR/$1/db" --socket "$SM_DIR/$1/sock" \
    --sharetab "$SM_DIR/$1/sharetab" --log-file "$2" 2>"$SM_DIR/$1.err" ||
    rc=$?
  [[ $rc != 124 ]] || fail "$1: the start hung on the planted name $2"
  assert_eq 1 "$rc" "$1: exit status"
  assert_contains "$(cat "$SM_DIR/$1.err")" "--log-file $2: $3" "$1: the error"
}

mkfifo "$SM_DIR/fifo.log"
check_refused fifo "$SM_DIR/fifo.log" "is a FIFO"
# A FIFO with a reader (this shell holds it open read-write on fd 3, which
# does not block on Linux): the open succeeds and the file is refused.
mkfifo "$SM_DIR/read-fifo.log"
exec 3<>"$SM_DIR/read-fifo.log"
check_refused read-fifo "$SM_DIR/read-fifo.log" "is not a regular file"
exec 3>&-
ln -s "$SM_DIR/target" "$SM_DIR/link.log"
check_refused link "$SM_DIR/link.log" "is a symbolic link"
[[ ! -e $SM_DIR/target ]] || fail "a file was created through the link"
install -m 0666 -o 65534 /dev/null "$SM_DIR/nobody.log"
check_refused nobody "$SM_DIR/nobody.log" "is owned by uid 65534, not uid 0"
: >"$SM_DIR/two.log"
ln "$SM_DIR/two.log" "$SM_DIR/two-elsewhere"
check_refused two "$SM_DIR/two.log" "has 2 links"
install -m 0660 /dev/null "$SM_DIR/group.log"
check_refused group "$SM_DIR/group.log" "is writable by its group or others (mode 0660)"
mkdir -m 0777 "$SM_DIR/open"
check_refused open "$SM_DIR/open/sharemgrd.log" "its folder $SM_DIR/open is writable by others"
[[ ! -e $SM_DIR/open/sharemgrd.log ]] || fail "a log was created in a folder others may write"
for f in nobody two group; do
  [[ ! -s $SM_DIR/$f.log ]] || fail "$f.log was written: $(cat "$SM_DIR/$f.log")"
done

# A rotation where a FIFO (with a reader) took the name before SIGHUP.
LOGF=$SM_DIR/rot.log
start_daemon --kernel=off --log-file "$LOGF"
sc create before >/dev/null || fail "create before the rotation"
mv "$LOGF" "$LOGF.1"
mkfifo "$LOGF"
exec 4<>"$LOGF"
kill -HUP "$DAEMON_PID"
timeout 10 "$SHARECTL" --socket "$SM_SOCKET" create after >/dev/null ||
  fail "sharectl create after SIGHUP did not complete"
for _ in $(seq 100); do
  grep -q "cannot reopen the log file" "$LOGF.1" && break
  sleep 0.05
done
assert_contains "$(cat "$LOGF.1")" "cannot reopen the log file: --log-file $LOGF: is not a regular file" "the refusal, in the old file"
assert_contains "$(cat "$LOGF.1")" 'create "after"' "the audit line goes on in the old file"
got=$(timeout 1 cat <&4 || true)
[[ -z $got ]] || fail "the FIFO's reader got: $got"
exec 4>&-
stop_daemon || fail "sharemgrd exited $? on SIGTERM"
echo ok
