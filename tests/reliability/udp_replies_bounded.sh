#!/usr/bin/env bash
# With 1,100 shares, no MOUNT call over UDP (40 bytes, no credentials) is
# answered with more than 4 times its size (EXPORT once answered 65,128
# bytes: a 1,600x amplifier for spoofed sources); showmount -e, which asks
# over TCP first, still lists every share.
source "$(dirname "$0")/lib.sh"
sm_setup
ensure_rpcbind
make_many_dirs 1100
SM_RPCBIND=1 start_daemon --insecure
{
  echo "create g"
  seq -f "add-share -s $SM_DIR/export/d%05g g" 0 1099
} >"$SM_DIR/batch"
sc batch "$SM_DIR/batch" >/dev/null || fail "setup batch refused"
out=$(python3 "$(dirname "$0")/rpc_driver.py" udp-ratio --port "$MOUNT_PORT") ||
  fail "udp driver: $out"
echo "$out"
ratio=$(sed -n 's/.*"worst_ratio": \([0-9.]*\).*/\1/p' <<<"$out")
awk -v r="$ratio" 'BEGIN { exit !(r <= 4) }' ||
  fail "a UDP reply is $ratio times its call"
n=$(showmount -e 127.0.0.1 | tail -n +2 | wc -l)
assert_eq 1100 "$n" "shares listed by showmount -e"
echo "ok"
