#!/usr/bin/env bash
# sharemgrd --kernel=on: `sharectl set -o` on a share mounted by a v3 and
# a v4.2 client takes effect for both without a remount: rw -> ro makes
# their next write fail with "Read-only file system" while reads go on,
# ro -> rw lets them write again. The kernel's caches are not flushed
# (flush times unchanged): the daemon rewrites the share's entry.
# rpc.mountd's way is exportfs -ra, which flushes every client's entries
# (mountd_add_flushes_caches).
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup
kt_fs data
echo "server data" >/srv/data/file
kt_sharemgrd_start
kt_sc create g || fail "create g"
kt_sc add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/data g || fail "add-share"
kt_must_mount 3 127.0.0.1:/srv/data /mnt/v3
kt_must_mount 4.2 127.0.0.1:/srv/data /mnt/v4
kt_assert_rw /mnt/v3 /srv/data
kt_assert_rw /mnt/v4 /srv/data
entry=$(kt_export_entry /srv/data)
echo "entry (rw): $entry"
assert_contains "$entry" "(rw," "kernel entry before set"
flush_before=$(for c in auth.unix.ip nfsd.fh nfsd.export; do kt_flush_time $c; done)

# The entry as the kernel holds it reads ro (the change is pushed in the
# background after the batch commits).
entry_is() { [[ $(kt_export_entry /srv/data) == *"($1,"* ]]; }

step "set rw -> ro on the mounted share"
kt_sc set -o ro=127.0.0.1,root=127.0.0.1 -s /srv/data g || fail "set ro"
kt_wait_until 10 "the kernel's entry for /srv/data turns ro" entry_is ro
echo "entry (ro): $(kt_export_entry /srv/data)"
for v in 3 4; do
  assert_eq "server data" "$(cat /mnt/v$v/file)" "read through the v$v mount after rw -> ro"
  kt_assert_write_refused /mnt/v$v "Read-only file system"
done
assert_eq "$(ls /srv/data | sort)" "$(ls /srv/data | grep -v '^refused' | sort)" "no refused write reached the server"

step "set ro -> rw again"
kt_sc set -o rw=127.0.0.1,root=127.0.0.1 -s /srv/data g || fail "set rw"
kt_wait_until 10 "the kernel's entry for /srv/data turns rw" entry_is rw
kt_assert_rw /mnt/v3 /srv/data
kt_assert_rw /mnt/v4 /srv/data
echo x >/mnt/v4/by-root || fail "root's write after ro -> rw"
assert_eq 0:0 "$(kt_owner /srv/data/by-root)" "root= still applies after the change"

flush_after=$(for c in auth.unix.ip nfsd.fh nfsd.export; do kt_flush_time $c; done)
assert_eq "$flush_before" "$flush_after" "flush times (ip, fh, export) after two sets"
pushed=$(kt_kernel_stat pushed)
echo "kernel.pushed: $pushed"
((pushed >= 2)) || fail "kernel.pushed is $pushed after two changes of a mounted share"
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
