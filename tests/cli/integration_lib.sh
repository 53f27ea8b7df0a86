# Shared by the integration_*_test.sh scripts: a private sharemgrd in a
# temporary folder, and small assertion helpers.
# Usage (sourced): SHARECTL=... SHAREMGRD=... . integration_lib.sh
set -uo pipefail

# tmpfs when there is one: creating and removing 15,000 share folders on a
# busy ext4 takes tens of seconds.
base=/tmp
if [[ -d /dev/shm && -w /dev/shm ]]; then base=/dev/shm; fi
T=$(mktemp -d "$base/sharectl_it.XXXXXX")
chmod 755 "$T"
PASS=0
FAIL=0
DPID=

stop_daemon() {
  if [[ -n $DPID ]]; then
    kill -TERM "$DPID" 2>/dev/null
    wait "$DPID" 2>/dev/null
    DPID=
  fi
}
finish() {
  stop_daemon
  rm -rf "$T"
}
trap finish EXIT

: > "$T/hosts"
: > "$T/netgroup"

# Starts sharemgrd on private files; returns once it serves.
start_daemon() {
  # The background job opens its log itself, maybe after the first grep.
  : >"$T/daemon.log"
  "$SHAREMGRD" --foreground --no-rpcbind --mount-port 0 --listen 127.0.0.1 \
    --insecure --db "$T/shares.db" --socket "$T/sock" \
    --sharetab "$T/sharetab" --pid-file "$T/sharemgrd.pid" \
    --hosts "$T/hosts" --netgroups "$T/netgroup" "$@" 2>"$T/daemon.log" &
  DPID=$!
  for _ in $(seq 1 400); do
    if grep -q '^sharemgrd: serving' "$T/daemon.log"; then return 0; fi
    if ! kill -0 "$DPID" 2>/dev/null; then break; fi
    sleep 0.025
  done
  echo "FAIL: sharemgrd did not start:"
  cat "$T/daemon.log"
  DPID=
  exit 1
}

# sharectl on the private socket.
sc() { "$SHARECTL" --socket "$T/sock" "$@"; }

# The sharetab file is rewritten after a change's reply, in the background
# (paced): waits (up to 10 s) until it lists the paths the daemon shares.
wait_sharetab() {
  local want i
  want=$(sc --json share | jq -r '.shares[].path')
  for ((i = 0; i < 200; i++)); do
    [[ -f $T/sharetab && $(cut -f1 "$T/sharetab") == "$want" ]] && return 0
    sleep 0.05
  done
  echo "FAIL: the sharetab view does not list the daemon's shares after 10 s"
}

# run CMD...: runs it; sets RC, and OUT/ERR to its stdout/stderr.
run() {
  "$@" >"$T/out" 2>"$T/err"
  RC=$?
  OUT=$(cat "$T/out")
  ERR=$(cat "$T/err")
}

# ok NAME CONDITION: evaluates CONDITION (a bash expression) and counts.
ok() {
  local name=$1
  shift
  if eval "$1"; then
    PASS=$((PASS + 1))
  else
    FAIL=$((FAIL + 1))
    echo "FAIL: $name"
    echo "  condition: $1"
    echo "  rc=${RC:-} stdout: ${OUT:0:600}"
    echo "  stderr: ${ERR:0:600}"
  fi
}

# jqv FILTER: applies FILTER to the last stdout (raw output).
jqv() { jq -r "$1" <"$T/out"; }

report() {
  echo "$PASS passed, $FAIL failed"
  ((FAIL == 0))
}
