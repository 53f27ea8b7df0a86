#!/usr/bin/env bash
# sharemgrd --kernel=on --follow-exports: a followed exports.d file changed
# the way OpenZFS changes it (a temporary file renamed over it) is applied
# incrementally: a new share mounts, a mounted share changed to ro refuses
# writes without a remount, nothing is flushed (the nfsd.export flush time
# and the mounted share's kernel entry stay); a bad line keeps the group as
# it was; a removed line refuses its mounted client.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel ||
  skip "$SHAREMGRD has no --kernel option yet (kernel mode not built)"
"$SHAREMGRD" --help | grep -- --follow-exports >/dev/null ||
  skip "$SHAREMGRD has no --follow-exports option"
kt_setup
kt_fs a
kt_fs b
d=$KT_WORK/exports.d
mkdir -p "$d"
f=$d/zfs.exports
replace() {  # TEXT
  printf '%s\n' "$1" >"$d/.zfs.exports.tmp" && mv "$d/.zfs.exports.tmp" "$f"
}
group_is() {  # "PATH OPTIONS" lines
  [[ $(kt_sc --json show exports-zfs | jq -r '.groups[].shares[] | "\(.path) \(.options)"') == "$1" ]]
}
replace "/srv/a 127.0.0.1(rw,no_root_squash,no_subtree_check)"
kt_sharemgrd_start --follow-exports "$d/*.exports"
kt_wait_until 10 "exports-zfs holds /srv/a" group_is "/srv/a rw=127.0.0.1,root=127.0.0.1"
kt_must_mount 3 127.0.0.1:/srv/a /mnt/a
kt_assert_rw /mnt/a /srv/a
before=$(kt_flush_time nfsd.export)
entry_a=$(kt_export_entry /srv/a)
[[ -n $entry_a ]] || fail "no nfsd.export entry for the mounted /srv/a"
sleep 1.1

step "a line added by rename-replace"
replace "/srv/a 127.0.0.1(rw,no_root_squash,no_subtree_check)
/srv/b 127.0.0.1(rw,no_root_squash,no_subtree_check)"
kt_wait_until 10 "exports-zfs holds /srv/b" group_is "/srv/a rw=127.0.0.1,root=127.0.0.1
/srv/b rw=127.0.0.1,root=127.0.0.1"
assert_eq "$before" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after the add"
assert_eq "$entry_a" "$(kt_export_entry /srv/a)" "the kernel's entry for /srv/a after the add"
kt_must_mount 3 127.0.0.1:/srv/b /mnt/b
kt_assert_rw /mnt/b /srv/b
kt_assert_rw /mnt/a /srv/a

step "the mounted /srv/a changed to ro"
replace "/srv/a 127.0.0.1(ro,no_root_squash,no_subtree_check)
/srv/b 127.0.0.1(rw,no_root_squash,no_subtree_check)"
kt_wait_until 10 "/srv/a is ro" group_is "/srv/a ro=127.0.0.1,root=127.0.0.1
/srv/b rw=127.0.0.1,root=127.0.0.1"
kt_wait_until 10 "writes into /mnt/a refused" bash -c "! echo x >/mnt/a/ro-try.$$ 2>/dev/null"
kt_assert_write_refused /mnt/a "Read-only file system"
assert_eq "$before" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after the change"

step "a bad line keeps the group as it was"
gen=$(kt_sc --json stats | jq .generation)
replace "/srv/a 127.0.0.1(rw,no_subtree_check)
/srv/b 127.0.0.1(rw,frobnicate)"
kt_wait_until 10 "stats names the bad line" bash -c \
  "'$SHARECTL' --socket '$KT_SM_SOCKET' stats | grep 'zfs.exports:2: ' >/dev/null"
assert_eq "$gen" "$(kt_sc --json stats | jq .generation)" "generation after the bad version"
kt_assert_rw /mnt/b /srv/b

step "the line of the mounted /srv/b removed"
replace "/srv/a 127.0.0.1(ro,no_root_squash,no_subtree_check)"
kt_wait_until 10 "/srv/b removed" group_is "/srv/a ro=127.0.0.1,root=127.0.0.1"
kt_wait_until 10 "writes into the removed /srv/b refused" bash -c "! echo x >/mnt/b/gone.$$ 2>/dev/null"
assert_eq "$before" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after the remove"
assert_contains "$(cat "$KT_LOG")" "(--follow-exports $f)" "the log names the file's batches"
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
