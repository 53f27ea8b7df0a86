#!/usr/bin/env bash
# Two kernel NFS heads (issue 47's benchmarks), run inside the QEMU guest
# as a scenario:
#   tests/support/kernel/guest.sh run bench/kernel_guest/failover_bench.sh
# (bench/kernel_guest/failover_bench.py does that and prints the table).
#
# Head A is the guest's root namespace, head B the network namespace headB
# with a mount namespace of its own, the client the namespace cl reaching
# the service address through A's or B's link (tests/support/kernel/lib.sh, "two
# heads"). Side by side, in sessions of one peer each (FB_FIRST's peer
# first, then the other, alternated when FB_SESSIONS > 1):
#   mountd    rpc.mountd + exportfs on both heads, the same exports on
#             both as CTDB and Pacemaker setups keep them: B has its own
#             /etc/exports, /var/lib/nfs, rpcbind and rpc.mountd in its
#             namespaces. A change is an edit of /etc/exports and
#             `exportfs -ra` on B, then the same on A.
#   sharemgr  sharemgrd --kernel=on --store on both heads, one PostgreSQL
#             in the guest (a fresh one per session). A change is one
#             `sharectl batch` on B (of 1 or FB_OPS adds); A follows the
#             table.
# Both peers take the address over with sharemgrd/sharemgr-takeover (nfsd
# restarted with a grace period of FB_GRACE s, nfsdcld's records on a
# folder both heads reach, the address moved); B's nfsd runs only after
# a takeover. Every B command runs inside B's namespaces (nsenter).
# What is timed (results.tsv: SESSION PEER WHAT ROUND VALUE):
#   serve1    one share added on B until a client mounts it (NFSv4.2)
#             through A; serve1_cmd: B's command (mountd: both heads'
#             edits and `exportfs -ra`); serve1_follow: until A has it
#             (mountd: = serve1_cmd; sharemgr: until A's generation
#             reaches the one B's batch reply names, A's `sharectl
#             stats` polled back to back: 0.1-0.3 s a poll under TCG).
#   serveN    the same for FB_OPS shares added in one change (mountd:
#             FB_OPS lines appended on each head), the last one mounted.
#   again_small / again_big   20 shares mounted (NFSv4.2, actimeo=0)
#             through A, stat'ed once right after one add on B has reached
#             A (mountd: `exportfs -ra` on A flushed A's caches; sharemgr:
#             nothing flushed), beside the 22 base shares / beside FB_OPS
#             more; *_floor: the same 20 stats just before, nothing
#             changed.
#   fo_shared_v3 / _v4   a reader looping on an open file (O_DIRECT,
#             every 0.05 s; stall_reader.py) over NFSv3 / NFSv4.2 hard
#             mounts of /srv/data (shared storage: the same file system
#             on both heads); A's responder killed (-9),
#             `sharemgr-takeover stop` on A, `start` on B, the client's
#             route moved: the gap between the last successful read
#             before and the first after. *_kill: from the kill to that
#             first read; fo_*_takeover: the kill to B's start returning.
#   fo_replica_v3 / _v4  the same onto a replica: /srv/rep is on A the
#             original image, on B its block copy given another uuid
#             (tune2fs -U) mounted at the same path; "ESTALE" (or another
#             errno name) when the open file does not read again within
#             FB_FAIL_WAIT s after an error.
# Knobs (environment; failover_bench.py sets them): FB_OPS (15000),
# FB_ROUNDS (rounds of serve1 and again_small, 3), FB_BIG_ROUNDS (rounds
# of again_big, 1), FB_SESSIONS (sessions per peer, 1), FB_FIRST (mountd),
# FB_REPLICA (1: the replica failover too), FB_GRACE (20), FB_FAIL_WAIT
# (20), FB_PARTS ("serve failover": which parts run), FB_TRACE (set -x).
source "$KT_SRC/tests/support/kernel/lib.sh"
kt_pg_require
kt_takeover_require
command -v tune2fs >/dev/null || skip "no tune2fs"
READER=$KT_SRC/bench/kernel_guest/stall_reader.py

