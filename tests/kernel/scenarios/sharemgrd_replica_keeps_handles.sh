#!/usr/bin/env bash
# kt-timeout: 300
# A failover onto a replica, on one kernel nfsd: the moment a partner head
# takes over with its own copy of the file system (a block-for-block copy
# given another uuid with tune2fs -U, mounted at the same path: the same
# inodes, another identity), while an NFSv3 client holds an open file and
# the mount's handles. The old server's nfsd stops, its caches are dropped,
# the copy is mounted in place and nfsd and the responder start again, as
# the partner's would.
# - rpc.mountd (the baseline, in the same run) answers the copy's own uuid:
#   every handle the client holds is stale (ESTALE).
# - sharemgrd answers the identity the share recorded when it was added:
#   the client carries on with the same open file and mount, reads what
#   was written before and writes on; `sharectl check` and `show -v` say
#   the live identity differs, and the daemon logs it.
source "$(dirname "$0")/../lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
command -v tune2fs >/dev/null || skip "no tune2fs"
kt_setup

# /srv/NAME on NAME.img, with a file and a folder; NAME-copy.img its block
# copy with another uuid.
make_replica() {  # NAME
  local n=$1 img=$KT_WORK/img
  kt_fs "$n"
  echo "written before the failover" >"/srv/$n/file"
  mkdir "/srv/$n/dir"
  umount "/srv/$n"
  cp --sparse=always "$img/$n.img" "$img/$n-copy.img"
  tune2fs -U random "$img/$n-copy.img" >/dev/null 2>&1 ||
    { e2fsck -fy "$img/$n-copy.img" >/dev/null 2>&1; tune2fs -U random "$img/$n-copy.img"; } ||
    fail "tune2fs -U on the copy failed"
  local a b
  a=$(blkid -s UUID -o value "$img/$n.img")
  b=$(blkid -s UUID -o value "$img/$n-copy.img")
  [[ -n $a && $a != "$b" ]] || fail "the copy's uuid ($b) is not another than $a"
  mount -o loop "$img/$n.img" "/srv/$n" || fail "mount of $n.img failed"
}

# What the partner's takeover does on this one server: nfsd stopped (its
# file cache and exports released), the copy mounted at the path, nfsd
# started again.
take_over() {  # NAME
  local n=$1 i
  rpc.nfsd 0 || fail "rpc.nfsd 0 failed"
  kt_flush_all
  for ((i = 0; i < 100; i++)); do
    umount "/srv/$n" 2>/dev/null && break
    sleep 0.1
  done
  ((i < 100)) || fail "/srv/$n stayed busy after nfsd stopped"
  mount -o loop "$KT_WORK/img/$n-copy.img" "/srv/$n" || fail "mount of the copy failed"
  rpc.nfsd -G 10 4 || fail "rpc.nfsd failed"
  echo Y >/proc/fs/nfsd/v4_end_grace
}

# A client holding /srv/NAME mounted over NFSv3 with its file open.
start_client() {  # NAME
  kt_must_mount 3 "127.0.0.1:/srv/$1" "/mnt/$1" actimeo=0
  kt_held_client_start "/mnt/$1"
}
ask() { kt_held_client_ask "$2"; }  # NAME COMMAND
stop_client() {  # NAME
  kt_held_client_stop
  kt_umount "/mnt/$1"
}

step "baseline: rpc.mountd on both sides"
make_replica m
kt_mountd_start '/srv/m 127.0.0.1(rw,no_root_squash,no_subtree_check)'
start_client m
assert_eq "ok written before the failover" "$(ask m read-open)" "read before the failover (rpc.mountd)"
kt_mountd_stop
take_over m
kt_mountd_start '/srv/m 127.0.0.1(rw,no_root_squash,no_subtree_check)'
answer=$(ask m read-open)
echo "rpc.mountd, open file after the failover: $answer"
assert_eq "err Stale file handle" "$answer" "rpc.mountd's client after the failover onto the copy"
answer=$(ask m list)
echo "rpc.mountd, the mount after the failover: $answer"
assert_contains "$answer" "err" "rpc.mountd's mount after the failover"
stop_client m
kt_mountd_stop
exportfs -au
: >/etc/exports

step "sharemgrd on both sides"
make_replica s
kt_sharemgrd_start
kt_sc create g -o 'rw=127.0.0.1,root=127.0.0.1' >/dev/null 2>&1 || fail "create failed"
kt_sc add-share -s /srv/s g || fail "add-share failed"
recorded=$(kt_sc --json show -s /srv/s | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["groups"][0]["shares"][0]["fs_identity"])')
echo "recorded: $recorded (blkid: $(blkid -s UUID -o value "$KT_WORK/img/s.img"))"
[[ $recorded == uuid:* ]] || fail "no identity recorded: $recorded"
start_client s
assert_eq "ok written before the failover" "$(ask s read-open)" "read before the failover (sharemgrd)"
kt_sharemgrd_stop || fail "sharemgrd did not stop cleanly"
take_over s
kt_sharemgrd_start
answer=$(ask s read-open)
echo "sharemgrd, open file after the failover: $answer"
assert_eq "ok written before the failover" "$answer" "sharemgrd's client after the failover onto the copy"
assert_eq "ok dir file lost+found" "$(ask s list)" "sharemgrd's mount after the failover"
assert_eq "ok written" "$(ask s "write after")" "a write after the failover"
assert_eq "after" "$(cat /srv/s/after)" "the write, on the copy"
out=$(kt_sc check 127.0.0.1 /srv/s)
echo "$out"
assert_contains "$out" "identity:  file-system identity differs: recorded $recorded" "check"
assert_contains "$(kt_sc show -v g)" "/srv/s: file-system identity differs" "show -v"
assert_contains "$(cat "$KT_LOG")" "/srv/s: its file system's identity is now" "the daemon's log"
stop_client s
