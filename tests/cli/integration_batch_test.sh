#!/usr/bin/env bash
# sharectl batch against a real sharemgrd: 15,000 operations in one call,
# all or nothing with a bad line in the middle, line numbers of parse and
# daemon errors, quoting, comments, continuation, standard input, and
# progress only on a terminal.
# Usage: integration_batch_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

N=15000
H=$T/home
mkdir -p "$H"
(cd "$H" && seq -f 'u%05g' 1 $N | xargs mkdir)
start_daemon

make_batch() {  # make_batch FILE: create + N add-shares, line i+1 = share i
  {
    echo "create -o rw=@127.0.0.0/8 homes"
    awk -v h="$H" -v n=$N 'BEGIN { for (i = 1; i <= n; i++)
      printf "add-share -d \047home of u%05d\047 -s %s/u%05d homes\n", i, h, i }'
  } >"$1"
}

# --- a daemon-side error in the middle: nothing applied, line reported
make_batch "$T/bad.batch"
BAD=7501  # line 7501 adds u07500
sed -i "${BAD}s|$H/u07500|$H/u07500/nonexistent|" "$T/bad.batch"
run sc batch "$T/bad.batch"
ok "bad line in the middle: exit 1" '[[ $RC == 1 ]]'
ok "its file, line number and command are reported" \
  '[[ $ERR == "$T/bad.batch:$BAD: add-share: "*"$H/u07500/nonexistent"* ]]'
ok "only that line is reported" '[[ $(grep -c "^$T/bad.batch:[0-9]*: " "$T/err") == 1 ]]'
ok "and a summary line ends the report" \
  '[[ $(tail -n1 "$T/err") == "sharectl: batch $T/bad.batch: refused in "*" ms, nothing applied: 15001 lines, 1 refused, 1 error" ]]'
run sc --json list
ok "nothing applied: the group created on line 1 does not exist" \
  '[[ $RC == 0 && $(jqv "[.groups[] | select(.name==\"homes\")] | length") == 0 ]]'

# --- a parse error in the middle: nothing sent
make_batch "$T/parse.batch"
sed -i "9000s|^add-share|add-share -x|; 12000s|^add-share -d '|add-share -d \"|" "$T/parse.batch"
run sc batch "$T/parse.batch"
ok "parse errors: exit 1, every bad line reported with its number" \
  '[[ $RC == 1 && $ERR == *"parse.batch:9000: add-share: unknown option \"-x\""* &&
      $ERR == *"parse.batch:12000: add-share: unterminated double quote"* ]]'
run sc --json stats
ok "parse errors: nothing applied" '[[ $(jqv .shares) == 0 && $(jqv .groups) == 0 ]]'

# --- parse errors and the daemon's refusals in one run, sorted by line
make_batch "$T/both.batch"
sed -i "9000s|^add-share|add-share -x|; 7501s|$H/u07500|$H/u07500/nonexistent|" "$T/both.batch"
run sc batch "$T/both.batch"
ok "both kinds in one run, in line order" \
  '[[ $RC == 1 && $ERR == "$T/both.batch:7501: add-share: "*"nonexistent"*"
$T/both.batch:9000: add-share: unknown option \"-x\""* ]]'
ok "both kinds: 2 refused lines in the summary" \
  '[[ $ERR == *"refused in "*" ms, nothing applied: 15001 lines, 2 refused, 2 errors" ]]'
run sc --json stats
ok "both kinds: nothing applied" '[[ $(jqv .shares) == 0 && $(jqv .groups) == 0 ]]'

# --- a mistyped group on every line: the first five, then a count
make_batch "$T/typo.batch"
sed -i "2,\$s| homes\$| hmoes|" "$T/typo.batch"
run sc batch "$T/typo.batch"
ok "identical errors collapsed: five shown" \
  '[[ $RC == 1 && $(grep -c "^$T/typo.batch:[0-9]*: add-share: group hmoes" "$T/err") == 5 ]]'
ok "identical errors collapsed: the rest counted" \
  '[[ $ERR == *"typo.batch:7: ... and 14995 more lines with the same error: add-share: group hmoes does not exist; --all-errors lists every line"* ]]'
