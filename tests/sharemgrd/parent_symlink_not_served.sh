#!/usr/bin/env bash
# A folder above a share replaced by a symbolic link (the share's own
# folder stays a folder, reached through the link): MNT and check refuse it
# at once (their walk refuses every link) and ask for a round, which says
# so too, so the share leaves the sharetab view and the EXPORT list
# (showmount -e) and the log says why (no mount changed and no change of
# the share woke it). Once the link is a folder again, the next MNT serves
# it and its round says so, without an admin step.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
read -r top other <<<"$(make_dirs top other)"
mkdir -p "$top/s" "$other/a" "$other/b"
start_daemon
sc create -o rw g 2>/dev/null || fail "create"
sc add-share -s "$top/s" g 2>/dev/null || fail "add-share $top/s"
assert_contains "$(probe mnt "$top/s")" "MNT3_OK" "MNT before"

mv "$top" "$top.real" && ln -s "$top.real" "$top" || fail "link"
assert_contains "$(probe mnt "$top/s")" "MNT3ERR_ACCES" "MNT through the link"
out=$(sc check 127.0.0.1 "$top/s") && fail "check granted through the link"
assert_contains "$out" "a symlink component" "check's reason"

sc add-share -s "$other/a" g 2>/dev/null || fail "add-share $other/a"
for ((i = 0; i < 100; i++)); do
  grep -qF "$top/s: not served: $top: a symlink component" "$SM_LOG" && break
  sleep 0.05
done
assert_contains "$(cat "$SM_LOG")" "$top/s: not served: $top: a symlink component" \
  "the round's log line"
for ((i = 0; i < 100; i++)); do
  cut -f1 "$SM_SHARETAB" | grep -qxF "$top/s" || break
  sleep 0.05
done
assert_not_contains "$(cut -f1 "$SM_SHARETAB")" "$top/s" "sharetab view"
assert_not_contains "$(probe export | awk '{print $1}')" "$top/s" "EXPORT"
assert_contains "$(probe export | awk '{print $1}')" "$other/a" "EXPORT of the other"

rm "$top" && mv "$top.real" "$top" || fail "unlink"
assert_contains "$(probe mnt "$top/s")" "MNT3_OK" "MNT once the link is gone"
for ((i = 0; i < 100; i++)); do
  grep -qF "$top/s: served again" "$SM_LOG" && break
  sleep 0.05
done
assert_contains "$(cat "$SM_LOG")" "$top/s: served again" "served again"
for ((i = 0; i < 100; i++)); do
  cut -f1 "$SM_SHARETAB" | grep -qxF "$top/s" && break
  sleep 0.05
done
assert_contains "$(cut -f1 "$SM_SHARETAB")" "$top/s" "sharetab view again"
assert_contains "$(probe mnt "$top/s")" "MNT3_OK" "MNT after"
echo ok
