#!/usr/bin/env bash
# A client's first MNT of a path (a new mount record) against a repeated
# one, 8 clients over TCP, alternated in one run, for DESIGN.md's "within
# 10% of a repeated one" and bench/README.md. The shares all take their
# options from their group, and decisions are cached per client and
# options object (since 2026-12-03 17:00): a client's first mount of a
# path is then a new record and a cached decision, made by its untimed
# first MNT. A build before that (--peer-bin) makes a new decision for
# every first mount.
#
#   bench/tools/mount_first_vs_repeat.sh [--shares N] [--rounds R]
#                                        [--calls C] [--bin DIR]
#                                        [--peer-bin DIR]
#
# Each round runs `mount_load` twice, in alternating order: "repeat" (8
# clients that mounted their paths before, cycling over C paths each) and
# "first" (`--first-mounts`: 8 clients from addresses new to the daemon,
# each timed call a path that client never mounted). Both send C calls per
# client. With --peer-bin (another build, e.g. main's), a second daemon of
# that build serves the same shares beside the first, and each round runs
# both pairs, the two daemons in alternating order, so that both builds
# meet the same load.
#
# Besides latency, each run reports the daemon's CPU per call, which the
# load of other processes changes less (read the first/repeat ratio of the
# same round): the run time of its threads (/proc/PID/task/*/schedstat, in
# ns) from before the run until 300 ms after it (so the write-behind of the
# run's records, once the calls pause, is counted), split into the record
# flusher (thread sm-mountflush) and the rest. The first mounts' clients
# UMNTALL after that window.
#
# Besides each round's ratios, the calls of all rounds are pooled (first
# against repeat) for p50 and p99: a p99 of one round rests on 72 calls.
#
# Each round also runs `mount_load --mixed` once per daemon: 8 new clients
# whose timed calls alternate between a repeat and a first mount (C calls
# each, after C/2 untimed warm-up mounts: C records per client, within its
# limit of 1000), so that both kinds meet
# the same load: the record flusher's bursts, the cache's growth, the
# other clients. Its pooled first/repeat ratios are the cost of the first
# MNT itself; the separate runs' ratios add what a storm of only first
# mounts costs the machine besides (their CPU per call says how much).
#
# Then a memory run leaves 64 x C first mounts in place and reads the
# daemon's RSS before and after, with the record and decision counts from
# `sharectl stats`. Prints Markdown tables and the per-round ratios. Needs
# root (reserved source ports). Sends traffic to 127.0.0.0/8 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shares=15000
rounds=5
calls=900
peer_bin=
while (($#)); do
  case $1 in
    --shares) shares=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --bin) export SM_BIN_DIR=$2; shift 2 ;;
    --peer-bin) peer_bin=$(cd "$2" && pwd); shift 2 ;;
    *) echo "usage: $0 [--shares N] [--rounds R] [--calls C] [--bin DIR]" \
            "[--peer-bin DIR]" >&2
       exit 2 ;;
  esac
done
source "$here/../../tests/support/daemon_lib.sh"
[[ -x $MOUNT_LOAD ]] || fail "program not built: $MOUNT_LOAD"
((calls < 1000)) || fail "--calls must stay below the per-client record limit (1000)"
sm_setup
home=$SM_DIR/export/home
mkdir -p "$home"
seq -f "$home/u%05g" 1 "$shares" | xargs mkdir -p
seq -f "$home/u%05g" 1 "$shares" >"$SM_DIR/paths"
{
  echo "create -o rw=@127.0.0.0/8 g"
  seq -f "add-share -s $home/u%05g g" 1 "$shares"
} >"$SM_DIR/batch"

# One daemon per build: "own" (--bin) and, with --peer-bin, "peer". Each has
# its own store, socket and log under SM_DIR/<name>; lib.sh's globals point
# at the daemon in use (use_daemon).
declare -A d_pid d_port d_sharemgrd d_sharectl
names=(own)
d_sharemgrd[own]=$SHAREMGRD
d_sharectl[own]=$SHARECTL
if [[ -n $peer_bin ]]; then
  names+=(peer)
  d_sharemgrd[peer]=$peer_bin/sharemgrd
  d_sharectl[peer]=$peer_bin/sharectl
