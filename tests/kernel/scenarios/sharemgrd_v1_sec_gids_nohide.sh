#!/usr/bin/env bash
# sharemgrd --kernel=on --manage-gids, the less common options with the
# kernel client:
# - a v3 mount through MOUNT v1 (mountvers=1: the 32-byte handle) works;
# - sec=: a sec=krb5 share refuses an AUTH_SYS client (v3 and v4.2) while
#   a sec=sys one serves it;
# - --manage-gids: a user whose supplementary group is known on the
#   server only (the client sends its primary gid alone) may write into a
#   folder of that group; a folder of a group it is not in stays closed;
# - nosub: MOUNT of a subdirectory of a nosub share is refused over v3,
#   of a share without nosub allowed (NFSv4 never uses MOUNT);
# - nohide: over v3 a nested file system shared with nohide is seen
#   inside its parent's mount, one shared without it is not.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup

# A user known to the server's group database only: /etc entries are
# symlinks to the host's files (guest.sh); replace two, restore on exit.
restore_etc() {
  local f
  for f in passwd group; do
    rm -f "/etc/$f"
    ln -s "/host/etc/$f" "/etc/$f"
  done
}
trap 'restore_etc; kt_cleanup' EXIT
for f in passwd group; do
  cp "/host/etc/$f" "$KT_WORK/$f"
  rm -f "/etc/$f"
  cp "$KT_WORK/$f" "/etc/$f"
done
echo "ktuser:x:4242:4242::/tmp:/bin/sh" >>/etc/passwd
printf '%s\n' "ktuser:x:4242:" "ktshared:x:4343:ktuser" "ktother:x:4444:" >>/etc/group

kt_fs sys
kt_fs krb
kt_fs ns
kt_fs plain
kt_fs top
mkdir /srv/ns/sub /srv/plain/sub /srv/top/sub /srv/top/hid
echo "plain sub" >/srv/plain/sub/file
kt_fs sub /srv/top/sub
kt_fs hid /srv/top/hid
echo "nohide file" >/srv/top/sub/file
echo "hidden file" >/srv/top/hid/file
install -d -o 0 -g 4343 -m 2770 /srv/sys/shared
install -d -o 0 -g 4444 -m 2770 /srv/sys/other

kt_sharemgrd_start --manage-gids
cat >"$KT_WORK/batch" <<B
create g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/sys g
add-share -o sec=krb5,rw=127.0.0.1 -s /srv/krb g
add-share -o nosub,rw=127.0.0.1,root=127.0.0.1 -s /srv/ns g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/plain g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/top g
add-share -o nohide,rw=127.0.0.1,root=127.0.0.1 -s /srv/top/sub g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/top/hid g
B
kt_sc batch "$KT_WORK/batch" || fail "batch"

step "MOUNT v1 handle (v3 with mountvers=1)"
kt_must_mount 3 127.0.0.1:/srv/sys /mnt/v1 mountvers=1
kt_assert_rw /mnt/v1 /srv/sys
assert_contains "$(grep ' /mnt/v1 ' /proc/mounts)" "mountvers=1" "mount options of the MOUNT v1 mount"
kt_umount /mnt/v1
mnt1=$(kt_sc --json stats | jq -r '.requests | to_entries | map(select(.key | test("MNT"))) | map("\(.key)=\(.value.count)") | join(" ")' || true)
echo "MOUNT requests: $mnt1"

step "sec=krb5 refuses AUTH_SYS, sec=sys serves it"
kt_mount_refused "" 3 127.0.0.1:/srv/krb /mnt/krb3 sec=sys
kt_mount_refused "" 4.2 127.0.0.1:/srv/krb /mnt/krb4 sec=sys
krb_entry=$(kt_export_entry /srv/krb)
echo "kernel entry for /srv/krb: $krb_entry"
[[ -z $krb_entry || $krb_entry == *"sec=390003"* ]] ||
  fail "the kernel's entry for the krb5 share offers more than krb5: $krb_entry"
assert_not_contains "$krb_entry" "sec=1" "the krb5 share's kernel entry"

step "manage-gids: a supplementary group known on the server only"
for v in 3 4.2; do
  kt_must_mount "$v" 127.0.0.1:/srv/sys "/mnt/sys$v" sec=sys
  as_user=(setpriv --reuid=4242 --regid=4242 --clear-groups)
  "${as_user[@]}" bash -c "echo x >/mnt/sys$v/shared/by-ktuser-$v" ||
    fail "ktuser (group ktshared on the server only) cannot write into the 4343 folder (v$v)"
  assert_eq 4242:4343 "$(kt_owner "/srv/sys/shared/by-ktuser-$v")" "owner of ktuser's file (setgid folder, v$v)"
  assert_fails "Permission denied" "ktuser's write into the 4444 folder (v$v)" \
    "${as_user[@]}" bash -c "echo x >/mnt/sys$v/other/by-ktuser-$v"
  kt_umount "/mnt/sys$v"
done
gids=$(kt_cache_content auth.unix.gid)
echo "auth.unix.gid: $gids"
assert_contains "$gids" "4242" "auth.unix.gid content"

step "nosub (MOUNT only)"
kt_mount_refused "access denied by server" 3 127.0.0.1:/srv/ns/sub /mnt/nssub3
kt_must_mount 3 127.0.0.1:/srv/plain/sub /mnt/plainsub3
assert_eq "plain sub" "$(cat /mnt/plainsub3/file)" "file of a subdirectory mount (v3)"
kt_umount /mnt/plainsub3
kt_must_mount 3 127.0.0.1:/srv/ns /mnt/ns3
kt_assert_rw /mnt/ns3 /srv/ns
kt_umount /mnt/ns3

step "nohide over v3"
kt_must_mount 3 127.0.0.1:/srv/top /mnt/top3
assert_eq "nohide file" "$(cat /mnt/top3/sub/file 2>&1)" "nested nohide share seen through the parent's v3 mount"
kt_assert_rw /mnt/top3/sub /srv/top/sub
[[ ! -e /mnt/top3/hid/file ]] ||
  fail "the nested share without nohide is seen through the parent's v3 mount"
kt_umount /mnt/top3
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
