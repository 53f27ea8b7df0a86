#!/usr/bin/env bash
# kt-timeout: 400
# Split and rejoin (issue 47): a kernel head cut from the engine serves on
# from its copy, refuses changes, and catches up without a flush.
# Head A: the guest's root namespace and nfsd, sharemgrd --kernel=on
# --store over the engine's Unix socket. Head B: network namespace headB
# with its own nfsd and sharemgrd --kernel=on, reaching the engine
# (PostgreSQL in the guest) over TCP through a link of its own (eb, to
# 10.89.0.1). The client (namespace cl) mounts the service address on B.
# - B's route to the engine is removed. B's mounted client reads on, a
#   new mount of a share B has works, a change on B is refused with exit
#   3 naming the engine; A takes changes meanwhile.
# - Still cut, B's sharemgrd is killed (-9): the client reads on; started
#   again (the engine unreachable), B serves its copy: the client reads,
#   a new mount works, changes are refused.
# - The route is back: B reaches A's generation, serves A's new share,
#   and its kernel was not flushed (nfsd.export's flush time, the mounted
#   share's entry byte for byte, B's flush count); B takes changes again.
# - A silent cut (the engine's end of B's link down: B's packets vanish,
#   no error comes back): a change on B is refused all the same, in the
#   time libpq's timeouts take; B catches up once the link is back.
# Logs "TIMING": B's refusal of a change while cut, B's catch-up.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_pg_require
kt_setup
chmod 755 "$KT_WORK"
PGDIR=$KT_WORK/pg
KT_B_PID=
restore() {
  set +e
  cp "$KT_WORK/b.log" /results/head_cut_b.log 2>/dev/null
  kt_is_nfs_mount /mnt/d1 && { umount -f /mnt/d1 2>/dev/null || umount -l /mnt/d1; }
  kt_is_nfs_mount /mnt/d2 && { umount -f /mnt/d2 2>/dev/null || umount -l /mnt/d2; }
  kt_is_nfs_mount /mnt/d3 && { umount -f /mnt/d3 2>/dev/null || umount -l /mnt/d3; }
  # B's nfsd threads would outlive its processes (and keep /srv/data).
  [[ -n $KT_B_PID ]] && kt_in_b rpc.nfsd 0
  ip netns pids cl 2>/dev/null | xargs -r kill -KILL
  kt_failover_net_del
  ip link del e0 2>/dev/null
  "$PG" stop "$PGDIR" immediate >/dev/null 2>&1
}
trap 'st=$?; restore; kt_reset; exit $st' EXIT
kt_fs data
mkdir /srv/data/d{1..5}
echo "served from B" >/srv/data/d1/file

step "network: client to B; B to the engine over its own link"
kt_failover_net
ip -n headB addr add $KT_SVC/32 dev b0
kt_client_via b
ip link add e0 type veth peer name eb netns headB
ip addr add 10.89.0.1/30 dev e0; ip link set e0 up
ip -n headB addr add 10.89.0.2/30 dev eb; ip -n headB link set eb up
url=$(SHAREMGR_PG_LISTEN=10.89.0.1 "$PG" start "$PGDIR") || fail "PostgreSQL did not start"
b_url="host=10.89.0.1 port=5432 dbname=postgres user=postgres"

step "head A on the engine's socket; head B over TCP, with its nfsd"
KT_SM_DB=$KT_WORK/a.db kt_sharemgrd_start --store "$url" --head a
kt_sc create g -o rw=$KT_CLIENT_ADDR,root=$KT_CLIENT_ADDR >/dev/null 2>&1 || fail "create on A"
kt_sc add-share -s /srv/data/d1 g || fail "add-share d1 on A"
kt_sc add-share -s /srv/data/d2 g || fail "add-share d2 on A"
kt_head_b_start "$b_url" "rpc.nfsd -G 10 4"
gen() { "$SHARECTL" --socket "$1" --json stats | jq -r .generation; }
a_gen=$(gen "$KT_SM_SOCKET")
kt_wait_until 30 "B at A's generation $a_gen" \
  bash -c "[[ \$('$SHARECTL' --socket '$KT_WORK/b.sock' --json stats | jq -r .generation) == $a_gen ]]"

step "the client mounts d1 through B and holds a file open"
KT_NS=cl kt_must_mount 3 $KT_SVC:/srv/data/d1 /mnt/d1
kt_held_client_start /mnt/d1 cl
assert_eq "ok served from B" "$(kt_held_client_ask read-open)" "the open file through B"
in_b_net() { ip netns exec headB "$@"; }
entry_before=$(in_b_net grep -v '^#' /proc/net/rpc/nfsd.export/content | awk '$1 == "/srv/data/d1"')
[[ -n $entry_before ]] || fail "B's nfsd has no export entry for the mounted d1"
flush_before=$(in_b_net cat /proc/net/rpc/nfsd.export/flush)
flushes_before=$(kt_scb --json stats | jq -r .kernel.flushes)
sleep 1.1  # a flush now would move the flush time

step "the cut: B's route to the engine removed"
ip -n headB route del 10.89.0.0/30 dev eb
kt_sc add-share -s /srv/data/d3 g || fail "add-share d3 on A while B is cut"
t0=$(date +%s.%N)
rc=0
out=$(timeout 120 "$SHARECTL" --socket "$KT_WORK/b.sock" add-share -s /srv/data/d4 g 2>&1) || rc=$?
echo "TIMING a change on B while cut: refused after $(kt_since "$t0") s: $out"
assert_eq 3 "$rc" "a change on B while cut (exit code)"
assert_contains "$out" "engine is unreachable (PostgreSQL at 10.89.0.1:5432" "B's refusal names the engine"
assert_eq "ok served from B" "$(kt_held_client_ask read-open)" "the open file through B, cut"
KT_NS=cl kt_must_mount 3 $KT_SVC:/srv/data/d2 /mnt/d2
kt_assert_rw /mnt/d2 /srv/data/d2
# d3, added on A during the cut, is not B's yet.
KT_NS=cl kt_mount_refused "" 3 $KT_SVC:/srv/data/d3 /mnt/d3

