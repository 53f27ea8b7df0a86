#!/usr/bin/env bash
# nfs.conf as the daemon meets it: a bad [mountd] value stops the start
# with one line naming FILE:LINE and the key, and creates nothing (no
# store, no socket); a good file's settings are taken and the log says
# from which line (here port= becomes the MOUNT port, which rpcinfo-free
# clients reach); a flag given wins over the file.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
port=$(free_port)
other=$(free_port)
conf=$SM_DIR/nfs.conf
mkdir -p "$conf.d"
printf '[general]\npipefs-directory=/run/rpc_pipefs\n[mountd]\nmanage-gids = perhaps\n' >"$conf"

start() {  # NAME [ARGS]: a start on SM_DIR/NAME, its stderr in SM_DIR/NAME.err
  local name=$1
  shift
  "$SHAREMGRD" --foreground --no-rpcbind --kernel=off --nfs-conf "$conf" \
    --db "$SM_DIR/$name/state/shares.db" --socket "$SM_DIR/$name/run/sock" \
    --sharetab "$SM_DIR/$name/run/sharetab" "$@" 2>"$SM_DIR/$name.err"
}

rc=0
start bad || rc=$?
assert_eq 1 "$rc" "exit status of a start with a bad nfs.conf"
err=$(cat "$SM_DIR/bad.err")
assert_contains "$err" "$conf:4:" "the error (file and line)"
assert_contains "$err" "manage-gids" "the error (the key)"
assert_contains "$err" "perhaps" "the error (the value)"
[[ ! -e $SM_DIR/bad ]] || fail "a refused start left: $(find "$SM_DIR/bad")"

# A bad value in a conf.d file names that file.
printf '[mountd]\nmanage-gids = y\n' >"$conf"
printf '[mountd]\nport = 70000\n' >"$conf.d/50-local.conf"
rc=0
start bad2 || rc=$?
assert_eq 1 "$rc" "exit status with a bad port in conf.d"
assert_contains "$(cat "$SM_DIR/bad2.err")" "$conf.d/50-local.conf:2:" "the error"
[[ ! -e $SM_DIR/bad2 ]] || fail "a refused start left: $(find "$SM_DIR/bad2")"

# A good file: the port is taken from conf.d (later than nfs.conf), and
# the log names the line; a flag wins over it.
printf '[mountd]\nport = %s\n' "$port" >"$conf.d/50-local.conf"
# start_daemon gives --mount-port 0 unless told one: start it here.
: >>"$SM_LOG"
echo "=== start: with $conf" >>"$SM_LOG"
"$SHAREMGRD" --foreground --no-rpcbind --kernel=off --nfs-conf "$conf" \
  --db "$SM_DB" --socket "$SM_SOCKET" --sharetab "$SM_SHARETAB" 2>>"$SM_LOG" &
DAEMON_PID=$!
wait_serving
assert_eq "$port" "$MOUNT_PORT" "MOUNT port taken from nfs.conf.d"
assert_contains "$(cat "$SM_LOG")" "port=$port ($conf.d/50-local.conf:2)" "what the log says it took"
stop_daemon || fail "sharemgrd exited $? on SIGTERM"
start_daemon --kernel=off --nfs-conf "$conf" --mount-port "$other"
assert_eq "$other" "$MOUNT_PORT" "MOUNT port: --mount-port wins over nfs.conf"
stop_daemon || fail "sharemgrd exited $? on SIGTERM"
echo ok
