#!/usr/bin/env bash
# Followed exports files and folders that others than root may write are
# refused, naming them (issue 48, item 15): before, another user's
# evil.exports with `/x *(rw,no_root_squash)` in a world-writable
# exports.d was applied within 200 ms, and a link to a user-owned file
# was applied too.
#  - a folder writable by every user (1777, sticky or not): the daemon
#    does not start, naming it;
#  - in a safe folder: a file owned by another user, a file writable by
#    every user, a link to a root-owned file in a world-writable folder:
#    each refused (nothing of it served; `stats` and the log say why);
#  - a root-owned 0644 file beside them is applied.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
read -r a b c d <<<"$(make_dirs a b c d)"
open=$SM_DIR/open.d
mkdir -m 1777 "$open"
printf '%s *(rw)\n' "$a" >"$open/x.exports"
rc=0
"$SHAREMGRD" --foreground --db "$SM_DIR/x.db" --socket "$SM_DIR/x.sock" \
  --sharetab "$SM_DIR/x.sharetab" --mount-port 0 --no-rpcbind \
  --follow-exports "$open/*.exports" >"$SM_DIR/x.out" 2>&1 || rc=$?
[[ $rc != 0 ]] || fail "started with a world-writable exports folder"
assert_contains "$(cat "$SM_DIR/x.out")" "$open: the folder is writable by every user" \
  "the refusal names the folder"

d_safe=$SM_DIR/exports.d
mkdir -m 755 "$d_safe"
printf '%s *(rw,no_root_squash)\n' "$a" >"$d_safe/evil.exports"
chown 65534 "$d_safe/evil.exports"
printf '%s *(rw)\n' "$b" >"$d_safe/open.exports"
chmod 666 "$d_safe/open.exports"
printf '%s *(rw)\n' "$c" >"$open/target"
ln -s "$open/target" "$d_safe/link.exports"
printf '%s *(ro)\n' "$d" >"$d_safe/good.exports"
chmod 644 "$d_safe/good.exports"
start_daemon --follow-exports "$d_safe/*.exports"
st=$(sc stats)
echo "$st"
assert_contains "$st" "$d_safe/evil.exports: the file is owned by uid 65534, not root" "owner"
assert_contains "$st" "$d_safe/open.exports: the file is writable by every user" "mode"
assert_contains "$st" "$d_safe/link.exports (a link to $open/target): $open: the folder is writable by every user" "link"
assert_contains "$st" "$d_safe/good.exports -> group exports-good (1 share): ok" "the good file"
for p in "$a" "$b" "$c"; do
  sc check 127.0.0.1 "$p" >/dev/null 2>&1 && fail "$p is served from a refused file"
done
assert_contains "$(sc check 127.0.0.1 "$d")" "ro" "the good file's share"
assert_contains "$(cat "$SM_LOG")" "evil.exports: the file is owned by uid 65534" "log"
echo "ok"
