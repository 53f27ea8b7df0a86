#!/usr/bin/env bash
# exports(5) semantics, rpc.mountd against sharemgr (tests/kernel/
# exports_diff.py): the same exports files, the same client addresses; the
# decision (none, ro, rw; root squashed or not) rpc.mountd writes into the
# kernel at MNT against `sharectl check` of a sharemgrd that follows the
# same file with --follow-exports. Hand-written tricky cases plus
# 20 seeded random ones (KT_DIFF_CASES, KT_DIFF_SEED: 20 fit the 150 s a
# scenario may take on a loaded machine), 22 decisions each.
source "$(dirname "$0")/../../support/kernel/lib.sh"
"$SHAREMGRD" --help | grep -- --follow-exports >/dev/null ||
  skip "$SHAREMGRD has no --follow-exports option"
[[ -x /usr/bin/python3 ]] || skip "no /usr/bin/python3"
kt_setup
kt_fs a
kt_fs b
d=$KT_WORK/follow
mkdir -p "$d"
: >"$d/diff.exports"
kt_mountd_start ''
# Ours beside it: kernel mode off (rpc.mountd answers the kernel), no
# rpcbind (rpc.mountd holds MOUNT there); only `sharectl check` is asked.
KT_SM_SOCKET=$KT_WORK/sharemgrd.sock
SM_LOG=$KT_WORK/sharemgrd.log
"$SHAREMGRD" --kernel=off --no-rpcbind --foreground --mount-port 0 \
  --db "$KT_WORK/shares.db" --socket "$KT_SM_SOCKET" \
  --sharetab "$KT_WORK/sharetab" --follow-exports "$d/diff.exports" \
  2>>"$SM_LOG" &
SM_PID=$!
echo "$SM_PID" >"$KT_STATE/sharemgrd.pid"
kt_wait_until 30 "sharemgrd serving" grep -q "serving" "$SM_LOG"
rc=0
/usr/bin/python3 -u "$KT_SRC/tests/kernel/exports_diff.py" "$SHARECTL" \
  "$KT_SM_SOCKET" "$d/diff.exports" "${KT_DIFF_CASES:-20}" \
  "${KT_DIFF_SEED:-11}" "$SM_LOG" || rc=$?
kill -TERM "$SM_PID"; wait "$SM_PID" || true
rm -f "$KT_STATE/sharemgrd.pid"
kt_mountd_stop
: >/etc/exports
exportfs -ra
((rc == 0)) || fail "exports semantics differ (lines MISMATCH above)"
echo ok
