#!/usr/bin/env bash
# A member of the administrators' group who may write the socket's folder
# and swaps the socket's name for a symbolic link to a root file, again and
# again while the daemon starts, never gets that file re-owned or its mode
# changed (the daemon set owner, group and mode by name after bind, so the
# race re-owned the target in most starts). Once the race stops, the socket
# is root:GROUP 0660.
source "$(dirname "$0")/lib.sh"
sm_setup
attacker_setup
run=$(attacker_folder run) || exit 1
SM_SOCKET=$run/sharemgrd.sock
victim=$(make_victim victim)
victim_before=$(file_state "$victim")

# The planter runs as nobody: a system python3 and a copy of the script
# nobody can read (a pyenv shim or this tree may be root's only).
py=/usr/bin/python3
[[ -x $py ]] || { echo "SKIP: no /usr/bin/python3"; exit 0; }
install -m 0644 "$(dirname "$0")/plant_links.py" "$SM_DIR/plant_links.py"
starts=${SHAREMGR_RACE_STARTS:-60}
as_attacker "$py" "$SM_DIR/plant_links.py" race "$SM_SOCKET" "$victim" 120 \
  >"$SM_DIR/planted" &
planter=$!
on_exit "touch '$SM_SOCKET.stop'; wait $planter 2>/dev/null"
sleep 0.3

served=0
deadline=$((SECONDS + 60))
for ((i = 1; i <= starts && SECONDS < deadline; i++)); do
  : >"$SM_DIR/one.log"
  "$SHAREMGRD" --foreground --no-rpcbind --mount-port 0 --db "$SM_DB" \
    --socket "$SM_SOCKET" --sharetab "$SM_SHARETAB" \
    --admin-group "$ATTACKER_GROUP" 2>"$SM_DIR/one.log" &
  pid=$!
  for ((t = 0; t < 100; t++)); do
    grep -q '^sharemgrd: serving' "$SM_DIR/one.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  grep -q '^sharemgrd: serving' "$SM_DIR/one.log" && served=$((served + 1))
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  after=$(file_state "$victim")
  [[ $after == "$victim_before" ]] ||
    fail "start $i: the planted link's target changed: '$victim_before' -> '$after' ($(head -n1 "$SM_DIR/one.log"))"
done
touch "$SM_SOCKET.stop"
wait "$planter" || fail "the planter failed"
echo "$((i - 1)) starts ($served served) with $(cat "$SM_DIR/planted") sockets replaced by links"
((i - 1 >= 5)) || fail "only $((i - 1)) starts in the time given"
rm -f "$SM_SOCKET" "$SM_SOCKET.stop"

start_daemon --admin-group "$ATTACKER_GROUP"
assert_eq "660 root $ATTACKER_GROUP" "$(stat -c '%a %U %G' "$SM_SOCKET")" \
  "socket mode, owner, group"
sc list >/dev/null || fail "sharectl cannot reach the daemon"
stop_daemon || fail "sharemgrd exited non-zero"
echo "ok"
