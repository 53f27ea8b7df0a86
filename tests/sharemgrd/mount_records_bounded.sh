#!/usr/bin/env bash
# One client mounting 1,010 directories keeps at most 1,000 mount records;
# `sharectl stats` shows the count, the limits and what was not kept. The
# MNTs themselves are all answered.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
read -r a <<<"$(make_dirs a)"
(cd "$a" && seq -f "s%04g" 0 1009 | xargs mkdir)
start_daemon --insecure
sc create g && sc add-share -s "$a" g || fail "setup refused"
ok=$(PYTHONPATH="$(dirname "$0")/../reliability" python3 -c '
import sys, rpc_driver as d
port, base = int(sys.argv[1]), sys.argv[2]
c = d.mount_conn(port, "127.0.3.3")
ok = sum(1 for i in range(1010) if d.mnt(c, f"{base}/s{i:04d}".encode())[0] == 0)
print(ok)' "$MOUNT_PORT" "$a") || fail "MNT driver failed"
assert_eq 1010 "$ok" "MNTs answered OK"
json=$(sc --json stats) || fail "stats failed"
assert_eq 1000 "$(jq .mounts <<<"$json")" "mount records kept"
assert_eq 10 "$(jq .mounts_dropped <<<"$json")" "mount records not kept"
assert_eq 1000 "$(jq .mount_client_limit <<<"$json")" "per-client limit"
text=$(sc stats)
assert_contains "$text" "10 not kept" "stats text"
n=$(probe dump | wc -l)
assert_eq 1000 "$n" "DUMP lines"
echo "ok"