N=${FB_OPS:-15000}
ROUNDS=${FB_ROUNDS:-3}
BIG_ROUNDS=${FB_BIG_ROUNDS:-1}
SESSIONS=${FB_SESSIONS:-1}
FIRST=${FB_FIRST:-mountd}
REPLICA=${FB_REPLICA:-1}
GRACE=${FB_GRACE:-20}
FAIL_WAIT=${FB_FAIL_WAIT:-20}
PARTS=${FB_PARTS:-serve failover}
MOUNTED=20
OUT=/results/fbench
EXPORT_OPTS=rw,no_subtree_check
BIG=/srv/big
M=/mnt/fb

kt_setup
chmod 755 "$KT_WORK"
[[ -n ${FB_TRACE:-} ]] && set -x
rm -rf "$OUT"
mkdir -p "$OUT"
{
  echo "ops $N"
  echo "rounds $ROUNDS"
  echo "big_rounds $BIG_ROUNDS"
  echo "sessions $SESSIONS"
  echo "first $FIRST"
  echo "replica $REPLICA"
  echo "grace $GRACE"
  echo "guest_kernel $(uname -r)"
  echo "guest_cpus $(nproc)"
} >"$OUT/facts"

now() { echo "$EPOCHREALTIME"; }
record() { echo "$1 $2 $3 $4 $5" >>"$OUT/results.tsv"; }  # SES PEER WHAT ROUND VALUE
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.6f", b - a}'; }

# ---------------------------------------------------------------- the set

step "file systems: $N + shares on $BIG, /srv/data (shared), /srv/rep and its copy"
mkdir -p "$KT_WORK/img" "$BIG"
truncate -s $((N / 1000 * 2 + 24))M "$KT_WORK/img/big.img"
mkfs.ext4 -q -F -O ^has_journal -b 1024 -N $((N + 512)) -m 0 "$KT_WORK/img/big.img" ||
  fail "mkfs.ext4 of the big image failed"
mount -o loop "$KT_WORK/img/big.img" "$BIG" || fail "mount of the big image failed"
chmod 755 "$BIG"
names=() mounted=()
for ((i = 0; i < N; i++)); do printf -v 'names[i]' 's%05d' "$i"; done
for ((i = 0; i < MOUNTED; i++)); do printf -v 'mounted[i]' 'm%02d' "$i"; done
extra=()
for ((i = 1; i <= ROUNDS + BIG_ROUNDS + 2; i++)); do extra+=("u$i" "a$i" "b$i"); done
(cd "$BIG" && mkdir "${names[@]}" "${mounted[@]}" "${extra[@]}") || fail "mkdir on $BIG failed"
line() { echo "$1 *($EXPORT_OPTS)"; }
{
  for s in "${mounted[@]}"; do line "$BIG/$s"; done
  line /srv/data
  line /srv/rep
} >"$KT_WORK/base.exports"
{
  echo "create g -o rw"
  for s in "${mounted[@]}"; do echo "add-share -s $BIG/$s g"; done
  echo "add-share -s /srv/data g"
  echo "add-share -s /srv/rep g"
} >"$KT_WORK/base.batch"
for s in "${names[@]}"; do line "$BIG/$s"; done >"$KT_WORK/big.exports"
for s in "${names[@]}"; do echo "add-share -s $BIG/$s g"; done >"$KT_WORK/big.batch"
for s in "${names[@]}"; do echo "remove-share -s $BIG/$s g"; done >"$KT_WORK/big_rm.batch"
LAST=${names[N - 1]}
unset names

kt_fs data
echo "written before the failover" >/srv/data/file
kt_fs rep
echo "written before the failover" >/srv/rep/file
umount /srv/rep
cp --sparse=always "$KT_WORK/img/rep.img" "$KT_WORK/img/rep-copy.img"
tune2fs -U random "$KT_WORK/img/rep-copy.img" >/dev/null 2>&1 ||
  { e2fsck -fy "$KT_WORK/img/rep-copy.img" >/dev/null 2>&1
    tune2fs -U random "$KT_WORK/img/rep-copy.img" >/dev/null; } || fail "tune2fs -U on the copy failed"
[[ $(blkid -s UUID -o value "$KT_WORK/img/rep.img") != "$(blkid -s UUID -o value "$KT_WORK/img/rep-copy.img")" ]] ||
  fail "the copy has the original's uuid"
mount -o loop "$KT_WORK/img/rep.img" /srv/rep || fail "mount of rep.img failed"
mkdir -p /srv/ha "$M"

step "network: A (root), B (headB), the client (cl)"
kt_failover_net

# ---------------------------------------------------------------- heads

