#!/usr/bin/env bash
# UMNT and UMNTALL from a non-reserved source port change nothing (unless
# --insecure), like MNT: a local user cannot erase the mount records that
# root's mounts made.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
read -r p q <<<"$(make_dirs p q)"
sc create g && sc add-share -s "$p" g && sc add-share -s "$q" g ||
  fail "setup refused"
src=127.0.2.9
[[ $(probe --source $src --reserved mnt "$p") == MNT3_OK\ * ]] || fail "MNT $p refused"
[[ $(probe --source $src --reserved mnt "$q") == MNT3_OK\ * ]] || fail "MNT $q refused"

probe --source $src --unreserved umnt "$p" >/dev/null 2>&1 || true
probe --source $src --unreserved umntall >/dev/null 2>&1 || true
out=$(probe dump)
grep -q "^$src $p\$" <<<"$out" || fail "UMNT from an unreserved port removed $p: $out"
grep -q "^$src $q\$" <<<"$out" || fail "UMNTALL from an unreserved port removed $q: $out"

probe --source $src --reserved umnt "$p" >/dev/null || fail "UMNT failed"
out=$(probe dump)
grep -q " $p\$" <<<"$out" && fail "UMNT from a reserved port did not remove $p: $out"

restart_daemon --insecure
probe --source $src --unreserved umntall >/dev/null || fail "UMNTALL failed"
out=$(probe dump)
[[ -z $out ]] || fail "UMNTALL from an unreserved port with --insecure kept: $out"
echo "ok"
