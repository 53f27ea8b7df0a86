#!/usr/bin/env bash
# Baseline with rpc.mountd: an ext4 file system mounted inside an exported
# one is reached by an NFSv4.2 client through the parent's crossmnt, and
# by an NFSv3 client when it is exported itself with nohide.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_setup
kt_fs top
echo "top file" >/srv/top/file
mkdir /srv/top/sub
kt_fs sub /srv/top/sub
echo "nested file" >/srv/top/sub/file

step "crossmnt, v4.2"
kt_mountd_start '/srv/top 127.0.0.1(rw,no_root_squash,no_subtree_check,crossmnt)'
kt_must_mount 4.2 127.0.0.1:/srv/top /mnt/top4
assert_eq "top file" "$(cat /mnt/top4/file)" "parent file over v4.2"
assert_eq "nested file" "$(cat /mnt/top4/sub/file)" "nested file system over v4.2 (crossmnt)"
kt_assert_rw /mnt/top4/sub /srv/top/sub
[[ $(stat -c %d /mnt/top4) != $(stat -c %d /mnt/top4/sub) ]] ||
  fail "the nested file system has the parent's device on the client: not crossed"
assert_contains "$(grep -v '^#' /proc/net/rpc/nfsd.export/content)" "/srv/top/sub" "nfsd.export after the crossing"
kt_umount /mnt/top4

step "nohide, v3"
kt_mountd_reexport '/srv/top 127.0.0.1(rw,no_root_squash,no_subtree_check)
/srv/top/sub 127.0.0.1(rw,no_root_squash,no_subtree_check,nohide)'
kt_must_mount 3 127.0.0.1:/srv/top /mnt/top3
assert_eq "nested file" "$(cat /mnt/top3/sub/file)" "nested file system over v3 (nohide)"
kt_assert_rw /mnt/top3/sub /srv/top/sub
kt_umount /mnt/top3
echo ok
