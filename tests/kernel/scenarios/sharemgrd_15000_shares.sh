#!/usr/bin/env bash
# kt-timeout: 300
# sharemgrd --kernel=on with 15,000 shares (directories on one ext4 file
# system, one `sharectl batch`): right after the batch returns, with no
# pause, v4.2 and v3 mounts of the first, middle and last share work
# (the batch replies once the kernel can be told about every share it
# added); the same again after an rpc.mountd run on the same folder and a
# fresh daemon. Then a v3 and a v4.2 client mount the middle one and two
# random others, and read and write there; a share outside the table
# stays refused. Logs the batch time and each mount's time.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
kt_setup
N=15000
t0=$(date +%s.%N)
kt_fs_many many 16384 40
# One process makes them all (brace list, one mkdir).
mkdir /srv/many/d{00000..14999} /srv/many/unshared
echo "made $N directories in $(kt_since "$t0") s"
{
  echo "create -o rw=127.0.0.1,root=127.0.0.1 g"
  printf 'add-share -s /srv/many/d%05d g\n' $(seq 0 $((N - 1)))
} >"$KT_WORK/batch"
first=d00000
mid=$(printf 'd%05d' $((N / 2)))
last=$(printf 'd%05d' $((N - 1)))

# The batch, then at once the mounts of the first, middle and last share.
batch_then_mount_at_once() {  # WHEN
  local d v t0
  t0=$(date +%s.%N)
  kt_sc batch "$KT_WORK/batch" >/dev/null || fail "sharectl batch of $N shares refused ($1)"
  echo "TIMING batch of $N add-share ($1): $(kt_since "$t0") s"
  grep 'changed shares told in' "$KT_LOG" | tail -n 1
  for d in "$first" "$mid" "$last"; do
    for v in 4.2 3; do
      t0=$(date +%s.%N)
      kt_must_mount "$v" "127.0.0.1:/srv/many/$d" "/mnt/now-$d-$v"
      echo "TIMING mount v$v of /srv/many/$d right after the batch ($1): $(kt_since "$t0") s"
    done
  done
  for d in "$first" "$mid" "$last"; do
    for v in 4.2 3; do
      kt_assert_rw "/mnt/now-$d-$v" "/srv/many/$d"
      kt_umount "/mnt/now-$d-$v"
    done
  done
}

step "a fresh daemon"
kt_sharemgrd_start
batch_then_mount_at_once "fresh daemon"
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"

step "after an rpc.mountd run on the same folder"
kt_mountd_start "/srv/many 127.0.0.1(rw,no_root_squash,no_subtree_check)"
kt_must_mount 4.2 127.0.0.1:/srv/many /mnt/by-mountd
[[ -d /mnt/by-mountd/$mid ]] || fail "rpc.mountd's export does not show $mid"
kt_umount /mnt/by-mountd
kt_mountd_stop
KT_SM_DB=$KT_WORK/after-mountd.db kt_sharemgrd_start
batch_then_mount_at_once "after rpc.mountd"
assert_eq "$N" "$(kt_sc --json stats | jq -r .shares)" "shares the daemon serves after the batch"

# One add beside 15,000, then at once its mount (v4.2).
mkdir /srv/many/one{1..3}
for i in 1 2 3; do
  t0=$(date +%s.%N)
  kt_sc add-share -s "/srv/many/one$i" g >/dev/null || fail "add-share beside $N"
  echo "TIMING add-share beside $N ($i): $(kt_since "$t0") s"
  t0=$(date +%s.%N)
  kt_must_mount 4.2 "127.0.0.1:/srv/many/one$i" "/mnt/one$i"
  echo "TIMING mount v4.2 of the share just added ($i): $(kt_since "$t0") s"
done
grep 'changed shares told in' "$KT_LOG" | tail -n 3

r1=$(printf 'd%05d' $((RANDOM % N)))
r2=$(printf 'd%05d' $(((RANDOM * 32768 + RANDOM) % N)))
for d in "$mid" "$r1" "$r2"; do
  for v in 3 4.2; do
    t0=$(date +%s.%N)
    kt_must_mount "$v" "127.0.0.1:/srv/many/$d" "/mnt/$d-$v"
    echo "TIMING mount v$v of /srv/many/$d: $(kt_since "$t0") s"
    kt_assert_rw "/mnt/$d-$v" "/srv/many/$d"
  done
done
kt_mount_refused "access denied by server" 3 127.0.0.1:/srv/many/unshared /mnt/unshared3

# The folder above them is no share: NFSv4 reaches it as a pseudo-root
# directory, whose listing shows the shares (one export upcall each) and
# hides the rest.
t0=$(date +%s.%N)
kt_must_mount 4.2 127.0.0.1:/srv/many /mnt/pseudo
names=$(ls -f /mnt/pseudo)
echo "TIMING v4.2 listing of the pseudo folder /srv/many: $(kt_since "$t0") s"
assert_eq "$N" "$(grep -c '^d[0-9]' <<<"$names")" "shares listed in the pseudo folder"
assert_not_contains "$names" "unshared" "listing of the pseudo folder"
echo "marker $mid" >"/srv/many/$mid/marker"
assert_eq "marker $mid" "$(cat "/mnt/pseudo/$mid/marker")" "a share's file reached through the pseudo folder"
echo "kernel: $(kt_sc --json stats | jq -c .kernel)"
t0=$(date +%s.%N)
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo "TIMING stop: $(kt_since "$t0") s"
echo ok
