# Shared helpers for the bash integration tests of sharemgrd and sharectl,
# and for the benchmark scripts that start daemons (bench/tools/*.sh):
# tests/support is the one part of tests/ that bench may use.
# Source it from a test script:
#
#   source "$(dirname "$0")/../support/daemon_lib.sh"
#   sm_setup                       # temp dir, traps, binaries checked
#   start_daemon --hosts "$SM_DIR/hosts"   # extra sharemgrd arguments
#   sc create g1                   # sharectl against this daemon
#   stop_daemon                    # SIGTERM, returns the daemon's exit code
#
# Binaries come from the environment (ctest sets them): SHAREMGRD, SHARECTL,
# MOUNTPROBE, MOUNT_LOAD; or from SM_BIN_DIR (default: build/bin).
# Variables set for the test: SM_DIR (own temporary folder), SM_SOCKET,
# SM_DB, SM_SHARETAB, DAEMON_PID, MOUNT_PORT (once serving), SM_LOG.
# Nothing here is specific to one test; every function fails loudly.

set -euo pipefail

SM_BIN_DIR=${SM_BIN_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin}
SHAREMGRD=${SHAREMGRD:-$SM_BIN_DIR/sharemgrd}
SHARECTL=${SHARECTL:-$SM_BIN_DIR/sharectl}
MOUNTPROBE=${MOUNTPROBE:-$SM_BIN_DIR/mountprobe}
MOUNT_LOAD=${MOUNT_LOAD:-$SM_BIN_DIR/mount_load}

DAEMON_PID=
MOUNT_PORT=
SM_STARTED_RPCBIND_PID=
SM_CLEANUPS=()

# Prints a message naming the test and exits 1.
fail() {
  echo "FAIL: $(basename "$0"): $*" >&2
  if [[ -n ${SM_LOG:-} && -f ${SM_LOG:-} ]]; then
    echo "--- daemon log ($SM_LOG), last lines:" >&2
    tail -n 30 "$SM_LOG" >&2 || true
  fi
  exit 1
}

