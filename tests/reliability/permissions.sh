#!/usr/bin/env bash
# Who may do what: the management socket is 0660 root:ADMIN-GROUP; a
# caller neither root nor in the admin group is refused every change with a
# clear error and may read; a caller in the admin group may change; MNT
# from an unreserved port is refused unless --insecure; a client the
# options refuse never receives a file handle. (Unsafe store and socket
# files: unsafe_files_refused.sh.)
source "$(dirname "$0")/lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (setpriv, chown, groupadd)"; exit 0; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv not installed"; exit 0; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 0; }

# A group of our own that nobody is not in.
GROUP=smtest$$
groupadd "$GROUP" || fail "groupadd $GROUP"
on_exit "groupdel '$GROUP'"
GID=$(getent group "$GROUP" | cut -d: -f3)

read -r a b c d <<<"$(make_dirs a b c d)"
start_daemon --admin-group "$GROUP"
assert_eq "660 root $GROUP" "$(stat -c '%a %U %G' "$SM_SOCKET")" "socket mode, owner, group"
sc create g && sc create h && sc add-share -s "$a" g && sc add-share -s "$d" h ||
  fail "setup refused"
sc add-share -o rw=@10.0.0.0/8 -s "$c" h || fail "setup refused"
chmod 0666 "$SM_SOCKET"  # let nobody reach the daemon at all
before=$(show_state)

as_nobody() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$SHARECTL" --socket "$SM_SOCKET" "$@"
}
as_admin() {  # nobody, with the admin group as its group
  setpriv --reuid=nobody --regid="$GID" --clear-groups \
    "$SHARECTL" --socket "$SM_SOCKET" "$@"
}
printf 'add-share -s %s g\n' "$b" >"$SM_DIR/batch"
chmod 0644 "$SM_DIR/batch"
refused=0
for cmd in "create x" "delete -f h" "enable g" "enable -a" "disable g" \
           "disable -a" "add-share -s $b g" "remove-share -s $a g" \
           "move-share -s $a h" "set -o ro g" "set -o ro -s $a g" \
           "batch $SM_DIR/batch" "cache flush"; do
  rc=0
  # shellcheck disable=SC2086
  err=$(as_nobody $cmd 2>&1) || rc=$?
  assert_eq 1 "$rc" "exit code of '$cmd' as nobody"
  [[ ${err,,} == *permission* ]] || fail "'$cmd' as nobody: unclear error: $err"
  refused=$((refused + 1))
done
assert_eq "$before" "$(show_state)" "shares after refused changes"
for cmd in "list" "list -v" "--json show -v" "show g" "share" "--json stats" \
           "--json check 127.0.0.1 $a"; do
  # shellcheck disable=SC2086
  as_nobody $cmd >/dev/null || fail "'$cmd' as nobody failed"
done

# In the admin group: changes are allowed.
as_admin add-share -s "$b" g || fail "add-share as a member of $GROUP refused"
as_admin cache flush || fail "cache flush as a member of $GROUP refused"
as_admin remove-share -s "$b" g || fail "remove-share as a member refused"

# MNT: unreserved port refused without --insecure; refused clients get no
# file handle over any version or transport.
out=$(probe --unreserved mnt "$a") || true
assert_contains "$out" "MNT3ERR_ACCES" "MNT from an unreserved port"
assert_not_contains "$out" "fh=" "MNT from an unreserved port"
out=$(probe mnt "$a") || fail "MNT from a reserved port failed"
assert_contains "$out" "MNT3_OK" "MNT from a reserved port"
for args in "" "--udp" "--vers 1" "--udp --vers 1"; do
  # shellcheck disable=SC2086
  out=$(probe $args mnt "$c") || fail "MNT $args of a refused share failed"
  assert_not_contains "$out" "fh=" "MNT $args from a client the options refuse"
  assert_not_contains "$out" "_OK" "MNT $args from a client the options refuse"
  # shellcheck disable=SC2086
  out=$(probe $args mnt "$c/../c") || true
  assert_not_contains "$out" "fh=" "MNT $args of a non-normal path"
done
out=$(probe --source 127.0.0.9 mnt "$c/sub") || true
assert_not_contains "$out" "fh=" "MNT below a refused share"
stop_daemon || fail "sharemgrd exited non-zero"

start_daemon --insecure
out=$(probe --unreserved mnt "$a") || fail "MNT with --insecure failed"
assert_contains "$out" "MNT3_OK" "MNT from an unreserved port with --insecure"
stop_daemon || fail "sharemgrd exited non-zero"

echo "ok: $refused changes refused as nobody"