PEER= SES= PGDIR= URL= KT_B_PID= HA_DIR= HA=()
RESP_PID=  # A's responder

# rpcbind keeps a dead responder's registration: dropped before the next
# one registers, so that kt_wait_mount_registered waits for the new one.
forget_mountd() {
  local v
  for v in 1 2 3; do rpcinfo -d 100005 "$v" 2>/dev/null; done
  return 0
}

a_up() {
  forget_mountd
  if [[ $PEER == mountd ]]; then
    KT_LOG=$KT_WORK/mountd.log
    rpc.mountd -F >>"$KT_LOG" 2>&1 &
    RESP_PID=$!
    KT_MOUNTD_PID=$RESP_PID
    echo "$RESP_PID" >"$KT_STATE/mountd.pid"
    kt_wait_mount_registered rpc.mountd "$RESP_PID"
  else
    KT_SM_DB=$KT_WORK/a.db kt_sharemgrd_start --store "$URL" --head a
    RESP_PID=$KT_SHAREMGRD_PID
  fi
}

a_kill() {
  kill -KILL "$RESP_PID" 2>/dev/null
  wait "$RESP_PID" 2>/dev/null || true
  RESP_PID= KT_MOUNTD_PID= KT_SHAREMGRD_PID=
  rm -f "$KT_STATE/mountd.pid" "$KT_STATE/sharemgrd.pid"
  return 0
}

gen_of() {  # SOCKET -> the table generation that head serves
  local out
  out=$("$SHARECTL" --socket "$1" --json stats 2>/dev/null) || return 1
  [[ $out =~ \"generation\":[[:space:]]*([0-9]+) ]] || return 1
  echo "${BASH_REMATCH[1]}"
}

# Waits until A's generation is at least G.
a_at() {  # G
  local i g
  for ((i = 0; i < 6000; i++)); do
    g=$(gen_of "$KT_SM_SOCKET") && ((g >= $1)) && return 0
  done
  fail "A not at generation $1 (at ${g:-?})"
}

b_up() {
  local setup="mount -o loop '$KT_WORK/img/rep-copy.img' /srv/rep"
  if [[ $PEER == mountd ]]; then
    kt_head_b_mountd_start "$(cat "$KT_WORK/base.exports")" "$setup"
  else
    kt_head_b_start "$URL" "$setup"
    local g
    g=$(gen_of "$KT_SM_SOCKET")
    kt_wait_until 60 "B at A's generation $g" \
      bash -c "g=\$('$SHARECTL' --socket '$KT_WORK/b.sock' --json stats | jq -r .generation); ((g >= $g))"
  fi
  echo "$KT_B_PID" >"$KT_STATE/head-b.pid"
}


# A takes the address (a fresh records folder: no client to reclaim, so
# nfsd skips its grace period).
a_takes() {  # NAME of the records folder
  HA_DIR=/srv/ha/$1
  HA=(--address "$KT_SVC/32" --recovery-dir "$HA_DIR" --grace "$GRACE" --threads 4)
  mkdir -p "$HA_DIR"
  local out sock=()
  [[ $PEER == sharemgr ]] && sock=(--socket "$KT_SM_SOCKET")
  out=$("$TAKEOVER" start "${HA[@]}" --interface a0 --pipefs /run/rpc_pipefs "${sock[@]}" 2>&1) ||
    fail "takeover on A: $out"
  kt_client_via a
  reaches "A"
}

# Waits until the client opens a TCP connection to nfsd on the service
# address; on failure prints the network's state.
reaches() {  # HEAD
  local i
  for ((i = 0; i < 30; i++)); do
    ip netns exec cl timeout 2 bash -c "exec 3<>/dev/tcp/$KT_SVC/2049" 2>/dev/null && return 0
    sleep 1
  done
  echo "--- A: $(ip -o addr show dev a0) / $(ip route show | tr '\n' ';')"
  echo "--- B: $(ip -n headB -o addr show dev b0) / $(ip -n headB route show | tr '\n' ';')"
  echo "--- cl: $(ip -n cl route show | tr '\n' ';') / $(ip -n cl neigh show | tr '\n' ';')"
  echo "--- A listening: $(ss -ltn | grep -c ':2049 ') on 2049; nfsd threads $(cat /proc/fs/nfsd/threads)"
  fail "the client does not reach $1 ($KT_SVC:2049) within 30 s"
}

b_takes() {
  local sock=()
  [[ $PEER == sharemgr ]] && sock=(--socket "$KT_WORK/b.sock")
  kt_in_b "$TAKEOVER" start "${HA[@]}" --interface b0 --pipefs /run/rpc_pipefs "${sock[@]}"
}

# ---------------------------------------------------------------- changes

# One change made on B and carried to A. Records WHAT_cmd and
# WHAT_follow; returns when A has it.
#   add1 NAME  one share; addbig: the FB_OPS shares; rmbig: them removed
change() {  # WHAT ROUND KIND [NAME]
  local what=$1 r=$2 kind=$3 name=${4:-} t0 t1 t2 g edit out
  case $PEER:$kind in
    mountd:add1) edit="echo '$(line "$BIG/$name")' >>/etc/exports" ;;
    mountd:addbig) edit="cat '$KT_WORK/big.exports' >>/etc/exports" ;;
    mountd:rmbig) edit="grep -v '^$BIG/s[0-9]' /etc/exports >\$1.tmp; cat \$1.tmp >/etc/exports" ;;
  esac
  [[ $kind == add1 ]] && echo "add-share -s $BIG/$name g" >"$KT_WORK/add1.batch"
  t0=$(now)
  if [[ $PEER == mountd ]]; then
    kt_in_b bash -c "$edit && exportfs -ra" - "$KT_WORK/b.exports" || fail "edit and exportfs -ra on B"
    bash -c "$edit && exportfs -ra" - "$KT_WORK/a.exports" || fail "edit and exportfs -ra on A"
    t1=$(now)
    t2=$t1
  else
    case $kind in
      add1) out=$(kt_in_b "$SHARECTL" --socket "$KT_WORK/b.sock" batch "$KT_WORK/add1.batch" 2>&1) ;;
      addbig) out=$(kt_in_b "$SHARECTL" --socket "$KT_WORK/b.sock" batch "$KT_WORK/big.batch" 2>&1) ;;
      rmbig) out=$(kt_in_b "$SHARECTL" --socket "$KT_WORK/b.sock" batch "$KT_WORK/big_rm.batch" 2>&1) ;;
    esac || fail "$kind on B: $out"
    t1=$(now)
    [[ $out =~ generation\ ([0-9]+) ]] || fail "no generation in B's batch reply: $out"
    g=${BASH_REMATCH[1]}
    a_at "$g"
    t2=$(now)
  fi
  record "$SES" "$PEER" "${what}_cmd" "$r" "$(elapsed "$t0" "$t1")"
  record "$SES" "$PEER" "${what}_follow" "$r" "$(elapsed "$t0" "$t2")"
  CHANGE_T0=$t0
}

