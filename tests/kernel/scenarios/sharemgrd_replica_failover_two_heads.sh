#!/usr/bin/env bash
# kt-timeout: 500
# Failover onto a replica between two kernel heads (issue 47): head B
# serves its own copy of the file system (the ext4 image copied block for
# block, given another uuid with tune2fs -U, mounted at the same path in
# B's mount namespace: the same inodes, another identity). Head A is the
# guest's root namespace and nfsd, head B the network namespace headB
# with its own nfsd (lib.sh: kt_failover_net, kt_head_b_*); both take the
# service address with sharemgrd/sharemgr-takeover.
# - Baseline, rpc.mountd on both heads (the same exports on both): the
#   NFSv3 client's open file and mount go stale (ESTALE) after the move.
# - sharemgrd on both heads, one table in PostgreSQL (the identity
#   recorded when the share was added on A, answered by B): the NFSv3 and
#   NFSv4.2 clients carry on with their open files and mounts and write
#   on B's copy; `sharectl check` and `show -v` on B say the live
#   identity differs, and B logs it.
# Logs "TIMING replica failover": from A's end to the first read on B.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_pg_require
kt_takeover_require
command -v tune2fs >/dev/null || skip "no tune2fs"
kt_setup
chmod 755 "$KT_WORK"
PGDIR=$KT_WORK/pg
KT_B_PID=
ha=(--address $KT_SVC/32 --grace 15 --threads 4)

# Head B's nfsd stopped and its processes ended (its mount namespace, with
# the copy mounted, goes with them).
stop_b() {
  [[ -n $KT_B_PID ]] || return 0
  kt_in_b "$TAKEOVER" stop "${ha[@]}" --interface b0 >/dev/null 2>&1
  ip netns pids headB 2>/dev/null | xargs -r kill -KILL
  KT_B_PID=
  sleep 0.5
}
restore() {
  set +e
  cp "$KT_WORK/b.log" /results/replica_two_heads_b.log 2>/dev/null
  for m in /mnt/m /mnt/s3 /mnt/s4; do
    kt_is_nfs_mount $m && { umount -f $m 2>/dev/null || umount -l $m; }
  done
  stop_b
  ip netns pids cl 2>/dev/null | xargs -r kill -KILL
  kt_failover_net_del
  "$PG" stop "$PGDIR" immediate >/dev/null 2>&1
  # The guest's own nfsd again, for the scenarios after this one.
  "$TAKEOVER" stop "${ha[@]}" --interface a0 >/dev/null 2>&1
  rpc.nfsd -G 10 4
  echo Y >/proc/fs/nfsd/v4_end_grace
}
trap 'st=$?; restore; kt_reset; exit $st' EXIT

# /srv/NAME on NAME.img, with a file and a folder; NAME-copy.img its block
# copy with another uuid.
make_replica() {  # NAME
  local n=$1 img=$KT_WORK/img a b
  kt_fs "$n"
  echo "written before the failover" >"/srv/$n/file"
  mkdir "/srv/$n/dir"
  umount "/srv/$n"
  cp --sparse=always "$img/$n.img" "$img/$n-copy.img"
  tune2fs -U random "$img/$n-copy.img" >/dev/null 2>&1 ||
    { e2fsck -fy "$img/$n-copy.img" >/dev/null 2>&1; tune2fs -U random "$img/$n-copy.img"; } ||
    fail "tune2fs -U on the copy failed"
  a=$(blkid -s UUID -o value "$img/$n.img")
  b=$(blkid -s UUID -o value "$img/$n-copy.img")
  [[ -n $a && $a != "$b" ]] || fail "the copy's uuid ($b) is not another than $a"
  mount -o loop "$img/$n.img" "/srv/$n" || fail "mount of $n.img failed"
}
# B's mount namespace: the copy in place of A's file system.
replica_in_b() {  # NAME
  echo "umount /srv/$1; mount -o loop $KT_WORK/img/$1-copy.img /srv/$1"
}

# A stops serving (its responder already ended), B takes over, the
# client's route moves to B.
fail_over() {
  "$TAKEOVER" stop "${ha[@]}" --interface a0 || fail "takeover stop on A"
  kt_in_b "$TAKEOVER" start "${ha[@]}" --interface b0 "$@" || fail "takeover start on B"
  kt_client_via b
}

kt_failover_net

