#!/usr/bin/env bash
# Per-share scripts in parallel (issue 12, item 3: group commit): 1, 4 and
# 16 shell scripts at once, each adding its shares with one `sharectl
# add-share` process per share (then removing them, one `remove-share`
# each), against a daemon holding --shares shares in 16 groups. Every
# reply means committed (durable), so adds/s is committed adds per second,
# process starts included.
#
#   bench/tools/parallel_scripts.sh [--shares N] [--adds A] [--rounds R]
#                                   [--scripts "1 4 16"] [--bin DIR]
#                                   [--peer-bin DIR] [--out FILE]
#
# --bin holds the sharemgrd and sharectl measured (default build/bin);
# --peer-bin, if given, another build measured in the same run (say, main
# before the change): both daemons run side by side, each with its own
# store and the same share set, and every round visits every (build,
# scripts) pair, the order alternating from round to round. A adds (default
# 480) per pair and round are split evenly between the scripts.
# Prints a Markdown table (median of the rounds) with the ratio to the
# 1-script figure of the same build, the CPU each daemon's file-system
# watch (thread sm-fswatch) spent during the rounds, and `uptime` at the
# start, after each round and at the end; --out also writes it to FILE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shares=15000
adds=480
rounds=3
scripts="1 4 16"
bin=$root/build/bin
peer_bin=
out=
while (($#)); do
  case $1 in
    --shares) shares=$2; shift 2 ;;
    --adds) adds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --scripts) scripts=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --peer-bin) peer_bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--shares N] [--adds A] [--rounds R] [--scripts LIST]" \
         "[--bin DIR] [--peer-bin DIR] [--out FILE]" >&2
       exit 2 ;;
  esac