fi
use_daemon() {  # NAME
  SM_SOCKET=$SM_DIR/$1/sharemgrd.sock
  SM_DB=$SM_DIR/$1/shares.db
  SM_SHARETAB=$SM_DIR/$1/sharetab
  SM_LOG=$SM_DIR/$1/sharemgrd.log
  SHAREMGRD=${d_sharemgrd[$1]}
  SHARECTL=${d_sharectl[$1]}
  DAEMON_PID=${d_pid[$1]:-}
  MOUNT_PORT=${d_port[$1]:-}
}
for n in "${names[@]}"; do
  mkdir -p "$SM_DIR/$n"
  use_daemon "$n"
  start_daemon
  d_pid[$n]=$DAEMON_PID
  d_port[$n]=$MOUNT_PORT
  # lib.sh's exit trap kills only DAEMON_PID: the others here.
  on_exit "kill -KILL $DAEMON_PID 2>/dev/null; wait $DAEMON_PID 2>/dev/null"
  sc batch "$SM_DIR/batch" >/dev/null
done

# Run time (ns) of the daemon's threads: "FLUSHER OTHERS".
daemon_cpu_ns() {  # PID
  local t comm run flush=0 rest=0
  for t in /proc/"$1"/task/*; do
    read -r comm <"$t/comm" 2>/dev/null || continue
    read -r run _ <"$t/schedstat" 2>/dev/null || continue
    if [[ $comm == sm-mountflush ]]; then
      flush=$((flush + run))
    else
      rest=$((rest + run))
    fi
  done
  echo "$flush $rest"
}

results=$SM_DIR/results.jsonl
load() {  # DAEMON LABEL ARGS...
  local name=$1 label=$2 out f0 r0 f1 r1
  shift 2
  read -r f0 r0 < <(daemon_cpu_ns "${d_pid[$name]}")
  out=$("$MOUNT_LOAD" --server 127.0.0.1 --port "${d_port[$name]}" \
        --paths-file "$SM_DIR/paths" --clients 8 --calls "$calls" "$@") ||
    fail "mount_load $name $label: $out"
  sleep 0.3  # the run's records written behind (once the calls pause)
  read -r f1 r1 < <(daemon_cpu_ns "${d_pid[$name]}")
  jq -e '.errors == 0 and ([.lat_hist[][1]] | add) == .calls' <<<"$out" \
    >/dev/null || fail "mount_load $name $label: $(head -c 2000 <<<"$out")"
  echo "$out" | jq -c --arg d "$name" --arg l "$label" \
    --argjson f "$((f1 - f0))" --argjson r "$((r1 - r0))" \
    '. + {daemon: $d, label: $l,
          flush_cpu_us: ($f / 1000 / .calls), other_cpu_us: ($r / 1000 / .calls)}' \
    >>"$results"
}
# The first mounts' clients unmount everything after their run, outside its
# measured window (their records' deletes are UMNTALL's work, not MNT's),
# and the deletes are written before the next run starts.
first() {  # DAEMON ROUND
  local net=127.$((10 + $2)).0  # each round a new /16: addresses never seen
  load "$1" "first $2" --first-mounts --source-base "$net.1" --no-cleanup
  for ((c = 1; c <= 8; c++)); do
    "$MOUNTPROBE" --server 127.0.0.1 --port "${d_port[$1]}" --source "$net.$c" \
      umntall >/dev/null || fail "umntall from $net.$c"
  done
  sleep 0.3
}
# Both kinds in one run (mount_load --mixed), from 8 clients new to the
# daemon, which then UMNTALL outside the run.
mixed() {  # DAEMON ROUND
  local net=127.$((10 + $2)).1 out
  out=$("$MOUNT_LOAD" --server 127.0.0.1 --port "${d_port[$1]}" \
        --paths-file "$SM_DIR/paths" --clients 8 --calls "$calls" \
        --warmup $((calls / 2)) --mixed --source-base "$net.1" --no-cleanup) ||
    fail "mount_load $1 mixed $2: $out"
  jq -e '.errors == 0 and .first.calls + .repeat.calls == .calls' <<<"$out" \
    >/dev/null || fail "mount_load $1 mixed $2: $(head -c 2000 <<<"$out")"
  # One line per kind, as the separate runs' (pooled below).
  echo "$out" | jq -c --arg d "$1" --arg r "$2" \
    '{daemon: $d, label: ("mixed-first " + $r), lat_hist: .first.lat_hist},
     {daemon: $d, label: ("mixed-repeat " + $r), lat_hist: .repeat.lat_hist}' \
    >>"$results"
  for ((c = 1; c <= 8; c++)); do
    "$MOUNTPROBE" --server 127.0.0.1 --port "${d_port[$1]}" --source "$net.$c" \
      umntall >/dev/null || fail "umntall from $net.$c"
  done
  sleep 0.3
}
pair() {  # DAEMON ROUND
  if (($2 % 2)); then
    load "$1" "repeat $2" --warmup 0 --source-base 127.0.2.1 --no-cleanup
    first "$1" "$2"
  else
    first "$1" "$2"
    load "$1" "repeat $2" --warmup 0 --source-base 127.0.2.1 --no-cleanup
  fi
}

# Untimed: the repeat clients mount their paths once (kept, --no-cleanup).
for n in "${names[@]}"; do
  "$MOUNT_LOAD" --server 127.0.0.1 --port "${d_port[$n]}" --paths-file \
    "$SM_DIR/paths" --clients 8 --calls 1 --warmup "$calls" \
    --source-base 127.0.2.1 --no-cleanup >/dev/null
done
for ((r = 1; r <= rounds; r++)); do
  if ((${#names[@]} == 1 || r % 2)); then
    for n in "${names[@]}"; do pair "$n" "$r"; mixed "$n" "$r"; done
  else
    for ((i = ${#names[@]} - 1; i >= 0; i--)); do
      pair "${names[i]}" "$r"
      mixed "${names[i]}" "$r"
    done
  fi
done

# Memory: 64 clients x C first mounts, kept.
declare -A mem
for n in "${names[@]}"; do
  use_daemon "$n"
  stats0=$(sc --json stats)
  rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status")
  "$MOUNT_LOAD" --server 127.0.0.1 --port "$MOUNT_PORT" --paths-file \
    "$SM_DIR/paths" --clients 64 --calls "$calls" --first-mounts \
    --source-base 127.100.0.1 --no-cleanup >"$SM_DIR/mem.json"
  sleep 0.2  # the record flush
  stats1=$(sc --json stats)
  rss1=$(awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status")
  d_mounts=$(($(jq .mounts <<<"$stats1") - $(jq .mounts <<<"$stats0")))
  d_entries=$(($(jq .cache.entries <<<"$stats1") - $(jq .cache.entries <<<"$stats0")))
  mem[$n]="$d_mounts new mount records and $d_entries new cache entries took $((rss1 - rss0)) KiB of RSS: $((d_mounts > 0 ? (rss1 - rss0) * 1024 / d_mounts : 0)) bytes per record (with the decisions it made)"
done
use_daemon own

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# One value per round for DAEMON: jq EXPR over $f (first) and $w (repeat).
per_round() {  # DAEMON EXPR
  local r
  for ((r = 1; r <= rounds; r++)); do
    jq -rs --arg d "$1" --arg r "$r" "
      (map(select(.daemon == \$d and .label == \"first \" + \$r))[0]) as \$f |
      (map(select(.daemon == \$d and .label == \"repeat \" + \$r))[0]) as \$w |
      $2" "$results"
  done
}
two() { awk '{ printf "%.2f\n", $1 }'; }
# A percentile of every call of DAEMON's runs of KIND (first, repeat, or
# the mixed runs' mixed-first and mixed-repeat), all rounds pooled
# (mount_load's lat_hist), in us: the pooled p99 rests on R x 72 calls,
# one round's on 72.
pooled() {  # DAEMON KIND Q
  jq -rs --arg d "$1" --arg k "$2 " --argjson q "$3" '
    [.[] | select(.daemon == $d and (.label | startswith($k))) | .lat_hist[]]
    | group_by(.[0]) | map([.[0][0], (map(.[1]) | add)]) as $h
    | ($h | map(.[1]) | add) as $n
    | (($q * ($n - 1)) + 0.5 | floor) as $i
    | reduce $h[] as $b ({c: 0, v: null};
        if .v != null then . elif .c + $b[1] > $i then .v = $b[0]
        else .c += $b[1] end)
    | .v' "$results"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
cat <<T

sharemgrd MNT, a client's first mount of a path against a repeated one
$shares shares in one group (rw=@127.0.0.0/8), 8 clients over TCP, $calls calls
each per run, $rounds rounds alternated; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)
own: ${d_sharemgrd[own]}${peer_bin:+
peer: ${d_sharemgrd[peer]}}
daemon CPU per call in us: the record flusher + the other threads
T
for n in "${names[@]}"; do
  cat <<T

$n

| round | repeat calls/s | first calls/s | repeat p50/p99 us | first p50/p99 us | first/repeat p50 | first/repeat p99 | repeat CPU us/call | first CPU us/call |
|---|---|---|---|---|---|---|---|---|
T
  for ((r = 1; r <= rounds; r++)); do
    jq -rs --arg d "$n" --arg r "$r" '
      def f2: . * 100 | floor / 100;
      (map(select(.daemon == $d and .label == "repeat " + $r))[0]) as $w |
      (map(select(.daemon == $d and .label == "first " + $r))[0]) as $c |
      "| \($r) | \($w.calls_per_s|floor) | \($c.calls_per_s|floor) | \($w.p50_us|floor)/\($w.p99_us|floor) | \($c.p50_us|floor)/\($c.p99_us|floor) | " +
      "\(($c.p50_us / $w.p50_us)|f2) | \(($c.p99_us / $w.p99_us)|f2) | " +
      "\($w.flush_cpu_us|f2) + \($w.other_cpu_us|f2) | \($c.flush_cpu_us|f2) + \($c.other_cpu_us|f2) |"' "$results"
  done
  p50=$(per_round "$n" '$f.p50_us / $w.p50_us' | median | two)
  p99=$(per_round "$n" '$f.p99_us / $w.p99_us' | median | two)
  tput=$(per_round "$n" '$w.calls_per_s / $f.calls_per_s' | median | two)
  cpu_w=$(per_round "$n" '$w.flush_cpu_us + $w.other_cpu_us' | median | two)
  cpu_f=$(per_round "$n" '$f.flush_cpu_us + $f.other_cpu_us' | median | two)
  flush_f=$(per_round "$n" '$f.flush_cpu_us' | median | two)
  fp50=$(pooled "$n" first 0.5)
  fp99=$(pooled "$n" first 0.99)
  wp50=$(pooled "$n" repeat 0.5)
  wp99=$(pooled "$n" repeat 0.99)
  cpu_ratio=$(per_round "$n" '($f.flush_cpu_us + $f.other_cpu_us) /
    ($w.flush_cpu_us + $w.other_cpu_us)' | median | two)
  mf50=$(pooled "$n" mixed-first 0.5)
  mf99=$(pooled "$n" mixed-first 0.99)
  mw50=$(pooled "$n" mixed-repeat 0.5)
  mw99=$(pooled "$n" mixed-repeat 0.99)
  cat <<T

$n, median over rounds: first/repeat p50 $p50, p99 $p99; repeat/first calls/s $tput
$n, all rounds pooled ($rounds x $((8 * calls)) calls of each kind): first p50/p99 $fp50/$fp99 us, repeat $wp50/$wp99 us; first/repeat p50 $(ratio "$fp50" "$wp50"), p99 $(ratio "$fp99" "$wp99")
$n, daemon CPU per call (median): repeat $cpu_w us, first $cpu_f us (of which the flusher $flush_f us); first/repeat of the same round $cpu_ratio
$n, mixed runs pooled ($rounds x $((8 * (calls / 2))) calls of each kind, alternating in each client): first p50/p99 $mf50/$mf99 us, repeat $mw50/$mw99 us; first/repeat p50 $(ratio "$mf50" "$mw50"), p99 $(ratio "$mf99" "$mw99")
$n, memory: ${mem[$n]}
T
done
