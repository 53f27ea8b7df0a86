#!/usr/bin/env bash
# The administrator's everyday commands against a real sharemgrd: show -s
# PATH, dump (and its round trip through a fresh daemon, with a Latin-1
# path), suggestions for mistyped names, JSON that round-trips any path,
# one JSON shape for errors, global options after the command.
# Usage: integration_admin_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

X=$T/ex
LATIN=$'Jos\xe9'  # "José" in Latin-1: not UTF-8
mkdir -p "$X/a/inner" "$X/b" "$X/$LATIN" "$X/q" "$X/new"
start_daemon

sc create -o 'rw=@10.0.0.0/8,root=admin1' homes
sc create -o ro lab
sc create off
sc add-share -s "$X/a" -r ares -d $'Alice\'s "lab" \\ home' homes
sc add-share -s "$X/$LATIN" -o 'ro,nosuid' homes
sc add-share -s "$X/b" lab
sc add-share -s "$X/q" -d '#not a comment' off
sc disable off

# --- show -s PATH
run sc show -s "$X/a"
ok "show -s prints the share under its group" \
  '[[ $RC == 0 && $OUT == $'"'"'homes\n    '"'"'"$X/a" ]]'
run sc show -v -s "$X//b/"
ok "show -v -s normalizes the path and shows options" \
  '[[ $RC == 0 && $OUT == "lab nfs=(ro)"*"$X/b"* ]]'
run sc --json show -s "$X/a" -s "$X/b"
ok "show --json -s gives the show shape with only those shares" \
  '[[ $RC == 0 && $(jqv "[.groups[].name] | join(\",\")") == homes,lab &&
      $(jqv "[.groups[].shares[].path] | join(\",\")") == "$X/a,$X/b" &&
      $(jqv ".groups[0].shares[0].resource") == ares ]]'
run sc show -s "$X/a/inner"
ok "show -s of a path inside a share names the share and group" \
  '[[ $RC == 1 && $ERR == *"$X/a/inner: no such share (it is inside share $X/a of group homes)"* ]]'
run sc show -s "$X/nowhere"
ok "show -s of an unknown path exits 1 naming it" \
  '[[ $RC == 1 && $ERR == *"$X/nowhere: no such share"* ]]'
run sc show -s "$X/a" homes
ok "show -s with a group is a usage error" '[[ $RC == 2 ]]'

# --- JSON that round-trips a path that is not UTF-8
run sc --json show homes
B64=$(jqv '.groups[0].shares[] | select(has("path_b64")) | .path_b64')
ok "a non-UTF-8 path carries path_b64 with its exact bytes" \
  '[[ -n $B64 && $(printf %s "$B64" | base64 -d) == "$X/$LATIN" ]]'
ok "a UTF-8 path has no path_b64" \
  '[[ $(jqv "[.groups[0].shares[] | select(.path == \"$X/a\") | has(\"path_b64\")][0]") == false ]]'
run sc show -s "$(printf %s "$B64" | base64 -d)"
ok "the decoded bytes are accepted back by show -s" '[[ $RC == 0 && $OUT == *"$LATIN"* ]]'
run sc --json show lab
ok "absent resource, description and own options are null" \
  '[[ $(jqv ".groups[0].shares[0] | [.resource, .description, .options] | map(. == null) | all") == true ]]'

# --- dump: a batch that recreates the table exactly
run sc dump
DUMP1=$OUT
ok "dump exits 0 and counts" '[[ $RC == 0 && $OUT == "# sharectl dump: 3 groups, 4 shares"* ]]'
ok "dump keeps group options and the disabled state" \
  '[[ $OUT == *"create -o rw=@10.0.0.0/8,root=admin1 homes"* && $OUT == *$'"'"'\ndisable off'"'"'* ]]'
ok "dump writes the Latin-1 path byte for byte" '[[ $OUT == *"$X/$LATIN"* ]]'
run sc --json dump
ok "dump --json: batch_b64 holds the exact bytes of the text dump" \
  '[[ $RC == 0 && "$(jqv .batch_b64 | base64 -d)" == "$DUMP1" ]]'
printf '%s\n' "$DUMP1" >"$T/dump.batch"
stop_daemon
rm -f "$T/shares.db" "$T/shares.db-wal" "$T/shares.db-shm"
start_daemon
run sc list
ok "the fresh daemon has no groups" '[[ $RC == 0 && -z $OUT ]]'
run sc batch "$T/dump.batch"
ok "the dump loads as a batch" '[[ $RC == 0 && $ERR == *"operations applied in "*" 0 refused"* ]]'
run sc dump
ok "dump -> fresh daemon -> batch -> dump is identical" '[[ $RC == 0 && $OUT == "$DUMP1" ]]'
run sc --json show off
ok "the disabled group came back disabled with its description" \
  '[[ $(jqv ".groups[0].enabled") == false && $(jqv ".groups[0].shares[0].description") == "#not a comment" ]]'
