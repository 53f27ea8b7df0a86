#!/usr/bin/env bash
# One `sharectl batch` of N adds (16 creates, then N add-shares in 16
# groups) on a fresh daemon and store, for each build given, alternated
# round by round, so two builds are compared in the same hour (issue 12,
# item 1). Prints one line per run: wall time of the sharectl process, the
# daemon's "applied in" as the client reports it, the daemon's own split
# from its audit line (memory, decoding, validation, commit, linking,
# change list), the CPU the daemon spent on the batch (from /proc/PID/stat,
# 10 ms ticks) and the page faults it took meanwhile (minor faults, the
# same file), the client's CPU, the daemon's peak resident memory
# (VmHWM, /proc/PID/status) and its RSS, and the load average.
#
#   bench/tools/batch_alternate.sh [--pool DIR] [--idle S] [--settle S] \
#       [--adds R --probe SCALE_PROBE] N ROUNDS BIN_DIR...
#
# --settle S waits S seconds after the reply before VmHWM and RSS are read
# (default 0: read at once), so that the peak counts what the daemon does
# after its reply too (the freed batch, the file-system watch's probe).
#
# --adds R, with --probe (a scale_probe binary, the same for every build),
# then times one add and one remove beside the N shares through the client
# API, R times each (`scale_probe client-add`), and prints their p50 and
# max: the "one add beside N" row, right after the batch (and --settle).
#
# --idle S waits S seconds between the daemon's "serving" and the batch:
# memory freed that long ago has been handed back to the host by then
# (free page reporting, after about 2 s), as it has for a daemon that was
# idle, and costs more to get again (bench/JOURNAL.md, "Huge pages").
#
# Each BIN_DIR holds sharemgrd and sharectl. The N directories are made
# under --pool (default /dev/shm/sharemgr-batch-pool, tmpfs: the share
# table is measured, not the disk) and kept for the next run, with the
# batch file beside them. No rpcbind: the daemon runs --no-rpcbind
# --kernel=off.
set -euo pipefail
pool=/dev/shm/sharemgr-batch-pool
idle=0
settle=0
adds=0
probe=
while [[ ${1:-} == --* ]]; do
  case $1 in
    --pool) pool=$2 ;;
    --idle) idle=$2 ;;
    --settle) settle=$2 ;;
    --adds) adds=$2 ;;
    --probe) probe=$2 ;;
    *) echo "$0: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
if (($# < 3)); then
  echo "usage: $0 [--pool DIR] [--idle S] [--settle S]" \
    "[--adds R --probe SCALE_PROBE] N ROUNDS BIN_DIR..." >&2
  exit 2
fi
n=$1 rounds=$2
shift 2
mkdir -p "$pool"
batch=$pool/add-$n.txt
if [[ ! -f $batch ]]; then
  python3 - "$n" "$pool" >"$batch.tmp" <<'PY'
import os, sys
n, pool = int(sys.argv[1]), sys.argv[2]
groups = 16
per = -(-n // groups)
for g in range(groups):
    print(f"create g{g:02d}")
for i in range(n):
    p = f"{pool}/u{i:07d}"
    os.makedirs(p, exist_ok=True)
    print(f"add-share -s {p} g{i // per:02d}")
PY
  mv "$batch.tmp" "$batch"
fi
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
minor_faults() { awk '{print $10}' "/proc/$1/stat"; }
# The order of the builds is reversed every other round (A B, B A, ...):
# on this machine the second run of a pair measured about 5 ms faster
# than the first (15,000 adds, 2026-12-03), whichever build it was.
bins=("$@")
declare -A walls
for ((r = 1; r <= rounds; r++)); do
  order=("${bins[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#bins[@]} - 1; i >= 0; i--)); do order+=("${bins[i]}"); done
  fi
  for bin in "${order[@]}"; do
    d=$(mktemp -d /tmp/batch_alternate.XXXXXX)
    "$bin/sharemgrd" --foreground --no-rpcbind --insecure --kernel=off \
      --db "$d/db" --socket "$d/sock" --sharetab "$d/sharetab" \
      --mount-port 0 2>"$d/log" &
    pid=$!
    for _ in $(seq 400); do
      grep -q serving "$d/log" 2>/dev/null && break
      sleep 0.05
    done
    grep -q serving "$d/log" || { cat "$d/log" >&2; kill "$pid"; exit 1; }
    sleep "$idle"
    c0=$(cpu_ticks "$pid")
    f0=$(minor_faults "$pid")
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S" -o "$d/client_time" \
      "$bin/sharectl" --socket "$d/sock" batch "$batch" >/dev/null 2>"$d/out"
    t1=$(date +%s%N)
    c1=$(cpu_ticks "$pid")
    f1=$(minor_faults "$pid")
    applied=$(grep -o 'applied in [0-9]* ms' "$d/out" || echo "applied in ? ms")
    # The daemon's own split (its audit line): decoding (after the heap
    # reserve, "memory", in builds before the batch arena), validation, the
    # commit, linking and the change list.
    split=$(grep -oE '\((memory [0-9]+ ms, )?decoding [0-9]+ ms, validation [0-9]+ ms, commit [0-9]+ ms, linking [0-9]+ ms, change list [0-9]+ ms' \
      "$d/log" | tr -d '(' || true)
    client=$(awk '{printf "%d", ($1 + $2) * 1000}' "$d/client_time")
    sleep "$settle"
    mem=$(awk '/^VmHWM:/ {h = $2} /^VmRSS:/ {r = $2}
               END {printf "VmHWM %d MiB, RSS %d MiB", h / 1024, r / 1024}' \
      "/proc/$pid/status")
    one_add=
    if ((adds > 0)); then
      mkdir -p "$pool/extra"
      one_add=$("$probe" client-add "$d/sock" "$pool/extra" g00 "$adds" |
        python3 -c 'import json, sys; j = json.load(sys.stdin)
print("one add p50 %.0f us (max %.0f)," % (j["add_p50_us"], j["add_max_us"]))')
    fi
    echo "$bin n=$n batch $(((t1 - t0) / 1000)) us, $applied," \
      "${split:+daemon: $split, }daemon CPU $(((c1 - c0) * 10)) ms," \
      "daemon faults $((f1 - f0))," \
      "client CPU $client ms, $mem, $one_add" \
      "load $(cut -d' ' -f1 /proc/loadavg)"
    walls[$bin]+="$(((t1 - t0) / 1000)) "
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    rm -rf "$d"
  done
done
for bin in "${bins[@]}"; do
  # shellcheck disable=SC2086
  printf '%s\n' ${walls[$bin]} | sort -n | awk -v b="$bin" '
    { v[NR] = $1 }
    END { printf "%s: %d runs, median %d us (min %d, max %d)\n", b, NR,
          (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2),
          v[1], v[NR] }'
done
