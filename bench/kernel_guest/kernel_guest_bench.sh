#!/usr/bin/env bash
# The kernel-mode benchmark, run inside the QEMU guest as a scenario:
#   tests/support/kernel/guest.sh run bench/kernel_guest/kernel_guest_bench.sh
# (bench/tools/kernel_guest_bench does that and prints the table).
#
# Side by side, same kernel, same client, alternated sessions of
# rpc.mountd + exportfs ("mountd") and sharemgrd --kernel=on ("sharemgr"):
#   load    N shares from empty to mountable: `exportfs -ra` over an
#           N-line /etc/exports vs one `sharectl batch`, each until a kernel
#           client's NFSv4.2 mount of one of them succeeds.
#   add     one more share beside N: `exportfs -o` vs `sharectl add-share`
#           (the command), then until the new share mounts (first mount).
#   again   right after that add: a stat of each of 20 shares mounted
#           before it (actimeo=0, so each stat is a GETATTR the server must
#           check); exportfs's flush makes those upcall again.
#   answer  the kernel caches flushed (what exportfs -f writes), then a stat
#           of the first KB_ANSWER_SHARES mounted shares, while ftrace's
#           syscall tracepoints record the responder's read and write
#           entries on its cache channels (see trace_on); the host pairs
#           each upcall's read with its reply's write. strace was tried
#           first: it stops the tracee at every read, and rpc.mountd reads
#           the block device (libblkid) thousands of times per nfsd.fh
#           answer, so strace slowed it 50x; tracepoints do not stop it.
#           sharemgrd's own answer_p99_us is read from `sharectl --json stats`.
# Other session kinds (KB_KIND; the default, "shares", is the above):
#   openzfs The OpenZFS flow (issue 11): KB_OZ_PRE datasets exist (bind
#           mounts, their lines in /etc/exports.d/zfs.exports, exported at
#           the responder's start), then KB_OZ_CREATE are created one by
#           one with tests/support/kernel's kt_zfs (mount, zfs.exports rewritten by
#           rename, `/usr/sbin/exportfs -ra`: the real one with rpc.mountd,
#           build/bin/sharectl bind-mounted over it with sharemgrd
#           --follow-exports '/etc/exports.d/*.exports'). Per dataset: the
#           create (oz_create), of it exportfs -ra (oz_commit), then a stat
#           of the 2 datasets mounted (v3 and v4.2, actimeo=0) (oz_again);
#           the first and last new ones are mounted right after their
#           create, once, no retry (oz_newmount).
#   follow  A followed file of KB_SHARES lines (/etc/exports.d/big.exports,
#           the set above) changed by one line through rename: rpc.mountd
#           needs `exportfs -ra` after the edit, sharemgrd --follow-exports
#           sees the file change. follow_add: a line added, until a kernel
#           client mounts its path (mounts retried every 0.1 s);
#           follow_ro: a mounted share's line changed rw -> ro, until the
#           client's write fails (tried every 0.1 s); follow_*_cmd: the
#           edit plus exportfs -ra alone. KB_FOLLOW_ROUNDS rounds.
# Results: /results/kbench/results.tsv (SESSION PEER WHAT ROUND SECONDS),
# trace.SESSION.PEER.ROUND (ftrace text), fds.SESSION.PEER, facts.
# Knobs (environment; bench/tools/kernel_guest_bench sets them in a wrapper
# scenario): KB_SHARES (15000), KB_ROUNDS (add/again rounds per session,
# 1), KB_SESSIONS (sessions per peer, 1), KB_MOUNTED (20),
# KB_ANSWER_ROUNDS (1), KB_ANSWER_SHARES (5).
source "$KT_SRC/tests/support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"

N=${KB_SHARES:-15000}
ROUNDS=${KB_ROUNDS:-1}
SESSIONS=${KB_SESSIONS:-1}
MOUNTED=${KB_MOUNTED:-20}
ANSWER_ROUNDS=${KB_ANSWER_ROUNDS:-1}
ANSWER_SHARES=${KB_ANSWER_SHARES:-5}
KIND=${KB_KIND:-shares}
OZ_PRE=${KB_OZ_PRE:-500}
OZ_CREATE=${KB_OZ_CREATE:-5}
FOLLOW_ROUNDS=${KB_FOLLOW_ROUNDS:-3}
KT_ZFS=${KT_ZFS:-$(dirname "$SHARECTL")/kt_zfs}
OUT=/results/kbench
EXPORT_OPTS=rw,no_subtree_check,crossmnt
SHARE_OPTS=rw
BIG=/srv/big
NEW=$BIG/new

