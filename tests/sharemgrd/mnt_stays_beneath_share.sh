#!/usr/bin/env bash
# MNT below a share resolves beneath the share's directory: a symlink
# (final, intermediate, absolute, relative, ".." through a link), a link
# swapped in for the share's own path after the add, another file system
# mounted below the share and a directory the (root-squashed) client may
# not search are all answered ACCES, exactly as an unshared path; NOENT and
# NOTDIR only for names inside what the client reaches. `sharectl check`
# agrees and says why. Share paths with a symlink component are refused at
# add-share time, naming the canonical form.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
read -r real other swap <<<"$(make_dirs real other swap)"
mkdir -p "$real/sub/deeper" "$real/secret/inner" "$other/inside"
chmod 700 "$real/secret"
touch "$real/file"
ln -s /etc "$real/esc"
ln -s ../other "$real/rel"
ln -s .. "$real/up"
ln -s sub "$real/inlink"
sc create g || fail "create"
sc add-share -o rw -s "$real" g || fail "add-share $real"
sc add-share -o rw -s "$swap" g || fail "add-share $swap"

mnt() { probe --reserved mnt "$1" | cut -d' ' -f1; }
ok_mnt() { [[ $(mnt "$1") == MNT3_OK ]] || fail "MNT $1: $(probe --reserved mnt "$1")"; }
acces() { assert_eq MNT3ERR_ACCES "$(mnt "$1")" "MNT $1"; }

ok_mnt "$real"
ok_mnt "$real/sub/deeper"
# The handle is the directory's own (device, inode), built from the walk.
fh=$(probe --reserved mnt "$real/sub" | sed -n 's/.* fh=\([0-9a-f]*\).*/\1/p')
want=$(python3 -c "import os,struct;s=os.stat('$real/sub');print((b'SMGR'+struct.pack('>IQQ',1,s.st_dev,s.st_ino)).ljust(32,b'\0').hex())")
assert_eq "$want" "$fh" "file handle of $real/sub"

# Links out of the share, and links at all: never followed.
acces "$real/esc"                 # final, absolute
acces "$real/esc/ssh"             # intermediate, absolute
acces "$real/rel"                 # final, relative
acces "$real/rel/inside"          # intermediate, relative
acces "$real/up/other"            # ".." through a link
acces "$real/up/real/sub"
acces "$real/inlink"              # even one that stays inside
# The oracle is gone: outside names answer as an unshared path does.
unshared=$(mnt "$SM_DIR/nowhere/passwd")
assert_eq MNT3ERR_ACCES "$unshared" "unshared path"
assert_eq "$unshared" "$(mnt "$real//esc/passwd")" "existing file behind a link"
assert_eq "$unshared" "$(mnt "$real/esc/no-such-name")" "missing name behind a link"
assert_eq "$unshared" "$(mnt "$real/up/other/inside/nothing")" "missing name via .."
# Inside what the client reaches, the precise answers stay.
assert_eq MNT3ERR_NOENT "$(mnt "$real/missing")" "missing name inside"
assert_eq MNT3ERR_NOTDIR "$(mnt "$real/file")" "file inside"
assert_eq MNT3ERR_NOTDIR "$(mnt "$real/file/x")" "below a file inside"

# Root is squashed (no root=): a 0700 root-owned directory is not searched.
ok_mnt "$real/secret"
acces "$real/secret/inner"
acces "$real/secret/nothing"
check=$(sc --json check 127.0.0.1 "$real/secret/inner") && fail "check exit 0"
assert_eq none "$(jq -r .access <<<"$check")" "check of the unsearchable dir"
assert_contains "$(jq -r .reason <<<"$check")" "may not search"
# With root= the client keeps root and passes.
sc set -o rw,root=127.0.0.1 -s "$real" g || fail "set root="
ok_mnt "$real/secret/inner"
assert_eq MNT3ERR_NOENT "$(mnt "$real/secret/nothing")" "missing name, root kept"
acces "$real/esc"

# check agrees with MNT on a link out.
check=$(sc --json check 127.0.0.1 "$real/esc") && fail "check exit 0"
assert_eq none "$(jq -r .access <<<"$check")" "check of a link out"
assert_contains "$(jq -r .reason <<<"$check")" "symlink"

# A file system mounted below a share that is not itself a share.
mkdir "$real/mnt"
if mount -t tmpfs sharemgr-test "$real/mnt" 2>/dev/null; then
  on_exit "umount '$real/mnt'"
  mkdir "$real/mnt/d"
  acces "$real/mnt"
  acces "$real/mnt/d"
  acces "$real/mnt/none"
  # Shared itself, it decides for itself (nesting across devices).
  sc add-share -o rw -s "$real/mnt" g || fail "add nested share"
  ok_mnt "$real/mnt/d"
  sc remove-share -s "$real/mnt" g || fail "remove nested share"
  acces "$real/mnt/d"
  # A bind mount of an unshared folder of the same file system: same
  # device number, another mount; not entered either.
  mkdir "$real/bind"
  mount --bind "$other" "$real/bind" || fail "bind mount"
  on_exit "umount '$real/bind'"
  acces "$real/bind"
  acces "$real/bind/inside"
else
  echo "note: cannot mount tmpfs here; mount-below-share case not run"
fi

# A link swapped in for the share's own path after the add.
ok_mnt "$swap"
mv "$swap" "$swap.orig"
ln -s /etc "$swap"
acces "$swap"
acces "$swap/ssh"
check=$(sc --json check 127.0.0.1 "$swap") && fail "check exit 0"
assert_eq none "$(jq -r .access <<<"$check")" "check of a swapped share"
assert_contains "$(jq -r .reason <<<"$check")" "not served: the path is now a symbolic link"
rm "$swap"
mv "$swap.orig" "$swap"
ok_mnt "$swap"

# Share paths are canonical.
ln -s real "$SM_DIR/export/link"
ln -s export "$SM_DIR/elink"
out=$(sc add-share -s "$SM_DIR/export/link" g 2>&1) && fail "symlink share accepted"
assert_contains "$out" "path \"$SM_DIR/export/link\": a symlink component; its canonical form is \"$real\""
out=$(sc add-share -s "$SM_DIR/elink/other" g 2>&1) && fail "intermediate link accepted"
assert_contains "$out" "its canonical form is \"$other\""
printf 'add-share -s %s g\n' "$SM_DIR/elink/other" >"$SM_DIR/batch"
out=$(sc batch "$SM_DIR/batch" 2>&1) && fail "batch with a link accepted"
assert_contains "$out" "a symlink component"
printf '%s  *(rw)\n' "$SM_DIR/elink/other" >"$SM_DIR/exports"
out=$(sc import --exports "$SM_DIR/exports" -g imp 2>&1) && fail "import of a link accepted"
assert_contains "$out" "its canonical form is \"$other\""
echo "ok"
