#!/usr/bin/env bash
# sharectl exportfs, and sharectl run as `exportfs` through a symlink:
# -ra applies a followed file renamed into place before it returns (no
# sleep), a bad line is refused naming FILE:LINE and changes nothing,
# -o/-u round trip through the group "exportfs", -v/-s print exportfs's
# format, -f flushes, usage errors exit 2 naming the flag, and a daemon
# that follows no files says so.
# Usage: integration_exportfs_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

mkdir -p "$T/etc/exports.d" "$T/bin" "$T/export/a" "$T/export/b" "$T/export/c"
A=$T/export/a
B=$T/export/b
C=$T/export/c
F=$T/etc/exports.d/zfs.exports
ln -s "$(realpath "$SHARECTL")" "$T/bin/exportfs"
# exportfs as OpenZFS runs it: by that name, the socket from the environment.
xfs() { SHARECTL_SOCKET=$T/sock "$T/bin/exportfs" "$@"; }
# Writes the file as OpenZFS does: a temporary file renamed over it.
replace() {
  printf '%s' "$1" >"$T/etc/exports.d/.zfs.exports.tmp"
  mv "$T/etc/exports.d/.zfs.exports.tmp" "$F"
}
# The shares of GROUP as "PATH OPTIONS" lines.
shares_of() {
  sc --json show "$1" | jq -r '.groups[].shares[] | "\(.path) \(.options)"'
}

start_daemon --follow-exports "$T/etc/exports" \
  --follow-exports "$T/etc/exports.d/*.exports"

# -ra right after the rename: applied before it returns.
replace "$A *(rw,no_subtree_check)
"
run xfs -ra
ok "exportfs -ra after a rename exits 0" '[[ $RC == 0 && -z $ERR ]]'
run shares_of exports-zfs
ok "the new file is applied when -ra returns" '[[ $OUT == "$A rw" ]]'
run sc share
ok "and served (sharetab view)" '[[ $OUT == *"$A"* ]]'

replace "$A 127.0.0.1(ro) *(rw)
$B *(ro)
"
run xfs -r
ok "exportfs -r applies a second version" '[[ $RC == 0 ]]'
run shares_of exports-zfs
ok "both shares, new options" \
  '[[ $OUT == "$A rw,ro=127.0.0.1
$B ro" ]]'

# A bad line: exit 1 naming FILE:LINE, the group keeps its last good state.
replace "$A *(rw)
$C *(frobnicate)
"
run xfs -ra
ok "a bad line: exit 1" '[[ $RC == 1 ]]'
ok "the error names FILE:LINE and the option" \
  '[[ $ERR == *"exportfs: $F:2: "*frobnicate* && $ERR == *"keeps its last good state"* ]]'
run shares_of exports-zfs
ok "the group is unchanged" \
  '[[ $OUT == "$A rw,ro=127.0.0.1
$B ro" ]]'
replace "$A 127.0.0.1(ro) *(rw)
$B *(ro)
"
run xfs -ra
ok "fixed again: exit 0" '[[ $RC == 0 && -z $ERR ]]'

# -o / -u: transient exports in the group "exportfs".
run xfs -o rw,no_root_squash 127.0.0.1:$C
ok "exportfs -o CLIENT:PATH exits 0" '[[ $RC == 0 ]]'
run sc --json show exportfs
ok "the share is in group exportfs with the client in its description" \
  '[[ $(jqv ".groups[].shares[] | \"\(.path) \(.options) \(.description)\"") == "$C rw=127.0.0.1,root=127.0.0.1,ro=-127.0.0.1 127.0.0.1(rw,no_root_squash)" || $(jqv ".groups[].shares[].description") == "127.0.0.1(rw,no_root_squash)" ]]'
run xfs 10.1.0.0/16:$C
ok "a second client with default options" '[[ $RC == 0 ]]'
run sc check 127.0.0.1 "$C"
ok "the first client gets rw and root" '[[ $OUT == *rw* && $RC == 0 ]]'

