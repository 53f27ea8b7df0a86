#!/usr/bin/env bash
# kt-timeout: 300
# OpenZFS end to end without ZFS (issue 11, item 4). kt_zfs does what
# libzfs does on `zfs create -o sharenfs=on`: mount the dataset, rewrite
# /etc/exports.d/zfs.exports through a temporary file and rename (one line
# `MP *(sec=sys,rw,no_subtree_check,mountpoint,crossmnt)`), then run
# /usr/sbin/exportfs -ra. Datasets are created one by one while a v3 and a
# v4.2 client have the first two mounted, with each peer:
#   sharemgr  sharemgrd --kernel=on --follow-exports '/etc/exports.d/*.exports'
#             and build/bin/sharectl bind-mounted over /usr/sbin/exportfs
#             (argv[0] exportfs: `exportfs -ra` re-reads the followed
#             files and returns once the batch is pushed to the kernel);
#   mountd    rpc.mountd and the real /usr/sbin/exportfs.
# Asserts: every sampled dataset (the newest among them) mounts right after
# its create returns, no retry; the mounted clients keep working; with
# sharemgr no cache is flushed (flush times, the mounted datasets' kernel
# entries and the daemon's flush count unchanged), with rpc.mountd every
# exportfs -ra flushes (the mounted dataset's entry is dropped). TIMING
# lines: seconds per dataset, both peers, same guest. OZ_DATASETS (default
# 80) datasets per peer (about 170 s of guest time; the bench kind openzfs
# measures 5 created beside 500, and larger sets by hand).
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel ||
  skip "$SHAREMGRD has no --kernel option yet (kernel mode not built)"
"$SHAREMGRD" --help | grep -- --follow-exports >/dev/null ||
  skip "$SHAREMGRD has no --follow-exports option"
KT_ZFS=${KT_ZFS:-$(dirname "$SHARECTL")/kt_zfs}
[[ -x $KT_ZFS ]] || skip "$KT_ZFS not built"
N=${OZ_DATASETS:-80}
TANK=/srv/tank
kt_setup

oz_cleanup() {
  local rc=$?
  set +e
  kt_detach_datasets "$TANK"
  kt_reset
  exit "$rc"
}
trap oz_cleanup EXIT

kt_fs_many pool $((2 * N + 64)) $((2 * N / 500 + 8))
mkdir -p "$TANK"
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.6f", b - a}'; }
ds() { printf '%s/%s/ds%05d' "$TANK" "$1" "$2"; }  # PEER I

# The datasets mounted right after their create (the newest at the time),
# by v3 and v4.2 in turn; 0 and 1 stay mounted for the whole run.
sample=" 0 1 $((N / 2)) $((N - 1)) "

# Creates the datasets of PEER one by one; TIMING lines per dataset.
create_all() {  # PEER
  local peer=$1 i t0 t1 line v
  mkdir -p "/srv/pool/$peer" "$TANK/$peer"
  : >"$KT_WORK/$peer.times"
  for ((i = 0; i < N; i++)); do
    t0=$(now)
    line=$("$KT_ZFS" create -t -o sharenfs=on "/srv/pool/$peer/ds$i" "$(ds "$peer" "$i")") ||
      fail "$peer: zfs create of dataset $i failed"
    t1=$(now)
    echo "$(elapsed "$t0" "$t1") $line" >>"$KT_WORK/$peer.times"
    if [[ $sample == *" $i "* ]]; then
      v=3
      ((i % 2)) && v=4.2
      chmod 777 "$(ds "$peer" "$i")"   # root is squashed (sharenfs=on)
      kt_must_mount "$v" "127.0.0.1:$(ds "$peer" "$i")" "/mnt/$peer/$i"
      kt_assert_rw "/mnt/$peer/$i" "$(ds "$peer" "$i")"
      ((i > 1)) && kt_umount "/mnt/$peer/$i"
      if ((i == 1)); then
        sleep 1.1   # a flush in the second of an entry's refresh drops it
        kt_assert_rw "/mnt/$peer/0" "$(ds "$peer" 0)"
        kt_assert_rw "/mnt/$peer/1" "$(ds "$peer" 1)"
        flush_before=$(kt_flush_time nfsd.export)
        fh_before=$(kt_flush_time nfsd.fh)
        entry0=$(kt_export_entry "$(ds "$peer" 0)")
        entry1=$(kt_export_entry "$(ds "$peer" 1)")
        [[ -n $entry0 && -n $entry1 ]] || fail "$peer: no kernel entry for the mounted datasets"
      fi
    fi
    if [[ $peer == sharemgr ]] && ((i > 1 && i % 20 == 0)); then
      assert_eq "$entry0" "$(kt_export_entry "$(ds "$peer" 0)")" \
        "kernel entry of the v3-mounted dataset after $i creates"
    fi
    if [[ $peer == mountd && $i == 2 ]]; then
      [[ -z $(kt_export_entry "$(ds "$peer" 0)") ]] ||
        fail "mountd: the mounted dataset's entry survived exportfs -ra"
    fi
  done
  assert_eq "$N" "$(grep -c '^/srv/tank/' /etc/exports.d/zfs.exports)" \
    "$peer: lines in zfs.exports"
  kt_assert_rw "/mnt/$peer/0" "$(ds "$peer" 0)"
  kt_assert_rw "/mnt/$peer/1" "$(ds "$peer" 1)"
}

