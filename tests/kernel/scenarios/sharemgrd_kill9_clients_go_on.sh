#!/usr/bin/env bash
# sharemgrd --kernel=on killed with SIGKILL while a v3 and a v4.2 client
# read and write on mounted shares: they go on without an error (the
# kernel keeps the entries it was given). While the daemon is down, a
# v3 mount of a share not mounted before fails (MOUNT has no server) and
# a v4.2 one waits (the kernel holds its request: its export upcall finds
# no answer); after the restart the waiting v4.2 mount completes, new v3 and v4.2 mounts work, and the
# daemon's stats count the upcalls it answered.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup
for fs in a b c; do kt_fs "$fs"; done
kt_sharemgrd_start
cat >"$KT_WORK/batch" <<B
create g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/a g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/b g
add-share -o rw=127.0.0.1,root=127.0.0.1 -s /srv/c g
B
kt_sc batch "$KT_WORK/batch" || fail "batch"
kt_must_mount 3 127.0.0.1:/srv/a /mnt/a3
kt_must_mount 4.2 127.0.0.1:/srv/a /mnt/a4
mkdir /srv/a/v3 /srv/a/v4
kt_assert_rw /mnt/a3 /srv/a
kt_assert_rw /mnt/a4 /srv/a

# A client loop: writes a new file, reads it back, until told to stop;
# counts rounds and errors.
client_loop() {  # DIR TAG
  local d=$1 tag=$2 i=0 errors=0
  while [[ ! -e $KT_WORK/stop ]]; do
    i=$((i + 1))
    if ! echo "$tag $i" >"$d/f$i" || [[ $(cat "$d/f$i" 2>&1) != "$tag $i" ]]; then
      errors=$((errors + 1))
      echo "$tag round $i failed" >&2
    fi
    sleep 0.2
  done
  echo "$i $errors" >"$KT_WORK/$tag.result"
}
client_loop /mnt/a3/v3 v3 2>"$KT_WORK/v3.err" &
loop3=$!
client_loop /mnt/a4/v4 v4 2>"$KT_WORK/v4.err" &
loop4=$!
sleep 2

step "kill -9 sharemgrd"
kill -KILL "$KT_SHAREMGRD_PID"
wait "$KT_SHAREMGRD_PID" 2>/dev/null || true
KT_SHAREMGRD_PID=
rm -f "$KT_STATE/sharemgrd.pid"

step "while down: the mounted clients go on, new mounts"
kt_assert_rw /mnt/a3 /srv/a
kt_assert_rw /mnt/a4 /srv/a
kt_mount_refused "" 3 127.0.0.1:/srv/b /mnt/b3
KT_MOUNT_TIMEOUT=90 kt_mount 4.2 127.0.0.1:/srv/c /mnt/c4 2>"$KT_WORK/c4.err" &
mount_c4=$!
sleep 8
kill -0 "$mount_c4" 2>/dev/null ||
  fail "the v4.2 mount of /srv/c did not wait for the absent responder: $(wait $mount_c4; echo "exit $?"; cat "$KT_WORK/c4.err")"
! kt_is_nfs_mount /mnt/c4 || fail "/srv/c mounted while no responder ran"
echo "the v4.2 mount of /srv/c waits after 8 s"
kt_assert_rw /mnt/a3 /srv/a
kt_assert_rw /mnt/a4 /srv/a

step "restart"
t0=$(date +%s.%N)
kt_sharemgrd_start
wait "$mount_c4" || fail "the waiting v4.2 mount of /srv/c failed after the restart: $(cat "$KT_WORK/c4.err")"
echo "the waiting v4.2 mount completed $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s after the restart began"
kt_is_nfs_mount /mnt/c4 || fail "/mnt/c4 is no NFS mount"
kt_assert_rw /mnt/c4 /srv/c
upcalls=$(kt_kernel_stat upcalls)
echo "kernel.upcalls after the restart: $upcalls"
((upcalls > 0)) || fail "the restarted daemon answered no upcall ($upcalls)"
kt_must_mount 3 127.0.0.1:/srv/b /mnt/b3
kt_assert_rw /mnt/b3 /srv/b
kt_must_mount 4.2 127.0.0.1:/srv/b /mnt/b4
kt_assert_rw /mnt/b4 /srv/b

touch "$KT_WORK/stop"
wait "$loop3" "$loop4"
for t in v3 v4; do
  read -r rounds errors <"$KT_WORK/$t.result"
  echo "$t client loop: $rounds rounds, $errors errors"
  ((rounds >= 20)) || fail "$t client loop ran only $rounds rounds"
  ((errors == 0)) || fail "$t client loop saw $errors errors: $(head -n 5 "$KT_WORK/$t.err")"
done
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
