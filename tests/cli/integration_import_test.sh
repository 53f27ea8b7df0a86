#!/usr/bin/env bash
# sharectl import against a real sharemgrd: a realistic exports file and a
# dfstab, each share checked with `sharectl check`; refused imports apply
# nothing; --skip-unsupported; --dry-run output loads with `sharectl batch`.
# Usage: integration_import_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

X=$T/srv
mkdir -p "$X/home" "$X/scratch" "$X/proj" "$X/with space" "$X/pub" \
  "$X/d1" "$X/d2" "$X/sol/home" "$X/sol/pub" "$X/sol/lab" "$X/dry"
cat >"$T/hosts" <<HOSTS
10.9.9.9 build1.example.com
192.168.7.7 ws1.lab.example.com
172.20.0.5 admin.example.com
203.0.113.9 stranger.example.org
HOSTS
echo "engineers (build1.example.com,,)" >"$T/netgroup"
start_daemon

access() {  # access CLIENT PATH -> "rw root=false share=..."
  sc --json check "$1" "$2" >"$T/out" 2>"$T/err"
  RC=$?
  OUT=$(cat "$T/out")
  ERR=$(cat "$T/err")
  jq -r '"\(.access) root=\(.root) share=\(.share)"' <"$T/out"
}

# --- a realistic /etc/exports
cat >"$T/exports" <<EXPORTS
# /etc/exports: the access control list for filesystems which may be
# exported to NFS clients.  See exports(5).
$X/home     10.0.0.0/8(rw,sync,no_subtree_check) *.lab.example.com(ro)
$X/scratch  *(rw,no_root_squash,async)
$X/proj     @engineers(rw) 192.168.0.0/255.255.0.0(ro) \\
            admin.example.com(rw,no_root_squash)
"$X/with space"  172.20.0.0/16(rw)
$X/pub      -ro,anonuid=65534 *
EXPORTS
run sc import --exports "$T/exports"
ok "exports import: exit 0, one summary line" '[[ $RC == 0 && $ERR == *"sharectl: import: 6 operations applied in "*" ms: 5 lines, 0 refused, generation "* ]]'
ok "exports import warns, naming the line, about the share open to all" \
  '[[ $ERR == *"/exports:4: warning: $X/scratch: read-write to every client"* &&
      $ERR == *"/exports:4: warning: $X/scratch: root for every client"* &&
      $(grep -c warning <<<"$ERR") == 2 ]]'
run sc --json show imported
ok "group 'imported' created with one share per path" \
  '[[ $(jqv ".groups[0].shares | length") == 5 ]]'
ok "options of $X/home" \
  '[[ $(jqv ".groups[0].shares[] | select(.path==\"$X/home\") | .options") == "rw=@10.0.0.0/8,ro=.lab.example.com" ]]'

ok "home: 10.1.2.3 gets rw" '[[ $(access 10.1.2.3 "$X/home") == "rw root=false share=$X/home" ]]'
ok "home: a lab workstation gets ro" '[[ $(access 192.168.7.7 "$X/home") == "ro root=false share=$X/home" ]]'
ok "home: a stranger gets none" '[[ $(access 203.0.113.9 "$X/home") == "none root=false share=$X/home" ]]'
ok "scratch: anyone gets rw and root" '[[ $(access 203.0.113.9 "$X/scratch") == "rw root=true share=$X/scratch" ]]'
ok "proj: netgroup member gets rw" '[[ $(access build1.example.com "$X/proj") == "rw root=false share=$X/proj" ]]'
ok "proj: the 192.168/16 network gets ro" '[[ $(access 192.168.7.7 "$X/proj") == "ro root=false share=$X/proj" ]]'
ok "proj: admin gets rw and root" '[[ $(access 172.20.0.5 "$X/proj") == "rw root=true share=$X/proj" ]]'
ok "proj: others get none" '[[ $(access 203.0.113.9 "$X/proj") == "none root=false share=$X/proj" ]]'
ok "quoted path with a space is shared" '[[ $(access 172.20.0.5 "$X/with space") == "rw root=false share=$X/with space" ]]'
ok "pub: everyone gets ro" '[[ $(access 203.0.113.9 "$X/pub") == "ro root=false share=$X/pub" ]]'

