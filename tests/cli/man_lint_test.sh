#!/usr/bin/env bash
# Every manual page in man/ passes `mandoc -T lint -W warning` with no
# message and renders with `man -l` without complaint.
# Usage: man_lint_test.sh MAN_DIR
set -uo pipefail
dir=$1
fail=0
shopt -s nullglob
pages=("$dir"/*.[358])
if ((${#pages[@]} == 0)); then
  echo "no manual pages in $dir"; exit 1
fi
for page in "${pages[@]}"; do
  out=$(mandoc -T lint -W warning "$page" 2>&1)
  if [[ $? -ne 0 || -n $out ]]; then
    echo "FAIL lint $page:"; echo "$out"; fail=1
  fi
  rendered=$(MANWIDTH=80 man -l "$page" 2>/tmp/man_lint_$$.err)
  err=$(cat /tmp/man_lint_$$.err); rm -f /tmp/man_lint_$$.err
  if [[ -z $rendered || -n $err ]]; then
    echo "FAIL man -l $page:"; echo "$err"; fail=1
  fi
done
((fail == 0)) && echo "${#pages[@]} passed, 0 failed"
exit $fail