step "B's sharemgrd killed (-9) while cut: the client reads on; started again, B serves its copy"
kill -KILL "$KT_B_PID"; wait "$KT_B_PID" 2>/dev/null || true
assert_eq "ok served from B" "$(kt_held_client_ask read-open)" "the open file through B, B's daemon dead"
b_rpcbind=$(for p in $(ip netns pids headB); do
  [[ $(cat "/proc/$p/comm" 2>/dev/null) == rpcbind ]] && echo "$p"; done | head -n 1)
[[ -n $b_rpcbind ]] || fail "no rpcbind left in B's namespaces"
nsenter -t "$b_rpcbind" -m -n "$SHAREMGRD" --kernel=on --foreground --store "$b_url" \
  --head b --db "$KT_WORK/b.db" --socket "$KT_WORK/b.sock" \
  --sharetab "$KT_WORK/b.sharetab" 2>>"$KT_WORK/b.log" &
KT_B_PID=$!
kt_wait_until 60 "B serving again" \
  bash -c "(( \$(grep -c '^sharemgrd: serving' '$KT_WORK/b.log') == 2 ))"
assert_eq "ok served from B" "$(kt_held_client_ask read-open)" "the open file through B, B started again"
kt_umount /mnt/d2
KT_NS=cl kt_must_mount 3 $KT_SVC:/srv/data/d2 /mnt/d2
kt_assert_rw /mnt/d2 /srv/data/d2
assert_fails "engine is unreachable" "a change on B started again while cut" \
  "$SHARECTL" --socket "$KT_WORK/b.sock" add-share -s /srv/data/d4 g
# Every start flushes the kernel's caches once (dropping an earlier
# responder's answers): what the heal must not move is taken now.
entry_before=$(in_b_net grep -v '^#' /proc/net/rpc/nfsd.export/content | awk '$1 == "/srv/data/d1"')
[[ -n $entry_before ]] || fail "B's nfsd has no export entry for the mounted d1 after B's start"
flush_before=$(in_b_net cat /proc/net/rpc/nfsd.export/flush)
flushes_before=$(kt_scb --json stats | jq -r .kernel.flushes)
sleep 1.1

step "the cut heals: B catches up without a flush"
t0=$(date +%s.%N)
ip -n headB route add 10.89.0.0/30 dev eb src 10.89.0.2
a_gen=$(gen "$KT_SM_SOCKET")
kt_wait_until 60 "B at A's generation $a_gen" \
  bash -c "[[ \$('$SHARECTL' --socket '$KT_WORK/b.sock' --json stats | jq -r .generation) == $a_gen ]]"
echo "TIMING B's catch-up after the cut healed: $(kt_since "$t0") s"
KT_NS=cl kt_must_mount 3 $KT_SVC:/srv/data/d3 /mnt/d3
kt_assert_rw /mnt/d3 /srv/data/d3
assert_eq "ok served from B" "$(kt_held_client_ask read-open)" "the open file through B, healed"
assert_eq "$flush_before" "$(in_b_net cat /proc/net/rpc/nfsd.export/flush)" "B's nfsd.export flush time"
assert_eq "$entry_before" \
  "$(in_b_net grep -v '^#' /proc/net/rpc/nfsd.export/content | awk '$1 == "/srv/data/d1"')" \
  "B's export entry of the mounted d1"
assert_eq "$flushes_before" "$(kt_scb --json stats | jq -r .kernel.flushes)" "B's kernel flushes"
kt_scb add-share -s /srv/data/d5 g || fail "a change on B once healed"
kt_wait_until 30 "A has d5" kt_sc show -s /srv/data/d5

step "a silent cut: the engine's end of B's link down (B's packets vanish)"
ip link set e0 down
kt_sc add-share -s /srv/data/d4 g || fail "add-share d4 on A while B is cut"
t0=$(date +%s.%N)
rc=0
out=$(timeout 120 "$SHARECTL" --socket "$KT_WORK/b.sock" remove-share -s /srv/data/d5 2>&1) || rc=$?
echo "TIMING a change on B while silently cut: refused after $(kt_since "$t0") s: $out"
assert_eq 3 "$rc" "a change on B while silently cut (exit code)"
assert_contains "$out" "engine is unreachable" "B's refusal, silently cut"
assert_eq "ok served from B" "$(kt_held_client_ask read-open)" "the open file through B, silently cut"
t0=$(date +%s.%N)
ip link set e0 up
a_gen=$(gen "$KT_SM_SOCKET")
kt_wait_until 60 "B at A's generation $a_gen" \
  bash -c "[[ \$('$SHARECTL' --socket '$KT_WORK/b.sock' --json stats | jq -r .generation) == $a_gen ]]"
echo "TIMING B's catch-up after the silent cut healed: $(kt_since "$t0") s"
kt_scb show -s /srv/data/d4 >/dev/null || fail "B has no d4 after the silent cut healed"
kt_scb show -s /srv/data/d5 >/dev/null || fail "the change refused on B was applied"
assert_eq "$flushes_before" "$(kt_scb --json stats | jq -r .kernel.flushes)" "B's kernel flushes, after both cuts"
kt_held_client_stop
echo ok
