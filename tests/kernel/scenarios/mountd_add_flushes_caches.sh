#!/usr/bin/env bash
# Baseline with rpc.mountd: adding an export (exportfs -ra) flushes the
# kernel's export caches for every client: the nfsd.export entry of a
# share already mounted is gone and the flush time moves, so that client's
# next access upcalls again. The kernel mode must do better (entries of
# unchanged shares kept); this is what it is compared against.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_setup
kt_fs a
kt_fs b
kt_mountd_start '/srv/a 127.0.0.1(rw,no_root_squash,no_subtree_check)'
kt_must_mount 4.2 127.0.0.1:/srv/a /mnt/a
kt_assert_rw /mnt/a /srv/a
[[ -n $(kt_export_entry /srv/a) ]] || fail "no nfsd.export entry for the mounted /srv/a"
before=$(kt_flush_time nfsd.export)
sleep 1.1

step "add /srv/b with exportfs -ra"
kt_mountd_reexport '/srv/a 127.0.0.1(rw,no_root_squash,no_subtree_check)
/srv/b 127.0.0.1(rw,no_root_squash,no_subtree_check)'
after=$(kt_flush_time nfsd.export)
echo "nfsd.export flush time: $before -> $after"
((after > before)) || fail "exportfs -ra did not flush nfsd.export ($before -> $after)"
[[ -z $(kt_export_entry /srv/a) ]] ||
  fail "the entry of /srv/a survived exportfs -ra: $(kt_cache_content nfsd.export)"

step "the mounted client upcalls again, the new export mounts"
kt_assert_rw /mnt/a /srv/a
[[ -n $(kt_export_entry /srv/a) ]] || fail "no nfsd.export entry for /srv/a after the client's access"
kt_must_mount 4.2 127.0.0.1:/srv/b /mnt/b
kt_assert_rw /mnt/b /srv/b
echo ok