ok "the report is short" '[[ $(wc -l <"$T/err") -le 7 ]]'
run sc --json batch "$T/typo.batch"
ok "with --json every error is listed" '[[ $(jqv ".errors | length") == 15000 ]]'

# --- the man page's homes example with every folder missing: errors that
# differ only by path are one kind (issue 48, item 6)
make_batch "$T/missing.batch"
sed -i "2,\$s|$H/u|$H/gone/u|" "$T/missing.batch"
sed -i "9000s|^add-share|add-share -x|" "$T/missing.batch"
run sc batch "$T/missing.batch"
ok "missing folders: five lines of the kind, then a count of the rest" \
  '[[ $RC == 1 && $(grep -c "^$T/missing.batch:[0-9]*: add-share: $H/gone/u[0-9]*: no such directory" "$T/err") == 5 &&
      $ERR == *"missing.batch:7: ... and 14994 more lines with this kind of error: add-share: PATH: no such directory; --all-errors lists every line"* ]]'
ok "missing folders: another kind still shown in line order" \
  '[[ $ERR == *"... and 14994 more"*"missing.batch:9000: add-share: unknown option \"-x\""* ]]'
ok "missing folders: the report is short" '[[ $(wc -l <"$T/err") -le 8 ]]'
run sc batch --all-errors "$T/missing.batch"
ok "batch --all-errors lists every line" \
  '[[ $RC == 1 && $(grep -c "^$T/missing.batch:[0-9]*: add-share: " "$T/err") == 15000 && $ERR != *"more lines"* ]]'

# --- batch -n: checked by the daemon, nothing applied
make_batch "$T/dry.batch"
run sc batch -n "$T/dry.batch"
ok "dry run of 15,001 lines passes" \
  '[[ $RC == 0 && $ERR == "sharectl: batch $T/dry.batch: dry run passed in "*" ms, nothing changed: 15001 lines, 15001 operations would apply" ]]'
run sc --json stats
ok "dry run: nothing applied" '[[ $(jqv .shares) == 0 && $(jqv .groups) == 0 ]]'
run sc batch --dry-run "$T/bad.batch"
ok "dry run of a bad batch: refused with the line" \
  '[[ $RC == 1 && $ERR == "$T/bad.batch:$BAD: add-share: "*"dry run refused"* ]]'
printf 'create -n x\n' >"$T/n.batch"
run sc batch "$T/n.batch"
ok "-n on a batch line is refused" '[[ $RC == 1 && $ERR == *"n.batch:1: create: -n applies to the whole batch"* ]]'

# --- options open to every client: warned once the batch is applied,
# a table's worth collapsed
mkdir -p "$T"/w/a{1..8}
{
  echo "create w1"
  for i in 1 2 3 4 5 6 7 8; do echo "add-share -o rw -s $T/w/a$i w1"; done
} >"$T/w.batch"
run sc batch "$T/w.batch"
ok "open group warned with its line" \
  '[[ $RC == 0 && $ERR == *"w.batch:1: create: warning: read-write to every client (no -o given"* ]]'
ok "open shares: five lines, then the rest counted" \
  '[[ $ERR == *"w.batch:6: add-share: warning: read-write to every client"* &&
      $ERR == *"w.batch:7: ... and 3 more lines with the same warning: add-share: warning: read-write to every client; --all-errors lists every line"* &&
      $ERR != *"w.batch:8:"* && $ERR != *"w.batch:9:"* ]]'
run sc --json batch "$T/w.batch"
ok "a refused batch warns of nothing" '[[ $RC == 1 && $ERR != *warning* ]]'
printf '# nothing\n\n' >"$T/empty.batch"
run sc batch "$T/empty.batch"
ok "an empty batch has its summary too" \
  '[[ $RC == 0 && $ERR == *"batch $T/empty.batch: nothing to do in "*"0 lines, 0 operations would apply"* ]]'
run sc --json batch "$T/empty.batch"
ok "an empty batch's JSON: no generation" '[[ $RC == 0 && $(jq -r .generation <<<"$OUT") == null ]]'
sc delete -f w1 >/dev/null 2>&1 || true

