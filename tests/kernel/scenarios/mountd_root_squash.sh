#!/usr/bin/env bash
# Baseline with rpc.mountd: root on the client is mapped to the anonymous
# user (65534) on a root_squash export, stays root (0) on a no_root_squash
# one, and under root_squash cannot write into a root-owned 0755 folder;
# NFSv3 and NFSv4.2 alike. Ownership is read on the server's file system.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_setup
kt_fs squash
kt_fs nosquash
chmod 1777 /srv/squash /srv/nosquash
mkdir -m 755 /srv/squash/rootonly
kt_mountd_start '/srv/squash 127.0.0.1(rw,root_squash,no_subtree_check)
/srv/nosquash 127.0.0.1(rw,no_root_squash,no_subtree_check)'

for v in 3 4.2; do
  step "v$v"
  kt_must_mount "$v" 127.0.0.1:/srv/squash "/mnt/squash$v"
  kt_must_mount "$v" 127.0.0.1:/srv/nosquash "/mnt/nosquash$v"
  echo x >"/mnt/squash$v/by-root-v$v" || fail "write into the 1777 root_squash export (v$v) failed"
  echo x >"/mnt/nosquash$v/by-root-v$v" || fail "write into the no_root_squash export (v$v) failed"
  assert_eq 65534:65534 "$(kt_owner "/srv/squash/by-root-v$v")" "owner of root's file under root_squash (v$v)"
  assert_eq 0:0 "$(kt_owner "/srv/nosquash/by-root-v$v")" "owner of root's file under no_root_squash (v$v)"
  kt_assert_write_refused "/mnt/squash$v/rootonly" "Permission denied"
  kt_umount "/mnt/squash$v"
  kt_umount "/mnt/nosquash$v"
done
echo ok