# Mounts NAME (under BIG) through A over NFSv4.2, retrying every 0.1 s.
mount_until() {  # NAME [EXTRA]
  local i err KT_MOUNT_TIMEOUT=120 t0=$SECONDS
  for ((i = 0; SECONDS - t0 < 300; i++)); do
    err=$(KT_NS=cl kt_mount 4.2 "$KT_SVC:$BIG/$1" "$M/$1" "${2:-}" 2>&1) && return 0
    sleep 0.1
  done
  kt_dump_caches
  fail "mount of $BIG/$1 through A did not succeed within 300 s: $err"
}

stat_mounted() {
  local s
  for s in "${mounted[@]}"; do
    [[ -d $M/$s/. ]] || fail "stat of $M/$s failed"
  done
}

serve_round() {  # WHAT ROUND KIND NAME(mounted)
  local t1
  sleep 1.1  # a flush in the same second as an entry's refresh drops it
  change "$1" "$2" "$3" "$4"
  mount_until "$4"
  t1=$(now)
  record "$SES" "$PEER" "$1" "$2" "$(elapsed "$CHANGE_T0" "$t1")"
  kt_umount "$M/$4"
}

again_round() {  # WHAT ROUND NAME(added)
  local t0 t1
  sleep 1.1
  stat_mounted
  t0=$(now); stat_mounted; t1=$(now)
  record "$SES" "$PEER" "$1_floor" "$2" "$(elapsed "$t0" "$t1")"
  local flushed
  flushed=$(kt_flush_time nfsd.export)
  change "$1_change" "$2" add1 "$3"
  t0=$(now); stat_mounted; t1=$(now)
  record "$SES" "$PEER" "$1" "$2" "$(elapsed "$t0" "$t1")"
  # Whether A's nfsd.export cache was flushed by the change (1) or not (0).
  record "$SES" "$PEER" "$1_flushed" "$2" $(( $(kt_flush_time nfsd.export) != flushed ))
}