run sc dump lab
ok "dump GROUP prints only that group" \
  '[[ $RC == 0 && $OUT == "# sharectl dump: 1 group, 1 share"* && $OUT != *homes* ]]'
run sc dump nosuch
ok "dump of an unknown group exits 1" '[[ $RC == 1 && $ERR == *"group nosuch does not exist"* ]]'

# --- did you mean
run sc add-shar -s "$X/b" lab
ok "a mistyped command gets a suggestion (exit 2)" \
  '[[ $RC == 2 && $ERR == *"unknown command \"add-shar\"; did you mean \"add-share\"?"* ]]'
run sc add-share -o 'rw,rooot=admin1' -s "$X/new" lab
ok "a mistyped share_nfs option gets a suggestion" \
  '[[ $RC == 1 && $ERR == *"rooot=admin1"*"did you mean \"root=\"?"* ]]'
run sc add-share --desc x -s "$X/new" lab
ok "a mistyped command option is a usage error" '[[ $RC == 2 && $ERR == *"unknown option \"--desc\""* ]]'
run "$SHARECTL" --sockt "$T/sock" list
ok "a mistyped global option gets a suggestion" \
  '[[ $RC == 2 && $ERR == *"did you mean \"--socket\"?"* ]]'
printf 'craete g1\n' >"$T/typo.batch"
run sc batch "$T/typo.batch"
ok "a mistyped command in a batch gets a suggestion" \
  '[[ $RC == 1 && $ERR == *"1: craete: unknown command \"craete\"; did you mean \"create\"?"* ]]'

# --- usage errors, global options after the command
run sc remove-share "$X/b"
ok "remove-share PATH without -s is a usage error (exit 2) that says so" \
  '[[ $RC == 2 && $ERR == *"give the path \"$X/b\" with -s"* ]]'
run "$SHARECTL" list --socket "$T/sock" -v
ok "--socket after the command is accepted" '[[ $RC == 0 && $OUT == *GROUP*homes* ]]'
run "$SHARECTL" show --socket="$T/sock" --json lab
ok "--socket= and --json after the command" '[[ $RC == 0 && $(jqv ".groups[0].name") == lab ]]'

# --- one JSON shape for errors
run sc --json add-share lab
ok "a usage error with --json prints an error document (exit 2)" \
  '[[ $RC == 2 && $(jqv .error.kind) == usage && $(jqv .error.command) == add-share && $(jqv .error.message) == *-s* ]]'
run sc --json frobnicate
ok "an unknown command with --json: error document, command null" \
  '[[ $RC == 2 && $(jqv .error.kind) == usage && $(jqv .error.command) == null ]]'
run sc --json show nosuch
ok "a refusal of a reading command with --json" \
  '[[ $RC == 1 && $(jqv .error.kind) == refused && $(jqv .error.message) == *nosuch* ]]'
run sc --json add-share -s "$X/nowhere" lab
ok "a refused change: errors with index and null origin, and error" \
  '[[ $RC == 1 && $(jqv ".errors[0].index") == 0 && $(jqv ".errors[0].origin") == null &&
      $(jqv .error.kind) == refused && $(jqv .commit_error) == null ]]'
run sc --json create newgroup
ok "a committed change has no error member" \
  '[[ $RC == 0 && $(jqv .ok) == true && $(jqv "has(\"error\")") == false ]]'
if command -v setpriv >/dev/null && [[ $(id -u) == 0 ]]; then
  chmod 755 "$T"
  chmod 666 "$T/sock"
  run setpriv --reuid=65534 --regid=65534 --clear-groups "$SHARECTL" --socket "$T/sock" --json create nobodys
  ok "a permission error with --json: kind permission, exit 1" \
    '[[ $RC == 1 && $(jqv .error.kind) == permission && $(jqv .error.command) == create ]]'
fi

# --- import warnings in the JSON result
mkdir -p "$X/imp"
echo "$X/imp 10.0.0.0/8(rw,crossmnt)" >"$T/exports"
run sc --json import --exports "$T/exports" -g imp --skip-unsupported
ok "import --json lists the skipped option as a warning with file and line" \
  '[[ $RC == 0 && $(jqv ".warnings[0].origin.file") == "$T/exports" &&
      $(jqv ".warnings[0].origin.line") == 1 && $(jqv ".warnings[0].message") == *crossmnt* ]]'

stop_daemon
run sc --json list
ok "an unreachable daemon with --json: kind unreachable, exit 3" \
  '[[ $RC == 3 && $(jqv .error.kind) == unreachable ]]'

report