# --- rpc.mountd's precedence survives the import: hosts before networks,
# netgroups before "*" (issue 13, finding 9)
mkdir -p "$X/prec" "$X/ng"
cat >"$T/precedence.exports" <<EXPORTS
$X/prec  10.0.0.0/8(rw,no_root_squash) 10.9.9.9(ro)
$X/ng    @engineers(ro) *(rw)
EXPORTS
run sc import --exports "$T/precedence.exports" -g prec
ok "precedence import: exit 0" '[[ $RC == 0 && $ERR == *"operations applied in"* ]]'
ok "precedence import warns that *(rw) is read-write to every client" \
  '[[ $ERR == *"precedence.exports:2: warning: $X/ng: read-write to every client"* ]]'
ok "prec: the single host inside the rw network stays ro, root squashed" \
  '[[ $(access 10.9.9.9 "$X/prec") == "ro root=false share=$X/prec" ]]'
ok "prec: the rest of the network gets rw and root" \
  '[[ $(access 10.1.2.3 "$X/prec") == "rw root=true share=$X/prec" ]]'
ok "ng: the netgroup member gets ro" \
  '[[ $(access build1.example.com "$X/ng") == "ro root=false share=$X/ng" ]]'
ok "ng: everyone else gets rw" \
  '[[ $(access 203.0.113.9 "$X/ng") == "rw root=false share=$X/ng" ]]'

# --- per-client anonuid cannot become share-wide
mkdir -p "$X/anon1"
cat >"$T/anon.exports" <<EXPORTS
# squashed users of 10.2 act as uid 1000, those of 10.3 as 65534
$X/anon1  10.2.0.0/16(rw,anonuid=1000) 10.3.0.0/16(rw)
EXPORTS
run sc import --exports "$T/anon.exports" -g anon --skip-unsupported
ok "per-client anonuid: exit 1 even with --skip-unsupported, naming file, line and client" \
  '[[ $RC == 1 && $ERR == *"$T/anon.exports:2: anonuid=1000 applies to 10.2.0.0/16 only"*"refusing"* ]]'
run sc --json list
ok "per-client anonuid: nothing applied" \
  '[[ $(jqv "[.groups[] | select(.name==\"anon\")] | length") == 0 ]]'
echo "$X/anon1  *(ro,anonuid=0) 10.1.0.0/16(rw)" >"$T/anon0.exports"
run sc import --exports "$T/anon0.exports" -g anon
ok "anonuid=0 for * only: refused" \
  '[[ $RC == 1 && $ERR == *"$T/anon0.exports:1: anonuid=0 applies to * only"* ]]'

# --- refused imports apply nothing
mkdir -p "$X/new1" "$X/new2"
cat >"$T/unsupported.exports" <<EXPORTS
$X/new1  host1(rw)

$X/new2  host2(rw,crossmnt)
EXPORTS
run sc import --exports "$T/unsupported.exports" -g other
ok "unsupported option: exit 1, reported with file and line" \
  '[[ $RC == 1 && $ERR == *"$T/unsupported.exports:3: option \"crossmnt\" has no share_nfs equivalent"* ]]'
run sc --json list
ok "unsupported option: nothing applied" \
  '[[ $(jqv "[.groups[] | select(.name==\"other\")] | length") == 0 ]]'
run sc import --exports "$T/unsupported.exports" -g other --skip-unsupported
ok "--skip-unsupported: exit 0, the option still mentioned" \
  '[[ $RC == 0 && $ERR == *crossmnt*skipped* ]]'
ok "--skip-unsupported: the shares are there" \
  '[[ $(access 10.0.0.1 "$X/new2") == "none root=false share=$X/new2" ]]'

# fsid= decides the kernel's file handles: not dropped silently.
mkdir -p "$X/new3"
echo "$X/new3  *(rw,fsid=0)" >"$T/fsid.exports"
run sc import --exports "$T/fsid.exports" -g fsidg
ok "fsid=0: exit 1, saying mounted clients must remount and the NFSv4 root moves" \
  '[[ $RC == 1 && $ERR == *"$T/fsid.exports:1: option \"fsid=0\""*"must remount"*"NFSv4 root"* ]]'