kt_setup
# Thousands of dataset mounts: detached in one process (kt_reset would
# run one umount each), after the NFS clients are gone.
bench_cleanup() {
  local rc=$?
  set +e
  kt_detach_datasets /srv/tank
  kt_reset
  exit "$rc"
}
trap bench_cleanup EXIT
rm -rf "$OUT"
mkdir -p "$OUT"
{
  echo "shares $N"
  echo "rounds $ROUNDS"
  echo "sessions $SESSIONS"
  echo "mounted $MOUNTED"
  echo "answer_rounds $ANSWER_ROUNDS"
  echo "kind $KIND"
  echo "oz_pre $OZ_PRE"
  echo "oz_create $OZ_CREATE"
  echo "follow_rounds $FOLLOW_ROUNDS"
  echo "guest_kernel $(uname -r)"
  echo "guest_cpus $(nproc)"
} >"$OUT/facts"

now() { echo "$EPOCHREALTIME"; }
# Appends SESSION PEER WHAT ROUND SECONDS.
record() { echo "$1 $2 $3 $4 $5" >>"$OUT/results.tsv"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.6f", b - a}'; }

# ---------------------------------------------------------------- the set

if [[ $KIND == openzfs ]]; then
  # The pool: one ext4 image holding every dataset's directory, bind-mounted
  # on /srv/tank/... (a mount point whose parent is another file system).
  kt_fs_many pool $((2 * (OZ_PRE + OZ_CREATE) + 64)) $((2 * (OZ_PRE + OZ_CREATE) * 3 / 1000 + 16))
else
step "file system with $N + 1 directories"
mkdir -p "$KT_WORK/img" "$BIG"
truncate -s $((N / 1000 * 2 + 24))M "$KT_WORK/img/big.img"
mkfs.ext4 -q -F -O ^has_journal -b 1024 -N $((N + 512)) -m 0 "$KT_WORK/img/big.img" ||
  fail "mkfs.ext4 of the big image failed"
mount -o loop "$KT_WORK/img/big.img" "$BIG" || fail "mount of the big image failed"
chmod 755 "$BIG"
names=()
for ((i = 0; i < N; i++)); do printf -v 'names[i]' 's%05d' "$i"; done
(cd "$BIG" && mkdir "${names[@]}" new) || fail "mkdir of $N directories failed"
for ((i = 0; i < N; i++)); do
  echo "$BIG/${names[i]} *($EXPORT_OPTS)"
done >"$KT_WORK/exports.big"
{
  echo "create g"
  for ((i = 0; i < N; i++)); do
    echo "add-share -o $SHARE_OPTS -s $BIG/${names[i]} g"
  done
} >"$KT_WORK/batch.big"
# The mounted ones: spread over the set; the first is the load's mount.
mounted=()
for ((i = 0; i < MOUNTED; i++)); do mounted+=("${names[i * N / MOUNTED]}"); done
unset names
step "set ready: $(wc -l <"$KT_WORK/exports.big") exports, $(wc -l <"$KT_WORK/batch.big") batch lines"
fi

# ---------------------------------------------------------------- peers

RESP_PID=

mountd_up() {
  KT_LOG=$KT_WORK/mountd.log
  rpc.mountd -F --manage-gids >>"$KT_LOG" 2>&1 &
  RESP_PID=$!
  echo "$RESP_PID" >"$KT_STATE/mountd.pid"
  kt_wait_mount_registered rpc.mountd "$RESP_PID"
}

sharemgr_up() {  # [sharemgrd ARGS]
  kt_sharemgrd_start --manage-gids "$@"
  RESP_PID=$KT_SHAREMGRD_PID
}

# Stops the responder. NFS mounts must be gone first: an unanswered upcall
# makes the client retry (NFS4ERR_DELAY) forever, umount included.
resp_down() {
  [[ -n $RESP_PID ]] || return 0
  set +e
  kill -TERM "$RESP_PID" 2>/dev/null
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$RESP_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$RESP_PID" 2>/dev/null
  wait "$RESP_PID" 2>/dev/null
  RESP_PID=
  KT_SHAREMGRD_PID=
  rm -f "$KT_STATE/mountd.pid" "$KT_STATE/sharemgrd.pid"
  # rpcbind keeps a dead responder's registration: drop it for the next.
  rpcinfo -d 100005 1 2>/dev/null; rpcinfo -d 100005 2 2>/dev/null
  rpcinfo -d 100005 3 2>/dev/null
  set -e
  return 0
}

sc() { "$SHARECTL" --socket "$KT_SM_SOCKET" "$@"; }

# Mounts SHARE (a name under BIG, or "new") on /mnt/kb/SHARE, retrying
# until it succeeds (at most 60 s): "until a kernel client mounts it".
mount_until() {  # SHARE [EXTRA]
  local s=$1 i err
  for ((i = 0; i < 600; i++)); do
    err=$(kt_mount 4.2 "127.0.0.1:$BIG/$s" "/mnt/kb/$s" "${2:-}" 2>&1) && return 0
    sleep 0.1
  done
  fail "mount of $BIG/$s did not succeed within 60 s: $err"
}

# A stat of each mounted share's root: with actimeo=0 each is a GETATTR
# the server checks against its export caches. Bash's own test, no fork.
stat_mounted() {  # [COUNT]
  local s
  for s in "${mounted[@]:0:${1:-${#mounted[@]}}}"; do
    [[ -d /mnt/kb/$s/. ]] || fail "stat of /mnt/kb/$s failed"
  done
}

# The syscall tracepoints (ftrace, in-kernel, no stop of the traced
# process, unlike strace) for read and write entries of the responder's
# threads on its cache channel file descriptors. A reply's write entry
# minus its upcall's read entry is the answer time inside the responder
# (both read only after poll/select said readable, so the read does not
# block). The same for rpc.mountd and sharemgrd.
TR=/sys/kernel/tracing
trace_on() {  # PID SESSION PEER
  local pid=$1 f fd l filter=
  [[ -e $TR/trace ]] || mount -t tracefs nodev "$TR" || fail "cannot mount tracefs"
  : >"$OUT/fds.$2.$3"
  for f in /proc/"$pid"/fd/*; do
    l=$(readlink "$f" 2>/dev/null) || continue
    [[ $l == */rpc/*/channel ]] || continue
    fd=${f##*/}
    l=${l%/channel}
    echo "$fd ${l##*/}" >>"$OUT/fds.$2.$3"
    filter+="${filter:+ || }fd == $fd"
  done
  [[ -n $filter ]] || fail "no cache channel open in process $pid"
  echo 0 >"$TR/tracing_on"
  echo >"$TR/set_event"
  echo 1 >"$TR/options/event-fork"
  echo >"$TR/set_event_pid"
  for f in /proc/"$pid"/task/*; do echo "${f##*/}" >>"$TR/set_event_pid"; done
  echo 4096 >"$TR/buffer_size_kb"
  for f in sys_enter_read sys_enter_write; do
    echo "$filter" >"$TR/events/syscalls/$f/filter" || fail "ftrace filter on $f"
    echo 1 >"$TR/events/syscalls/$f/enable"
  done
  echo >"$TR/trace"
  echo 1 >"$TR/tracing_on"
}
trace_off() {
  echo 0 >"$TR/tracing_on"
  echo >"$TR/set_event"
  echo >"$TR/set_event_pid"
  echo >"$TR/trace"
}

