#!/usr/bin/env bash
# sharemgrd --follow-exports: a followed exports file becomes a managed
# group; an atomic rename-replace is applied as one batch; sharectl's edits
# of the group are refused naming the file; a bad line keeps the last good
# state and shows in `sharectl stats`; a deleted file empties the group; the
# mark survives a restart.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
read -r a b c <<<"$(make_dirs a b c)"
mkdir -p "$SM_DIR/exports.d"
f=$SM_DIR/exports.d/zfs.exports
replace() {  # TEXT: written as OpenZFS does, through a temporary file
  printf '%s' "$1" >"$SM_DIR/exports.d/.zfs.exports.tmp"
  mv "$SM_DIR/exports.d/.zfs.exports.tmp" "$f"
}
# Waits (10 s) until `sc list-shares`-like state of the group is $1.
wait_group() {  # EXPECTED
  local got
  for _ in $(seq 100); do
    got=$(sc --json show exports-zfs | jq -r '.groups[].shares[] | "\(.path) \(.options)"')
    [[ "$got" == "$1" ]] && return 0
    sleep 0.1
  done
  assert_eq "$1" "$got" "group exports-zfs"
}
replace "$a *(rw,no_subtree_check)
"
start_daemon --follow-exports "$SM_DIR/exports.d/*.exports"
wait_group "$a rw"
assert_contains "$(sc stats)" "$f -> group exports-zfs (1 share): ok" "stats"
# Applied as written, but worth a look: logged as import prints it.
assert_contains "$(cat "$SM_LOG")" "$f:1: warning: $a: read-write to every client (rw)" \
  "the log warns of a path open to every client"
assert_eq "$f" "$(sc --json list | jq -r '.groups[] | select(.name=="exports-zfs") | .managed_by // ""')" "managed_by"

gen=$(sc --json stats | jq .generation)
replace "$a 127.0.0.1(ro)
$b *(rw)
"
wait_group "$a ro=127.0.0.1
$b rw"
assert_eq $((gen + 1)) "$(sc --json stats | jq .generation)" "one batch"
assert_contains "$(sc check 127.0.0.1 "$a")" "ro" "check"

rc=0; err=$(sc add-share -s "$c" exports-zfs 2>&1) || rc=$?
assert_eq 1 "$rc" "add-share to a managed group"
assert_contains "$err" "managed by $f" "refusal names the file"
rc=0; err=$(sc set -o rw -s "$a" exports-zfs 2>&1) || rc=$?
assert_contains "$err" "managed by $f" "set refused"
rc=0; err=$(sc delete -f exports-zfs 2>&1) || rc=$?
assert_contains "$err" "managed by $f" "delete refused"

replace "$c *(rw)
$b *(frobnicate)
"
for _ in $(seq 100); do
  st=$(sc stats)
  [[ "$st" == *"not applied"* ]] && break
  sleep 0.1
done
assert_contains "$st" ": not applied since " "stats says since when"
assert_contains "$st" "Z: $f:2: " "stats names the line"
assert_contains "$st" "its group keeps its last good version" "stats says what is served"
assert_contains "$st" "frobnicate" "stats names the option"
assert_contains "$(cat "$SM_LOG")" "$f:2:" "log names the line"
wait_group "$a ro=127.0.0.1
$b rw"

restart_daemon --follow-exports "$SM_DIR/exports.d/*.exports"
wait_group "$a ro=127.0.0.1
$b rw"
assert_eq "$f" "$(sc --json list | jq -r '.groups[] | select(.name=="exports-zfs") | .managed_by // ""')" "managed after a restart"
rm "$f"
wait_group ""
assert_eq "$f" "$(sc --json list | jq -r '.groups[] | select(.name=="exports-zfs") | .managed_by // ""')" "still managed"

# Started without --follow-exports: the group is released, edits work.
restart_daemon
assert_eq "" "$(sc --json list | jq -r '.groups[] | select(.name=="exports-zfs") | .managed_by // ""')" "released"
# The audit line says what happened: a release, and why (not "manage",
# not an origin "--follow-exports FILE" that reads as if the file did it).
since_start=$(tail -n +"$(grep -n '^=== start' "$SM_LOG" | tail -n1 | cut -d: -f1)" "$SM_LOG")
audit=$(grep -E 'exports-zfs|no longer followed' <<<"$since_start" | grep -v '^===' || true)
assert_contains "$audit" 'release "exports-zfs"' "the audit line says release"
assert_contains "$audit" "by sharemgrd ($f no longer followed: sharemgrd started without --follow-exports for it): 1 operation applied" "and why"
[[ $audit != *'manage "exports-zfs"'* && $audit != *"(--follow-exports $f)"* ]] ||
  fail "the release is not logged as the file's own manage: $audit"
sc add-share -s "$c" exports-zfs || fail "add-share after the release"
echo ok