step "baseline: rpc.mountd on both heads"
make_replica m
exports="/srv/m $KT_CLIENT_ADDR(rw,no_root_squash,no_subtree_check)"
kt_mountd_start "$exports"
"$TAKEOVER" start "${ha[@]}" --interface a0 || fail "takeover start on A (rpc.mountd)"
kt_client_via a
kt_head_b_mountd_start "$exports" "$(replica_in_b m)"
KT_NS=cl kt_must_mount 3 $KT_SVC:/srv/m /mnt/m actimeo=0,hard
kt_held_client_start /mnt/m cl m
assert_eq "ok written before the failover" "$(kt_held_client_ask read-open m)" \
  "read through A (rpc.mountd)"
kt_mountd_stop
fail_over
answer=$(kt_held_client_ask read-open m)
echo "rpc.mountd, open file after the failover onto the copy: $answer"
assert_eq "err Stale file handle" "$answer" "rpc.mountd's client after the failover onto the copy"
answer=$(kt_held_client_ask list m)
echo "rpc.mountd, the mount after the failover: $answer"
assert_contains "$answer" "err" "rpc.mountd's mount after the failover"
kt_held_client_stop m
kt_umount /mnt/m
stop_b
exportfs -au
: >/etc/exports

step "sharemgrd on both heads, one table"
url=$("$PG" start "$PGDIR") || fail "PostgreSQL did not start"
make_replica s
mkdir /srv/ha
KT_SM_DB=$KT_WORK/a.db kt_sharemgrd_start --store "$url" --head a
"$TAKEOVER" start "${ha[@]}" --interface a0 --recovery-dir /srv/ha \
  --pipefs /run/rpc_pipefs --socket "$KT_SM_SOCKET" || fail "takeover start on A (sharemgrd)"
kt_client_via a
kt_sc create g -o rw=$KT_CLIENT_ADDR,root=$KT_CLIENT_ADDR >/dev/null 2>&1 || fail "create on A"
kt_sc add-share -s /srv/s g || fail "add-share on A"
recorded=$(kt_sc --json show -s /srv/s | jq -r '.groups[0].shares[0].fs_identity')
echo "recorded: $recorded (A's uuid $(blkid -s UUID -o value "$KT_WORK/img/s.img"), B's copy $(blkid -s UUID -o value "$KT_WORK/img/s-copy.img"))"
[[ $recorded == uuid:* ]] || fail "no identity recorded: $recorded"
kt_head_b_start "$url" "$(replica_in_b s)"
kt_wait_until 20 "B has the share" kt_scb show -s /srv/s
KT_NS=cl kt_must_mount 3 $KT_SVC:/srv/s /mnt/s3 actimeo=0,hard
KT_NS=cl kt_must_mount 4.2 $KT_SVC:/srv/s /mnt/s4 actimeo=0,hard
for v in s3 s4; do
  kt_held_client_start /mnt/$v cl $v
  assert_eq "ok written before the failover" "$(kt_held_client_ask read-open $v)" \
    "read through A ($v, sharemgrd)"
done

t0=$(date +%s.%N)
kill -KILL "$KT_SHAREMGRD_PID"; wait "$KT_SHAREMGRD_PID" 2>/dev/null || true; KT_SHAREMGRD_PID=
fail_over --recovery-dir /srv/ha --pipefs /run/rpc_pipefs --socket "$KT_WORK/b.sock"
for v in s3 s4; do
  answer=$(kt_held_client_ask read-open $v)
  echo "TIMING replica failover $v: first read of the open file after $(kt_since "$t0") s: $answer"
  assert_eq "ok written before the failover" "$answer" "sharemgrd's client after the failover onto the copy ($v)"
  assert_eq "ok dir file lost+found" "$(kt_held_client_ask list $v)" "sharemgrd's mount after the failover ($v)"
done
for v in s3 s4; do
  assert_eq "ok written" "$(kt_held_client_ask "write after-$v" $v)" "a write after the failover ($v)"
  assert_eq "after-$v" "$(kt_in_b cat /srv/s/after-$v)" "the write, on B's copy ($v)"
  kt_held_client_stop $v
done
out=$(kt_scb check $KT_CLIENT_ADDR /srv/s)
echo "$out"
assert_contains "$out" "identity:  file-system identity differs: recorded $recorded" "check on B"
assert_contains "$(kt_scb show -v g)" "/srv/s: file-system identity differs" "show -v on B"
assert_contains "$(cat "$KT_WORK/b.log")" "/srv/s: its file system's identity is now" "B's log"
kt_umount /mnt/s3
kt_umount /mnt/s4
echo ok
