#!/usr/bin/env bash
# What sharectl reports, against a real sharemgrd (issue 48): show -v's
# kernel notes only in kernel mode (item 9).
# Usage: integration_report_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

X=$T/ex
mkdir -p "$X/a" "$X/b"
start_daemon --kernel=off

# --- item 9: show -v names options the kernel cannot apply only when the
# daemon runs its kernel mode.
sc create -o rw=@127.0.0.0/8 g >/dev/null || { echo "FAIL: create"; exit 1; }
sc add-share -o nosuid -s "$X/a" g >/dev/null || { echo "FAIL: add-share"; exit 1; }
run sc --json stats
ok "the daemon runs with kernel mode off" '[[ $(jqv .kernel.mode) == off ]]'
run sc show -v g
ok "show -v, kernel mode off: the share's effective options, no kernel note" \
  '[[ $RC == 0 && $OUT == *"$X/a: effective nfs=("*nosuid* && $OUT != *"no effect in kernel mode"* ]]'
run sc show -v -s "$X/a"
ok "show -v -s, kernel mode off: no kernel note" \
  '[[ $RC == 0 && $OUT == *"$X/a"* && $OUT != *"no effect in kernel mode"* ]]'
run sc --json show g
ok "show --json lists kernel_no_effect whatever the mode" \
  '[[ $(jqv ".groups[0].shares[0].kernel_no_effect | length") -ge 1 ]]'

report