# --- the whole batch, off a terminal: applied, silent
make_batch "$T/good.batch"
start=$(date +%s%N)
run sc batch "$T/good.batch"
ms=$((($(date +%s%N) - start) / 1000000))
echo "sharectl batch of $N add-shares (plus create), committed: $ms ms"
ok "15,000 adds: exit 0" '[[ $RC == 0 ]]'
ok "off a terminal only the summary line is printed" \
  '[[ -z $OUT && $ERR == "sharectl: batch $T/good.batch: 15001 operations applied in "*" ms: 15001 lines, 0 refused, generation "* ]]'
run sc --json list
ok "all 15,000 shares are there" \
  '[[ $(jqv ".groups[] | select(.name==\"homes\") | .share_count") == $N ]]'
run sc --json show homes
ok "a description from the batch survives" \
  '[[ $(jqv ".groups[0].shares[] | select(.path==\"$H/u00042\") | .description") == "home of u00042" ]]'

# --- quoting, comments, continuation, standard input
mkdir -p "$T/q1" "$T/q2" "$T/q3"
DESC=$'it\'s a "quoted" \\ description #not-a-comment'
cat >"$T/quote.batch" <<BATCH
# a comment line

create -o 'rw=@10.0.0.0/8' quoting   # trailing comment
add-share -d "it's a \"quoted\" \\\\ description #not-a-comment" \\
    -s $T/q1 quoting
add-share -d 'it'\''s a "quoted" \\ description #not-a-comment' -s $T/q2 quoting
add-share -d it\\'s\\ a\\ \\"quoted\\"\\ \\\\\\ description\\ \\#not-a-comment -s $T/q3 quoting
BATCH
run sc batch - <"$T/quote.batch"
ok "quoted batch from standard input: exit 0" '[[ $RC == 0 ]]'
run sc --json show quoting
for q in q1 q2 q3; do
  ok "$q: description with spaces, quotes and backslash survives" \
    '[[ $(jqv ".groups[0].shares[] | select(.path==\"$T/$q\") | .description") == "$DESC" ]]'
done
ok "group options from a quoted word" '[[ $(jqv ".groups[0].options") == "rw=@10.0.0.0/8" ]]'

# --- read-only commands are not allowed in a batch
printf 'list\ncheck a b\n' >"$T/ro.batch"
run sc batch "$T/ro.batch"
ok "read-only commands in a batch are refused by line" \
  '[[ $RC == 1 && $ERR == *"1: list: "* && $ERR == *"2: check: "* ]]'
run sc --json batch "$T/ro.batch"
ok "batch --json reports bad lines as origin, command, message" \
  '[[ $RC == 1 && $(jqv ".errors[1].origin.line") == 2 && $(jqv ".errors[1].origin.file") == "$T/ro.batch" && $(jqv ".errors[1].command") == check && $(jqv ".error.kind") == refused ]]'
run sc batch "$T/nonexistent.batch"
ok "missing batch file: exit 1 naming it" '[[ $RC == 1 && $ERR == *nonexistent.batch* ]]'

# --- on a terminal: progress and summary (script(1) gives a pty)
awk -v h="$H" 'BEGIN { for (i = 1; i <= 2500; i++)
  printf "remove-share -s %s/u%05d homes\n", h, i }' >"$T/remove.batch"
if command -v script >/dev/null; then
  # script(1) prints nothing when its own standard input is closed (as it
  # may be under CI), so give it /dev/null.
  run script -qec "'$SHARECTL' --socket '$T/sock' batch '$T/remove.batch'" /dev/null </dev/null
  ok "on a terminal: progress lines and a summary" \
    '[[ $RC == 0 && $OUT == *parsing* && $OUT == *sending* && $OUT == *committed* &&
        $OUT == *"2500 operations applied in "*" ms"* ]]'
else
  run sc batch "$T/remove.batch"
fi
run sc --json list
ok "the removes were applied" \
  '[[ $(jqv ".groups[] | select(.name==\"homes\") | .share_count") == $((N - 2500)) ]]'

# --- enable -a / disable -a inside a batch
printf 'create late\ndisable -a\n' >"$T/all.batch"
run sc batch "$T/all.batch"
run sc --json list
ok "disable -a in a batch covers groups created before it" \
  '[[ $RC == 0 && $(jqv "[.groups[] | select(.enabled)] | length") == 0 ]]'

report
