#!/usr/bin/env bash
# Baseline with the real peer (rpc.mountd + exportfs): an rw export on an
# ext4 file system is mounted by the kernel client with NFSv3 and NFSv4.2;
# files written on either side are read on the other.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_setup
kt_fs data
kt_mountd_start '/srv/data 127.0.0.1(rw,no_root_squash,no_subtree_check)'

step "v3 mount"
kt_must_mount 3 127.0.0.1:/srv/data /mnt/v3
kt_assert_rw /mnt/v3 /srv/data
assert_contains "$(grep ' /mnt/v3 ' /proc/mounts)" "vers=3" "v3 mount options"

step "v4.2 mount"
kt_must_mount 4.2 127.0.0.1:/srv/data /mnt/v4
kt_assert_rw /mnt/v4 /srv/data
assert_contains "$(grep ' /mnt/v4 ' /proc/mounts)" "vers=4.2" "v4.2 mount options"

# The kernel now holds a positive export entry for the path.
entry=$(kt_export_entry /srv/data)
[[ -n $entry ]] || fail "no nfsd.export entry for /srv/data: $(kt_cache_content nfsd.export)"
echo "kernel entry: $entry"
kt_umount /mnt/v3
kt_umount /mnt/v4
echo ok
