#!/usr/bin/env bash
# The daemon refuses to start on a store owned by another user or writable
# by others, or with its store or socket in a folder writable by others or
# owned by another user, or with its store in a folder writable by a group
# (whose members could plant shares.db-shm -> a root file for SQLite to
# truncate), and says why.
source "$(dirname "$0")/lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (chown)"; exit 0; }
read -r a <<<"$(make_dirs a)"
start_daemon
sc create g && sc add-share -s "$a" g || fail "setup refused"
before=$(show_state)
stop_daemon || fail "sharemgrd exited non-zero"

# Refusing unsafe files at start-up.
refuses_to_start() {  # WHAT
  local rc=0
  timeout 5 "$SHAREMGRD" --foreground --no-rpcbind --mount-port 0 \
    --db "$SM_DB" --socket "$SM_SOCKET" --sharetab "$SM_SHARETAB" \
    >"$SM_DIR/start.out" 2>&1 || rc=$?
  if [[ $rc == 0 || $rc == 124 ]]; then
    fail "sharemgrd started on $1 (exit $rc)"
  fi
  grep -qiE "owned by|writable by others|writable by its group|unsafe|permission" "$SM_DIR/start.out" ||
    fail "no reason given for refusing $1: $(cat "$SM_DIR/start.out")"
  echo "refused $1: $(head -n1 "$SM_DIR/start.out")"
}
chown nobody "$SM_DB"
refuses_to_start "a store owned by nobody"
chown root "$SM_DB"
chmod o+w "$SM_DB"
refuses_to_start "a store writable by others"
chmod o-w "$SM_DB"
chmod o+w "$SM_DIR"
refuses_to_start "a store folder writable by others"
chmod 0755 "$SM_DIR"
# A member of the store folder's group plants links at the names SQLite
# opens following links; the daemon must not start, and the target stays.
attacker_setup
chgrp "$ATTACKER_GROUP" "$SM_DIR"
chmod 0775 "$SM_DIR"
victim=$(make_victim victim)
victim_before=$(file_state "$victim")
for f in "$SM_DB-shm" "$SM_DB-wal" "$SM_DB-journal"; do
  as_attacker ln -sfn "$victim" "$f" || fail "cannot plant $f"
done
refuses_to_start "a store folder writable by its group"
assert_contains "$(cat "$SM_DIR/start.out")" "$SM_DIR is writable by its group" \
  "refusal of a group-writable store folder"
assert_eq "$victim_before" "$(file_state "$victim")" "target of the planted -shm"
rm -f "$SM_DB-shm" "$SM_DB-wal" "$SM_DB-journal" "$victim"
chmod 0755 "$SM_DIR"
chgrp root "$SM_DIR"
mkdir -p "$SM_DIR/run" && chmod 0777 "$SM_DIR/run"
SM_SOCKET=$SM_DIR/run/sharemgrd.sock
refuses_to_start "a socket folder writable by others"
chmod 0755 "$SM_DIR/run"
chown nobody "$SM_DIR/run"
refuses_to_start "a socket folder owned by nobody"
chown root "$SM_DIR/run"
start_daemon
assert_eq "$before" "$(show_state)" "shares once the files are safe again"
echo "ok"