# Median and mean of column COL of PEER's times.
stat_col() {  # PEER COL
  sort -g -k"$2,$2" "$KT_WORK/$1.times" | awk -v c="$2" '
    {v[NR] = $c; s += $c}
    END {printf "median %.3f mean %.3f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), s / NR}'
}
report() {  # PEER
  echo "TIMING $1: $N datasets, seconds per dataset: create total $(stat_col "$1" 1);" \
    "of it the exportfs -ra $(stat_col "$1" 7); the zfs.exports rewrite $(stat_col "$1" 5);" \
    "the mount $(stat_col "$1" 3)"
}

have_frontend=
exportfs_bin=$SHARECTL
"$SHARECTL" --help 2>&1 | grep -w exportfs >/dev/null && have_frontend=1

if [[ -n $have_frontend ]]; then
  step "sharemgr: sharemgrd following /etc/exports.d/*.exports, sharectl as /usr/sbin/exportfs"
  rm -f /etc/exports.d/*
  kt_sharemgrd_start --follow-exports '/etc/exports.d/*.exports'
  export SHARECTL_SOCKET=$KT_SM_SOCKET
  mount --bind "$exportfs_bin" /usr/sbin/exportfs || fail "cannot bind-mount sharectl over exportfs"
  flushes0=$(kt_kernel_stat flushes)
  t0=$(now)
  create_all sharemgr
  step "sharemgr: $N datasets in $(kt_since "${t0/,/.}") s"
  assert_eq "$flush_before" "$(kt_flush_time nfsd.export)" "nfsd.export flush time after $N creates"
  assert_eq "$fh_before" "$(kt_flush_time nfsd.fh)" "nfsd.fh flush time after $N creates"
  assert_eq "$entry0" "$(kt_export_entry "$(ds sharemgr 0)")" "v3-mounted dataset's kernel entry"
  assert_eq "$entry1" "$(kt_export_entry "$(ds sharemgr 1)")" "v4.2-mounted dataset's kernel entry"
  assert_eq "$flushes0" "$(kt_kernel_stat flushes)" "the daemon's flush count"
  assert_eq "$N" "$(kt_sc --json show exports-zfs | jq '[.groups[].shares[]] | length')" \
    "shares in exports-zfs"
  report sharemgr
  [[ -d ${KT_RESULTS:-} ]] && cp "$KT_LOG" "$KT_RESULTS/openzfs_flow.sharemgrd.log"
  for m in $(awk '($3 == "nfs" || $3 == "nfs4") {print $2}' /proc/mounts | sort -r); do
    kt_umount "$m"
  done
  umount /usr/sbin/exportfs || fail "cannot remove the bind mount over exportfs"
  unset SHARECTL_SOCKET
  kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
  rm -f /etc/exports.d/*
  kt_flush_all
fi

step "mountd: rpc.mountd and /usr/sbin/exportfs"
kt_mountd_start ''
t0=$(now)
create_all mountd
step "mountd: $N datasets in $(kt_since "${t0/,/.}") s"
after=$(kt_flush_time nfsd.export)
((after > flush_before)) || fail "exportfs -ra did not flush nfsd.export ($flush_before -> $after)"
report mountd
if [[ -n $have_frontend ]]; then
  awk -v a="$(stat_col mountd 1 | cut -d' ' -f2)" -v b="$(stat_col sharemgr 1 | cut -d' ' -f2)" \
    'BEGIN {printf "TIMING ratio: per dataset (median create), mountd / sharemgr = %.2f\n", a / b}'
  echo ok
else
  skip "sharectl has no exportfs front end yet (argv[0] exportfs); rpc.mountd's flow passed"
fi
