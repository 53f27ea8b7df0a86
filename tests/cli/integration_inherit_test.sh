#!/usr/bin/env bash
# Options inherit per property from the group (show -v says where each
# came from), set reports shares that keep their own value, unset removes
# one property, set-share edits a share in place, empty -o and open
# shares are refused or warned about, and the share_nfs rules hold.
# Usage: integration_inherit_test.sh SHARECTL SHAREMGRD
SHARECTL=$1
SHAREMGRD=$2
. "$(dirname "$0")/integration_lib.sh"

X=$T/ex
mkdir -p "$X/a" "$X/b" "$X/c" "$X/d" "$X/e"
start_daemon
share_json() {  # share_json PATH FIELD
  sc --json show >"$T/out" 2>/dev/null
  jq -r ".groups[].shares[] | select(.path==\"$1\") | .$2" <"$T/out"
}

# --- the issue's example: a share's own rw= keeps the group's root=
run sc create -o 'rw=@10.0.0.0/8,root=adminhost' homes
ok "create with explicit access: no warning" '[[ $RC == 0 && -z $ERR ]]'
run sc add-share -o 'rw=@127.0.0.0/8,nosuid' -s "$X/a" homes
ok "add-share exits 0" '[[ $RC == 0 ]]'
ok "effective options keep the group's root=" \
  '[[ $(share_json "$X/a" effective_options) == "rw=@127.0.0.0/8,root=adminhost,nosuid" ]]'
run sc --json check 127.0.0.1 "$X/a"
ok "check uses the effective options (own rw=)" '[[ $(jqv .access) == rw ]]'
run sc --json check 10.1.2.3 "$X/a"
ok "check: the share's rw= replaced the group's list whole" '[[ $(jqv .access) == none ]]'
run sc share
ok "the sharetab view shows effective options" \
  '[[ $OUT == *"$X/a"*"rw=@127.0.0.0/8,root=adminhost,nosuid"* ]]'

# --- show -v and --json say where each property came from
run sc show -v homes
ok "show -v: effective options with origins" \
  '[[ $OUT == *"$X/a: effective nfs=(rw=@127.0.0.0/8,root=adminhost,nosuid) = rw=@127.0.0.0/8 (share), root=adminhost (group), nosuid (share)"* ]]'
run sc --json show homes
ok "show --json: origins per property" \
  '[[ $(jqv ".groups[0].shares[0].origins | map(.property + \"=\" + .from) | join(\",\")") == "rw=share,root=group,nosuid=share" &&
      $(jqv ".groups[0].shares[0].replaces_group") == false ]]'

# --- set on the group reaches every share, and says who keeps its own
run sc add-share -s "$X/b" homes
run sc set -o 'rw=@192.168.0.0/16,root=adminhost,nosub' homes
ok "set: reports the share that keeps its own rw" \
  '[[ $RC == 0 && $ERR == *"homes: 1 share keeps its own rw (show -v homes lists them)"* ]]'
ok "set: no report for nosub, which no share sets" '[[ $ERR != *"own nosub"* ]]'
ok "set reaches a share with own options (nosub inherited)" \
  '[[ $(share_json "$X/a" effective_options) == "rw=@127.0.0.0/8,root=adminhost,nosuid,nosub" ]]'
ok "and a share without own options" \
  '[[ $(share_json "$X/b" effective_options) == "rw=@192.168.0.0/16,root=adminhost,nosub" ]]'

# --- unset removes one property
run sc unset -p nosuid -s "$X/a" homes
ok "unset -s exits 0" '[[ $RC == 0 ]]'
ok "unset removed nosuid from the share's own options" \
  '[[ $(share_json "$X/a" options) == "rw=@127.0.0.0/8" ]]'
run sc unset -p nosuid -s "$X/a" homes
ok "unset of a property not set is refused naming it" \
  '[[ $RC == 1 && $ERR == *"$X/a: option \"nosuid\": not set in the share'"'"'s own options"* ]]'
run sc unset -p root homes
ok "unset on the group exits 0" '[[ $RC == 0 ]]'
ok "the shares lose the group's root=" \
  '[[ $(share_json "$X/a" effective_options) == "rw=@127.0.0.0/8,nosub" ]]'
run sc unset -p rw homes
ok "unset that would open the group to everyone is refused" \
  '[[ $RC == 1 && $ERR == *"would make its shares read-write to every client"* ]]'
run sc unset -p rooot homes
ok "unset of an unknown property is refused" '[[ $RC == 1 && $ERR == *"no such property"* ]]'

# --- set-share: in place, keeping the id
ID=$(share_json "$X/a" id)
run sc set-share -d 'Alice home' -r alice -s "$X/a"
ok "set-share exits 0" '[[ $RC == 0 ]]'
ok "set-share kept the id and the options, changed description and resource" \
  '[[ $(share_json "$X/a" id) == "$ID" && $(share_json "$X/a" description) == "Alice home" &&
      $(share_json "$X/a" resource) == alice && $(share_json "$X/a" options) == "rw=@127.0.0.0/8" ]]'
