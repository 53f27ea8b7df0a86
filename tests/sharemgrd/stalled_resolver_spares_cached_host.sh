#!/usr/bin/env bash
# While the resolver stalls on host A (a test-only delay), a MNT from host B,
# whose decision is cached, completes while A's MNT is still pending.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
A=127.0.3.1 B=127.0.3.2
cat >"$SM_DIR/hosts" <<H
$A hosta.example.com
$B hostb.example.com
H
start_daemon --hosts "$SM_DIR/hosts" --debug-resolver-delay "$A=4000"
read -r p <<<"$(make_dirs p)"
sc create g && sc add-share -o rw=hostb.example.com -s "$p" g || fail "setup refused"

# B's decision needs a name lookup; make it cached.
got=$(probe --source $B mnt "$p")
[[ $got == MNT3_OK\ * ]] || fail "B refused: $got"

# Wait (at most 1 s of A's 4 s stall) until A's request is in the daemon,
# seen as a new cache miss or resolver call.
count() { sc --json stats | jq '.cache.misses + .cache.lookups'; }
base=$(count)
probe --source $A --timeout 30000 mnt "$p" >"$SM_DIR/a.out" 2>&1 &
a_pid=$!
on_exit "kill $a_pid 2>/dev/null"
for i in $(seq 1 50); do
  (($(count) > base)) && break
  sleep 0.02
done
kill -0 $a_pid 2>/dev/null || fail "A finished before B was tried: $(cat "$SM_DIR/a.out")"

got=$(probe --source $B --timeout 30000 mnt "$p")
kill -0 $a_pid 2>/dev/null || fail "B completed only after A (B got: $got)"
[[ $got == MNT3_OK\ * ]] || fail "B refused while A stalls: $got"

rc=0
wait $a_pid || rc=$?
assert_eq 0 "$rc" "A's probe exit code"
assert_eq MNT3ERR_ACCES "$(cat "$SM_DIR/a.out")" "A's answer after the stall"
echo "ok: B answered while A was stalled"
