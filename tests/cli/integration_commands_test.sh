#!/usr/bin/env bash
# Each sharectl command against a real sharemgrd: output (text and
# --json), exit codes 0/1/2/3, and error messages that name the culprit.
# Usage: integration_commands_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

X=$T/ex
mkdir -p "$X/a/sub" "$X/b" "$X/c"
cat >"$T/hosts" <<HOSTS
10.9.9.9 build1.example.com build1
192.168.7.7 ws1.lab.example.com
HOSTS
echo "builders (build1.example.com,,)" >"$T/netgroup"
start_daemon

# --- create, list
run sc create -o ro g
ok "create exits 0" '[[ $RC == 0 && -z $ERR ]]'
run sc create g
ok "creating an existing group is refused" '[[ $RC == 1 && $ERR == "sharectl: create: "*g* ]]'
run sc create '1bad'
ok "bad group name is refused naming it" '[[ $RC == 1 && $ERR == *1bad* ]]'
run sc --json list
ok "list --json gives the group and its options" \
  '[[ $RC == 0 && $(jqv ".groups[] | select(.name==\"g\") | .options") == ro ]]'
ok "list --json: new group is enabled" \
  '[[ $(jqv ".groups[] | select(.name==\"g\") | .enabled") == true ]]'
run sc list
ok "list prints group names" '[[ $RC == 0 && $OUT == *g* ]]'
run sc list -v
ok "list -v prints a header and the state" \
  '[[ $RC == 0 && $OUT == *GROUP*STATE* && $OUT == *enabled* ]]'

# --- add-share, and quoting of a description
DESC=$'Alice\'s "lab" \\ home  with  spaces'
run sc add-share -d "$DESC" -r labres -s "$X//a/" g
ok "add-share exits 0 (path normalized)" '[[ $RC == 0 && -z $ERR ]]'
run sc --json show g
ok "show --json: description survives byte for byte" \
  '[[ $(jqv ".groups[0].shares[0].description") == "$DESC" ]]'
ok "show --json: normalized path, resource, effective options" \
  '[[ $(jqv ".groups[0].shares[0].path") == "$X/a" &&
      $(jqv ".groups[0].shares[0].resource") == labres &&
      $(jqv ".groups[0].shares[0].effective_options") == ro ]]'
run sc add-share -s "$X/a/sub" g
ok "nested share is refused naming both paths" \
  '[[ $RC == 1 && $ERR == "sharectl: add-share: "*"$X/a/sub"*"$X/a"* ]]'
run sc add-share -s "$X/missing" g
ok "missing directory is refused naming it" \
  '[[ $RC == 1 && $ERR == "sharectl: add-share: "*"$X/missing"* ]]'
run sc add-share -o bogus -s "$X/b" g
ok "bad option is refused naming it" '[[ $RC == 1 && $ERR == *bogus* ]]'
run sc add-share -s "$X/b" nosuchgroup
ok "unknown group is refused naming it" '[[ $RC == 1 && $ERR == *nosuchgroup* ]]'
run sc add-share -s "$X/b/../c" g
ok "path with .. is refused" '[[ $RC == 1 && $ERR == *..* ]]'
run sc add-share g
ok "add-share without -s is a usage error" '[[ $RC == 2 && $ERR == *-s* ]]'
run sc add-share -s "$X/b" -o 'rw=@10.0.0.0/8:builders,root=build1.example.com' g
ok "add-share with lists exits 0" '[[ $RC == 0 ]]'

# --- show (text)
run sc show -v g
ok "show -v: group line with options, indented shares" \
  '[[ $RC == 0 && $OUT == "g nfs=(ro)"* && $OUT == *"    $X/a"*labres* ]]'
ok "show -v: description quoted" '[[ $OUT == *"\"Alice'"'"'s \\\"lab\\\""* ]]'
run sc show nosuch
ok "show of an unknown group exits 1 naming it" '[[ $RC == 1 && $ERR == *nosuch* ]]'

# --- check
run sc --json check 10.1.2.3 "$X/b"
ok "check --json: network entry gives rw" \
  '[[ $RC == 0 && $(jqv .access) == rw && $(jqv .share) == "$X/b" && $(jqv .root) == false ]]'
ok "check --json has reason, option, entry, address" \
  '[[ $(jqv "has(\"reason\") and has(\"option\") and has(\"entry\") and has(\"address\")") == true ]]'