# -v and -s, exportfs's format (paths here are longer than 14 characters);
# the daemon runs --insecure (integration_lib.sh), so every export shows
# insecure, as exportfs shows an export that has it.
opts_rw="sync,wdelay,hide,no_subtree_check,sec=sys,rw,insecure,no_root_squash,no_all_squash"
opts_ro="sync,wdelay,hide,no_subtree_check,sec=sys,ro,insecure,root_squash,no_all_squash"
opts_rwsq="sync,wdelay,hide,no_subtree_check,sec=sys,rw,insecure,root_squash,no_all_squash"
want_v=$(printf '%s\n\t\t%s\n' \
  "$A" "127.0.0.1($opts_ro)" \
  "$C" "127.0.0.1($opts_rw)" \
  "$C" "10.1.0.0/16($opts_ro)" \
  "$A" "<world>($opts_rwsq)" \
  "$B" "<world>($opts_ro)")
run xfs -v
ok "exportfs -v: hosts, networks, then everyone; effective options" \
  '[[ $RC == 0 && $OUT == "$want_v" ]]'
[[ $OUT == "$want_v" ]] || diff <(echo "$OUT") <(echo "$want_v")
want_s=$(printf '%s\n' \
  "$A  127.0.0.1($opts_ro)" \
  "$C  127.0.0.1($opts_rw)" \
  "$C  10.1.0.0/16($opts_ro)" \
  "$A  *($opts_rwsq)" \
  "$B  *($opts_ro)")
run xfs -s
ok "exportfs -s: exports(5) lines, two spaces as exportfs writes" '[[ $RC == 0 && $OUT == "$want_s" ]]'
want_bare=$(printf '%s\n\t\t%s\n' "$A" "127.0.0.1" "$C" "127.0.0.1" \
  "$C" "10.1.0.0/16" "$A" "<world>" "$B" "<world>")
run xfs
ok "bare exportfs: paths and clients" '[[ $RC == 0 && $OUT == "$want_bare" ]]'
ok "no note of other groups while there are none" '[[ $ERR != *"own groups"* ]]'
mkdir -p "$T/export/own"
run sc create -o rw=@127.0.0.0/8 own
run sc add-share -s "$T/export/own" own
ok "a group of sharectl's own with one share" '[[ $RC == 0 ]]'
run xfs
ok "shares of sharectl's own groups: not listed, but said" \
  '[[ $RC == 0 && $OUT == "$want_bare" && $ERR == *"1 share of sharectl'"'"'s own groups not listed (sharectl share lists them)"* ]]'
run sc delete -f own
ok "deleted again" '[[ $RC == 0 ]]'

# -v shows what is served. A transient export edited by hand: the options
# set-share gave, not the client text exportfs -o kept.
mkdir -p "$T/export/d"
D=$T/export/d
run xfs -o ro 127.0.0.9:$D
ok "exportfs -o ro 127.0.0.9:D" '[[ $RC == 0 ]]'
run sc set-share -o 'rw,root=*' -s "$D" exportfs
ok "then set-share -o rw,root=* by hand" '[[ $RC == 0 ]]'
run xfs -v
ok "-v lists D as served: every client rw with root" \
  '[[ $RC == 0 && $OUT == *"$D"$'"'"'\n\t\t'"'"'"<world>($opts_rw)"* ]]'
ok "not the stored 127.0.0.9(ro)" '[[ $OUT != *"127.0.0.9"* ]]'
run sc remove-share -s "$D" exportfs
ok "D removed again" '[[ $RC == 0 ]]'

