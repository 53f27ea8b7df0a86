#!/usr/bin/env bash
# Several heads against a single SQLite head, side by side in one run
# (issue 46). Starts its own PostgreSQL (tests/support/pg_server.sh), two
# heads on it (A, B) and one SQLite head (S), all from build/bin, in a
# folder of its own on /dev/shm, with --kernel=off; prints one table.
#
#   bench/cluster_bench.sh [--quick]
#
# - a 15,000-share batch committed (sharectl batch's wall time; the shares
#   removed again by a second batch), A and S alternated, 5 runs each;
# - one add-share by a sharectl process, A and S alternated, 100 each;
# - 16 per-share scripts (sharectl add-share in a loop, 50 shares each):
#   8 on A and 8 on B at once, against 16 on S;
# - visibility: the time from A's reply until B's generation has the
#   change (bench/tools/cluster_follow, B's STATS polled every 100 us),
#   p50 and p99 over 200 changes of 1, 100 and 15,000 operations (half
#   adds, half removes; --quick: 40, 40 and 10).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SM_BIN_DIR:-$root/build/bin}
quick=0
[[ ${1:-} == --quick ]] && quick=1
dir=$(mktemp -d /dev/shm/cluster-bench.XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$root/tests/support/pg_server.sh" stop "$dir/pg" immediate >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
url=$("$root/tests/support/pg_server.sh" start "$dir/pg")
start() {  # NAME ARGS...
  local name=$1; shift
  "$bin/sharemgrd" --foreground --db "$dir/$name.db" --socket "$dir/$name.sock" \
    --sharetab "$dir/$name.sharetab" --mount-port 0 --no-rpcbind --kernel=off \
    "$@" 2>"$dir/$name.log" &
  pids+=($!)
  for _ in $(seq 400); do
    grep -qs '^sharemgrd: serving' "$dir/$name.log" && return 0
    sleep 0.05
  done
  cat "$dir/$name.log" >&2; exit 1
}
start a --store "$url" --head a
start b --store "$url" --head b
start s
ctl() { local h=$1; shift; "$bin/sharectl" --socket "$dir/$h.sock" "$@"; }
now() { date +%s%N; }
for h in a s; do ctl $h create -o rw homes 2>/dev/null; done
mkdir -p "$dir/homes" "$dir/one" "$dir/scripts"
: >"$dir/add.batch"; : >"$dir/rm.batch"
for i in $(seq 1 15000); do
  mkdir "$dir/homes/u$i"
  echo "add-share -s $dir/homes/u$i homes" >>"$dir/add.batch"
  echo "remove-share -s $dir/homes/u$i" >>"$dir/rm.batch"
done
med() {  # FILE: the median of the numbers in FILE (ns), in ms
  sort -n "$1" | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1e6}'
}
row() { printf '%-52s %10s %10s %7s\n' "$1" "$2" "$3" \
  "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')"; }

for h in a s; do : >"$dir/big_$h"; : >"$dir/one_$h"; done
for r in $(seq 5); do
  for h in a s; do
    t0=$(now); ctl $h batch "$dir/add.batch" >/dev/null 2>&1; t1=$(now)
    echo $((t1 - t0)) >>"$dir/big_$h"
    ctl $h batch "$dir/rm.batch" >/dev/null 2>&1
  done
done
for k in $(seq 100); do
  d=$dir/one/d$k; mkdir -p "$d"
  for h in a s; do
    t0=$(now); ctl $h add-share -s "$d" homes 2>/dev/null; t1=$(now)
    echo $((t1 - t0)) >>"$dir/one_$h"
  done
done
scripts() {  # HEAD... : one loop of 50 add-shares per argument, at once
  local i=0 h t0
  t0=$(now)
  for h in "$@"; do
    i=$((i + 1))
    (
      for k in $(seq 50); do
        d=$dir/scripts/$h$i-$k-$RANDOM$RANDOM; mkdir -p "$d"
        ctl "$h" add-share -s "$d" homes 2>/dev/null
      done
    ) &
  done
  wait "${pids[@]/#/-0}" 2>/dev/null || true
  for j in $(jobs -p); do
    [[ " ${pids[*]} " == *" $j "* ]] || wait "$j"
  done
  echo $(( $(now) - t0 ))
}
t_cluster=$(scripts a a a a a a a a b b b b b b b b)
t_single=$(scripts s s s s s s s s s s s s s s s s)

printf '%-52s %10s %10s %7s\n' "measure (ms, median)" PostgreSQL SQLite ratio
row "15,000-share batch committed (5 runs each)" "$(med "$dir/big_a")" "$(med "$dir/big_s")"
row "one add-share, sharectl process (100 each)" "$(med "$dir/one_a")" "$(med "$dir/one_s")"
row "16 scripts x 50 add-shares (8 on A + 8 on B; S)" \
  "$(awk -v n="$t_cluster" 'BEGIN {printf "%.0f", n/1e6}')" \
  "$(awk -v n="$t_single" 'BEGIN {printf "%.0f", n/1e6}')"
echo "visible on head B after head A's reply (cluster_follow):"
ctl a create bench 2>/dev/null
for spec in "1 100" "100 100" "15000 100"; do
  read -r size changes <<<"$spec"
  if ((quick)); then changes=$((size == 15000 ? 5 : 20)); fi
  mkdir -p "$dir/f$size"
  printf '  %6s operations: ' "$size"
  "$bin/cluster_follow" --a "$dir/a.sock" --b "$dir/b.sock" --dir "$dir/f$size" \
    --size "$size" --changes "$changes" --group bench
done