run sc --json check 172.16.0.1 "$X/b"
ok "check --json: unlisted client gets the group's bare ro (inherited per property)" '[[ $(jqv .access) == ro ]]'
run sc --json check build1.example.com "$X/b/deeper"
ok "check --json: netgroup member by name gets rw and root" \
  '[[ $(jqv .access) == rw && $(jqv .root) == true && $(jqv .share) == "$X/b" ]]'
run sc --json check 10.1.2.3 "$X/c"
ok "check --json: unshared path has share null, exit 1" \
  '[[ $RC == 1 && $(jqv .share) == null && $(jqv .access) == none ]]'
run sc check 172.16.0.1 "$X/b"
ok "check text explains" '[[ $RC == 0 && $OUT == *access:*ro* && $OUT == *reason:* ]]'
run sc check --sec krb5 10.1.2.3 "$X/b"
ok "check --sec krb5 of a sys-only share: none, says so" \
  '[[ $RC == 1 && $OUT == *"sec:"*krb5* && $OUT == *"not offered with sec=krb5"* ]]'
run sc check --sec sys 10.1.2.3 "$X/b"
ok "check --sec sys: rw, exit 0" '[[ $RC == 0 && $OUT == *access:*rw* ]]'
run sc check --sec krb6 10.1.2.3 "$X/b"
ok "check --sec with an unknown flavor is a usage error naming it" \
  '[[ $RC == 2 && $ERR == *krb6* ]]'
run sc disable g
run sc check 10.1.2.3 "$X/b/deeper"
ok "check names a disabled group" \
  '[[ $RC == 1 && $OUT == *"$X/b is in group g, which is disabled"* ]]'
run sc enable g
run sc check onlyone
ok "check with one argument is a usage error" '[[ $RC == 2 ]]'

# --- set
run sc set -o rw -s "$X/a" g
ok "set -s exits 0" '[[ $RC == 0 ]]'
run sc --json show g
ok "set -s changes the share's own options" \
  '[[ $(jqv ".groups[0].shares[] | select(.path==\"$X/a\") | .options") == rw ]]'
run sc set -o '' -s "$X/a" g
ok "set -o '' is refused, saying how to inherit" \
  '[[ $RC == 1 && $ERR == *"option -o is empty"*"unset -p all"* ]]'
run sc unset -p all -s "$X/a" g
run sc --json show g
ok "unset -p all returns the share to the group's options" \
  '[[ $(jqv ".groups[0].shares[] | select(.path==\"$X/a\") | .effective_options") == ro ]]'
run sc set -o 'rw=' g
ok "set with a bad option is refused" '[[ $RC == 1 && $ERR == *rw=* ]]'

# --- share, enable, disable
run sc --json share
ok "share --json lists active shares" \
  '[[ $RC == 0 && $(jqv ".shares | length") == 2 && $(jqv ".shares[0].fstype") == nfs ]]'
run sc share
ok "share prints resource, path and options" '[[ $OUT == *labres*"$X/a"*ro* ]]'
run sc disable g
wait_sharetab
run sc --json share
ok "disable removes the group's shares from the sharetab" \
  '[[ $(jqv ".shares | length") == 0 && $(grep -c . "$T/sharetab") == 0 ]]'
run sc enable -a
ok "enable -a exits 0" '[[ $RC == 0 ]]'
run sc --json share
ok "enable -a brings them back" '[[ $(jqv ".shares | length") == 2 ]]'
wait_sharetab
ok "sharetab file has the active shares" '[[ $(grep -c . "$T/sharetab") == 2 ]]'
run sc enable
ok "enable with neither -a nor a group is a usage error" '[[ $RC == 2 ]]'

# --- move, remove, delete
run sc create g2
run sc move-share -s "$X/b" g2
run sc --json show g2
ok "move-share moves the share" \
  '[[ $(jqv ".groups[0].shares[0].path") == "$X/b" ]]'
run sc remove-share -s "$X/b" g
ok "remove-share from the wrong group is refused" '[[ $RC == 1 ]]'
run sc remove-share -s "$X/b"
ok "remove-share exits 0" '[[ $RC == 0 ]]'
run sc remove-share -s "$X/b"
ok "removing it again is refused naming the path" '[[ $RC == 1 && $ERR == *"$X/b"* ]]'
run sc delete g
ok "deleting a group with shares needs -f" '[[ $RC == 1 ]]'
run sc delete -f g
ok "delete -f exits 0" '[[ $RC == 0 ]]'
run sc --json show
ok "delete -f removed the group and its shares" \
  '[[ $(jqv "[.groups[].name] | join(\",\")") == g2 ]]'