# ---------------------------------------------------------------- a session

# One peer's session: load, mount the set, add/again rounds, answer phase.
session() {  # SESSION PEER
  local ses=$1 peer=$2 r t0 t1 t2 t3
  step "session $ses: $peer"
  rm -f "$KT_WORK/shares.db"* "$KT_WORK/sharetab"
  : >/etc/exports
  exportfs -ra
  kt_flush_all
  sleep 1.1
  if [[ $peer == mountd ]]; then mountd_up; else sharemgr_up; fi

  step "$peer: load $N shares"
  if [[ $peer == mountd ]]; then
    cp "$KT_WORK/exports.big" /etc/exports
    t0=$(now)
    exportfs -ra || fail "exportfs -ra of $N exports failed"
  else
    t0=$(now)
    sc batch "$KT_WORK/batch.big" >/dev/null || fail "sharectl batch of $N shares failed"
  fi
  t1=$(now)
  mount_until "${mounted[0]}" actimeo=0
  t2=$(now)
  record "$ses" "$peer" load_cmd 0 "$(elapsed "$t0" "$t1")"
  record "$ses" "$peer" load_mount 0 "$(elapsed "$t1" "$t2")"
  record "$ses" "$peer" load_total 0 "$(elapsed "$t0" "$t2")"

  step "$peer: mount ${#mounted[@]} shares"
  t0=$(now)
  for s in "${mounted[@]:1}"; do mount_until "$s" actimeo=0; done
  t1=$(now)
  record "$ses" "$peer" mount_rest 0 "$(elapsed "$t0" "$t1")"
  stat_mounted

  for ((r = 1; r <= ROUNDS; r++)); do
    step "$peer: round $r: add one beside $N"
    sleep 1.1  # a flush in the same second as an entry's refresh drops it
    stat_mounted
    if [[ $peer == sharemgr ]]; then
      # Floors of the command: a process that does nothing, and sharectl's
      # own start (no daemon call).
      t0=$(now); /bin/true; t1=$(now)
      record "$ses" "$peer" true_cmd "$r" "$(elapsed "$t0" "$t1")"
      t0=$(now); "$SHARECTL" --version >/dev/null; t1=$(now)
      record "$ses" "$peer" version_cmd "$r" "$(elapsed "$t0" "$t1")"
    fi
    t0=$(now)
    if [[ $peer == mountd ]]; then
      exportfs -o "$EXPORT_OPTS" "*:$NEW" || fail "exportfs -o failed"
    else
      sc add-share -o "$SHARE_OPTS" -s "$NEW" g || fail "sharectl add-share failed"
    fi
    t1=$(now)
    mount_until new
    t2=$(now)
    stat_mounted
    t3=$(now)
    record "$ses" "$peer" add_cmd "$r" "$(elapsed "$t0" "$t1")"
    record "$ses" "$peer" add_mount "$r" "$(elapsed "$t1" "$t2")"
    record "$ses" "$peer" again "$r" "$(elapsed "$t2" "$t3")"
    # The same stat loop with nothing changed: the floor of "again".
    t0=$(now)
    stat_mounted
    t1=$(now)
    record "$ses" "$peer" again_warm "$r" "$(elapsed "$t0" "$t1")"
    kt_umount /mnt/kb/new
    if [[ $peer == mountd ]]; then
      exportfs -u "*:$NEW" || fail "exportfs -u failed"
    else
      sc remove-share -s "$NEW" g >/dev/null || fail "sharectl remove-share failed"
    fi
  done

  step "$peer: answer times (ftrace of the channel reads and writes)"
  trace_on "$RESP_PID" "$ses" "$peer"
  for ((r = 1; r <= ANSWER_ROUNDS; r++)); do
    sleep 1.1
    echo >"$TR/trace"
    t0=$(now)
    kt_flush_all
    stat_mounted "$ANSWER_SHARES"
    t1=$(now)
    record "$ses" "$peer" flush_again "$r" "$(elapsed "$t0" "$t1")"
    cat "$TR/trace" >"$OUT/trace.$ses.$peer.$r"
  done
  trace_off
  if [[ $peer == sharemgr ]]; then
    sc --json stats >"$OUT/stats.$ses.json" || fail "sharectl stats failed"
  fi

  step "$peer: teardown"
  local m
  for m in $(awk '$3 == "nfs4" || $3 == "nfs" {print $2}' /proc/mounts | sort -r); do
    kt_umount "$m"
  done
  resp_down
  : >/etc/exports
  exportfs -au
  kt_flush_all
}

