#!/usr/bin/env bash
# `sharectl mounts` lists who has what mounted: the client address, the
# path and the time of the MNT (UTC); --json the same; UMNT removes a line;
# a record from before a restart shows "-" (null in JSON).
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
read -r p q <<<"$(make_dirs p q)"
sc create -o rw g || fail "create refused"
sc add-share -s "$p" g || fail "add-share $p refused"
sc add-share -s "$q" g || fail "add-share $q refused"

out=$(sc mounts) || fail "mounts failed with no records"
[[ -z $out ]] || fail "mounts with no records printed: $out"
assert_eq '{"mounts":[]}' "$(sc --json mounts | jq -c .)" "empty --json"

before=$(date -u +%s)
[[ $(probe --source 127.0.2.7 mnt "$p") == MNT3_OK\ * ]] || fail "MNT $p refused"
[[ $(probe --source 127.0.2.6 mnt "$q") == MNT3_OK\ * ]] || fail "MNT $q refused"
[[ $(probe --source 127.0.2.6 mnt "$p") == MNT3_OK\ * ]] || fail "MNT $p refused"
after=$(date -u +%s)

out=$(sc mounts) || fail "mounts failed"
assert_eq 4 "$(wc -l <<<"$out")" "header and 3 records: $out"
assert_contains "$(head -n1 <<<"$out")" "CLIENT"
# Ordered by client, then path.
assert_eq "127.0.2.6 $p|127.0.2.6 $q|127.0.2.7 $p" \
  "$(tail -n +2 <<<"$out" | awk '{ print $1, $2 }' | paste -sd'|')" "order"

json=$(sc --json mounts) || fail "mounts --json failed"
assert_eq 3 "$(jq '.mounts | length' <<<"$json")" "json records"
assert_eq "127.0.2.7" "$(jq -r '.mounts[2].client' <<<"$json")" "json client"
assert_eq "$p" "$(jq -r '.mounts[2].path' <<<"$json")" "json path"
since=$(jq -r '.mounts[2].since' <<<"$json")
[[ $since =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] ||
  fail "since is not UTC ISO 8601: $since"
t=$(date -u -d "$since" +%s)
((t >= before && t <= after)) || fail "since $since not within the MNT ($before..$after)"
assert_contains "$out" "$since"

probe --source 127.0.2.6 umnt "$q" >/dev/null || fail "UMNT failed"
assert_eq 2 "$(sc --json mounts | jq '.mounts | length')" "after UMNT"
assert_not_contains "$(sc mounts)" "$q"

# Records kept in the store come back after a restart, without a time.
sleep 0.2  # the records' write-behind
restart_daemon
json=$(sc --json mounts)
assert_eq 2 "$(jq '.mounts | length' <<<"$json")" "after restart"
assert_eq "null" "$(jq -r '.mounts[0].since' <<<"$json")" "since after restart"
assert_eq "-" "$(sc mounts | awk 'NR == 2 { print $3 }')" "text since after restart"

# The calls are counted in stats under their own name.
n=$(sc --json stats | jq '.requests.MOUNTS.count')
assert_eq 2 "$n" "MOUNTS calls since the restart"

# Bad input: an argument is a usage error (exit 2) that names it.
sc mounts extra 2>"$SM_DIR/err" && fail "mounts with an argument accepted"
rc=$?
assert_eq 2 "$rc" "exit status of a usage error"
echo "ok"
