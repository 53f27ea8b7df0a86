#!/usr/bin/env bash
# sharemgrd --kernel=on while someone else runs `exportfs -f` (flushes
# every nfsd cache): the kernel drops the daemon's entries, the mounted
# v3 and v4.2 clients' next access upcalls, the daemon answers again and
# they go on working; a new mount works. rpc.mountd re-answers the same
# way after its own flush (mountd_add_flushes_caches).
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup
kt_fs a
kt_fs b
kt_sharemgrd_start
cat >"$KT_WORK/batch" <<B
create g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/a g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/b g
B
kt_sc batch "$KT_WORK/batch" || fail "batch"
kt_must_mount 3 127.0.0.1:/srv/a /mnt/a3
kt_must_mount 4.2 127.0.0.1:/srv/a /mnt/a4
kt_assert_rw /mnt/a3 /srv/a
kt_assert_rw /mnt/a4 /srv/a
[[ -n $(kt_export_entry /srv/a) ]] || fail "no kernel entry for the mounted /srv/a"
before=$(kt_flush_time nfsd.export)
upcalls_before=$(kt_kernel_stat upcalls)
sleep 1.1

step "exportfs -f"
exportfs -f || fail "exportfs -f failed"
after=$(kt_flush_time nfsd.export)
echo "nfsd.export flush time: $before -> $after"
((after > before)) || fail "exportfs -f did not flush nfsd.export ($before -> $after)"
[[ -z $(kt_export_entry /srv/a) ]] ||
  fail "the entry of /srv/a survived exportfs -f: $(kt_cache_content nfsd.export)"

step "the mounted clients go on, the daemon answers again"
kt_assert_rw /mnt/a3 /srv/a
kt_assert_rw /mnt/a4 /srv/a
[[ -n $(kt_export_entry /srv/a) ]] || fail "no kernel entry for /srv/a after the clients' access"
upcalls_after=$(kt_kernel_stat upcalls)
echo "kernel.upcalls: $upcalls_before -> $upcalls_after"
((upcalls_after > upcalls_before)) || fail "the daemon answered no upcall after the flush"
kt_must_mount 3 127.0.0.1:/srv/b /mnt/b3
kt_must_mount 4.2 127.0.0.1:/srv/b /mnt/b4
kt_assert_rw /mnt/b3 /srv/b
kt_assert_rw /mnt/b4 /srv/b
! grep -q 'kernel mode: .* refused "' "$KT_LOG" ||
  fail "the kernel refused a reply: $(grep 'refused "' "$KT_LOG" | head -n 3)"
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
