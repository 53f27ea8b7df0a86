#!/usr/bin/env bash
# MOUNT answers on IPv6 as well as IPv4 by default, registered with rpcbind
# for udp6 and tcp6 (rpcinfo, showmount -e ::1); IPv6 clients are matched
# by @NET entries and by names; `--listen` limits MOUNT to the addresses
# given. A ULA address (fd00:5a:1::2/128) is put on lo when the test may
# (root), for a client outside ::1; that part is skipped otherwise.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ -e /proc/net/if_inet6 ]] || { echo "skipped: no IPv6 on this host"; exit 0; }
ensure_rpcbind
cat >"$SM_DIR/hosts" <<H
::1 six.example
H
SM_RPCBIND=1 start_daemon --hosts "$SM_DIR/hosts"
assert_contains "$(grep '^sharemgrd: serving' "$SM_LOG" | tail -n1)" \
  "MOUNT on 0.0.0.0, [::]"
read -r net name both <<<"$(make_dirs net name both)"
sc create -o 'rw=@fd00::/8' bynet || fail "create bynet refused"
sc create -o 'rw=six.example' byname || fail "create byname refused"
sc create -o 'rw' everyone || fail "create everyone refused"
sc add-share -s "$net" bynet || fail "add-share $net refused"
sc add-share -s "$name" byname || fail "add-share $name refused"
sc add-share -s "$both" everyone || fail "add-share $both refused"

probe6() { "$MOUNTPROBE" --server ::1 --port "$MOUNT_PORT" "$@"; }
# Both families on the one port.
[[ $(probe mnt "$both") == MNT3_OK\ * ]] || fail "MNT over IPv4 refused"
[[ $(probe6 mnt "$both") == MNT3_OK\ * ]] || fail "MNT over IPv6 refused"
[[ $(probe6 --udp mnt "$both") == MNT3_OK\ * ]] || fail "MNT over UDP/IPv6 refused"
# Names: ::1 is six.example in the hosts file (PTR and forward agree).
[[ $(probe6 mnt "$name") == MNT3_OK\ * ]] || fail "MNT of $name by name refused"
[[ $(probe mnt "$name") == MNT3ERR_ACCES ]] || fail "127.0.0.1 got $name"
# @NET: ::1 is not in fd00::/8.
[[ $(probe6 mnt "$net") == MNT3ERR_ACCES ]] || fail "::1 got $net"
assert_contains "$(sc check ::1 "$name")" "access:  rw"

# The record keeps the IPv6 address (DUMP and sharectl mounts).
assert_contains "$(probe6 dump)" "::1 $name"
assert_eq "::1" "$(sc --json mounts | jq -r --arg p "$name" \
  '.mounts[] | select(.path == $p) | .client')" "mounts client"

# rpcbind knows MOUNT on both families; real clients reach it over IPv6.
out=$(rpcinfo -s)
assert_contains "$(grep -E '^ *100005 ' <<<"$out")" "udp6,tcp6,udp,tcp"
rpcinfo -T tcp6 ::1 100005 3 >/dev/null || fail "rpcinfo -T tcp6 ::1 100005 3 failed"
rpcinfo -T udp6 ::1 100005 1 >/dev/null || fail "rpcinfo -T udp6 ::1 100005 1 failed"
out=$(timeout 10 showmount -e ::1) || fail "showmount -e ::1 failed: $out"
assert_contains "$out" "@[fd00::]/8"

# A client of fd00::/8, when the test may add an address to lo.
ula=fd00:5a:1::2
if ip -6 addr add "$ula/128" dev lo 2>/dev/null; then
  on_exit "ip -6 addr del $ula/128 dev lo"
  [[ $(probe6 --source $ula mnt "$net") == MNT3_OK\ * ]] ||
    fail "MNT of $net from $ula refused"
  [[ $(probe6 --source $ula mnt "$name") == MNT3ERR_ACCES ]] ||
    fail "$ula (no name) got $name"
  assert_contains "$(sc check $ula "$net")" "access:  rw"
else
  echo "note: cannot add $ula to lo; client outside ::1 not tested"
fi

# --listen: only the addresses given, and rpcbind only for their family.
SM_RPCBIND=1 restart_daemon --hosts "$SM_DIR/hosts" --listen '[::1]'
assert_contains "$(grep '^sharemgrd: serving' "$SM_LOG" | tail -n1)" "MOUNT on [::1]"
[[ $(probe6 mnt "$both") == MNT3_OK\ * ]] || fail "MNT on --listen [::1] refused"
probe --timeout 1000 null >/dev/null 2>&1 && fail "IPv4 answered with --listen [::1]"
assert_eq "udp6,tcp6" "$(rpcinfo -s | awk '$1 == 100005 { print $3 }')" \
  "rpcbind netids with --listen [::1]"

# A bad --listen is refused at start, naming it.
stop_daemon
"$SHAREMGRD" --foreground --db "$SM_DB" --socket "$SM_SOCKET" \
  --sharetab "$SM_SHARETAB" --no-rpcbind --listen six.example \
  2>"$SM_DIR/err" && fail "--listen six.example accepted"
assert_contains "$(cat "$SM_DIR/err")" '"six.example" is not an IPv4 or IPv6 address'
echo "ok"
