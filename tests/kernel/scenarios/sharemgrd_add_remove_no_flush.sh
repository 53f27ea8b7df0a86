#!/usr/bin/env bash
# sharemgrd --kernel=on, the counterpart of mountd_add_flushes_caches.sh:
# adding a share beside a mounted one flushes nothing (the nfsd.export
# flush time stays, the mounted share's entry stays in the kernel), the
# new share mounts; removing it makes its mounted client's next write
# fail while the other share goes on serving.
# Skipped while sharemgrd has no --kernel option.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel ||
  skip "$SHAREMGRD has no --kernel option yet (kernel mode not built)"
kt_setup
kt_fs a
kt_fs b
kt_sharemgrd_start
kt_sc create g || fail "create g"
kt_sc add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/a g || fail "add-share /srv/a"
kt_must_mount 4.2 127.0.0.1:/srv/a /mnt/a
kt_assert_rw /mnt/a /srv/a
[[ -n $(kt_export_entry /srv/a) ]] || fail "no nfsd.export entry for the mounted /srv/a"
before=$(kt_flush_time nfsd.export)
entry_a=$(kt_export_entry /srv/a)
sleep 1.1

step "add /srv/b beside the mounted /srv/a"
kt_sc add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/b g || fail "add-share /srv/b"
assert_eq "$before" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after add-share"
assert_eq "$entry_a" "$(kt_export_entry /srv/a)" "the kernel's entry for /srv/a after add-share"
kt_must_mount 4.2 127.0.0.1:/srv/b /mnt/b
kt_assert_rw /mnt/b /srv/b
kt_assert_rw /mnt/a /srv/a

step "remove /srv/b while mounted"
kt_sc remove-share -s /srv/b g || fail "remove-share /srv/b"
assert_eq "$before" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after remove-share"
assert_fails "" "write into the removed share" bash -c "echo x >/mnt/b/after-remove"
echo "the removed share refuses: $KT_ERR"
[[ ! -e /srv/b/after-remove ]] || fail "the write into the removed share reached the server"
kt_assert_rw /mnt/a /srv/a
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
