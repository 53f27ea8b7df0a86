#!/usr/bin/env bash
# Baseline with rpc.mountd and three client addresses on one guest:
# 127.0.0.1; 127.0.0.2 (by mounting 127.0.0.3, see kt_second_client); and
# 10.99.1.2 in its own network namespace (a second NFSv4 client while
# 127.0.0.1 has a v4 mount: the route trick alone would be merged into the
# 127.0.0.1 client). An export to one address is refused to the others
# with NFSv3 ("access denied by server") and NFSv4.2 (the pseudo-root hides
# it: "No such file or directory"), while each client mounts its own.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_setup
kt_second_client
kt_netns_client c2 1
kt_fs one
kt_fs two
kt_mountd_start '/srv/one 127.0.0.1(rw,no_root_squash,no_subtree_check)
/srv/two 127.0.0.2(rw,no_root_squash,no_subtree_check) 10.99.1.2(rw,no_root_squash,no_subtree_check)'

step "v3"
kt_mount_refused "access denied by server" 3 "$KT_CLIENT2_SERVER:/srv/one" /mnt/c2one3
kt_mount_refused "access denied by server" 3 127.0.0.1:/srv/two /mnt/c1two3
KT_NS=c2 kt_mount_refused "access denied by server" 3 10.99.1.1:/srv/one /mnt/c3one3
kt_must_mount 3 127.0.0.1:/srv/one /mnt/c1one3
kt_must_mount 3 "$KT_CLIENT2_SERVER:/srv/two" /mnt/c2two3
kt_assert_rw /mnt/c1one3 /srv/one
kt_assert_rw /mnt/c2two3 /srv/two
kt_umount /mnt/c1one3
kt_umount /mnt/c2two3

step "v4.2"
# Before any v4 mount from 127.0.0.1, so 127.0.0.3 is really 127.0.0.2.
kt_mount_refused "No such file or directory" 4.2 "$KT_CLIENT2_SERVER:/srv/one" /mnt/c2one4
kt_mount_refused "No such file or directory" 4.2 127.0.0.1:/srv/two /mnt/c1two4
kt_must_mount 4.2 127.0.0.1:/srv/one /mnt/c1one4
KT_NS=c2 kt_mount_refused "No such file or directory" 4.2 10.99.1.1:/srv/one /mnt/c3one4
KT_NS=c2 kt_must_mount 4.2 10.99.1.1:/srv/two /mnt/c3two4
kt_assert_rw /mnt/c1one4 /srv/one
kt_assert_rw /mnt/c3two4 /srv/two
kt_umount /mnt/c1one4
kt_umount /mnt/c3two4

# The kernel asked about every address and holds an answer for each.
ips=$(kt_cache_content auth.unix.ip)
echo "auth.unix.ip: $ips"
for a in 127.0.0.1 127.0.0.2 10.99.1.2; do
  assert_contains "$ips" "$a" "auth.unix.ip content"
done
echo ok
