#!/usr/bin/env bash
# sharemgrd --kernel=on: `sharectl disable g1` makes the shares of g1,
# mounted by a v3 and a v4.2 client, refuse those clients' next access
# ("Stale file handle"; nothing reaches the server) while g2's mounted
# share goes on serving with its kernel entry untouched; `sharectl enable g1` lets the same
# mounts work again without a remount. No cache is flushed.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup
kt_fs a
kt_fs b
echo "file a" >/srv/a/file
kt_sharemgrd_start
cat >"$KT_WORK/batch" <<B
create g1
create g2
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/a g1
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/b g2
B
kt_sc batch "$KT_WORK/batch" || fail "batch"
for v in 3 4.2; do
  kt_must_mount "$v" 127.0.0.1:/srv/a "/mnt/a$v"
  kt_must_mount "$v" 127.0.0.1:/srv/b "/mnt/b$v"
  kt_assert_rw "/mnt/a$v" /srv/a
  kt_assert_rw "/mnt/b$v" /srv/b
done
entry_b=$(kt_export_entry /srv/b)
[[ -n $entry_b ]] || fail "no kernel entry for the mounted /srv/b"
flush_before=$(for c in auth.unix.ip nfsd.fh nfsd.export; do kt_flush_time $c; done)

# The kernel holds a positive entry for PATH (re-read at every poll).
has_entry() { [[ -n $(kt_export_entry "$1") ]]; }
no_entry() { ! has_entry "$1"; }

step "disable g1"
kt_sc disable g1 || fail "disable g1"
kt_wait_until 10 "the kernel's positive entry for /srv/a is gone" no_entry /srv/a
for v in 3 4.2; do
  # The kernel answers a handle whose export it was told no with ESTALE.
  assert_fails "Stale file handle" "write into the disabled share (v$v)" bash -c "echo x >/mnt/a$v/while-disabled-$v"
  echo "v$v write refused: $KT_ERR"
  assert_fails "Stale file handle" "read from the disabled share (v$v)" cat "/mnt/a$v/file"
  echo "v$v read refused: $KT_ERR"
  [[ ! -e /srv/a/while-disabled-$v ]] || fail "a write into the disabled share reached the server (v$v)"
  kt_assert_rw "/mnt/b$v" /srv/b
done
assert_eq "$entry_b" "$(kt_export_entry /srv/b)" "g2's kernel entry after disabling g1"
kt_mount_refused "" 3 127.0.0.1:/srv/a /mnt/new3
kt_mount_refused "" 4.2 127.0.0.1:/srv/a /mnt/new4

step "enable g1: the same mounts work again"
kt_sc enable g1 || fail "enable g1"
kt_wait_until 10 "the kernel's entry for /srv/a is back" has_entry /srv/a
for v in 3 4.2; do
  # No remount: the mount that was refused works again.
  kt_assert_rw "/mnt/a$v" /srv/a
  assert_eq "file a" "$(cat "/mnt/a$v/file")" "read after enable (v$v)"
  kt_assert_rw "/mnt/b$v" /srv/b
done
assert_eq "$entry_b" "$(kt_export_entry /srv/b)" "g2's kernel entry after enabling g1"
flush_after=$(for c in auth.unix.ip nfsd.fh nfsd.export; do kt_flush_time $c; done)
assert_eq "$flush_before" "$flush_after" "flush times (ip, fh, export) after disable and enable"
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
