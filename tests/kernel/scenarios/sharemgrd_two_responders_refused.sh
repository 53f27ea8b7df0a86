#!/usr/bin/env bash
# Two responders would both answer every upcall (the last write wins):
# with rpc.mountd running, `sharemgrd --kernel=on` refuses to start and
# names it (pid and command); with a sharemgrd in kernel mode running, a
# second one refuses and names the first. The refused daemon leaves the
# running responder's kernel entries in place (no flush).
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup
kt_fs a

# Starts a second sharemgrd --kernel=on on its own files; must exit 1.
second_refused() {  # -> its stderr in KT_ERR
  local rc=0
  KT_ERR=$(timeout 30 "$SHAREMGRD" --kernel=on --foreground --no-rpcbind \
    --db "$KT_WORK/second.db" --socket "$KT_WORK/second.sock" \
    --sharetab "$KT_WORK/second.sharetab" --pid-file "$KT_WORK/second.pid" 2>&1) || rc=$?
  echo "second sharemgrd: exit $rc: $KT_ERR"
  assert_eq 1 "$rc" "exit status of sharemgrd started beside another responder"
}

step "rpc.mountd runs: sharemgrd refuses"
kt_mountd_start '/srv/a 127.0.0.1(rw,no_root_squash,no_subtree_check)'
kt_must_mount 4.2 127.0.0.1:/srv/a /mnt/a
flush=$(kt_flush_time nfsd.export)
second_refused
assert_contains "$KT_ERR" "process $KT_MOUNTD_PID (rpc.mountd)" "sharemgrd's refusal"
assert_eq "$flush" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after the refused start"
[[ -n $(kt_export_entry /srv/a) ]] || fail "rpc.mountd's entry for /srv/a is gone after the refused start"
kt_assert_rw /mnt/a /srv/a
kt_umount /mnt/a
# No exportfs -au here: rpc.mountd answered auth.unix.gid (Debian's
# manage-gids=y), and for 30 s after its last close the kernel still
# counts it as a listener: a gid flush now would leave the next request's
# gid upcall queued unanswered (the client waits up to 120 s).
kt_mountd_stop

step "sharemgrd runs: a second sharemgrd refuses"
kt_sharemgrd_start
kt_sc create g || fail "create g"
kt_sc add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/a g || fail "add-share"
kt_must_mount 4.2 127.0.0.1:/srv/a /mnt/a
flush=$(kt_flush_time nfsd.export)
second_refused
assert_contains "$KT_ERR" "process $KT_SHAREMGRD_PID (sharemgrd)" "the second sharemgrd's refusal"
assert_eq "$flush" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after the refused start"
kt_assert_rw /mnt/a /srv/a
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
