#!/usr/bin/env bash
# sharemgr-takeover on the host, no nfsd needed: every bad command line
# exits 2 with one message naming what was wrong, before any program is
# run; --help lists the options sharemgr-takeover(8) documents; monitor
# says 7 (not serving) for an address that is not on lo while no nfsd
# runs, and 1 for an address that is there without nfsd.
# rpc.nfsd, nfsdcld, arping and sharectl are stubs that log their call and
# fail, so the test neither needs nor touches nfs-utils; ip is the real
# one behind a stub that logs.
# Usage: takeover_args_test.sh SCRIPT MAN_PAGE
source "$(dirname "$0")/../support/daemon_lib.sh"
script=$1
page=$2
[[ -f $script ]] || fail "no script at $script"
[[ -f $page ]] || fail "no manual page at $page"

dir=$(mktemp -d "${TMPDIR:-/tmp}/sharemgr-takeover-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
calls=$dir/calls
for p in rpc.nfsd nfsdcld arping sharectl; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$p" "$calls" >"$dir/bin/$p"
done
real_ip=$(command -v ip || true)
if [[ -n $real_ip ]]; then
  printf '#!/bin/sh\necho "ip $*" >>"%s"\nexec "%s" "$@"\n' "$calls" "$real_ip" >"$dir/bin/ip"
fi
chmod 755 "$dir"/bin/*
export PATH=$dir/bin:$PATH
unset SHARECTL  # the script would run it instead of the stub

out= err= rc=
run() {  # ARGS...: the script's stdout, stderr and exit code
  : >"$calls"
  rc=0
  bash "$script" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
  out=$(cat "$dir/out")
  err=$(cat "$dir/err")
}

# ARGS... must exit 2, print MESSAGE as the last line of standard error,
# nothing on standard output, and run no program.
refused() {  # MESSAGE ARGS...
  local message=$1
  shift
  run "$@"
  assert_eq 2 "$rc" "exit code of: $*"
  assert_eq "sharemgr-takeover: $message" "$(tail -n 1 <<<"$err")" "message of: $*"
  assert_eq "" "$out" "standard output of: $*"
  assert_eq "" "$(cat "$calls")" "programs run by: $*"
}

addr=(--address 192.0.2.77/32 --interface lo)
refused "--address ADDR/PREFIX is required" start --interface lo
refused "--address ADDR/PREFIX is required" monitor --interface lo
refused "--address '192.0.2.77': give the prefix length too (e.g. 10.0.0.10/24)" \
  start --address 192.0.2.77 --interface lo
refused "--interface DEV is required" stop --address 192.0.2.77/32
refused "--grace 'soon': not a whole number" start "${addr[@]}" --grace soon
refused "--grace '-5': not a whole number" start "${addr[@]}" --grace -5
refused "--lease '1.5': not a whole number" start "${addr[@]}" --lease 1.5
refused "--threads '8x': not a whole number" start "${addr[@]}" --threads 8x
refused "--threads must be at least 1" start "${addr[@]}" --threads 0
refused "--threads needs a value" start "${addr[@]}" --threads
refused "--recovery-dir needs a value" start "${addr[@]}" --recovery-dir ""
refused "unknown option '--vip'" start "${addr[@]}" --vip 192.0.2.77
refused "unknown action 'restart' (start, stop or monitor)" restart "${addr[@]}"
refused "--recovery-dir '$dir/absent': no such folder (it must be on storage every head reaches)" \
  start "${addr[@]}" --recovery-dir "$dir/absent"
: >"$dir/a-file"
refused "--recovery-dir '$dir/a-file': no such folder (it must be on storage every head reaches)" \
  start "${addr[@]}" --recovery-dir "$dir/a-file"

run
assert_eq 2 "$rc" "exit code with no action"
assert_contains "$err" "usage: sharemgr-takeover start|stop|monitor" "usage with no action"

run --help
assert_eq 0 "$rc" "exit code of --help"
assert_contains "$out" "usage: sharemgr-takeover" "--help on standard output"
assert_eq "" "$err" "standard error of --help"

# The options --help lists are the ones the page's OPTIONS describe.
help_options=$(grep -oE -- '--[a-z][a-z-]*' <<<"$out" | sort -u)
man_options=$(grep -E '^\.It Fl ' "$page" | grep -oE 'Fl -[a-z][a-z-]*' | sed 's/^Fl /-/' |
  grep -vx -- '--help' | sort -u)
[[ -n $help_options ]] || fail "--help lists no options"
assert_eq "$help_options" "$man_options" "options of --help (first) and of $(basename "$page")"

if [[ -z $real_ip ]]; then
  echo "monitor not checked: no ip command on this host"
elif (($(cat /proc/fs/nfsd/threads 2>/dev/null || echo 0) > 0)); then
  echo "monitor not checked: this host's nfsd is running"
elif ip -o addr show dev lo | grep -qw 192.0.2.77; then
  echo "monitor not checked: 192.0.2.77 is on lo"
else
  run monitor "${addr[@]}"
  assert_eq 7 "$rc" "monitor of an address not on lo, no nfsd"
  assert_eq "" "$out$err" "output of monitor when not serving"
  assert_not_contains "$(cat "$calls")" "rpc.nfsd" "programs run by monitor"
  assert_contains "$(cat "$calls")" "ip -o addr show dev lo" "monitor looks at lo"

  run monitor --address 127.0.0.1/8 --interface lo
  assert_eq 1 "$rc" "monitor of an address on lo, no nfsd"
  assert_eq "sharemgr-takeover: 127.0.0.1/8 is on lo but nfsd is not running" "$err" \
    "message of monitor with the address and no nfsd"
fi
echo ok
