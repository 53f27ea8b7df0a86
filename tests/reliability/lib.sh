# Helpers for the reliability tests, on top of tests/support/daemon_lib.sh
# (sm_setup, start_daemon, wait_serving, stop_daemon, sc, probe, fail...).
#
#   source "$(dirname "$0")/lib.sh"
#
# Adds: state_digest (table + sharetab view + EXPORT, one line per part),
# start_daemon_nowait, kill_daemon, rss_kib, make_many_dirs.

source "$(dirname "${BASH_SOURCE[0]}")/../support/daemon_lib.sh"

# Starts sharemgrd like start_daemon but returns at once (DAEMON_PID set),
# so a test can kill it during its start-up load.
start_daemon_nowait() {
  local args=(--foreground --db "$SM_DB" --socket "$SM_SOCKET"
              --sharetab "$SM_SHARETAB" --mount-port 0 --no-rpcbind)
  : >>"$SM_LOG"
  echo "=== start: $SHAREMGRD ${args[*]} $*" >>"$SM_LOG"
  "$SHAREMGRD" "${args[@]}" "$@" 2>>"$SM_LOG" &
  DAEMON_PID=$!
}

# SIGKILL, then reap.
kill_daemon() {
  [[ -n $DAEMON_PID ]] || return 0
  kill -KILL "$DAEMON_PID" 2>/dev/null || true
  wait "$DAEMON_PID" 2>/dev/null || true
  DAEMON_PID=
}

# The daemon's resident set in KiB.
rss_kib() {  # [PID]
  awk '/^VmRSS:/ {print $2}' "/proc/${1:-$DAEMON_PID}/status"
}

# Three digests, one per line: the table (show -v --json without share
# ids and generation counters), the sharetab view file, and EXPORT.
# Equal digests mean equal states.
state_digest() {
  local table view export
  # Share ids are given anew when a share is added again; generations are
  # in-memory counters: neither is part of the state compared here.
  table=$(sc --json show -v | sed -E 's/"(id|generation)":[0-9]+//g' |
    md5sum) || return 1
  wait_sharetab  # written after the replies, in the background
  view=$(md5sum <"$SM_SHARETAB") || return 1
  export=$(probe export) || return 1
  export=$(LC_ALL=C sort <<<"$export" | md5sum)
  printf 'table %s\nview %s\nexport %s\n' "${table%% *}" "${view%% *}" \
    "${export%% *}"
}

# Makes COUNT directories PREFIX00000.. under SM_DIR/export (fast: one
# mkdir call per 5,000 names).
make_many_dirs() {  # COUNT [PREFIX]
  local n=$1 p=${2:-d}
  mkdir -p "$SM_DIR/export"
  (cd "$SM_DIR/export" && seq -f "$p%05g" 0 $((n - 1)) | xargs -n 5000 mkdir -p)
}

# For the file-safety tests: skips unless root with setpriv and user
# nobody; makes a group of this test's own (removed at exit) and sets
# ATTACKER_GROUP, ATTACKER_GID.
attacker_setup() {
  [[ $(id -u) == 0 ]] || { echo "SKIP: needs root (setpriv, chown, groupadd)"; exit 0; }
  command -v setpriv >/dev/null || { echo "SKIP: setpriv not installed"; exit 0; }
  id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 0; }
  ATTACKER_GROUP=smtest$$
  groupadd "$ATTACKER_GROUP" || fail "groupadd $ATTACKER_GROUP"
  on_exit "groupdel '$ATTACKER_GROUP'"
  ATTACKER_GID=$(getent group "$ATTACKER_GROUP" | cut -d: -f3)
}

# Runs COMMAND as nobody with ATTACKER_GROUP as its only group: a member
# of the administrators' group, not root.
as_attacker() {  # COMMAND...
  setpriv --reuid=nobody --regid="$ATTACKER_GID" --clear-groups "$@"
}

# A root-only file an attacker would like root to change: prints its path.
# A folder under SM_DIR that the attacker's group may write (mode 0775),
# as an administrators' group may write the socket's or pid file's
# folder; prints its path.
attacker_folder() {  # NAME
  local d=$SM_DIR/$1
  mkdir "$d" && chgrp "$ATTACKER_GROUP" "$d" && chmod 0775 "$d" ||
    fail "cannot make the group-writable folder $d"
  echo "$d"
}

make_victim() {  # NAME
  local v=$SM_DIR/$1
  echo secret >"$v"
  chown root:root "$v"
  chmod 0600 "$v"
  echo "$v"
}

# Mode, owner, group and content of a file, on one line.
file_state() {  # PATH
  echo "$(stat -c '%a %U %G %h' "$1") $(md5sum <"$1" | cut -c1-32)"
}

# Runs sharemgrd in the foreground on this test's files and expects it to
# refuse to start (exit neither 0 nor a timeout); leaves its stderr in
# SM_DIR/start.out and prints it. Extra arguments go to sharemgrd.
expect_refused_start() {  # WHAT [ARG...]
  local what=$1 rc=0
  shift
  timeout 5 "$SHAREMGRD" --foreground --no-rpcbind --mount-port 0 \
    --db "$SM_DB" --socket "$SM_SOCKET" --sharetab "$SM_SHARETAB" "$@" \
    >"$SM_DIR/start.out" 2>&1 || rc=$?
  if [[ $rc == 0 || $rc == 124 ]]; then
    fail "sharemgrd started with $what (exit $rc): $(cat "$SM_DIR/start.out")"
  fi
  echo "refused $what: $(head -n1 "$SM_DIR/start.out")"
}