run sc set-share -o ro -s "$X/a" homes
ok "set-share -o replaces the own options, id kept" \
  '[[ $RC == 0 && $(share_json "$X/a" id) == "$ID" && $(share_json "$X/a" options) == ro ]]'
run sc set-share -d x -s "$X/a" other
ok "set-share naming the wrong group is refused" '[[ $RC == 1 && $ERR == *"share is in group homes"* ]]'
run sc set-share -s "$X/a"
ok "set-share with nothing to change is a usage error" '[[ $RC == 2 ]]'

# --- share_nfs rules
run sc add-share -r alice -s "$X/c" homes
ok "a second share with one resource name is refused naming both" \
  '[[ $RC == 1 && $ERR == *"$X/c: resource name \"alice\" is already used by $X/a"* ]]'
run sc add-share -r "$(printf 'r%.0s' {1..256})" -s "$X/c" homes
ok "an overlong resource is refused with the limit" '[[ $RC == 1 && $ERR == *"resource longer than 255 bytes (256)"* ]]'
run sc add-share -d "$(printf 'd%.0s' {1..1025})" -s "$X/c" homes
ok "an overlong description is refused with the limit" \
  '[[ $RC == 1 && $ERR == *"description longer than 1024 bytes (1025)"* ]]'
run sc add-share -o ro,public -s "$X/c" homes
ok "one public share is fine" '[[ $RC == 0 ]]'
run sc add-share -o ro,public -s "$X/d" homes
ok "a second public share is refused" \
  '[[ $RC == 1 && $ERR == *"$X/d: a second public share ($X/c is public"* ]]'
printf 'add-share -r alice -s %s homes\n' "$X/d" >"$T/rules.batch"
run sc batch "$T/rules.batch"
ok "the rules hold in a batch too" '[[ $RC == 1 && $ERR == *"1: add-share: $X/d: resource name"* ]]'

# --- empty -o and open shares
run sc create -o '' open
ok "create -o '' is refused saying how to open explicitly" \
  '[[ $RC == 1 && $ERR == *"option -o is empty"*"-o rw (every client, explicitly)"* ]]'
run sc set -o '' homes
ok "set -o '' is refused" '[[ $RC == 1 && $ERR == *"option -o is empty"* ]]'
run sc --json list
ok "and nothing changed" \
  '[[ $(jqv ".groups[] | select(.name==\"homes\") | .options") == "rw=@192.168.0.0/16,nosub" ]]'
run sc create open
ok "create without -o warns that the shares are read-write to every client" \
  '[[ $RC == 0 && $ERR == *"warning: group open: read-write to every client (no -o given"* ]]'
run sc create -o 'rw,root=*' wide
ok "create -o rw,root=* warns twice" \
  '[[ $RC == 0 && $ERR == *"group wide: read-write to every client"* && $ERR == *"group wide: root for every client"* ]]'
run sc add-share -s "$X/d" wide
ok "add-share into an open group warns naming the share" \
  '[[ $RC == 0 && $ERR == *"warning: $X/d: read-write to every client (its group'"'"'s options)"* ]]'
run sc list -v
ok "list -v marks groups open to every client" \
  '[[ $OUT == *OPEN* && $(grep "^wide " <<<"$OUT") == *"!! read-write to every client; root for every client"* &&
      $(grep "^homes " <<<"$OUT") != *"!!"* ]]'
run sc set-share -o 'ro,root=*' -s "$X/b" homes
ok "set-share giving root to all warns" '[[ $RC == 0 && $ERR == *"$X/b: root for every client"* ]]'
run sc list -v
ok "list -v counts the group's shares open to every client" \
  '[[ $(grep "^homes " <<<"$OUT") == *"!! 1 share root for every client"* ]]'
run sc set-share -o 'rw,root=*' -s "$X/b"
ok "set-share without GROUP giving rw and root to all warns (issue 48, item 3)" \
  '[[ $RC == 0 && $ERR == *"$X/b: read-write to every client"* && $ERR == *"$X/b: root for every client"* ]]'
run sc create owned
run sc add-share -o ro -s "$X/e" owned
run sc list -v
ok "list -v judges a group whose every share has its own options by its shares" \
  '[[ $(grep "^owned " <<<"$OUT") != *"!!"* ]]'

# --- everything above survives a restart
stop_daemon
start_daemon
ok "effective options survive a restart" \
  '[[ $(share_json "$X/a" effective_options) == "ro,rw=@192.168.0.0/16,nosub" && $(share_json "$X/a" id) == "$ID" ]]'

report