run sc import --exports "$T/fsid.exports" -g fsidg --skip-unsupported
ok "fsid=0 with --skip-unsupported: exit 0, the option still mentioned" \
  '[[ $RC == 0 && $ERR == *fsid=0*skipped* ]]'

cat >"$T/daemon-refuses.exports" <<EXPORTS
$X/d1  *(rw)
$X/d1/missing  *(rw)
EXPORTS
run sc import --exports "$T/daemon-refuses.exports" -g refused
ok "daemon refusal is reported at its file and line" \
  '[[ $RC == 1 && $ERR == *"$T/daemon-refuses.exports:2: add-share: "*"$X/d1/missing"* ]]'
run sc --json list
ok "daemon refusal: nothing applied (not even the group)" \
  '[[ $(jqv "[.groups[] | select(.name==\"refused\")] | length") == 0 ]]'

run sc import --exports "$T/nonexistent"
ok "missing exports file: exit 1 naming it" '[[ $RC == 1 && $ERR == *"$T/nonexistent"* ]]'
run sc import --exports "$T/exports" --dfstab "$T/exports"
ok "--exports with --dfstab is a usage error" '[[ $RC == 2 ]]'

# --- a folder of *.exports files, into an existing group
mkdir -p "$T/exports.d"
echo "$X/d1 10.0.0.0/8(rw)" >"$T/exports.d/a.exports"
echo "$X/d2 10.0.0.0/8(ro)" >"$T/exports.d/b.exports"
echo "$X/home *(rw)" >"$T/exports.d/ignored.conf"
run sc create existing
run sc import --exports "$T/exports.d" -g existing
ok "folder import: exit 0 into an existing group" '[[ $RC == 0 ]]'
run sc --json show existing
ok "folder import: only the *.exports files" \
  '[[ $(jqv "[.groups[0].shares[].path] | join(\",\")") == "$X/d1,$X/d2" ]]'

run sc import --exports "$T/exports.d/*.exports" -g globbed --dry-run
ok "a glob pattern names the same files" \
  '[[ $OUT == *"-s $X/d1 globbed"* && $OUT == *"-s $X/d2 globbed"* && $OUT != *"$X/home"* ]]'
ok "and the daemon's dry run refuses what is shared already, by file and line" \
  '[[ $RC == 1 && $ERR == *"$T/exports.d/a.exports:1: add-share: $X/d1: already shared"* &&
      $ERR == *"$T/exports.d/b.exports:1: add-share: $X/d2: already shared"* &&
      $ERR == *"import: dry run refused in "*" ms, nothing changed: 2 lines, 2 refused, 2 errors"* ]]'
run sc --json list
ok "a refused dry run creates nothing" \
  '[[ $(jqv "[.groups[] | select(.name==\"globbed\")] | length") == 0 ]]'

# --- every bad entry in one run: untranslatable ones and the daemon's refusals
mkdir -p "$X/both"
cat >"$T/both.exports" <<EXPORTS
$X/both/missing 10.0.0.0/8(rw)
$X/both 10.0.0.0/8(rw,crossmnt)
$X/d1 10.0.0.0/8(rw)
EXPORTS
run sc import --exports "$T/both.exports" -g both
ok "import: translation and daemon errors together, sorted by line" \
  '[[ $RC == 1 && $ERR == *"$T/both.exports:1: add-share: "*"missing"*"
$T/both.exports:2: option \"crossmnt\""*"
$T/both.exports:3: add-share: $X/d1: already shared"* ]]'
run sc --json list
ok "and nothing applied" '[[ $(jqv "[.groups[] | select(.name==\"both\")] | length") == 0 ]]'

