#!/usr/bin/env bash
# sharemgrd --kernel=on: a share on a tmpfs nested below another share
# (as a ZFS dataset below its parent) is mountable while the tmpfs is
# mounted. Once the tmpfs is unmounted, the share's path is the parent's
# empty folder: a kernel client's v3 mount of it is refused (MNT and the
# kernel's export entry both), `sharectl check` says why, and the parent
# share goes on serving. Mounted again, the same mount command works,
# with no sharectl step.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup
kt_fs top
mkdir -p /srv/top/nested
mount_nested() {
  mount -t tmpfs -o size=4m kt_nested /srv/top/nested || fail "mount tmpfs"
  chmod 755 /srv/top/nested
  echo "on the tmpfs" >/srv/top/nested/file
}
mount_nested
kt_sharemgrd_start
cat >"$KT_WORK/batch" <<B
create g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/top g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/top/nested g
B
kt_sc batch "$KT_WORK/batch" || fail "batch"

step "mounted: the nested share is served"
kt_must_mount 3 127.0.0.1:/srv/top/nested /mnt/n3
assert_eq "on the tmpfs" "$(cat /mnt/n3/file)" "read through v3"
kt_assert_rw /mnt/n3 /srv/top/nested
kt_umount /mnt/n3
kt_must_mount 3 127.0.0.1:/srv/top /mnt/top3

step "unmount the tmpfs on the server"
# nfsd may still hold the export (a reference on the mount): detach it.
umount /srv/top/nested 2>/dev/null || umount -l /srv/top/nested ||
  fail "cannot unmount the nested tmpfs"
refused() { ! kt_sc check 127.0.0.1 /srv/top/nested >/dev/null 2>&1; }
kt_wait_until 10 "check refuses the unmounted share" refused
out=$(kt_sc check 127.0.0.1 /srv/top/nested) && fail "check exited 0"
assert_contains "$out" "not served: recorded on a file system mounted at /srv/top/nested, now /srv/top"
no_entry() { [[ -z $(kt_export_entry /srv/top/nested) ]]; }
kt_wait_until 10 "no positive kernel entry for /srv/top/nested" no_entry
kt_mount_refused "" 3 127.0.0.1:/srv/top/nested /mnt/n3
[[ ! -e /srv/top/nested/file ]] || fail "the parent's folder has the tmpfs's file"
kt_assert_rw /mnt/top3 /srv/top
# NFSv4 walks from the parent's export into what is now a plain folder of
# it; nfsd asks nothing for that (not a mount point): noted, not asserted.
if kt_mount 4.2 127.0.0.1:/srv/top/nested /mnt/n4 2>/dev/null; then
  echo "note: v4.2 mount of the unmounted path lands in /srv/top's folder (nfsd does not ask)"
  kt_umount /mnt/n4
fi

step "mounted again: served again without an admin step"
mount_nested
served() { kt_sc check 127.0.0.1 /srv/top/nested >/dev/null 2>&1; }
kt_wait_until 10 "check grants the share again" served
kt_must_mount 3 127.0.0.1:/srv/top/nested /mnt/n3
assert_eq "on the tmpfs" "$(cat /mnt/n3/file)" "read through v3 after remount"
kt_assert_rw /mnt/n3 /srv/top/nested
kt_umount /mnt/n3
kt_umount /mnt/top3
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
