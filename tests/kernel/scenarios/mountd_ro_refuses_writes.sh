#!/usr/bin/env bash
# Baseline with rpc.mountd: a read-only export can be read over NFSv3 and
# NFSv4.2 and refuses every write with "Read-only file system".
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_setup
kt_fs data
echo "server data" >/srv/data/file
kt_mountd_start '/srv/data 127.0.0.1(ro,no_subtree_check)'

for v in 3 4.2; do
  step "v$v"
  kt_must_mount "$v" 127.0.0.1:/srv/data "/mnt/v$v"
  assert_eq "server data" "$(cat "/mnt/v$v/file")" "read through the ro v$v mount"
  kt_assert_write_refused "/mnt/v$v" "Read-only file system"
  assert_fails "Read-only file system" "remove through the ro v$v mount" rm "/mnt/v$v/file"
  [[ -f /srv/data/file ]] || fail "the ro v$v mount removed the file"
  kt_umount "/mnt/v$v"
done
echo ok