# A followed file's new version is refused: the paths its group still
# serves from the last good version are listed (exit 0), with a note.
replace "$A 127.0.0.1(ro) *(rw)
$C *(frobnicate)
"
run xfs -r
ok "a version without B and with a bad line is refused" '[[ $RC == 1 ]]'
run xfs -v
ok "-v still lists B, served from the earlier version" \
  '[[ $RC == 0 && $OUT == *"$B"$'"'"'\n\t\t'"'"'"<world>($opts_ro)"* && $OUT == *"$A"$'"'"'\n\t\t'"'"'"127.0.0.1($opts_ro)"* ]]'
ok "and says it is served from an earlier version" \
  '[[ $ERR == *"$B: listed as served from an earlier version of $F"* ]]'
replace "$A 127.0.0.1(ro) *(rw)
$B *(ro)
"
run xfs -r
ok "the good version back" '[[ $RC == 0 ]]'

run xfs -u 127.0.0.1:$C
ok "exportfs -u removes one client" '[[ $RC == 0 ]]'
run shares_of exportfs
ok "the share stays for the other client" '[[ $OUT == "$C ro=@10.1.0.0/16" ]]'
run xfs -u 127.0.0.1:$C
ok "-u of a client not there: exit 1, exportfs's message" \
  '[[ $RC == 1 && $ERR == *"Could not find '"'"'127.0.0.1:$C'"'"' to unexport."* ]]'
run xfs -u 10.1.0.0/16:$C/
ok "-u of the last client (trailing / accepted)" '[[ $RC == 0 ]]'
run shares_of exportfs
ok "removes the share" '[[ -z $OUT ]]'
run xfs -u '*':$A
ok "-u of a followed file's client is refused naming the file" \
  '[[ $RC == 1 && $ERR == *"$A is exported by $F"* ]]'
run shares_of exports-zfs
ok "and changes nothing" '[[ $OUT == *"$A rw,ro=127.0.0.1"* ]]'
run xfs -o rw 10.0.0.1:$A
ok "-o of a followed file's path is refused naming the file" \
  '[[ $RC == 1 && $ERR == *"exported by $F"* ]]'
run sc exportfs -o ro -i 10.0.0.1:$C
ok "sharectl exportfs -i -o works as exportfs -o" '[[ $RC == 0 ]]'
run sc exportfs -ua
ok "exportfs -ua removes the transient exports" '[[ $RC == 0 ]]'
ok "-ua says what it left" '[[ $ERR == *"exports-zfs"*"stay exported"* ]]'
run shares_of exportfs
ok "group exportfs is empty" '[[ -z $OUT ]]'

run xfs -f
ok "exportfs -f flushes" '[[ $RC == 0 && -z $ERR ]]'

# Usage errors.
run xfs -x
ok "an unknown flag: exit 2 naming it" '[[ $RC == 2 && $ERR == *'"'"'"-x"'"'"'* ]]'
run xfs -d all
ok "-d (debug) is refused by name" '[[ $RC == 2 && $ERR == *'"'"'"-d"'"'"'* ]]'
run xfs -ra 10.0.0.1:$A
ok "-r with arguments: exportfs's message, exit 2" \
  '[[ $RC == 2 && $ERR == *"extra arguments are not permitted with -a or -r"* ]]'
run xfs -ru
ok "-r and -u" '[[ $RC == 2 && $ERR == *"-r and -u are incompatible"* ]]'
run xfs -o rw
ok "-o without CLIENT:PATH" '[[ $RC == 2 ]]'
run xfs 10.0.0.1:relative
ok "a relative path" '[[ $RC == 2 && $ERR == *"Invalid export syntax"* ]]'
run xfs -h
ok "-h prints the usage" '[[ $RC == 0 && $OUT == *"usage: sharectl exportfs"* ]]'

# A daemon that follows no files says so.
stop_daemon
start_daemon
run xfs -ra
ok "no followed files: exit 1 naming --follow-exports" \
  '[[ $RC == 1 && $ERR == *"--follow-exports"* ]]'
run env SHARECTL_SOCKET=$T/nosuch "$T/bin/exportfs" -ra
ok "unreachable daemon: exit 3" '[[ $RC == 3 ]]'

report
