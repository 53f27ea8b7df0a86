#!/usr/bin/env bash
# MNT v3 from distinct 127.x.y.z addresses on reserved ports: each decision
# under --hosts/--netgroups files matches `sharectl check` for that client
# and path.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
cat >"$SM_DIR/hosts" <<H
127.0.1.1 alpha.example.com alpha
127.0.1.2 beta.example.com beta
127.0.1.3 gamma.other.org gamma
127.0.1.4 delta.example.com delta
H
cat >"$SM_DIR/netgroups" <<N
farm (alpha.example.com,,) (beta.example.com,,)
N
start_daemon --hosts "$SM_DIR/hosts" --netgroups "$SM_DIR/netgroups"
read -r s1 s2 s3 s4 s5 <<<"$(make_dirs s1 s2 s3 s4 s5)"
cat >"$SM_DIR/batch" <<B
create g
add-share -o rw=farm -s $s1 g
add-share -o rw=.example.com,ro=gamma.other.org -s $s2 g
add-share -o none=beta.example.com,rw -s $s3 g
add-share -o rw=@127.0.1.0/30 -s $s4 g
add-share -o ro=-delta.example.com:* -s $s5 g
B
sc batch "$SM_DIR/batch" || fail "batch refused"

oks=0 refused=0
for addr in 127.0.1.1 127.0.1.2 127.0.1.3 127.0.1.4 127.0.1.9; do
  for s in "$s1" "$s2" "$s3" "$s4" "$s5"; do
    got=$(probe --source "$addr" --reserved mnt "$s") ||
      fail "MNT $s from $addr: RPC failed"
    rc=0
    json=$(sc --json check "$addr" "$s") || rc=$?
    access=$(jq -r .access <<<"$json") || fail "sharectl check $addr $s failed"
    # check exits 0 when access is granted, 1 when refused.
    [[ $rc == $([[ $access == none ]] && echo 1 || echo 0) ]] ||
      fail "sharectl check $addr $s: exit $rc with access $access"
    echo "$addr $s: MNT ${got%% *} check $access"
    if [[ $access == none ]]; then
      assert_eq MNT3ERR_ACCES "$got" "MNT $s from $addr (check says none)"
      refused=$((refused + 1))
    else
      [[ $got == MNT3_OK\ * ]] ||
        fail "MNT $s from $addr: got '$got' but check says $access"
      oks=$((oks + 1))
    fi
  done
done
# The option sets above must give both answers, or the test proves little.
((oks >= 5 && refused >= 5)) || fail "too uniform: $oks ok, $refused refused"
# Spot checks of the semantics themselves.
assert_eq MNT3ERR_ACCES "$(probe --source 127.0.1.3 mnt "$s1")" "gamma not in farm"
assert_eq MNT3ERR_ACCES "$(probe --source 127.0.1.2 mnt "$s3")" "beta in none="
assert_eq MNT3ERR_ACCES "$(probe --source 127.0.1.4 mnt "$s5")" "delta denied by -"
[[ $(probe --source 127.0.1.1 mnt "$s1") == MNT3_OK\ * ]] || fail "alpha in farm refused"
echo "ok: $oks admitted, $refused refused, all as sharectl check says"