# --- dfstab
cat >"$T/dfstab" <<DFSTAB
#       Place share(1M) commands here for automatic execution
#       on entering init state 3.
share -F nfs -o rw=@10.0.0.0/8,root=admin.example.com -d "Home directories" $X/sol/home
share -F nfs -o ro $X/sol/pub pub
/usr/sbin/share -o 'rw=engineers' -d 'Alice'\\''s "lab"' $X/sol/lab
DFSTAB
run sc import --dfstab "$T/dfstab" -g solaris
ok "dfstab import: exit 0" '[[ $RC == 0 && $ERR == *"3 lines, 0 refused"* ]]'
run sc --json show solaris
ok "dfstab: description with quotes survives" \
  '[[ $(jqv ".groups[0].shares[] | select(.path==\"$X/sol/lab\") | .description") == "Alice'"'"'s \"lab\"" ]]'
ok "dfstab: resource kept" \
  '[[ $(jqv ".groups[0].shares[] | select(.path==\"$X/sol/pub\") | .resource") == pub ]]'
ok "dfstab home: network rw" '[[ $(access 10.3.3.3 "$X/sol/home") == "rw root=false share=$X/sol/home" ]]'
ok "dfstab home: admin outside the rw list gets no access (root= alone grants none)" '[[ $(access 172.20.0.5 "$X/sol/home") == "none root=false share=$X/sol/home" ]]'
ok "dfstab pub: ro for all" '[[ $(access 203.0.113.9 "$X/sol/pub") == "ro root=false share=$X/sol/pub" ]]'
ok "dfstab lab: netgroup rw" '[[ $(access build1.example.com "$X/sol/lab") == "rw root=false share=$X/sol/lab" ]]'
echo "share -F smb $X/sol/pub" >"$T/bad.dfstab"
run sc import --dfstab "$T/bad.dfstab"
ok "dfstab with another file system: exit 1 with line" \
  '[[ $RC == 1 && $ERR == *"$T/bad.dfstab:1: "*smb* ]]'

# --- --dry-run prints a loadable batch and sends nothing
echo "\"$X/dry\" 10.0.0.0/8(rw) *(ro)" >"$T/dry.exports"
run sc import --exports "$T/dry.exports" -g drygroup --dry-run
ok "dry run: exit 0, batch on stdout" \
  '[[ $RC == 0 && $OUT == *"create drygroup"* && $OUT == *"add-share -o "*"-s $X/dry drygroup"* ]]'
cp "$T/out" "$T/dry.batch"
run sc --json list
ok "dry run: nothing applied" \
  '[[ $(jqv "[.groups[] | select(.name==\"drygroup\")] | length") == 0 ]]'
run sc batch "$T/dry.batch"
ok "dry-run output loads with sharectl batch" '[[ $RC == 0 ]]'
ok "and gives the same access" '[[ $(access 10.0.0.7 "$X/dry") == "rw root=false share=$X/dry" && $(access 203.0.113.9 "$X/dry") == "ro root=false share=$X/dry" ]]'
# --- the classic "host (opts)" spacing mistake: imported as rpc.mountd
# reads it (the options for every client), with a warning naming the line
mkdir -p "$X/spaced"
printf '# a comment\n%s  adminhost (rw,no_root_squash)\n' "$X/spaced" >"$T/spaced.exports"
run sc import --exports "$T/spaced.exports" -g spaced
ok "spacing mistake: imported, warning names the line and the fix" \
  '[[ $RC == 0 && $ERR == *"spaced.exports:2: warning: \"adminhost (rw,no_root_squash)\": the space makes"* &&
      $ERR == *"write \"adminhost(rw,no_root_squash)\""* ]]'
ok "spacing mistake: also warned as read-write and root for every client" \
  '[[ $ERR == *"spaced.exports:2: warning: $X/spaced: read-write to every client"* &&
      $ERR == *"spaced.exports:2: warning: $X/spaced: root for every client"* ]]'
ok "spacing mistake: a world entry, as rpc.mountd would serve it" \
  '[[ $(access 203.0.113.9 "$X/spaced") == "rw root=true share=$X/spaced" ]]'

stop_daemon
run sc import --dfstab "$T/dfstab" -g offline --dry-run
ok "dry run works without a daemon, saying it was not checked" '[[ $RC == 0 && $OUT == *"create offline"* && $ERR == *"dry run not checked"* ]]'
run sc import --dfstab "$T/dfstab" -g offline
ok "a real import without a daemon exits 3" '[[ $RC == 3 && $ERR == *"$T/sock"* ]]'

report