# --- --json on changes
run sc --json create jsong
ok "create --json: ok, applied 1" '[[ $RC == 0 && $(jqv .ok) == true && $(jqv .applied) == 1 ]]'
run sc --json create jsong
ok "refused create --json: ok false, the error names the group" \
  '[[ $RC == 1 && $(jqv .ok) == false && $(jqv ".errors[0].command") == create && $(jqv ".errors[0].message") == *jsong* ]]'
run sc delete jsong

# --- stats, cache flush
run sc --json stats
ok "stats --json has every documented field" \
  '[[ $RC == 0 && $(jqv "[has(\"shares\",\"groups\",\"generation\",\"load_ms\",\"load_threads\",\"requests\")] | all") == true &&
     $(jqv ".cache | [has(\"entries\",\"hits\",\"misses\",\"coalesced\",\"refreshes\",\"reclaims\",\"lookups\",\"lookup_failures\",\"timeouts\")] | all") == true ]]'
ok "stats --json counts the groups" '[[ $(jqv .groups) == 1 ]]'
run sc stats
ok "stats text" '[[ $RC == 0 && $OUT == *shares:* && $OUT == *hits:* ]]'
# The shares split: served, not served (folder gone), disabled.
mkdir -p "$X/s1" "$X/s2" "$X/s3"
run sc batch - <<BATCH
create split
add-share -s $X/s1 split
add-share -s $X/s2 split
create off
add-share -s $X/s3 off
disable off
BATCH
ok "split groups made" '[[ $RC == 0 ]]'
rmdir "$X/s2"
sc check 127.0.0.1 "$X/s2" >/dev/null 2>&1  # a decision sees it: a round follows
for ((i = 0; i < 100; i++)); do
  run sc --json stats
  [[ $(jqv .shares_not_served) == 1 ]] && break
  sleep 0.05
done
ok "stats --json: one share not served (its folder is gone)" '[[ $(jqv .shares_not_served) == 1 ]]'
ok "stats --json: the disabled group's share" '[[ $(jqv .shares_disabled) == 1 ]]'
ok "stats --json: the three add up to the shares" \
  '[[ $(jqv ".shares_served + .shares_not_served + .shares_disabled == .shares") == true && $(jqv .shares_served) -ge 1 ]]'
run sc stats
ok "stats text splits the shares" \
  '[[ $OUT == *"shares:"*"$(jq -r .shares <<<"$(sc --json stats)") ("*" served, 1 not served, 1 disabled)"* ]]'
sc delete -f split >/dev/null 2>&1
sc delete -f off >/dev/null 2>&1
run sc cache flush
ok "cache flush exits 0" '[[ $RC == 0 ]]'
run sc cache clear
ok "cache with another word is a usage error" '[[ $RC == 2 ]]'

# --- usage, environment, help
run sc frobnicate
ok "unknown command exits 2" '[[ $RC == 2 && $ERR == *frobnicate* ]]'
run env SHARECTL_SOCKET="$T/sock" "$SHARECTL" list
ok "SHARECTL_SOCKET is used" '[[ $RC == 0 && $OUT == *g2* ]]'
run "$SHARECTL" --version
ok "--version" '[[ $RC == 0 && $OUT == sharectl* ]]'

# --- permission: a user outside the admin group may read, not change
if command -v setpriv >/dev/null && [[ $(id -u) == 0 ]]; then
  chmod 755 "$T"
  chmod 666 "$T/sock"  # the daemon's own mode may keep others out entirely
  run setpriv --reuid=65534 --regid=65534 --clear-groups "$SHARECTL" --socket "$T/sock" create nobodys
  ok "a change by an ordinary user is refused (exit 1)" \
    '[[ $RC == 1 && $ERR == "sharectl: create: "* ]]'
  run setpriv --reuid=65534 --regid=65534 --clear-groups "$SHARECTL" --socket "$T/sock" list
  ok "an ordinary user may read" '[[ $RC == 0 && $OUT == *g2* ]]'
fi

# --- a stopped daemon
stop_daemon
run sc list
ok "stopped daemon: exit 3 naming the socket" '[[ $RC == 3 && $ERR == *"$T/sock"* ]]'
run sc add-share -s "$X/a" g
ok "stopped daemon: a change also exits 3" '[[ $RC == 3 ]]'

report
