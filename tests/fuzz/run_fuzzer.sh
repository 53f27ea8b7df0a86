#!/usr/bin/env bash
# Runs one libFuzzer target over its seed corpus and regression inputs.
#   run_fuzzer.sh BINARY SOURCE_DIR NAME WORK_DIR SECONDS [libFuzzer flags]
# New inputs the fuzzer finds go to WORK_DIR/corpus/NAME (never into the
# source tree); a crash is saved under WORK_DIR/crashes/NAME/ and makes the
# run fail. Every file of tests/fuzz/corpus/NAME and
# tests/fuzz/regressions/NAME is executed before fuzzing starts, so a
# regression input that crashes again fails the run at once.
set -euo pipefail
bin=$1 src=$2 name=$3 work=$4 seconds=$5
shift 5
mkdir -p "$work/corpus/$name" "$work/crashes/$name"
dirs=("$work/corpus/$name" "$src/corpus/$name")
if [[ -d $src/regressions/$name ]]; then
  dirs+=("$src/regressions/$name")
fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/crashes/$name/" \
  "$@" "${dirs[@]}"
