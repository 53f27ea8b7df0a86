#!/usr/bin/env bash
# kt-timeout: 400
# Failover between two kernel heads on shared storage (issue 47), NFSv3
# and NFSv4.2 at once, taken over by the shipped script
# (sharemgrd/sharemgr-takeover) as an HA manager would run it.
# Head A: the guest's root network namespace, its nfsd and sharemgrd
# --kernel=on --store. Head B: network namespace headB with a mount
# namespace of its own (nfsd's file system, /run, rpc_pipefs, rpcbind) and
# its own sharemgrd --kernel=on on the same engine (PostgreSQL in the
# guest); B's nfsd does not run until the takeover. The NFSv4 clients'
# records are kept by nfsdcld in /srv/ha, a folder both heads reach (the
# shared storage). A client in namespace cl reaches the service address
# through A's link (lib.sh: kt_failover_net).
# - A takes the address: `sharemgr-takeover start` (nfsdcld on /srv/ha,
#   nfsd with a grace period, the address added).
# - The client mounts the address over NFSv3 and NFSv4.2 (hard mounts, as
#   HA clients do), holds a file open on each (O_DIRECT) and writes.
# - A dies: sharemgrd killed (-9), `sharemgr-takeover stop` on A (nfsd and
#   nfsdcld stopped, the address gone); `sharemgr-takeover start` on B;
#   the client's route moves to B's link.
# - Both clients read their open files through B and write again: no
#   ESTALE, no lost state (the NFSv4.2 open is reclaimed in B's grace
#   period from A's records); what was written before is there.
# Logs "TIMING failover vN": from the kill to the open file's first read.
# The guest's own nfsd is started again at the end for the next scenarios.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_pg_require
kt_takeover_require
kt_setup
chmod 755 "$KT_WORK"
PGDIR=$KT_WORK/pg
restore() {
  set +e
  cp "$KT_WORK/b.log" "$KT_WORK/headb.sh" /results/ 2>/dev/null
  step "restore: the client's mounts, B's nfsd and processes"
  for m in /mnt/v3 /mnt/v4; do
    kt_is_nfs_mount $m && { umount -f $m 2>/dev/null || umount -l $m; }
  done
  # B's nfsd threads would outlive its processes (and keep /srv/data).
  [[ -n ${KT_B_PID:-} ]] && kt_in_b "$TAKEOVER" stop "${ha[@]}" --interface b0 >/dev/null 2>&1
  ip netns pids cl 2>/dev/null | xargs -r kill -KILL
  kt_failover_net_del
  step "restore: the engine"
  "$PG" stop "$PGDIR" immediate >/dev/null 2>&1
  step "restore: the guest's nfsd"
  # As guest.sh starts it, for the scenarios after this one.
  "$TAKEOVER" stop --address $KT_SVC/32 --interface a0 >/dev/null 2>&1
  rpc.nfsd -G 10 4
  echo Y >/proc/fs/nfsd/v4_end_grace
}
trap 'st=$?; restore; kt_reset; exit $st' EXIT
url=$("$PG" start "$PGDIR") || fail "PostgreSQL did not start"
kt_fs data
echo "written before the failover" >/srv/data/file
mkdir /srv/ha

step "network: A (root), B (headB), client (cl) through A's link"
kt_failover_net
KT_B_PID=
ha=(--address $KT_SVC/32 --recovery-dir /srv/ha --grace 20 --threads 4)

step "head A: sharemgrd, then the takeover (nfsdcld, nfsd with grace, the address)"
KT_SM_DB=$KT_WORK/a.db kt_sharemgrd_start --store "$url" --head a
out=$("$TAKEOVER" start "${ha[@]}" --interface a0 --pipefs /run/rpc_pipefs \
  --socket "$KT_SM_SOCKET" 2>&1) || fail "takeover on A: $out"
assert_contains "$out" "$KT_SVC/32 on a0" "the takeover's report on A"
"$TAKEOVER" monitor "${ha[@]}" --interface a0 || fail "monitor on A: not serving ($?)"
# A's first start: no records on /srv/ha, so nfsd skips its grace period
# ("no clients to reclaim"): the clients' first opens need not wait.
kt_wait_until 20 "the client reaches A" \
  ip netns exec cl timeout 2 bash -c "exec 3<>/dev/tcp/$KT_SVC/2049"
kt_sc create g -o rw=$KT_CLIENT_ADDR,root=$KT_CLIENT_ADDR >/dev/null 2>&1 || fail "create on A"
kt_sc add-share -s /srv/data g || fail "add-share on A"

step "head B: sharemgrd on the engine, no nfsd yet"
kt_head_b_start "$url"
b_has_share() { kt_scb show -s /srv/data >/dev/null 2>&1; }
kt_wait_until 20 "B has the share" b_has_share
assert_fails "" "monitor on B before the takeover" \
  kt_in_b "$TAKEOVER" monitor "${ha[@]}" --interface b0

step "the client mounts the address over NFSv3 and NFSv4.2, holds a file open on each"
KT_NS=cl kt_must_mount 3 $KT_SVC:/srv/data /mnt/v3 hard
KT_NS=cl kt_must_mount 4.2 $KT_SVC:/srv/data /mnt/v4 hard
for v in v3 v4; do
  kt_held_client_start /mnt/$v cl $v
  assert_eq "ok written" "$(kt_held_client_ask "write before-$v" $v)" "a write through A ($v)"
  assert_eq "ok written before the failover" "$(kt_held_client_ask read-open $v)" \
    "the open file through A ($v)"
done
# The NFSv4.2 client's record is in A's nfsdcld database on /srv/ha.
kt_wait_until 20 "the NFSv4 client's record on /srv/ha" kt_nfsdcld_records /srv/ha

step "failover: A's sharemgrd killed, A stopped, B takes over"
t0=$(date +%s.%N)
kill -KILL "$KT_SHAREMGRD_PID"; wait "$KT_SHAREMGRD_PID" 2>/dev/null || true; KT_SHAREMGRD_PID=
"$TAKEOVER" stop "${ha[@]}" --interface a0 || fail "takeover stop on A"
out=$(kt_in_b "$TAKEOVER" start "${ha[@]}" --interface b0 --pipefs /run/rpc_pipefs \
  --socket "$KT_WORK/b.sock" 2>&1) || fail "takeover on B: $out"
echo "$out"
kt_in_b "$TAKEOVER" monitor "${ha[@]}" --interface b0 || fail "monitor on B: not serving"
# B's nfsd found A's client in the records: a grace period, not "no
# clients to reclaim".
grace=$(dmesg | grep -E "NFSD: (starting [0-9]+-second grace period|no clients to reclaim)" | tail -n 1)
assert_contains "$grace" "starting 20-second grace period" "B's nfsd at the takeover"
kt_client_via b
for v in v3 v4; do
  answer=$(kt_held_client_ask read-open $v)
  echo "TIMING failover $v: first read of the open file after $(kt_since "$t0") s: $answer"
  assert_eq "ok written before the failover" "$answer" "the open file through B ($v)"
  assert_eq "ok written" "$(kt_held_client_ask "write after-$v" $v)" "a write through B ($v)"
  assert_eq "before-$v" "$(cat /srv/data/before-$v)" "the write before the failover ($v)"
  assert_eq "after-$v" "$(cat /srv/data/after-$v)" "the write after the failover ($v)"
  kt_held_client_stop $v
  kt_umount /mnt/$v
done
echo ok
