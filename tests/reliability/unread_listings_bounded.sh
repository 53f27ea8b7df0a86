#!/usr/bin/env bash
# Callers who may not change anything cannot make the daemon hold replies
# without bound by not reading them: 200 management connections each send
# one LIST_SHARES or SHARETAB (15,000 shares, about 1.5 MB a reply) and
# read nothing for 3 s. Their replies held together stay near the
# readers' budget (32 MiB) and their listings are built two at a time:
# the daemon's RSS grows by at most 128 MiB (seen: 78 MB; 386 MB with no
# budget, as the same calls from root still are: root is not held back).
# Calls past the budget are refused ("busy"), never lost; root's listing
# is served meanwhile.
source "$(dirname "$0")/lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to run as nobody"; exit 0; }
shares=${SHAREMGR_UNREAD_SHARES:-15000}
make_many_dirs "$shares"
start_daemon
chmod 0666 "$SM_SOCKET"
chmod 0755 "$SM_DIR"
{
  echo "create g"
  seq -f "add-share -d 'a description of this share' -s $SM_DIR/export/d%05g g" 0 $((shares - 1))
} >"$SM_DIR/batch"
sc batch "$SM_DIR/batch" >/dev/null 2>&1 || fail "setup batch refused"
driver=$SM_DIR/rpc_driver.py
cp "$(dirname "$0")/rpc_driver.py" "$driver"
chmod 0644 "$driver"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
# Under AddressSanitizer freed listings wait in its quarantine (hundreds
# of MB) and every block has redzones: RSS says nothing there, the refusals
# and the served listings still do.
bound_kib=$((128 * 1024))
grep -qa __asan_init "$SHAREMGRD" && bound_kib=$((4096 * 1024))
as_nobody /usr/bin/python3 "$driver" mgmt-unread --socket "$SM_SOCKET" \
  --pid "$DAEMON_PID" --count 200 --hold 3 --rss-bound-kib "$bound_kib" \
  >"$SM_DIR/unread.out" 2>&1 &
driver_pid=$!
on_exit "kill $driver_pid 2>/dev/null"
sleep 1.5  # the connections are open and their calls served or refused
n=$(sc show g 2>/dev/null | grep -c "$SM_DIR/export/d" || true)
((n == shares)) || fail "root's listing not served while readers hold replies ($n shares)"
rc=0
wait "$driver_pid" || rc=$?
out=$(cat "$SM_DIR/unread.out")
echo "$out"
((rc == 0)) || fail "replies held without bound, or lost: $out"
refused=$(jq -r .refused <<<"$out")
((refused > 0)) || fail "no call was refused: the budget did not act: $out"
kill -0 "$DAEMON_PID" || fail "daemon died"
listed=$(jq -r .listed <<<"$out")
((listed > 0)) || fail "no reader got its listing: $out"
n=$(sc show g | grep -c "$SM_DIR/export/d") || true
((n == shares)) || fail "root's show lists $n shares after the readers, not $shares"
echo "ok"
