#!/usr/bin/env bash
# sharemgrd --kernel=on as the kernel's responder, the same checks as the
# rpc.mountd baselines (mountd_*.sh) with shares made by sharectl: v3 and
# v4.2 rw, ro refuses writes, root squash and root=, refused clients (v3
# and v4, three client addresses), a nested file system reached by v4.
# Skipped while sharemgrd has no --kernel option.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel ||
  skip "$SHAREMGRD has no --kernel option yet (kernel mode not built); rpc.mountd baselines only"
kt_setup
kt_second_client
kt_netns_client c2 1
for fs in rw ro squash one two top; do kt_fs "$fs"; done
mkdir /srv/top/sub
kt_fs sub /srv/top/sub
chmod 1777 /srv/squash
mkdir -m 755 /srv/squash/rootonly
echo "server data" >/srv/ro/file
echo "nested file" >/srv/top/sub/file

kt_sharemgrd_start
cat >"$KT_WORK/batch" <<B
create g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/rw g
add-share -o ro=127.0.0.1 -s /srv/ro g
add-share -o rw=127.0.0.1 -s /srv/squash g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/one g
add-share -o rw=127.0.0.2:10.99.1.2,root=127.0.0.2:10.99.1.2 -s /srv/two g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/top g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/top/sub g
B
kt_sc batch "$KT_WORK/batch" || fail "sharectl batch refused"
assert_eq none "$(kt_sc --json check 127.0.0.2 /srv/one | jq -r .access)" "check 127.0.0.2 /srv/one"

for v in 3 4.2; do
  step "v$v: rw, root="
  kt_must_mount "$v" 127.0.0.1:/srv/rw "/mnt/rw$v"
  kt_assert_rw "/mnt/rw$v" /srv/rw
  echo x >"/mnt/rw$v/by-root" || fail "root's write into /srv/rw (v$v) failed"
  assert_eq 0:0 "$(kt_owner /srv/rw/by-root)" "owner of root's file with root= (v$v)"
  rm -f /srv/rw/by-root
  kt_umount "/mnt/rw$v"

  step "v$v: ro"
  kt_must_mount "$v" 127.0.0.1:/srv/ro "/mnt/ro$v"
  assert_eq "server data" "$(cat "/mnt/ro$v/file")" "read through the ro v$v mount"
  kt_assert_write_refused "/mnt/ro$v" "Read-only file system"
  kt_umount "/mnt/ro$v"

  step "v$v: root squash"
  kt_must_mount "$v" 127.0.0.1:/srv/squash "/mnt/squash$v"
  echo x >"/mnt/squash$v/by-root-v$v" || fail "write into the 1777 squashed share (v$v) failed"
  assert_eq 65534:65534 "$(kt_owner "/srv/squash/by-root-v$v")" "owner of root's file, squashed (v$v)"
  kt_assert_write_refused "/mnt/squash$v/rootonly" "Permission denied"
  kt_umount "/mnt/squash$v"
done

step "refused clients, v3"
kt_mount_refused "access denied by server" 3 "$KT_CLIENT2_SERVER:/srv/one" /mnt/c2one3
kt_mount_refused "access denied by server" 3 127.0.0.1:/srv/two /mnt/c1two3
kt_must_mount 3 "$KT_CLIENT2_SERVER:/srv/two" /mnt/c2two3
kt_assert_rw /mnt/c2two3 /srv/two
kt_umount /mnt/c2two3

step "refused clients, v4.2"
# rpc.mountd says "No such file or directory" here (the pseudo-root hides
# the path); any refusal passes.
kt_mount_refused "" 4.2 "$KT_CLIENT2_SERVER:/srv/one" /mnt/c2one4
kt_mount_refused "" 4.2 127.0.0.1:/srv/two /mnt/c1two4
kt_must_mount 4.2 127.0.0.1:/srv/one /mnt/c1one4
KT_NS=c2 kt_mount_refused "" 4.2 10.99.1.1:/srv/one /mnt/c3one4
KT_NS=c2 kt_must_mount 4.2 10.99.1.1:/srv/two /mnt/c3two4
kt_assert_rw /mnt/c1one4 /srv/one
kt_assert_rw /mnt/c3two4 /srv/two
kt_umount /mnt/c1one4
kt_umount /mnt/c3two4

step "nested file system, v4.2"
kt_must_mount 4.2 127.0.0.1:/srv/top /mnt/top4
assert_eq "nested file" "$(cat /mnt/top4/sub/file)" "nested share over v4.2"
kt_assert_rw /mnt/top4/sub /srv/top/sub
kt_umount /mnt/top4

echo "nfsd.export: $(kt_cache_content nfsd.export)"
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
