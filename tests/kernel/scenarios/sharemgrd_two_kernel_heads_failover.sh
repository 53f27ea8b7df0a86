#!/usr/bin/env bash
# kt-timeout: 300
# Failover between two kernel heads on shared storage (issue 47), NFSv3.
# Head A: the guest's nfsd (root network namespace) and sharemgrd
# --kernel=on --store. Head B: its own nfsd in network namespace headB
# (with a mount namespace of its own: the nfsd file system, /run, rpcbind)
# and its own sharemgrd --kernel=on on the same engine (PostgreSQL in the
# guest). A client in namespace cl has a link to each head and reaches the
# service address 10.88.0.10 through A's (the guest kernel has no bridge
# module: the move is the address deleted on A, added on B and the
# client's route to it switched to B's link, neighbours flushed). The
# client holds a file open (O_DIRECT) and writes; A's sharemgrd is killed
# (-9) and A's nfsd stopped, the address moves to B: the client carries on
# with the same open file and mount, no ESTALE, and what was written before
# is there. Logs "TIMING failover": from the kill to the first read served.
# The guest's own nfsd is started again at the end for the next scenarios.
source "$(dirname "$0")/../lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
[[ $("$SHAREMGRD" --help 2>&1) == *--store* ]] || skip "$SHAREMGRD has no --store"
PG=$KT_SRC/tests/support/pg_server.sh
"$PG" bindir >/dev/null 2>&1 || skip "no PostgreSQL server binaries (initdb)"
kt_setup
chmod 755 "$KT_WORK"
PGDIR=$KT_WORK/pg
restore() {
  set +e
  cp "$KT_WORK/b.log" "$KT_WORK/headb.sh" /results/ 2>/dev/null
  step "restore: head B's processes"
  ip netns pids headB 2>/dev/null | xargs -r kill -KILL
  step "restore: the engine"
  "$PG" stop "$PGDIR" immediate >/dev/null 2>&1
  step "restore: the guest's nfsd"
  # The guest's own nfsd again, for the scenarios after this one.
  [[ $(cat /proc/fs/nfsd/threads 2>/dev/null) == 0 ]] &&
    { rpc.nfsd -G 10 4; echo Y >/proc/fs/nfsd/v4_end_grace; }
  step "restore: namespaces"
  ip netns del headB; ip netns del cl
  ip link del a0 2>/dev/null
}
trap 'st=$?; restore; kt_reset; exit $st' EXIT
url=$("$PG" start "$PGDIR") || fail "PostgreSQL did not start"
kt_fs data
echo "written before the failover" >/srv/data/file

step "network: A (root), B (headB), client (cl): the client reaches the service address through A's link, later B's"
ip netns add headB; ip netns add cl
ip link add a0 type veth peer name ca netns cl
ip link add b0 netns headB type veth peer name cb netns cl
ip addr add 10.88.0.10/32 dev a0; ip link set a0 up
ip route add 10.88.0.3/32 dev a0
ip -n headB link set b0 up; ip -n headB link set lo up
ip -n headB route add 10.88.0.3/32 dev b0
ip -n cl addr add 10.88.0.3/32 dev ca; ip -n cl addr add 10.88.0.3/32 dev cb
ip -n cl link set ca up; ip -n cl link set cb up; ip -n cl link set lo up
ip -n cl route add 10.88.0.10/32 dev ca src 10.88.0.3
kt_wait_until 20 "the client reaches A" ip netns exec cl timeout 2 bash -c "exec 3<>/dev/tcp/10.88.0.10/111"

step "head A"
KT_SM_DB=$KT_WORK/a.db kt_sharemgrd_start --store "$url" --head a
kt_sc create g -o rw=10.88.0.3,root=10.88.0.3 >/dev/null 2>&1 || fail "create on A"
kt_sc add-share -s /srv/data g || fail "add-share on A"

step "head B: its nfsd and sharemgrd in headB"
cat >"$KT_WORK/headb.sh" <<EOF
set -e
mount -t nfsd nfsd /proc/fs/nfsd
mount -t tmpfs runB /run
mkdir -p /run/rpc_pipefs
mount -t rpc_pipefs sunrpc /run/rpc_pipefs
rpcbind -w
rpc.nfsd -G 10 4
exec "$SHAREMGRD" --kernel=on --foreground --store "$url" --head b \
  --db "$KT_WORK/b.db" --socket "$KT_WORK/b.sock" --sharetab "$KT_WORK/b.sharetab"
EOF
ip netns exec headB unshare -m --propagation private bash "$KT_WORK/headb.sh" \
  2>"$KT_WORK/b.log" &
kt_wait_until 30 "head B serving" grep -q '^sharemgrd: serving' "$KT_WORK/b.log"
scb() { "$SHARECTL" --socket "$KT_WORK/b.sock" "$@"; }
b_has_share() { scb show -s /srv/data >/dev/null 2>&1; }
kt_wait_until 20 "B has the share" b_has_share

step "the client mounts the service address (A) and holds a file open"
KT_NS=cl kt_must_mount 3 10.88.0.10:/srv/data /mnt/svc
kt_held_client_start /mnt/svc cl
ask() { kt_held_client_ask "$1"; }  # COMMAND
assert_eq "ok written" "$(ask "write before")" "a write through A"
assert_eq "ok written before the failover" "$(ask read-open)" "the open file through A"

step "failover: A's sharemgrd killed, A's nfsd stopped, the address moves to B"
t0=$(date +%s.%N)
kill -KILL "$KT_SHAREMGRD_PID"; wait "$KT_SHAREMGRD_PID" 2>/dev/null || true; KT_SHAREMGRD_PID=
rpc.nfsd 0
ip addr del 10.88.0.10/32 dev a0
ip -n headB addr add 10.88.0.10/32 dev b0
ip -n cl route replace 10.88.0.10/32 dev cb src 10.88.0.3
ip -n cl neigh flush all
answer=$(ask read-open)
echo "TIMING failover: first read of the open file after $(kt_since "$t0") s: $answer"
assert_eq "ok written before the failover" "$answer" "the open file through B"
assert_eq "ok written" "$(ask "write after")" "a write through B"
assert_eq "before" "$(cat /srv/data/before)" "the write before the failover"
assert_eq "after" "$(cat /srv/data/after)" "the write after the failover"
kt_held_client_stop
echo ok
