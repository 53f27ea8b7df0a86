#!/usr/bin/env bash
# Text fields against a real sharemgrd (security issue 13, findings 11 and
# 12): a NUL byte in options, description or resource is refused before
# sending, naming the line and field (it used to cut the text short, so
# `-o "rw\0,none=HOST"` was stored as "rw"); control characters in a
# description, resource or path are refused by the daemon naming the field.
# Usage: integration_text_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

mkdir -p "$T/ex/a"
start_daemon
sc create g >/dev/null || { echo "FAIL: create"; exit 1; }

printf 'add-share -o "rw\0,none=@127.0.0.9/32" -s %s g\n' "$T/ex/a" >"$T/nul_opts"
run sc batch "$T/nul_opts"
ok "NUL in -o: exit 1, line and field named" \
  '[[ $RC == 1 && $ERR == *"nul_opts:1: add-share: options (-o) contains a NUL byte"* ]]'
run sc --json show g
ok "NUL in -o: nothing stored" '[[ $(jqv "[.groups[0].shares[]] | length") == 0 ]]'

printf 'create h\nadd-share -d "de\0sc" -s %s g\n' "$T/ex/a" >"$T/nul_desc"
run sc batch "$T/nul_desc"
ok "NUL in -d: the field named on its line" \
  '[[ $RC == 1 && $ERR == *"nul_desc:2: add-share: description (-d) contains a NUL byte"* ]]'
run sc --json list
ok "NUL in -d: the batch's other lines not applied either" \
  '[[ $(jqv "[.groups[] | select(.name==\"h\")] | length") == 0 ]]'

printf 'add-share -r "r\0" -s %s g\n' "$T/ex/a" >"$T/nul_res"
run sc batch "$T/nul_res"
ok "NUL in -r: the field named" '[[ $RC == 1 && $ERR == *"resource (-r) contains a NUL byte"* ]]'

run sc add-share -d $'clear\e[2J' -s "$T/ex/a" g
ok "escape in -d: refused naming the field" \
  '[[ $RC == 1 && $ERR == *"description contains a control character"* ]]'
run sc add-share -r $'r\a' -s "$T/ex/a" g
ok "bell in -r: refused naming the field" \
  '[[ $RC == 1 && $ERR == *"resource contains a control character"* ]]'
mkdir -p "$T/ex/"$'b\e[31m'
run sc add-share -s "$T/ex/"$'b\e[31m' g
ok "escape in a path: refused" \
  '[[ $RC == 1 && $ERR == *"contains a control character"* ]]'
ok "the error itself shows the escape escaped" '[[ $ERR != *$'"'"'\e'"'"'* ]]'

run sc add-share -d 'tab-free, fine' -s "$T/ex/a" g
ok "plain text still accepted" '[[ $RC == 0 ]]'

report
