#!/usr/bin/env bash
# Measures sharemgrd's MOUNT service with a realistic share table (default
# 15,000 shares in 16 groups), for bench/JOURNAL.md's section on issue 4:
#  - daemon start with N shares, until it answers a MOUNT NULL (median of 3)
#  - RSS (VmRSS) after start and after the load runs
#  - EXPORT with N shares: one client, 200 calls, p50/p99 (mount_load)
#  - MNT over TCP, cached decisions: calls/s, p50, p99 at 1, 8 and 64 clients
#  - MNT cold: every call a new client address (first mount of each client),
#    and the resolver calls per new host
#  - MNT warm with one client's resolver stalled 20 s (--debug-resolver-delay)
#
#   bench/tools/mount_bench.sh [--shares N] [--seconds S] [--bin DIR]
#
# Prints a Markdown table; every mount_load JSON line is kept in
# $SM_DIR/results.jsonl (the folder is removed at exit unless SM_KEEP_DIR=1).
# Needs root (reserved source ports). Sends traffic to 127.0.0.0/8 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shares=15000
seconds=5
while (($#)); do
  case $1 in
    --shares) shares=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --bin) export SM_BIN_DIR=$2; shift 2 ;;
    *) echo "usage: $0 [--shares N] [--seconds S] [--bin DIR]" >&2; exit 2 ;;
  esac
done
source "$here/../../tests/support/daemon_lib.sh"
[[ -x $MOUNT_LOAD ]] || fail "program not built: $MOUNT_LOAD"
sm_setup
groups=16
stall_addr=127.0.9.9
stall_ms=20000

cat >"$SM_DIR/hosts" <<H
$stall_addr stalled.bench.example
H
port=$(free_port)
daemon_args=(--mount-port "$port" --hosts "$SM_DIR/hosts"
             --debug-resolver-delay "$stall_addr=$stall_ms")
start_daemon "${daemon_args[@]}"

echo "creating $shares directories" >&2
home=$SM_DIR/export/home
mkdir -p "$home"
seq -f "$home/u%05g" 1 "$shares" | xargs mkdir -p
{
  # A name suffix first, so every new client costs a reverse lookup (and
  # the stalled host stalls); then the loopback network admits everyone.
  for g in $(seq -f 'g%02g' 1 $groups); do
    echo "create -o rw=.bench.example:@127.0.0.0/8 $g"
  done
  seq 1 "$shares" | awk -v h="$home" -v n=$groups \
    '{ printf "add-share -s %s/u%05d g%02d\n", h, $1, ($1 - 1) % n + 1 }'
} >"$SM_DIR/batch"
t0=$(date +%s%N)
sc batch "$SM_DIR/batch" >/dev/null
batch_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
seq -f "$home/u%05g" 1 $((shares / 256 > 0 ? shares / 256 : 1)) "$shares" >"$SM_DIR/paths"

# Start time: launch to the first answered NULL, 3 times.
starts=()
for _ in 1 2 3; do
  stop_daemon || fail "sharemgrd did not exit 0 on SIGTERM"
  : >"$SM_DIR/start.log"
  t0=$(date +%s%N)
  "$SHAREMGRD" --foreground --db "$SM_DB" --socket "$SM_SOCKET" \
    --sharetab "$SM_SHARETAB" --no-rpcbind "${daemon_args[@]}" \
    2>>"$SM_DIR/start.log" &
  DAEMON_PID=$!
  until "$MOUNTPROBE" --server 127.0.0.1 --port "$port" --timeout 1000 null \
        >/dev/null 2>&1; do
    kill -0 "$DAEMON_PID" 2>/dev/null || fail "sharemgrd exited: $(cat "$SM_DIR/start.log")"
    sleep 0.002
  done
  starts+=($(( ($(date +%s%N) - t0) / 1000000 )))
done
MOUNT_PORT=$port
serving=$(grep -m1 '^sharemgrd: serving' "$SM_DIR/start.log" || true)
start_ms=$(printf '%s\n' "${starts[@]}" | sort -n | sed -n 2p)
rss() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$DAEMON_PID/status"; }
rss_start=$(rss)
n_export=$(probe export | wc -l)
[[ $n_export == "$shares" ]] || fail "EXPORT lists $n_export shares, expected $shares"

results=$SM_DIR/results.jsonl
load() {  # LABEL ARGS...: runs mount_load, keeps its JSON line
  local label=$1
  shift
  local out
  out=$("$MOUNT_LOAD" --server 127.0.0.1 --port "$port" \
        --paths-file "$SM_DIR/paths" "$@") || fail "mount_load $label: $out"
  echo "$out" | jq -c --arg l "$label" '. + {label: $l}' >>"$results"
  echo "$out" | jq -r --arg l "$label" \
    '"\($l): \(.calls_per_s|floor) calls/s p50 \(.p50_us) us p99 \(.p99_us) us errors \(.errors)"' >&2
}
lookups() { sc --json stats | jq .cache.lookups; }

load null --proc null --clients 1 --calls 2000
load export --proc export --clients 1 --calls 200
# Timed 200 ms after the warm-up: its records, written once the calls
# pause, are not written beside the timed calls.
warm=(--duration "$seconds" --settle 200 --source-base 127.0.2.1)
for c in 1 8 64; do
  load "warm $c" --clients $c "${warm[@]}"
done
l0=$(lookups)
load "cold 8" --cold --clients 8 --calls 64 --source-base 127.1.0.1
l1=$(lookups)
load "cold 64" --cold --clients 64 --calls 8 --source-base 127.2.0.1
l2=$(lookups)
# The stall run right after its own baseline, so both see the same machine.
load "warm 8 (baseline)" --clients 8 "${warm[@]}"
load "warm 8, one host stalled ${stall_ms} ms" --clients 8 "${warm[@]}" \
  --stall-source "$stall_addr" --timeout 3000
rss_end=$(rss)

row() {  # LABEL FIELD
  jq -r --arg l "$1" 'select(.label == $l) |
    "| \(.label) | \(.clients) | \(.calls_per_s|floor) | \(.p50_us*10|floor/10) | \(.p99_us*10|floor/10) | \(.errors) |"' "$results"
}
cat <<T

sharemgrd MOUNT, $shares shares in $groups groups, $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))
daemon: $serving
batch of $shares add-share: $batch_ms ms (one sharectl batch)
start until MOUNT answers (median of 3): $start_ms ms (runs: ${starts[*]} ms)
RSS after start: $rss_start MiB; after the load runs: $rss_end MiB
resolver calls per new host: cold 8 x 64 = 512 hosts: $((l1 - l0)) calls; cold 64 x 8 = 512 hosts: $((l2 - l1)) calls

| run | clients | calls/s | p50 us | p99 us | errors |
|---|---|---|---|---|---|
$(row null)
$(row export)
$(row "warm 1")
$(row "warm 8")
$(row "warm 64")
$(row "cold 8")
$(row "cold 64")
$(row "warm 8 (baseline)")
$(row "warm 8, one host stalled ${stall_ms} ms")
T
jq -r 'select(.stalled) | "stalled client: \(.stalled.completed) calls completed, \(.stalled.rpc_errors) timed out (3 s client timeout)"' "$results"
