#!/usr/bin/env bash
# One `sharectl add-share` process beside N shares, taken apart against
# its floor (issue 12, item 2), alternated in one shell, R rounds:
#   version   `sharectl --version`: process start and exit alone
#   noop      `sharectl --json stats`: start + connect + one call that
#             changes nothing (no commit)
#   add       `sharectl add-share -s DIR g0` (then an untimed remove)
#   dsync     one 4 KiB write with O_DSYNC to the store's file system
#             (`dd oflag=dsync`): one commit's flush to the disk
# Each figure is the median of its rounds, in µs, from bash's clock
# around the command alone; add - noop is what one commit costs beyond a
# call. With --gap MS every timed command follows MS milliseconds of idle
# (as when a script does other work between its sharectl calls, or the
# 0.3 s of an `exportfs -o` between them in scripts/bench). Prints a
# Markdown table with `uptime`.
#
#   bench/tools/one_add_floor.sh [--shares N] [--rounds R] [--gap MS]
#                                [--bin DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shares=15000
rounds=100
gap=0
while (($#)); do
  case $1 in
    --shares) shares=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --gap) gap=$2; shift 2 ;;
    --bin) export SM_BIN_DIR=$2; shift 2 ;;
    *) echo "usage: $0 [--shares N] [--rounds R] [--gap MS] [--bin DIR]" >&2; exit 2 ;;
  esac
done
source "$here/../../tests/support/daemon_lib.sh"
sm_setup
start_daemon --no-rpcbind
home=$SM_DIR/export/home
mkdir -p "$home/extra"
seq -f "$home/u%05g" 1 "$shares" | xargs mkdir -p
{
  for g in $(seq 0 15); do echo "create -o rw=@127.0.0.0/8 g$g"; done
  for i in $(seq 1 "$shares"); do printf 'add-share -s %s/u%05d g%d\n' "$home" "$i" $((i % 16)); done
} >"$SM_DIR/batch"
sc batch "$SM_DIR/batch" >/dev/null 2>&1
n=$(sc --json stats | jq .shares)
[[ $n == "$shares" ]] || fail "daemon holds $n shares, not $shares"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
ctl=("$SHARECTL" --socket "$SM_SOCKET")
us() { echo $(( ${2/./} - ${1/./} )); }
pause=$(awk -v ms="$gap" 'BEGIN { printf "%.3f", ms / 1000 }')
idle() { if ((gap > 0)); then sleep "$pause"; fi; }
: >"$SM_DIR/t.version"; : >"$SM_DIR/t.noop"; : >"$SM_DIR/t.add"; : >"$SM_DIR/t.dsync"
for ((r = 0; r < rounds; r++)); do
  idle
  t0=$EPOCHREALTIME; "${ctl[@]}" --version >/dev/null; t1=$EPOCHREALTIME
  us "$t0" "$t1" >>"$SM_DIR/t.version"
  idle
  t0=$EPOCHREALTIME; "${ctl[@]}" --json stats >/dev/null; t1=$EPOCHREALTIME
  us "$t0" "$t1" >>"$SM_DIR/t.noop"
  idle
  t0=$EPOCHREALTIME; "${ctl[@]}" add-share -s "$home/extra" g0 >/dev/null 2>&1
  t1=$EPOCHREALTIME
  us "$t0" "$t1" >>"$SM_DIR/t.add"
  "${ctl[@]}" remove-share -s "$home/extra" >/dev/null
  idle
  t0=$EPOCHREALTIME
  dd if=/dev/zero of="$SM_DIR/dsync" bs=4k count=1 oflag=dsync conv=notrunc 2>/dev/null
  t1=$EPOCHREALTIME
  us "$t0" "$t1" >>"$SM_DIR/t.dsync"
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
p90() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int(NR * 0.9 + 0.5)] }'; }
v=$(med "$SM_DIR/t.version"); o=$(med "$SM_DIR/t.noop")
a=$(med "$SM_DIR/t.add"); d=$(med "$SM_DIR/t.dsync")
[[ $(sc --json stats | jq .shares) == "$shares" ]] || fail "adds were not all removed"
cat <<T

One sharectl add-share beside $shares shares, $rounds rounds alternated, ${gap} ms idle before each command;
$(nproc) cores, load $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end

| what | p50 µs | p90 µs |
|---|---:|---:|
| sharectl --version | $v | $(p90 "$SM_DIR/t.version") |
| sharectl --json stats (a call, no commit) | $o | $(p90 "$SM_DIR/t.noop") |
| sharectl add-share | $a | $(p90 "$SM_DIR/t.add") |
| dd 4 KiB oflag=dsync (one flush) | $d | $(p90 "$SM_DIR/t.dsync") |

add-share - stats: $((a - o)) µs (the commit and validation beyond a call)
T