done
for s in $scripts; do
  ((adds % s == 0)) || { echo "$0: --adds $adds is not a multiple of $s" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sharemgr-parallel.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

builds=(new)
declare -A BIN=([new]=$bin)
if [[ -n $peer_bin ]]; then
  builds+=(peer)
  BIN[peer]=$peer_bin
fi
for b in "${builds[@]}"; do
  for p in sharemgrd sharectl; do
    [[ -x ${BIN[$b]}/$p ]] || { echo "$0: not built: ${BIN[$b]}/$p" >&2; exit 1; }
  done
done

# The loaded set: $shares folders in 16 groups; the scripts' own folders.
mkdir -p "$work/export"
seq -f "$work/export/g%02g" 0 15 | xargs mkdir -p
seq 0 $((shares - 1)) | awk -v d="$work/export" \
  '{ printf "%s/g%02d/s%07d\n", d, $1 % 16, $1 }' | xargs mkdir -p
{
  for ((g = 0; g < 16; g++)); do echo "create -o rw=@127.0.0.0/8 g$g"; done
  seq 0 $((shares - 1)) | awk -v d="$work/export" \
    '{ printf "add-share -s %s/g%02d/s%07d g%d\n", d, $1 % 16, $1, $1 % 16 }'
} >"$work/load.batch"
max_scripts=0
for s in $scripts; do ((s > max_scripts)) && max_scripts=$s; done
for ((k = 0; k < max_scripts; k++)); do
  seq -f "$work/new/k$k/a%05g" 0 $((adds - 1)) | xargs mkdir -p
done

declare -A PID
start() {  # BUILD
  local b=$1 d=$work/$1 i
  mkdir -p "$d"
  "${BIN[$b]}/sharemgrd" --foreground --kernel=off --no-rpcbind \
    --mount-port 0 --db "$d/shares.db" --socket "$d/sock" \
    --sharetab "$d/sharetab" 2>"$d/log" &
  pids+=($!)
  PID[$b]=$!
  for ((i = 0; i < 600; i++)); do
    grep -q '^sharemgrd: serving' "$d/log" && break
    sleep 0.05
  done
  grep -q '^sharemgrd: serving' "$d/log" || { cat "$d/log" >&2; exit 1; }
  "${BIN[$b]}/sharectl" --socket "$d/sock" batch "$work/load.batch" >/dev/null
}

# CPU (ms, user + system) of the daemon's thread sm-fswatch so far.
watch_cpu() {  # BUILD
  local t
  for t in /proc/"${PID[$1]}"/task/*; do
    [[ $(cat "$t/comm" 2>/dev/null) == sm-fswatch ]] || continue
    awk -v hz="$(getconf CLK_TCK)" \
      '{ sub(/.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "$t/stat"
    return
  done
  echo 0
}

count() {  # BUILD: shares in the daemon
  "${BIN[$1]}/sharectl" --socket "$work/$1/sock" --json stats | jq .shares
}

# One script: VERB (add-share|remove-share) over its K folders.
script() {  # BUILD VERB SCRIPT_INDEX PER_SCRIPT
  local ctl=${BIN[$1]}/sharectl sock=$work/$1/sock i p
  for ((i = 0; i < $4; i++)); do
    p=$(printf '%s/new/k%d/a%05d' "$work" "$3" "$i")
    if [[ $2 == add-share ]]; then
      "$ctl" --socket "$sock" add-share -s "$p" g0 || return 1
    else
      "$ctl" --socket "$sock" remove-share -s "$p" || return 1
    fi
  done
}

# Runs S scripts of VERB at once; prints the seconds they took.
phase() {  # BUILD VERB S
  local per=$((adds / $3)) k t0 t1 rc=0 ps=()
  t0=$(date +%s%N)
  for ((k = 0; k < $3; k++)); do
    script "$1" "$2" "$k" "$per" &
    ps+=($!)
  done
  for k in "${ps[@]}"; do wait "$k" || rc=1; done
  t1=$(date +%s%N)
  ((rc == 0)) || { echo "$0: a $2 script failed ($1, $3 scripts)" >&2; exit 1; }
  echo "scale=4; ($t1 - $t0) / 1000000000" | bc
}

for b in "${builds[@]}"; do start "$b"; done
# The load batch's round (seconds at 1,000,000 shares) is done when the
# watch's CPU stops moving.
declare -A WATCH0
for b in "${builds[@]}"; do
  WATCH0[$b]=-1
  for ((i = 0; i < 600; i++)); do
    sleep 0.5
    c=$(watch_cpu "$b")
    [[ $c == "${WATCH0[$b]}" ]] && break
    WATCH0[$b]=$c
  done
done
load_start=$(uptime)
declare -A ADD REMOVE
loads=()
pairs=()
for b in "${builds[@]}"; do
  for s in $scripts; do pairs+=("$b:$s"); done
done
for ((r = 0; r < rounds; r++)); do
  # Alternate: forwards on even rounds, backwards on odd ones.
  order=("${pairs[@]}")
  if ((r % 2 == 1)); then
    order=()
    for ((i = ${#pairs[@]} - 1; i >= 0; i--)); do order+=("${pairs[i]}"); done
  fi
  for pair in "${order[@]}"; do
    b=${pair%%:*} s=${pair##*:}
    t=$(phase "$b" add-share "$s")
    n=$(count "$b")
    [[ $n == $((shares + adds)) ]] || { echo "$0: $b has $n shares after adds" >&2; exit 1; }
    ADD[$pair]+="$(echo "scale=1; $adds / $t" | bc) "
    t=$(phase "$b" remove-share "$s")
    n=$(count "$b")
    [[ $n == "$shares" ]] || { echo "$0: $b has $n shares after removes" >&2; exit 1; }
    REMOVE[$pair]+="$(echo "scale=1; $adds / $t" | bc) "
    echo "round $((r + 1)): $b, $s scripts: $(awk '{ print $NF }' <<<"${ADD[$pair]}") adds/s" >&2
  done
  loads+=("after round $((r + 1)): $(uptime)")
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

{
  echo "Per-share scripts in parallel: $shares shares loaded in 16 groups," \
    "$adds adds (then $adds removes) per configuration and round, one" \
    "sharectl process per share, $rounds rounds alternated; median adds/s" \
    "(committed: each reply follows its commit)."
  echo
  header="| scripts |"
  rule="|---|"
  for b in "${builds[@]}"; do
    header+=" $b adds/s | $b vs 1 script | $b removes/s |"
    rule+="---|---|---|"
  done
  [[ -n $peer_bin ]] && { header+=" new / peer |"; rule+="---|"; }
  echo "$header"
  echo "$rule"
  for s in $scripts; do
    row="| $s |"
    for b in "${builds[@]}"; do
      a=$(median <<<"${ADD[$b:$s]}")
      one=$(median <<<"${ADD[$b:1]:-${ADD[$b:$s]}}")
      rm_=$(median <<<"${REMOVE[$b:$s]}")
      row+=" $a | $(echo "scale=2; $a / $one" | bc) | $rm_ |"
    done
    if [[ -n $peer_bin ]]; then
      row+=" $(echo "scale=2; $(median <<<"${ADD[new:$s]}") / $(median <<<"${ADD[peer:$s]}")" | bc) |"
    fi
    echo "$row"
  done
  echo
  echo "Per round (adds/s): $(for p in "${pairs[@]}"; do printf '%s=[%s] ' "$p" "${ADD[$p]% }"; done)"
  echo
  echo "CPU of the file-system watch (sm-fswatch) during the rounds:" \
    "$(for b in "${builds[@]}"; do printf '%s %d ms; ' "$b" $(($(watch_cpu "$b") - WATCH0[$b])); done)"
  echo
  echo "Load: at start: $load_start"
  for l in "${loads[@]}"; do echo "$l"; done
  echo "new: $bin${peer_bin:+; peer: $peer_bin}; $(date -u +%Y-%m-%dT%H:%MZ)"
} | tee ${out:+"$out"}