# ---------------------------------------------------------------- openzfs

# Waits until sharemgrd holds COUNT shares (the followed file applied).
shares_are() {  # COUNT
  local i
  for ((i = 0; i < 1200; i++)); do
    [[ $(sc --json stats 2>/dev/null | jq .shares) == "$1" ]] && return 0
    sleep 0.5
  done
  fail "sharemgrd does not hold $1 shares after 600 s"
}

# Every NFS mount gone, the responder stopped, exportfs restored.
kinds_teardown() {
  local m
  for m in $(awk '$3 == "nfs4" || $3 == "nfs" {print $2}' /proc/mounts | sort -r); do
    kt_umount "$m"
  done
  resp_down
  umount /usr/sbin/exportfs 2>/dev/null || true
  unset SHARECTL_SOCKET
  rm -f /etc/exports.d/*
  : >/etc/exports
  exportfs -ra
  kt_flush_all
}

oz_session() {  # SESSION PEER
  local ses=$1 peer=$2 k t0 t1 t2 line v
  local root=/srv/tank/$peer$ses pool=/srv/pool/$peer$ses mid
  step "openzfs session $ses: $peer, $OZ_PRE datasets, $OZ_CREATE created"
  rm -f "$KT_WORK/shares.db"* "$KT_WORK/sharetab" /etc/exports.d/*
  : >/etc/exports
  exportfs -ra
  kt_flush_all
  mkdir -p "$pool" "$root"
  t0=$(now)
  "$KT_ZFS" create-many -o sharenfs=on "$pool" "$root" pre "$OZ_PRE" ||
    fail "kt_zfs create-many of $OZ_PRE datasets failed"
  t1=$(now)
  record "$ses" "$peer" oz_setup 0 "$(elapsed "$t0" "$t1")"
  sleep 1.1
  t0=$(now)
  if [[ $peer == mountd ]]; then
    exportfs -ra || fail "exportfs -ra of $OZ_PRE datasets failed"
    mountd_up
  else
    export SHARECTL_SOCKET=$KT_WORK/sharemgrd.sock
    mount --bind "$SHARECTL" /usr/sbin/exportfs || fail "cannot bind-mount sharectl over exportfs"
    sharemgr_up --follow-exports '/etc/exports.d/*.exports'
    shares_are "$OZ_PRE"
  fi
  t1=$(now)
  record "$ses" "$peer" oz_start 0 "$(elapsed "$t0" "$t1")"
  mid=$(printf 'pre%05d' $((OZ_PRE / 2)))
  # rpc.mountd answers nfsd.fh by scanning every export and, for crossmnt
  # ones, the mount table: thousands of dataset mounts take it minutes.
  local KT_MOUNT_TIMEOUT=600
  t0=$(now)
  kt_must_mount 3 "127.0.0.1:$root/pre00000" /mnt/kb/oz0 actimeo=0
  t1=$(now)
  record "$ses" "$peer" oz_firstmount 0 "$(elapsed "$t0" "$t1")"
  kt_must_mount 4.2 "127.0.0.1:$root/$mid" /mnt/kb/oz1 actimeo=0
  for ((k = 0; k < OZ_CREATE; k++)); do
    sleep 0.2
    t0=$(now)
    line=$("$KT_ZFS" create -t -o sharenfs=on "$pool/new$k" "$root/new$k") ||
      fail "zfs create of new$k failed"
    t1=$(now)
    [[ -d /mnt/kb/oz0/. && -d /mnt/kb/oz1/. ]] || fail "stat of the mounted datasets failed"
    t2=$(now)
    record "$ses" "$peer" oz_create "$k" "$(elapsed "$t0" "$t1")"
    record "$ses" "$peer" oz_commit "$k" "$(awk '{print $6}' <<<"$line")"
    record "$ses" "$peer" oz_again "$k" "$(elapsed "$t1" "$t2")"
    if ((k == 0 || k == OZ_CREATE - 1)); then
      v=3
      ((k)) && v=4.2
      t0=$(now)
      kt_must_mount "$v" "127.0.0.1:$root/new$k" "/mnt/kb/new$k"
      t1=$(now)
      record "$ses" "$peer" oz_newmount "$k" "$(elapsed "$t0" "$t1")"
      kt_umount "/mnt/kb/new$k"
    fi
  done
  [[ $peer == sharemgr ]] && sc --json stats >"$OUT/stats.$ses.json"
  step "$peer: teardown"
  kinds_teardown
  "$KT_ZFS" umount-all "$root" || fail "umount of the datasets failed"
}

# ---------------------------------------------------------------- follow

# Replaces the followed file by rename, as OpenZFS and editors do.
follow_put() {  # SOURCE
  cp "$1" /etc/exports.d/.big.exports.tmp && mv /etc/exports.d/.big.exports.tmp /etc/exports.d/big.exports
}

follow_session() {  # SESSION PEER
  local ses=$1 peer=$2 r t0 t1 t2 i m=${mounted[0]}
  step "follow session $ses: $peer, $N lines"
  rm -f "$KT_WORK/shares.db"* "$KT_WORK/sharetab" /etc/exports.d/*
  : >/etc/exports
  exportfs -ra
  kt_flush_all
  follow_put "$KT_WORK/exports.big"
  if [[ $peer == mountd ]]; then
    exportfs -ra || fail "exportfs -ra of $N lines failed"
    mountd_up
  else
    sharemgr_up --follow-exports /etc/exports.d/big.exports
    shares_are "$N"
  fi
  chmod 777 "$BIG/$m"
  mount_until "$m" actimeo=0
  echo x >"/mnt/kb/$m/w" || fail "write into /mnt/kb/$m failed"
  for ((r = 1; r <= FOLLOW_ROUNDS; r++)); do
    sleep 1.1
    step "$peer: round $r: a line added"
    t0=$(now)
    follow_put "$KT_WORK/exports.add"
    [[ $peer == mountd ]] && { exportfs -ra || fail "exportfs -ra failed"; }
    t1=$(now)
    mount_until new
    t2=$(now)
    record "$ses" "$peer" follow_add_cmd "$r" "$(elapsed "$t0" "$t1")"
    record "$ses" "$peer" follow_add "$r" "$(elapsed "$t0" "$t2")"
    kt_umount /mnt/kb/new
    follow_put "$KT_WORK/exports.big"
    [[ $peer == mountd ]] && exportfs -ra
    [[ $peer == sharemgr ]] && shares_are "$N"
    sleep 1.1
    step "$peer: round $r: the mounted $m changed to ro"
    t0=$(now)
    follow_put "$KT_WORK/exports.ro"
    [[ $peer == mountd ]] && { exportfs -ra || fail "exportfs -ra failed"; }
    t1=$(now)
    for ((i = 0; i < 600; i++)); do
      { echo x >"/mnt/kb/$m/w"; } 2>/dev/null || break
      sleep 0.1
    done
    ((i < 600)) || fail "$m still writable 60 s after the change to ro"
    t2=$(now)
    record "$ses" "$peer" follow_ro_cmd "$r" "$(elapsed "$t0" "$t1")"
    record "$ses" "$peer" follow_ro "$r" "$(elapsed "$t0" "$t2")"
    follow_put "$KT_WORK/exports.big"
    [[ $peer == mountd ]] && exportfs -ra
    for ((i = 0; i < 600; i++)); do
      { echo x >"/mnt/kb/$m/w"; } 2>/dev/null && break
      sleep 0.1
    done
    ((i < 600)) || fail "$m not writable again 60 s after the change back to rw"
  done
  [[ $peer == sharemgr ]] && sc --json stats >"$OUT/stats.$ses.json"
  step "$peer: teardown"
  kinds_teardown
}

if [[ $KIND == follow ]]; then
  { cat "$KT_WORK/exports.big"; echo "$NEW *($EXPORT_OPTS)"; } >"$KT_WORK/exports.add"
  sed "1s/(rw,/(ro,/" "$KT_WORK/exports.big" >"$KT_WORK/exports.ro"
  chmod 755 "$NEW"
fi
case $KIND in
  shares) run_session=session ;;
  openzfs)
    [[ -x $KT_ZFS ]] || fail "$KT_ZFS not built"
    [[ $("$SHARECTL" --help 2>&1) == *exportfs* ]] ||
      skip "sharectl has no exportfs front end (argv[0] exportfs) yet"
    run_session=oz_session ;;
  follow)
    "$SHAREMGRD" --help | grep -q -- --follow-exports || skip "no --follow-exports"
    run_session=follow_session ;;
  *) fail "KB_KIND=$KIND: shares, openzfs or follow" ;;
esac
for ((k = 1; k <= SESSIONS; k++)); do
  # Alternated: mountd first in odd sessions, sharemgr first in even ones.
  if ((k % 2)); then
    $run_session "$k" mountd
    $run_session "$k" sharemgr
  else
    $run_session "$k" sharemgr
    $run_session "$k" mountd
  fi
done
echo ok