# ---------------------------------------------------------------- failover

# The reader's outcome after the kill at T0: "STALL FROM_KILL" once a
# read succeeded after T0, "E NAME" once an error has lasted FAIL_WAIT s,
# nothing while neither.
reader_outcome() {  # OUTPUT T0
  awk -v t0="$2" -v wait="$FAIL_WAIT" -v now="$(now)" '
    $1 == "gap" && $3 > t0 { printf "%.3f %.3f\n", $3 - $2, $3 - t0; done = 1; exit }
    $1 == "err" && $3 > t0 { err = $2; since = $3 }
    END { if (!done && err != "" && now - since > wait) print "E " err }' "$1"
}

failover() {  # STORAGE(shared|replica)
  local storage=$1 dir=/srv/data v t0 t1 out res i
  [[ $storage == replica ]] && dir=/srv/rep
  step "$PEER: failover, $storage storage ($dir)"
  KT_NS=cl kt_must_mount 3 "$KT_SVC:$dir" "$M/fo3" hard
  KT_NS=cl kt_must_mount 4.2 "$KT_SVC:$dir" "$M/fo4" hard
  local -A rpid
  for v in 3 4; do
    python3 -u "$READER" "$M/fo$v/file" >"$KT_WORK/reader$v.$storage" 2>&1 &
    rpid[$v]=$!
    kt_wait_until 20 "the v$v reader's first read" grep -q '^ok' "$KT_WORK/reader$v.$storage"
  done
  kt_wait_until 20 "the NFSv4 client's record in $HA_DIR" kt_nfsdcld_records "$HA_DIR"
  sleep 2
  t0=$(now)
  a_kill
  "$TAKEOVER" stop "${HA[@]}" --interface a0 >/dev/null || fail "takeover stop on A"
  out=$(b_takes 2>&1) || fail "takeover on B: $out"
  t1=$(now)
  kt_client_via b
  record "$SES" "$PEER" "fo_${storage}_takeover" 1 "$(elapsed "$t0" "$t1")"
  local done_v=
  for ((i = 0; i < 1200 && ${#done_v} < 4; i++)); do
    sleep 0.1
    for v in 3 4; do
      [[ $done_v == *$v* ]] && continue
      res=$(reader_outcome "$KT_WORK/reader$v.$storage" "$t0")
      [[ -n $res ]] || continue
      if [[ $res == E\ * ]]; then
        record "$SES" "$PEER" "fo_${storage}_v$v" 1 "${res#E }"
        record "$SES" "$PEER" "fo_${storage}_v${v}_kill" 1 "${res#E }"
        # The open file failed: a fresh look-up of it through the mount.
        if out=$(timeout 20 stat -c %i "$M/fo$v/file" 2>&1); then
          record "$SES" "$PEER" "fo_${storage}_v${v}_lookup" 1 ok
        else
          [[ $out == *"Stale file handle"* ]] && out=ESTALE || out=failed
          record "$SES" "$PEER" "fo_${storage}_v${v}_lookup" 1 "$out"
        fi
      else
        record "$SES" "$PEER" "fo_${storage}_v$v" 1 "${res% *}"
        record "$SES" "$PEER" "fo_${storage}_v${v}_kill" 1 "${res#* }"
      fi
      echo "$PEER $storage v$v: $res"
      done_v+=" $v"
    done
  done
  for v in 3 4; do
    [[ $done_v == *$v* ]] || record "$SES" "$PEER" "fo_${storage}_v$v" 1 none_in_120s
  done
  for v in 3 4; do
    kill -TERM "${rpid[$v]}" 2>/dev/null
    wait "${rpid[$v]}" 2>/dev/null || true
    cp "$KT_WORK/reader$v.$storage" "$OUT/reader.$SES.$PEER.$storage.v$v"
    timeout 20 umount -f "$M/fo$v" 2>/dev/null || umount -l "$M/fo$v"
  done
}

# ---------------------------------------------------------------- a session

teardown() {
  local m
  set +e
  cp "$KT_WORK"/*.log "$KT_WORK"/headb.sh "$OUT/" 2>/dev/null
  for m in $(awk '$3 == "nfs" || $3 == "nfs4" {print $2}' /proc/mounts | sort -r); do
    timeout 20 umount -f "$m" 2>/dev/null || umount -l "$m"
  done
  if [[ -n $KT_B_PID ]]; then
      kt_in_b "$TAKEOVER" stop "${HA[@]}" --interface b0 >/dev/null 2>&1
    ip netns pids headB 2>/dev/null | xargs -r kill -KILL
    wait "$KT_B_PID" 2>/dev/null
    KT_B_PID=
    rm -f "$KT_STATE/head-b.pid"
  fi
  [[ -n $RESP_PID ]] && { kill -TERM "$RESP_PID"; wait "$RESP_PID"; }
  RESP_PID= KT_MOUNTD_PID= KT_SHAREMGRD_PID=
  rm -f "$KT_STATE/mountd.pid" "$KT_STATE/sharemgrd.pid"
  forget_mountd
  [[ -n $HA_DIR ]] && "$TAKEOVER" stop "${HA[@]}" --interface a0 >/dev/null 2>&1
  : >/etc/exports
  exportfs -au
  kt_flush_all
  [[ -n $PGDIR ]] && "$PG" stop "$PGDIR" immediate >/dev/null 2>&1
  PGDIR=
  # As guest.sh starts A's nfsd, for the next session.
  rpc.nfsd 0
  rpc.nfsd -G 10 4
  echo Y >/proc/fs/nfsd/v4_end_grace
  kt_wait_flush_past
  set -e
}

session() {  # SESSION PEER
  SES=$1 PEER=$2
  local r s
  step "session $SES: $PEER"
  rm -f "$KT_WORK"/a.db* "$KT_WORK"/b.db* "$KT_WORK"/*sharetab
  if [[ $PEER == mountd ]]; then
    cp "$KT_WORK/base.exports" /etc/exports
    exportfs -ra || fail "exportfs -ra of the base exports on A"
    a_up
  else
    PGDIR=$KT_WORK/pg.$SES
    rm -rf "$PGDIR"
    URL=$("$PG" start "$PGDIR") || fail "PostgreSQL did not start"
    a_up
    kt_sc batch "$KT_WORK/base.batch" >/dev/null || fail "the base batch on A"
  fi
  b_up
  a_takes "$SES.$PEER.1"

  if [[ " $PARTS " == *" serve "* ]]; then
    step "$PEER: $MOUNTED shares mounted through A"
    for s in "${mounted[@]}"; do mount_until "$s" actimeo=0; done
    stat_mounted

    for ((r = 1; r <= ROUNDS; r++)); do
      step "$PEER: round $r: one add on B, 20 stats through A; one add on B until A mounts it"
      again_round again_small "$r" "a$r"
      serve_round serve1 "$r" add1 "u$r"
    done
    step "$PEER: $N adds on B until A mounts the last"
    serve_round serveN 1 addbig "$LAST"
    for ((r = 1; r <= BIG_ROUNDS; r++)); do
      step "$PEER: round $r beside $N: one add on B, 20 stats through A"
      again_round again_big "$r" "b$r"
    done
    step "$PEER: the $N removed again (not timed)"
    change rmbig 1 rmbig
    for s in "${mounted[@]}"; do kt_umount "$M/$s"; done
  fi
  if [[ " $PARTS " == *" failover "* ]]; then
    failover shared
    if ((REPLICA)); then
      step "$PEER: back to A (fresh records) for the replica failover"
      kt_in_b "$TAKEOVER" stop "${HA[@]}" --interface b0 >/dev/null || fail "takeover stop on B"
      a_up
      a_takes "$SES.$PEER.2"
      failover replica
    fi
  fi
  [[ $PEER == sharemgr ]] && kt_in_b "$SHARECTL" --socket "$KT_WORK/b.sock" --json stats >"$OUT/stats_b.$SES.json"
  step "$PEER: teardown"
  teardown
}

restore() {
  local st=$?
  set +e
  teardown
  set +e
  kt_failover_net_del
  kt_reset
  exit "$st"
}
trap restore EXIT

other=sharemgr
[[ $FIRST == sharemgr ]] && other=mountd
for ((k = 1; k <= SESSIONS; k++)); do
  if ((k % 2)); then
    session "$k" "$FIRST"
    session "$k" "$other"
  else
    session "$k" "$other"
    session "$k" "$FIRST"
  fi
done
echo ok
