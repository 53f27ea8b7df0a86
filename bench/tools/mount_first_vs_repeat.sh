#!/usr/bin/env bash
# A client's first MNT of a path (a new mount record and a new cached
# decision) against a repeated one, 8 clients over TCP, alternated in one
# run, for DESIGN.md's "within 10% of a repeated one" and bench/README.md.
#
#   bench/tools/mount_first_vs_repeat.sh [--shares N] [--rounds R]
#                                        [--calls C] [--bin DIR]
#
# Each round runs `mount_load` twice, in alternating order: "repeat" (8
# clients that mounted their paths before, cycling over C paths each) and
# "first" (`--first-mounts`: 8 clients from addresses new to the daemon,
# each timed call a path that client never mounted). Both send C calls per
# client. Then a memory run leaves 64 x C first mounts in place and reads
# the daemon's RSS before and after, with the record and decision counts
# from `sharectl stats`.
# Prints a Markdown table and the per-round ratios. Needs root (reserved
# source ports). Sends traffic to 127.0.0.0/8 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shares=15000
rounds=5
calls=900
while (($#)); do
  case $1 in
    --shares) shares=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --bin) export SM_BIN_DIR=$2; shift 2 ;;
    *) echo "usage: $0 [--shares N] [--rounds R] [--calls C] [--bin DIR]" >&2
       exit 2 ;;
  esac
done
source "$here/../../tests/sharemgrd/lib.sh"
[[ -x $MOUNT_LOAD ]] || fail "program not built: $MOUNT_LOAD"
((calls < 1000)) || fail "--calls must stay below the per-client record limit (1000)"
sm_setup
start_daemon
home=$SM_DIR/export/home
mkdir -p "$home"
seq -f "$home/u%05g" 1 "$shares" | xargs mkdir -p
{
  echo "create -o rw=@127.0.0.0/8 g"
  seq -f "add-share -s $home/u%05g g" 1 "$shares"
} >"$SM_DIR/batch"
sc batch "$SM_DIR/batch" >/dev/null
seq -f "$home/u%05g" 1 "$shares" >"$SM_DIR/paths"

results=$SM_DIR/results.jsonl
load() {  # LABEL ARGS...
  local label=$1 out
  shift
  out=$("$MOUNT_LOAD" --server 127.0.0.1 --port "$MOUNT_PORT" \
        --paths-file "$SM_DIR/paths" --clients 8 --calls "$calls" "$@") ||
    fail "mount_load $label: $out"
  jq -e '.errors == 0' <<<"$out" >/dev/null || fail "mount_load $label: $out"
  echo "$out" | jq -c --arg l "$label" '. + {label: $l}' >>"$results"
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }

# Untimed: the repeat clients mount their paths once (kept, --no-cleanup).
"$MOUNT_LOAD" --server 127.0.0.1 --port "$MOUNT_PORT" --paths-file \
  "$SM_DIR/paths" --clients 8 --calls 1 --warmup "$calls" \
  --source-base 127.0.2.1 --no-cleanup >/dev/null
for ((r = 1; r <= rounds; r++)); do
  # Each round a new /16 for the first mounts: addresses never seen.
  first_base=127.$((10 + r)).0.1
  if ((r % 2)); then
    load "repeat $r" --warmup 0 --source-base 127.0.2.1 --no-cleanup
    load "first $r" --first-mounts --source-base "$first_base"
  else
    load "first $r" --first-mounts --source-base "$first_base"
    load "repeat $r" --warmup 0 --source-base 127.0.2.1 --no-cleanup
  fi
done

# Memory: 64 clients x C first mounts, kept.
stats0=$(sc --json stats)
rss0=$(rss_kib)
"$MOUNT_LOAD" --server 127.0.0.1 --port "$MOUNT_PORT" --paths-file \
  "$SM_DIR/paths" --clients 64 --calls "$calls" --first-mounts \
  --source-base 127.100.0.1 --no-cleanup >"$SM_DIR/mem.json"
sleep 0.2  # the record flush
stats1=$(sc --json stats)
rss1=$(rss_kib)
d_mounts=$(( $(jq .mounts <<<"$stats1") - $(jq .mounts <<<"$stats0") ))
d_entries=$(( $(jq .cache.entries <<<"$stats1") - $(jq .cache.entries <<<"$stats0") ))
d_bytes=$(( (rss1 - rss0) * 1024 ))

ratio() {  # FIELD ROUND: first/repeat
  jq -rs --arg r "$2" --arg f "$1" '
    (map(select(.label == "first " + $r))[0][$f]) as $a |
    (map(select(.label == "repeat " + $r))[0][$f]) as $b |
    ($a / $b * 100 | floor) / 100' "$results"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cat <<T

sharemgrd MNT, a client's first mount of a path against a repeated one
$shares shares in one group (rw=@127.0.0.0/8), 8 clients over TCP, $calls calls
each per run, $rounds rounds alternated; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)

| round | repeat calls/s | first calls/s | repeat p50/p99 us | first p50/p99 us | first/repeat p50 | first/repeat p99 |
|---|---|---|---|---|---|---|
T
for ((r = 1; r <= rounds; r++)); do
  jq -rs --arg r "$r" '
    (map(select(.label == "repeat " + $r))[0]) as $w |
    (map(select(.label == "first " + $r))[0]) as $c |
    "| \($r) | \($w.calls_per_s|floor) | \($c.calls_per_s|floor) | \($w.p50_us|floor)/\($w.p99_us|floor) | \($c.p50_us|floor)/\($c.p99_us|floor) | " +
    "\(($c.p50_us / $w.p50_us * 100|floor) / 100) | \(($c.p99_us / $w.p99_us * 100|floor) / 100) |"' "$results"
done
tput_ratios=$(for ((r = 1; r <= rounds; r++)); do
  jq -rs --arg r "$r" '(map(select(.label == "repeat " + $r))[0].calls_per_s) /
    (map(select(.label == "first " + $r))[0].calls_per_s) * 100 | floor / 100' "$results"
done | median)
p50_ratios=$(for ((r = 1; r <= rounds; r++)); do ratio p50_us "$r"; done | median)
p99_ratios=$(for ((r = 1; r <= rounds; r++)); do ratio p99_us "$r"; done | median)
cat <<T

median over rounds: first/repeat p50 $p50_ratios, p99 $p99_ratios; repeat/first calls/s $tput_ratios
memory: $d_mounts new mount records and $d_entries new cache entries took $((rss1 - rss0)) KiB of RSS: $((d_mounts > 0 ? d_bytes / d_mounts : 0)) bytes per record (decision included)
T
