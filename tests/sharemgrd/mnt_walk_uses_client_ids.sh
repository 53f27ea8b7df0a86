#!/usr/bin/env bash
# MNT's walk beneath a share checks search permission as the kernel does:
# an AUTH_SYS caller passes a directory through one of the supplementary
# groups its credential lists (gids<16>, RFC 5531), and a root squashed to
# anon=N walks with N as its group too (the kernel's anongid is N); a
# POSIX ACL entry that denies a user (user:1000:--- on a 0755 folder) stops
# its walk, with ACCES whether or not the name behind it exists (it once
# answered OK and NOENT: an existence oracle).
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (chown)"; exit 0; }
read -r a b <<<"$(make_dirs a b)"
for d in "$a" "$b"; do
  mkdir -p "$d/grp/in"
  chown 4242:5151 "$d/grp"
  chmod 0710 "$d/grp"
done
start_daemon --insecure
sc create g || fail "create"
sc add-share -o rw -s "$a" g || fail "add-share $a"
sc add-share -o rw,anon=5151 -s "$b" g || fail "add-share $b"

# MNT status for PATH as UID GID [GIDS...] ("none": AUTH_NONE).
mnt_as() {  # PATH UID GID [GID...]
  PYTHONPATH="$(dirname "$0")/../reliability" python3 -c '
import sys, rpc_driver as d
port, path, uid, gid = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cred = d.xdr_u32(0) + d.xdr_u32(0) if uid == "none" else d.auth_sys(
    uid=int(uid), gid=int(gid), gids=[int(g) for g in sys.argv[5:]])
print(d.mnt(d.mount_conn(port), path.encode(), cred)[0])' "$MOUNT_PORT" "$@" ||
    fail "MNT driver failed"
}
# 0 MNT3_OK, 13 MNT3ERR_ACCES
assert_eq 0 "$(mnt_as "$a/grp/in" 4243 7 20 5151)" "user with 5151 among its groups"
assert_eq 13 "$(mnt_as "$a/grp/in" 4243 7 20 5152)" "user without 5151"
assert_eq 0 "$(mnt_as "$a/grp/in" 4243 5151)" "user with 5151 as primary group"
assert_eq 0 "$(mnt_as "$b/grp/in" 0 0)" "root squashed to anon=5151"
assert_eq 0 "$(mnt_as "$b/grp/in" none 0)" "AUTH_NONE caller as anon=5151"
assert_eq 13 "$(mnt_as "$a/grp/in" 0 0)" "root squashed to 65534"
# 17 groups is no AUTH_SYS credential: decided as an anonymous caller.
assert_eq 13 "$(mnt_as "$a/grp/in" 4243 7 5151 $(seq 5135 5150))" "17 groups"

# setfacl -m u:1000:--- "$a/acl", written as the kernel keeps it.
mkdir -p "$a/acl/inner"
chmod 0755 "$a/acl"
if python3 -c '
import os, struct, sys
e = [(1, 7, 0xffffffff), (2, 0, 1000), (4, 5, 0xffffffff), (0x10, 5, 0xffffffff), (0x20, 5, 0xffffffff)]
os.setxattr(sys.argv[1], "system.posix_acl_access",
            struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))' "$a/acl"
then
  assert_eq 13 "$(mnt_as "$a/acl/inner" 1000 1000)" "ACL denies user 1000: ACCES"
  assert_eq 13 "$(mnt_as "$a/acl/nope" 1000 1000)" "a missing name behind it: ACCES too"
  assert_eq 0 "$(mnt_as "$a/acl/inner" 1001 1001)" "another user: the ACL's other entry"
  assert_eq 2 "$(mnt_as "$a/acl/nope" 1001 1001)" "and NOENT for a missing name it may reach"
else
  echo "no POSIX ACLs on this file system: ACL cases skipped"
fi
echo "ok"