# Long values are shown as a diff, so a failure stays readable.
assert_eq() {  # EXPECTED ACTUAL [WHAT]
  [[ $1 == "$2" ]] && return 0
  if ((${#1} + ${#2} > 400)); then
    fail "${3:-value} differs:
$(diff <(tr ',' '\n' <<<"$1") <(tr ',' '\n' <<<"$2") | head -n 20)"
  fi
  fail "${3:-value}: expected '$1', got '$2'"
}

assert_contains() {  # HAYSTACK NEEDLE [WHAT]
  [[ $1 == *"$2"* ]] || fail "${3:-output}: '$2' not found in: $1"
}

assert_not_contains() {  # HAYSTACK NEEDLE [WHAT]
  [[ $1 != *"$2"* ]] || fail "${3:-output}: '$2' unexpectedly found in: $1"
}

# Runs cleanups registered with on_exit, last first, then removes SM_DIR.
sm_cleanup() {
  local rc=$?
  set +e
  local i
  for ((i = ${#SM_CLEANUPS[@]} - 1; i >= 0; i--)); do
    eval "${SM_CLEANUPS[i]}"
  done
  if [[ -n $DAEMON_PID ]] && kill -0 "$DAEMON_PID" 2>/dev/null; then
    kill -KILL "$DAEMON_PID" 2>/dev/null
    wait "$DAEMON_PID" 2>/dev/null
  fi
  stop_rpcbind_if_started
  if [[ -n ${SM_DIR:-} && -d $SM_DIR && ${SM_KEEP_DIR:-0} != 1 ]]; then
    rm -rf "$SM_DIR"
  fi
  exit "$rc"
}

on_exit() {  # COMMAND: run at exit, before the daemon is killed
  SM_CLEANUPS+=("$1")
}

# Makes the test's own temporary folder and installs the exit trap.
sm_setup() {
  local b
  for b in "$SHAREMGRD" "$SHARECTL" "$MOUNTPROBE"; do
    [[ -x $b ]] || fail "program not built: $b"
  done
  SM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/sharemgr-test.XXXXXX")
  chmod 755 "$SM_DIR"
  SM_SOCKET=$SM_DIR/sharemgrd.sock
  SM_DB=$SM_DIR/shares.db
  SM_SHARETAB=$SM_DIR/sharetab
  SM_LOG=$SM_DIR/sharemgrd.log
  trap sm_cleanup EXIT
  trap 'exit 130' INT TERM
}

# Prints a port free for both TCP and UDP on 127.0.0.1.
free_port() {
  python3 - <<'PY'
import socket
for _ in range(100):
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind(("0.0.0.0", 0))
    port = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("0.0.0.0", port))
    except OSError:
        t.close(); continue
    print(port)
    break
PY
}

# Starts rpcbind if it is not running; stops it at exit if we started it.
ensure_rpcbind() {
  if rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
    return 0
  fi
  command -v rpcbind >/dev/null || fail "rpcbind is not installed"
  rpcbind -f -w &
  SM_STARTED_RPCBIND_PID=$!
  local i
  for ((i = 0; i < 100; i++)); do
    rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "rpcbind did not start"
}

stop_rpcbind_if_started() {
  if [[ -n $SM_STARTED_RPCBIND_PID ]]; then
    kill -TERM "$SM_STARTED_RPCBIND_PID" 2>/dev/null
    wait "$SM_STARTED_RPCBIND_PID" 2>/dev/null
    SM_STARTED_RPCBIND_PID=
  fi
  return 0
}

# Starts sharemgrd in the foreground (as a background job) on this test's
# db, socket and sharetab, with --mount-port 0 and --no-rpcbind unless the
# arguments say otherwise (pass SM_RPCBIND=1 to register with rpcbind).
# Extra arguments go to sharemgrd. Waits until it serves.
start_daemon() {
  local args=(--foreground --db "$SM_DB" --socket "$SM_SOCKET"
              --sharetab "$SM_SHARETAB")
  [[ " $* " == *" --mount-port "* ]] || args+=(--mount-port 0)
  [[ ${SM_RPCBIND:-0} == 1 ]] || args+=(--no-rpcbind)
  : >>"$SM_LOG"
  echo "=== start: $SHAREMGRD ${args[*]} $*" >>"$SM_LOG"
  "$SHAREMGRD" "${args[@]}" "$@" 2>>"$SM_LOG" &
  DAEMON_PID=$!
  wait_serving
}

# Waits (up to SM_START_TIMEOUT seconds, default 30) for the daemon's
# "serving" line; sets MOUNT_PORT from it.
wait_serving() {
  local i line
  local tries=$((${SM_START_TIMEOUT:-30} * 20))
  local from
  from=$(grep -n '^=== start' "$SM_LOG" | tail -n1 | cut -d: -f1)
  for ((i = 0; i < tries; i++)); do
    line=$(tail -n +"$from" "$SM_LOG" | grep -m1 '^sharemgrd: serving' || true)
    if [[ -n $line ]]; then
      MOUNT_PORT=$(sed -n 's/.*mount port \([0-9][0-9]*\).*/\1/p' <<<"$line")
      [[ -n $MOUNT_PORT ]] || fail "no mount port in: $line"
      return 0
    fi
    kill -0 "$DAEMON_PID" 2>/dev/null || fail "sharemgrd exited before serving"
    sleep 0.05
  done
  fail "sharemgrd did not print its serving line within ${SM_START_TIMEOUT:-30} s"
}

# Sends SIGTERM and waits; returns the daemon's exit code.
stop_daemon() {
  [[ -n $DAEMON_PID ]] || return 0
  local rc=0
  kill -TERM "$DAEMON_PID" 2>/dev/null || true
  wait "$DAEMON_PID" || rc=$?
  DAEMON_PID=
  return "$rc"
}

# Stops and starts the daemon again with the same arguments given here.
restart_daemon() {
  local rc=0
  stop_daemon || rc=$?
  [[ $rc == 0 ]] || fail "sharemgrd exited $rc on SIGTERM"
  start_daemon "$@"
}

# sharectl against this test's daemon.
sc() {
  "$SHARECTL" --socket "$SM_SOCKET" "$@"
}

# Runs `sharectl ARGS...` with mount changes made the moment the daemon
# logs the change applied (its audit line, which names TEXT), before the
# round that change wakes: STEPS is one word list for
# mount_after_logged.py (bind SRC DST, umount PATH, tmpfs SOURCE PATH,
# mkdir PATH). Returns once sharectl and the steps are done; fails if
# either failed.
sc_then_mount() {  # TEXT STEPS -- ARGS...
  local text=$1 steps=() out=$SM_DIR/mount_after_logged.out pid i
  shift
  while (($# > 0)) && [[ $1 != -- ]]; do steps+=("$1"); shift; done
  shift
  : >"$out"
  python3 "$(dirname "${BASH_SOURCE[0]}")/mount_after_logged.py" \
    "$SM_LOG" "$text" "${steps[@]}" >"$out" &
  pid=$!
  for ((i = 0; i < 1000; i++)); do
    [[ -s $out ]] && break
    sleep 0.01
  done
  [[ $(head -n1 "$out") == ready ]] || fail "mount_after_logged.py did not start"
  sc "$@" >/dev/null 2>&1 || { kill "$pid" 2>/dev/null; fail "sharectl $* failed"; }
  wait "$pid" || fail "the mount steps after '$text' failed: ${steps[*]}"
  [[ $(tail -n1 "$out") == done ]] || fail "the mount steps did not finish"
}

# The sharetab view as the daemon has it now (SHARETAB), as the file has it.
sharetab_of_daemon() {
  sc --json share | jq -r '.shares[] | [.path,
    (if (.resource // "") == "" then "-" else .resource end), .fstype,
    .options, (.description // "")] | join("\t")'
}

# The sharetab file is rewritten after a change's reply, in the background
# (paced): waits (up to 10 s) until it holds the daemon's view.
wait_sharetab() {
  local want i
  want=$(sharetab_of_daemon) || fail "sharectl share failed"
  for ((i = 0; i < 200; i++)); do
    [[ -f $SM_SHARETAB && $(cat "$SM_SHARETAB") == "$want" ]] && return 0
    sleep 0.05
  done
  fail "the sharetab view $SM_SHARETAB does not hold the daemon's shares after 10 s"
}

# Waits (up to 5 s) until `sharectl check 127.0.0.1 PATH` exits with WANT
# (0 granted, 1 refused): a served state changes once the probe a mount
# change woke has run.
wait_check() {  # PATH WANT
  local path=$1 want=$2 i rc
  for ((i = 0; i < 100; i++)); do
    rc=0
    sc check 127.0.0.1 "$path" >/dev/null 2>&1 || rc=$?
    [[ $rc == "$want" ]] && return 0
    sleep 0.05
  done
  fail "check of $path did not exit $want within 5 s (last $rc)"
}

# The daemon's shares and groups as sorted JSON, without the in-memory
# generation counters (they restart at each daemon start by design).
show_state() {
  sc --json show -v | jq -S 'walk(if type == "object" then del(.generation) else . end)'
}

# mountprobe against this test's daemon (TCP, reserved port unless told).
probe() {
  "$MOUNTPROBE" --server 127.0.0.1 --port "$MOUNT_PORT" "$@"
}

# The mount point the daemon recorded for the share at PATH (its store's
# shares.fs_mount), or nothing while none is recorded.
recorded_mount() {  # PATH
  python3 - "$SM_DB" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
row = db.execute("SELECT fs_mount FROM shares WHERE path = ?",
                 (sys.argv[2],)).fetchone()
print(row[0] if row and row[0] is not None else "")
PY
}

# Waits (up to 5 s) until a round recorded the file system of PATH's share.
wait_recorded() {  # PATH
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -n $(recorded_mount "$1") ]] && return 0
    sleep 0.05
  done
  fail "no file system recorded for $1 within 5 s"
}

# Makes directories under SM_DIR/export and prints their paths on one line:
#   read -r a b <<<"$(make_dirs a b)"
make_dirs() {  # NAME...
  local n out=()
  for n in "$@"; do
    mkdir -p "$SM_DIR/export/$n"
    out+=("$SM_DIR/export/$n")
  done
  echo "${out[*]}"
}
