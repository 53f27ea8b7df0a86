#!/usr/bin/env bash
# What sharectl reports, against a real sharemgrd (issue 48): show -v's
# kernel notes only in kernel mode (item 9); one JSON shape per command,
# whatever fails (item 8); changes bounded, summed up, with ISO times
# (item 7); singular counts, `help`, a dry-run delete's share count (item
# 11).
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

# --- item 8: JSON consistency.
run sc --json check 10.1.2.3 "$X/a"
ok "a refused check: exit 1 with an error member naming the reason" \
  '[[ $RC == 1 && $(jqv .access) == none && $(jqv .error.kind) == refused &&
      $(jqv .error.command) == check && $(jqv .error.message) == "$(jqv .reason)" ]]'
run sc --json check 127.0.0.1 "$X/a"
ok "a check that grants access: exit 0, no error member" \
  '[[ $RC == 0 && $(jqv .access) == rw && $(jqv "has(\"error\")") == false ]]'
run sc --json exportfs -v
ok "--json exportfs: a usage error that names the command" \
  '[[ $RC == 2 && $(jqv .error.kind) == usage && $(jqv .error.command) == exportfs ]]'
run sc --json add-share -n -s "$X/b" g
ok "a dry run with --json counts what would apply" \
  '[[ $RC == 0 && $(jqv .dry_run) == true && $(jqv .would_apply) == 1 && $(jqv .applied) == 0 ]]'
printf 'create h\nadd-share -s %s h\n' "$X/b" >"$T/two.batch"
run sc --json batch -n "$T/two.batch"
ok "batch -n with --json: would_apply" '[[ $RC == 0 && $(jqv .would_apply) == 2 ]]'
run sc --json add-share -n -s "$X/nowhere" g
ok "a refused dry run: would_apply 0" '[[ $RC == 1 && $(jqv .would_apply) == 0 ]]'
run sc --json batch "$T/two.batch"
ok "a committed batch: would_apply null" '[[ $RC == 0 && $(jqv .would_apply) == null && $(jqv .applied) == 2 ]]'
if command -v setpriv >/dev/null && [[ $(id -u) == 0 ]]; then
  chmod 755 "$T"
  chmod 666 "$T/sock"
  nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$SHARECTL" --socket "$T/sock" "$@"; }
  run nobody --json create nobodys
  ok "a permission-refused create keeps ok and errors" \
    '[[ $RC == 1 && $(jqv .ok) == false && $(jqv ".errors | length") == 1 &&
        $(jqv ".errors[0].message") == "$(jqv .error.message)" &&
        $(jqv .error.kind) == permission && $(jqv .error.command) == create ]]'
  run nobody --json batch "$T/two.batch"
  ok "a permission-refused batch keeps ok and errors" \
    '[[ $RC == 1 && $(jqv .ok) == false && $(jqv ".errors | length") == 1 &&
        $(jqv .error.kind) == permission && $(jqv .error.command) == batch ]]'
  ok "... and prints one document" '[[ $(wc -l <"$T/out") == 1 ]]'
fi

# --- item 7: changes bounded, summed up, ISO 8601 times.
G=$(sc --json stats | jq .generation)
mkdir -p "$X/many"
(cd "$X/many" && seq -f 'u%04g' 1 1500 | xargs mkdir)
{
  echo "create -o ro many"
  for i in $(seq -f '%04g' 1 1500); do echo "add-share -s $X/many/u$i many"; done
} >"$T/many.batch"
sc batch "$T/many.batch" 2>/dev/null || echo "FAIL: many.batch"
sc disable many || echo "FAIL: disable many"
run sc changes --since "$G"
ok "changes: bounded at 1000 lines by default, then the cut batch's count and a last line" \
  '[[ $RC == 0 && $(wc -l <"$T/out") == 1002 && $OUT == *"  ... and 501 more shares"$'"'"'\n'"'"'"... 2002 more lines not shown: 501 more shares of generation $((G + 1)) and 1 more batch, up to generation $((G + 2)); --limit 0 shows all, --summary one line per batch" ]]'
ok "changes: the time in UTC, ISO 8601" \
  '[[ $(head -n1 "$T/out") =~ ^generation\ $((G + 1))\ \ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\ \  ]]'
run sc changes --since "$G" --limit 0
ok "changes --limit 0: every line" '[[ $RC == 0 && $(wc -l <"$T/out") == $((2 + 1500 + 1500)) ]]'
run sc changes --since "$G" --summary
ok "changes --summary: one line per batch with its share counts" \
  '[[ $RC == 0 && $(wc -l <"$T/out") == 2 && $OUT == *"1501 operations: "*"; shares: 1500 added"$'"'"'\n'"'"'*"1 operation: "*"; shares: 1500 changed" ]]'
run sc changes --since "$G" --limit x
ok "changes --limit x: a usage error" '[[ $RC == 2 && $ERR == *"--limit \"x\""* ]]'
run sc --json changes --since "$G"
ok "changes --json: everything unless --limit, ISO time and time_unix" \
  '[[ $RC == 0 && $(jqv ".batches | length") == 2 && $(jqv ".batches[0].shares | length") == 1500 &&
      $(jqv .more) == null && $(jqv ".batches[0].time") =~ Z$ &&
      $(jqv ".batches[0].time_unix | type") == number &&
      $(jqv ".batches[0].time_unix | todate") == $(jqv ".batches[0].time") ]]'
run sc --json changes --since "$G" --limit 10
ok "changes --json --limit: what is left out, counted" \
  '[[ $RC == 0 && $(jqv ".batches | length") == 1 && $(jqv ".batches[0].shares_omitted") == 1491 &&
      $(jqv .more.batches) == 1 && $(jqv .more.shares) == 2991 ]]'

# --- item 11: wording.
run sc delete -n -f many
ok "delete -f -n says how many shares it would remove" \
  '[[ $RC == 0 && $ERR == *"dry run passed, nothing changed (1 operation would apply)"*"sharectl: delete: dry run: would remove group many and its 1500 shares"* ]]'
run sc --json stats
ok "... and removes none" '[[ $(jqv .shares) -ge 1500 ]]'
printf 'create one\n' >"$T/one.batch"
run sc batch -n "$T/one.batch"
ok "one line, one operation: singular" \
  '[[ $RC == 0 && $ERR == *"nothing changed: 1 line, 1 operation would apply" ]]'
run sc help
HELP=$OUT
run sc --help
ok "sharectl help is sharectl --help" '[[ $RC == 0 && $OUT == "$HELP" && -n $HELP ]]'
run sc help changes
ok "sharectl help COMMAND is COMMAND --help" \
  '[[ $RC == 0 && $OUT == "usage: sharectl changes --since GENERATION"* ]]'

report
