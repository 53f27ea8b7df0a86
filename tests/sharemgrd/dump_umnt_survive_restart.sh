#!/usr/bin/env bash
# DUMP shows a mount made with MNT; the record survives a restart; UMNT
# removes it (and UMNTALL removes a client's others).
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
read -r p q <<<"$(make_dirs p q)"
sc create g || fail "create refused"
sc add-share -s "$p" g || fail "add-share $p refused"
sc add-share -s "$q" g || fail "add-share $q refused"

src=127.0.2.5
[[ $(probe --source $src mnt "$p") == MNT3_OK\ * ]] || fail "MNT $p refused"
[[ $(probe --source $src mnt "$q") == MNT3_OK\ * ]] || fail "MNT $q refused"
out=$(probe dump)
grep -q " $p\$" <<<"$out" || fail "DUMP lacks $p: $out"
grep -q " $q\$" <<<"$out" || fail "DUMP lacks $q: $out"

restart_daemon
out=$(probe dump)
grep -q " $p\$" <<<"$out" || fail "DUMP after restart lacks $p: $out"

probe --source $src umnt "$p" >/dev/null || fail "UMNT failed"
out=$(probe dump)
grep -q " $p\$" <<<"$out" && fail "DUMP still lists $p after UMNT: $out"
grep -q " $q\$" <<<"$out" || fail "UMNT of $p also removed $q: $out"

probe --source $src umntall >/dev/null || fail "UMNTALL failed"
out=$(probe dump)
grep -q " $q\$" <<<"$out" && fail "DUMP still lists $q after UMNTALL: $out"
restart_daemon
out=$(probe dump)
[[ -z $out ]] || fail "DUMP after UMNTALL and restart not empty: $out"
echo "ok"
