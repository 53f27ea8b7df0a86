# Helpers for the kernel scenarios, sourced inside the QEMU guest that
# tests/kernel/guest.sh boots (rpcbind and nfsd already run there).
#
#   source "$(dirname "$0")/../../support/kernel/lib.sh"
#   kt_setup                                  # work folder, exit trap
#   kt_fs data                                # ext4 image mounted on /srv/data
#   kt_mountd_start '/srv/data 127.0.0.1(rw,no_subtree_check)'
#   kt_mount 3 127.0.0.1:/srv/data /mnt/v3    # kernel NFS client, v3
#   kt_assert_rw /mnt/v3 /srv/data
#
# The server is 127.0.0.1. kt_second_client makes 127.0.0.3 a server
# address that the server sees as the client 127.0.0.2 (a second client on
# one guest). Every helper fails loudly; fail prints what went wrong and
# the tail of the responder's log. Executed as `bash lib.sh reset`, it
# clears what a scenario may have left (guest.sh runs it after each one).

set -euo pipefail

KT_SRC=${KT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
SHAREMGRD=${SHAREMGRD:-$KT_SRC/build/bin/sharemgrd}
SHARECTL=${SHARECTL:-$KT_SRC/build/bin/sharectl}
KT_STATE=/run/kt            # pids and mounts to clean, across scenarios
KT_LOG=                     # the responder's log, shown on failure
KT_MOUNTD_PID=
KT_SHAREMGRD_PID=
KT_CLIENT2_SERVER=127.0.0.3 # mount this address to be the client 127.0.0.2
KT_CLIENT2=127.0.0.2

# ---------------------------------------------------------------- asserts

fail() {
  echo "FAIL: $(basename "$0"): $*" >&2
  if [[ -n $KT_LOG && -f $KT_LOG ]]; then
    echo "--- $KT_LOG, last lines:" >&2
    tail -n 30 "$KT_LOG" >&2 || true
  fi
  echo "--- dmesg, last lines:" >&2
  dmesg | tail -n 10 >&2 || true
  exit 1
}

skip() {
  echo "SKIP: $*"
  exit 77
}

step() { echo "--- $(cut -d' ' -f1 /proc/uptime) s: $*"; }

assert_eq() {  # EXPECTED ACTUAL [WHAT]
  [[ $1 == "$2" ]] || fail "${3:-value}: expected '$1', got '$2'"
}

assert_contains() {  # HAYSTACK NEEDLE [WHAT]
  [[ $1 == *"$2"* ]] || fail "${3:-output}: '$2' not found in: $1"
}

assert_not_contains() {  # HAYSTACK NEEDLE [WHAT]
  [[ $1 != *"$2"* ]] || fail "${3:-output}: '$2' unexpectedly found in: $1"
}

# Runs COMMAND, which must fail; its error output must contain NEEDLE
# (empty: any failure). Sets KT_ERR to that output.
assert_fails() {  # NEEDLE WHAT COMMAND...
  local needle=$1 what=$2
  shift 2
  if KT_ERR=$("$@" 2>&1); then
    fail "$what: succeeded but must fail ($*)"
  fi
  [[ -z $needle || $KT_ERR == *"$needle"* ]] ||
    fail "$what: failed, but without '$needle': $KT_ERR"
}

# ---------------------------------------------------------------- setup

# Own work folder (KT_WORK), exit trap that cleans what the scenario made.
kt_setup() {
  KT_NAME=$(basename "$0" .sh)
  KT_WORK=/tmp/kt/$KT_NAME
  rm -rf "$KT_WORK"
  mkdir -p "$KT_WORK" "$KT_STATE"
  chmod 755 "$KT_WORK"
  trap 'kt_cleanup' EXIT
  trap 'exit 130' INT TERM
  step "$KT_NAME: start"
}

kt_cleanup() {
  local rc=$?
  set +e
  kt_reset
  exit "$rc"
}

# Detaches what an OpenZFS-flow run mounted, before kt_reset: the NFS
# client mounts, sharectl bind-mounted over /usr/sbin/exportfs, and the
# thousands of dataset mounts below TANK in one kt_zfs process (kt_reset
# would run one umount each).
kt_detach_datasets() {  # TANK
  local m
  for m in $(awk '($3 == "nfs" || $3 == "nfs4") {print $2}' /proc/mounts | sort -r); do
    umount -f "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  umount /usr/sbin/exportfs 2>/dev/null
  [[ -x ${KT_ZFS:-} ]] && "$KT_ZFS" umount-all "$1"
  return 0
}

# Kills the daemons recorded, unmounts NFS and then the loop file systems,
# drops the exports and the kernel's cached entries. Safe to run twice.
kt_reset() {
  local p m
  for m in $(awk '($3 == "nfs" || $3 == "nfs4") {print $2}' /proc/mounts | sort -r); do
    step "reset: umount $m"
    umount -f "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  step "reset: daemons"
  kt_mountd_stop
  kt_sharemgrd_stop >/dev/null 2>&1
  if [[ -d $KT_STATE ]]; then
    for p in $(cat "$KT_STATE"/*.pid 2>/dev/null); do
      kill -KILL "$p" 2>/dev/null
    done
    rm -f "$KT_STATE"/*.pid
  fi
  step "reset: exports"
  exportfs -au 2>/dev/null
  : >/etc/exports
  rm -f /etc/exports.d/*
  kt_flush_all
  kt_wait_flush_past
  for m in $(awk '$2 ~ /^\/srv\// {print $2}' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  losetup -D 2>/dev/null
  step "reset: done"
  ip route del local "$KT_CLIENT2_SERVER/32" table local 2>/dev/null
  for p in $(cat "$KT_STATE/netns" 2>/dev/null); do
    ip netns del "$p" 2>/dev/null
  done
  rm -f "$KT_STATE/netns"
  for p in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$p" 2>/dev/null
  done
  rm -rf /tmp/kt /srv/* 2>/dev/null
  return 0
}

# Writes the flush file of every nfsd cache (what exportfs -f does).
kt_flush_all() {
  local c
  for c in auth.unix.ip auth.unix.gid nfsd.fh nfsd.export; do
    [[ -w /proc/net/rpc/$c/flush ]] && date +%s >"/proc/net/rpc/$c/flush"
  done
  return 0
}

# Waits (at most 120 s) until the clock has passed every cache's flush
# time. Each flush within the flush time's second moves it a second on, so
# a run of `exportfs -ra` (rpc.mountd's way, once per dataset) leaves it
# ahead of the clock, and until the clock passes it the kernel drops every
# answer as soon as it is written: the next scenario's first mount would
# wait that long (seen: 39 s after the OpenZFS flow's 80 rpc.mountd
# creates). Prints the wait when it was more than a second.
kt_wait_flush_past() {
  local c t latest i
  for ((i = 0; i < 1200; i++)); do
    latest=0
    for c in auth.unix.ip auth.unix.gid nfsd.fh nfsd.export; do
      t=$(cat "/proc/net/rpc/$c/flush" 2>/dev/null) || continue
      ((t > latest)) && latest=$t
    done
    (($(date +%s) > latest)) && break
    sleep 0.1
  done
  ((i > 10)) && echo "reset: waited $((i / 10)) s for the kernel's flush time to pass"
  return 0
}

# Makes an ext4 image of SIZE_MB (default 16) in the guest's tmpfs and
# mounts it on MOUNTPOINT (default /srv/NAME); nfsd cannot export 9p or
# tmpfs without an fsid, so exported trees live on these. Prints nothing.
kt_fs() {  # NAME [MOUNTPOINT] [SIZE_MB]
  local name=$1 mnt=${2:-/srv/$1} size=${3:-16}
  mkdir -p "$KT_WORK/img" "$mnt"
  local img=$KT_WORK/img/$name.img
  truncate -s "${size}M" "$img"
  mkfs.ext4 -q -F -O ^has_journal -N 128 -m 0 "$img" || fail "mkfs.ext4 $img failed"
  mount -o loop "$img" "$mnt" || fail "mount of $img on $mnt failed"
  chmod 755 "$mnt"
}

# 127.0.0.3 becomes a local address whose outgoing source is 127.0.0.2: a
# mount of 127.0.0.3:PATH reaches the server as the client 127.0.0.2.
kt_second_client() {
  ip route replace local "$KT_CLIENT2_SERVER/32" dev lo src "$KT_CLIENT2" table local ||
    fail "cannot add the route for the second client address"
}

# A client in its own network namespace NAME, joined to the server by a
# veth pair: the server is 10.99.N.1, the client 10.99.N.2 (N = 1..250).
# Needed for a second NFSv4 client: the v4 client of one namespace merges
# mounts of every address of the same server into one client (trunking
# detection), so 127.0.0.3 mounted after 127.0.0.1 is still 127.0.0.1.
# Mount from it with KT_NS=NAME kt_mount ...; sets KT_NS_SERVER_<NAME>.
kt_netns_client() {  # NAME N
  local ns=$1 n=$2
  ip netns add "$ns" || fail "ip netns add $ns failed"
  echo "$ns" >>"$KT_STATE/netns"
  ip link add "kt$n" type veth peer name "kt${n}c" || fail "veth for $ns failed"
  ip link set "kt${n}c" netns "$ns"
  ip addr add "10.99.$n.1/24" dev "kt$n"
  ip link set "kt$n" up
  ip -n "$ns" addr add "10.99.$n.2/24" dev "kt${n}c"
  ip -n "$ns" link set "kt${n}c" up
  ip -n "$ns" link set lo up
  local i
  for ((i = 0; i < 50; i++)); do
    nsenter "--net=/run/netns/$ns" timeout 2 bash -c "exec 3<>/dev/tcp/10.99.$n.1/111" \
      2>/dev/null && return 0
    sleep 0.1
  done
  fail "namespace $ns cannot reach 10.99.$n.1"
}

# ---------------------------------------------------------------- responders

# Writes EXPORTS_TEXT to /etc/exports, runs exportfs -ra and starts
# rpc.mountd in the foreground (log: KT_WORK/mountd.log). Waits until it
# is registered with rpcbind.
kt_mountd_start() {  # EXPORTS_TEXT [rpc.mountd ARGS]
  printf '%s\n' "$1" >/etc/exports
  shift
  KT_LOG=$KT_WORK/mountd.log
  exportfs -ra >>"$KT_LOG" 2>&1 || fail "exportfs -ra failed: $(cat "$KT_LOG")"
  rpc.mountd -F --debug auth "$@" >>"$KT_LOG" 2>&1 &
  KT_MOUNTD_PID=$!
  echo "$KT_MOUNTD_PID" >"$KT_STATE/mountd.pid"
  kt_wait_mount_registered rpc.mountd "$KT_MOUNTD_PID"
}

# Changes /etc/exports and makes the running rpc.mountd see it.
kt_mountd_reexport() {  # EXPORTS_TEXT
  printf '%s\n' "$1" >/etc/exports
  exportfs -ra >>"$KT_LOG" 2>&1 || fail "exportfs -ra failed"
}

kt_mountd_stop() {
  [[ -n $KT_MOUNTD_PID ]] || return 0
  kill -TERM "$KT_MOUNTD_PID" 2>/dev/null || true
  wait "$KT_MOUNTD_PID" 2>/dev/null || true
  KT_MOUNTD_PID=
  rm -f "$KT_STATE/mountd.pid"
}

kt_wait_mount_registered() {  # WHO PID
  local i
  for ((i = 0; i < 300; i++)); do
    [[ $(rpcinfo -p 127.0.0.1 2>/dev/null) == *" mountd"* ]] && return 0
    kill -0 "$2" 2>/dev/null || fail "$1 exited before it registered MOUNT"
    sleep 0.1
  done
  fail "$1 did not register MOUNT with rpcbind within 30 s"
}

# True when the sharemgrd under test has the kernel mode.
kt_sharemgrd_has_kernel() {
  [[ -x $SHAREMGRD && $("$SHAREMGRD" --help 2>&1) == *--kernel* ]]
}

# Starts sharemgrd --kernel=on in the foreground on this scenario's db,
# socket and sharetab, registered with rpcbind (mount.nfs finds MOUNT
# there). Extra arguments go to sharemgrd. Waits for its serving line.
kt_sharemgrd_start() {  # [ARGS]
  [[ -x $SHAREMGRD ]] || fail "sharemgrd not built: $SHAREMGRD"
  KT_SM_DB=${KT_SM_DB:-$KT_WORK/shares.db}
  KT_SM_SOCKET=$KT_WORK/sharemgrd.sock
  KT_LOG=$KT_WORK/sharemgrd.log
  echo "=== start: $SHAREMGRD --kernel=on $*" >>"$KT_LOG"
  "$SHAREMGRD" --kernel=on --foreground --db "$KT_SM_DB" \
    --socket "$KT_SM_SOCKET" --sharetab "$KT_WORK/sharetab" \
    --pid-file "$KT_WORK/sharemgrd.pid" "$@" 2>>"$KT_LOG" &
  KT_SHAREMGRD_PID=$!
  echo "$KT_SHAREMGRD_PID" >"$KT_STATE/sharemgrd.pid"
  local i from
  from=$(grep -n '^=== start' "$KT_LOG" | tail -n1 | cut -d: -f1)
  for ((i = 0; i < 600; i++)); do
    [[ $'\n'$(tail -n +"$from" "$KT_LOG") == *$'\nsharemgrd: serving'* ]] && break
    kill -0 "$KT_SHAREMGRD_PID" 2>/dev/null || fail "sharemgrd exited before serving"
    sleep 0.1
  done
  ((i < 600)) || fail "sharemgrd did not serve within 60 s"
  kt_wait_mount_registered sharemgrd "$KT_SHAREMGRD_PID"
}

kt_sharemgrd_stop() {  # -> the daemon's exit code
  [[ -n $KT_SHAREMGRD_PID ]] || return 0
  local rc=0
  kill -TERM "$KT_SHAREMGRD_PID" 2>/dev/null || true
  wait "$KT_SHAREMGRD_PID" || rc=$?
  KT_SHAREMGRD_PID=
  rm -f "$KT_STATE/sharemgrd.pid"
  return "$rc"
}

# sharectl against the scenario's daemon.
kt_sc() {
  "$SHARECTL" --socket "$KT_SM_SOCKET" "$@"
}

# ---------------------------------------------------------------- client

# Mounts with the kernel NFS client, VERS 3 or 4.2 (or 4.1, 4.0). Fails
# fast instead of retrying (retry=0, soft) and never waits more than
# KT_MOUNT_TIMEOUT (default 40) seconds. Returns mount's status; its
# messages go to stderr. With KT_NS=NAME the client is in that network
# namespace (kt_netns_client); the mount itself is in the scenario's.
kt_mount() {  # VERS SERVER:PATH MOUNTPOINT [EXTRA_OPTS]
  local vers=$1 what=$2 mnt=$3 extra=${4:-}
  local opts="vers=$vers,soft,timeo=100,retrans=2,retry=0"
  [[ $vers == 3 ]] && opts+=",nolock"   # no rpc.statd in the guest
  [[ -n $extra ]] && opts+=",$extra"
  mkdir -p "$mnt"
  local ns=()
  [[ -n ${KT_NS:-} ]] && ns=(nsenter "--net=/run/netns/$KT_NS")
  local rc=0
  local verbose=()
  [[ -n ${KT_MOUNT_VERBOSE:-} ]] && verbose=(-v)
  timeout -k 5 "${KT_MOUNT_TIMEOUT:-40}" "${ns[@]}" mount "${verbose[@]}" -t nfs -o "$opts" "$what" "$mnt" || rc=$?
  if [[ $rc == 124 || $rc == 137 ]]; then
    echo "mount -o $opts $what: no answer within ${KT_MOUNT_TIMEOUT:-40} s (killed)" >&2
  fi
  return "$rc"
}

# Mounts or fails the scenario.
kt_must_mount() {  # VERS SERVER:PATH MOUNTPOINT [EXTRA_OPTS]
  local err
  if ! err=$(KT_MOUNT_VERBOSE=1 kt_mount "$@" 2>&1); then
    kt_dump_caches
    fail "mount v$1 of $2 on $3 failed: $err"
  fi
  kt_is_nfs_mount "$3" || fail "mount v$1 of $2 succeeded but $3 is no NFS mount"
}

# What the kernel holds, for a failure's log: every cache's entries with
# their expiry and flags (sunrpc's cache debugging on while read: flags 1
# valid, 2 negative, 4 pending), the flush times, and sharemgrd's view.
kt_dump_caches() {
  local c dbg=/proc/sys/sunrpc/rpc_debug old=
  [[ -w $dbg ]] && old=$(cat "$dbg") && echo $((old | 0x800)) >"$dbg"
  for c in auth.unix.ip auth.unix.gid nfsd.fh nfsd.export; do
    echo "--- /proc/net/rpc/$c/content (flush $(cat "/proc/net/rpc/$c/flush" 2>/dev/null), now $(date +%s)):"
    # (an empty cache is no reason to end the scenario before its message)
    { grep -v '^#path\|^#class\|^#domain\|^#uid' "/proc/net/rpc/$c/content" 2>&1 || true; } |
      tail -n 12
  done
  [[ -n $old ]] && echo "$old" >"$dbg"
  if [[ -n $KT_SHAREMGRD_PID && -S ${KT_SM_SOCKET:-} ]]; then
    echo "--- sharemgrd kernel stats: $(timeout 10 "$SHARECTL" --socket "$KT_SM_SOCKET" --json stats 2>&1 | jq -c .kernel 2>&1)"
  fi
  echo "--- rpcbind: $(rpcinfo -p 127.0.0.1 2>&1 | awk '$5 == "mountd" || $5 == "nfs" {print $3 "/" $2 ":" $4}' | sort -u | tr '\n' ' ')"
}

kt_is_nfs_mount() {  # MOUNTPOINT
  awk -v m="$1" '$2 == m && ($3 == "nfs" || $3 == "nfs4") {found = 1} END {exit !found}' /proc/mounts
}

# The mount must fail; NEEDLE (may be empty) must be in mount's message.
kt_mount_refused() {  # NEEDLE VERS SERVER:PATH MOUNTPOINT [EXTRA_OPTS]
  local needle=$1
  shift
  assert_fails "$needle" "mount v$1 of $2" kt_mount "$@"
  ! kt_is_nfs_mount "$3" || fail "refused mount v$1 of $2 left an NFS mount on $3"
  echo "refused as expected: v$1 $2: $KT_ERR"
}

kt_umount() {  # MOUNTPOINT
  umount "$1" 2>/dev/null || umount -f "$1" 2>/dev/null || umount -l "$1"
}

# Writes a new file through the client and reads it on the server's file
# system, then the other way; both contents must match. File names are new
# at each call: the client caches the absence of a name it removed.
KT_RW_SEQ=0
kt_assert_rw() {  # CLIENT_DIR SERVER_DIR
  local c=$1 s=$2 tag n
  KT_RW_SEQ=$((KT_RW_SEQ + 1))
  n=$$.$KT_RW_SEQ
  tag="$(basename "$0") $n $(date +%s.%N)"
  echo "client $tag" >"$c/from-client.$n" || fail "write through $c failed"
  sync "$c/from-client.$n" 2>/dev/null || sync
  assert_eq "client $tag" "$(cat "$s/from-client.$n")" "client's write seen on the server ($s)"
  echo "server $tag" >"$s/from-server.$n"
  assert_eq "server $tag" "$(cat "$c/from-server.$n")" "server's file read through $c"
  rm -f "$c/from-client.$n" "$c/from-server.$n" || fail "remove through $c failed"
}

# A write through CLIENT_DIR must fail with NEEDLE in the error
# (e.g. "Read-only file system", "Permission denied").
kt_assert_write_refused() {  # CLIENT_DIR NEEDLE
  assert_fails "$2" "write into $1" bash -c "echo x >'$1/refused.$$'"
  echo "write refused as expected: $KT_ERR"
}

# uid:gid of a file.
kt_owner() { stat -c %u:%g "$1"; }

# ---------------------------------------------------------------- kernel caches

# What the kernel holds in one cache (auth.unix.ip, nfsd.fh, nfsd.export,
# auth.unix.gid); negative or expired entries start with "# ".
kt_cache_content() {  # CACHE
  cat "/proc/net/rpc/$1/content"
}

# When the cache was last flushed (seconds since the epoch; the kernel's
# wall clock), as the flush file reads.
kt_flush_time() {  # CACHE
  cat "/proc/net/rpc/$1/flush"
}

# The nfsd.export entries the kernel holds for PATH (positive ones), or
# nothing: "PATH<TAB>DOMAIN(options)" lines.
kt_export_entry() {  # PATH
  grep -v '^#' /proc/net/rpc/nfsd.export/content | awk -v p="$1" '$1 == p' || true
}

# True when a scenario left something behind (its exit trap did not run
# or did not finish): NFS or /srv mounts, recorded daemons or namespaces,
# exports.
kt_left_over() {
  awk '$3 == "nfs" || $3 == "nfs4" || $2 ~ /^\/srv\// {found = 1} END {exit !found}' /proc/mounts && return 0
  compgen -G "$KT_STATE/*.pid" >/dev/null && return 0
  [[ -s $KT_STATE/netns || -s /etc/exports ]] && return 0
  [[ -n $(ls /etc/exports.d 2>/dev/null) ]]
}

# Polls COMMAND every 0.1 s until it succeeds or SECONDS pass.
kt_wait_until() {  # SECONDS WHAT COMMAND...
  local limit=$1 what=$2 i
  shift 2
  for ((i = 0; i < limit * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  fail "$what: not true within $limit s ($*)"
}

if [[ ${BASH_SOURCE[0]} == "$0" && ${1:-} == reset ]]; then
  set +e
  if kt_left_over; then
    echo "--- the scenario left something behind; reset"
    kt_reset
  fi
  exit 0
fi

# ---------------------------------------------------------------- added helpers

# Like kt_fs, for many small directories: 1 KiB blocks and INODES inodes
# (kt_fs has 128), so 15,000 empty directories fit in a few tens of MB of
# the guest's tmpfs.
kt_fs_many() {  # NAME INODES SIZE_MB [MOUNTPOINT]
  local name=$1 inodes=$2 size=$3 mnt=${4:-/srv/$1}
  mkdir -p "$KT_WORK/img" "$mnt"
  local img=$KT_WORK/img/$name.img
  truncate -s "${size}M" "$img"
  mkfs.ext4 -q -F -O ^has_journal -b 1024 -N "$inodes" -m 0 "$img" ||
    fail "mkfs.ext4 $img failed"
  mount -o loop "$img" "$mnt" || fail "mount of $img on $mnt failed"
  chmod 755 "$mnt"
}

# Seconds since START (a `date +%s.%N`), one decimal.
kt_since() {  # START
  awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'
}

# The daemon's `sharectl --json stats` field under .kernel (upcalls,
# negative, pushed, flushes, answer_p99_us).
kt_kernel_stat() {  # FIELD
  kt_sc --json stats | jq -r ".kernel.$1"
}

# A client program holding DIR/file open (O_DIRECT) across a failover
# (held_file_client.py): started on DIR (in network namespace NS if
# given; NAME tells several apart, "held" if not given), asked one
# command at a time, stopped. Daemons started meanwhile inherit its
# command FIFO, so it is ended by "quit", not by the FIFO's end.
declare -A KT_HELD_PIDS KT_HELD_FDS
kt_held_client_start() {  # DIR [NS] [NAME]
  local ns=() name=${3:-held} fd
  [[ -n ${2:-} ]] && ns=(ip netns exec "$2")
  rm -f "$KT_WORK/$name.in" "$KT_WORK/$name.out"
  mkfifo "$KT_WORK/$name.in"
  "${ns[@]}" python3 -u "$KT_SRC/tests/support/kernel/held_file_client.py" "$1" \
    <"$KT_WORK/$name.in" >"$KT_WORK/$name.out" 2>&1 &
  KT_HELD_PIDS[$name]=$!
  exec {fd}>"$KT_WORK/$name.in"
  KT_HELD_FDS[$name]=$fd
  kt_wait_until 20 "the client opened $1/file" grep -q opened "$KT_WORK/$name.out"
}

# Sends COMMAND to the held client NAME; prints its answer (waits at most
# 120 s).
kt_held_client_ask() {  # COMMAND [NAME]
  local name=${2:-held} before
  before=$(wc -l <"$KT_WORK/$name.out")
  echo "$1" >&"${KT_HELD_FDS[$name]}"
  kt_wait_until 120 "the client $name's answer to $1" \
    bash -c "(( \$(wc -l <'$KT_WORK/$name.out') > $before ))"
  tail -n 1 "$KT_WORK/$name.out"
}

kt_held_client_stop() {  # [NAME]
  local name=${1:-held} fd
  fd=${KT_HELD_FDS[$name]}
  echo quit >&"$fd"
  exec {fd}>&-
  wait "${KT_HELD_PIDS[$name]}" || true
  unset "KT_HELD_PIDS[$name]" "KT_HELD_FDS[$name]"
}

# ---------------------------------------------------------------- two heads

# The failover network (issue 47): head A is the guest's root namespace,
# head B the network namespace headB, the client the namespace cl with a
# link to each (a0-ca to A, b0-cb to B; the guest kernel has no bridge
# module). The client reaches the service address KT_SVC through the
# link kt_client_via names; KT_CLIENT_ADDR is the client's address on both.
KT_SVC=10.88.0.10
KT_CLIENT_ADDR=10.88.0.3
kt_failover_net() {
  ip netns add headB
  ip netns add cl
  ip link add a0 type veth peer name ca netns cl
  ip link add b0 netns headB type veth peer name cb netns cl
  ip link set a0 up
  ip -n headB link set b0 up
  ip -n headB link set lo up
  ip -n cl addr add $KT_CLIENT_ADDR/32 dev ca
  ip -n cl addr add $KT_CLIENT_ADDR/32 dev cb
  ip -n cl link set ca up
  ip -n cl link set cb up
  ip -n cl link set lo up
  kt_client_via a
}

# The client's route to the service address through A's or B's link,
# its neighbours forgotten (what a bridge and a gratuitous ARP would do),
# and that head's route to the client (the kernel drops a link's routes
# with its last address, when a takeover's stop removed the service
# address). Call it once the head has the address.
kt_client_via() {  # a|b
  if [[ $1 == b ]]; then
    ip -n headB route replace $KT_CLIENT_ADDR/32 dev b0
    ip -n cl route replace $KT_SVC/32 dev cb src $KT_CLIENT_ADDR
  else
    ip route replace $KT_CLIENT_ADDR/32 dev a0
    ip -n cl route replace $KT_SVC/32 dev ca src $KT_CLIENT_ADDR
  fi
  ip -n cl neigh flush all
}

kt_failover_net_del() {
  ip netns pids headB 2>/dev/null | xargs -r kill -KILL
  ip netns del headB 2>/dev/null
  ip netns del cl 2>/dev/null
  ip link del a0 2>/dev/null
  return 0
}

# Head B: in network namespace headB, with a mount namespace of its own
# (nfsd's file system, a tmpfs /run with rpc_pipefs, its own rpcbind),
# sharemgrd --kernel=on --head b on the engine URL, its socket
# $KT_WORK/b.sock, its log $KT_WORK/b.log. SETUP is shell run there first
# (e.g. a replica mounted, or "rpc.nfsd -G 10 4"). KT_B_PID is sharemgrd's
# pid (kt_in_b runs a command in B's namespaces); kt_scb is sharectl on B.
kt_head_b_start() {  # URL [SETUP]
  kt_head_b_run "${2:-}" \
    "exec \"$SHAREMGRD\" --kernel=on --foreground --store \"$1\" --head b \\
  --db \"$KT_WORK/b.db\" --socket \"$KT_WORK/b.sock\" --sharetab \"$KT_WORK/b.sharetab\""
  kt_wait_until 30 "head B serving" grep -q '^sharemgrd: serving' "$KT_WORK/b.log"
}

# Head B as above with rpc.mountd instead (the baseline): B's own
# /var/lib/nfs and /etc/exports (EXPORTS_TEXT), exportfs -r, rpc.mountd
# in the foreground. KT_B_PID is rpc.mountd's pid.
kt_head_b_mountd_start() {  # EXPORTS_TEXT [SETUP]
  printf '%s\n' "$1" >"$KT_WORK/b.exports"
  kt_head_b_run "${2:-}
mount -t tmpfs varlibnfsB /var/lib/nfs
touch /var/lib/nfs/etab /var/lib/nfs/rmtab
mount --bind \"$KT_WORK/b.exports\" /etc/exports
exportfs -r" "exec rpc.mountd -F"
  kt_wait_until 30 "head B's rpc.mountd registered" \
    bash -c "ip netns exec headB rpcinfo -p 127.0.0.1 2>/dev/null | grep -q mountd"
}

# Runs head B's namespaces' set-up, SETUP, then LAST (an exec).
kt_head_b_run() {  # SETUP LAST
  cat >"$KT_WORK/headb.sh" <<EOF
set -e
mount -t nfsd nfsd /proc/fs/nfsd
mount -t tmpfs runB /run
mkdir -p /run/rpc_pipefs
mount -t rpc_pipefs sunrpc /run/rpc_pipefs
rpcbind -w
$1
$2
EOF
  : >"$KT_WORK/b.log"
  ip netns exec headB unshare -m --propagation private bash "$KT_WORK/headb.sh" \
    2>>"$KT_WORK/b.log" &
  KT_B_PID=$!
}

kt_in_b() { nsenter -t "$KT_B_PID" -m -n "$@"; }
kt_scb() { "$SHARECTL" --socket "$KT_WORK/b.sock" "$@"; }

# What the scenarios of heads on one engine need: sharemgrd with kernel
# mode and --store, PostgreSQL's server binaries (the scenario skips
# otherwise). Sets PG, tests/support/pg_server.sh, which starts the
# engine in the guest from the host's template (guest.sh).
kt_pg_require() {
  kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
  [[ $("$SHAREMGRD" --help 2>&1) == *--store* ]] || skip "$SHAREMGRD has no --store"
  PG=$KT_SRC/tests/support/pg_server.sh
  "$PG" bindir >/dev/null 2>&1 || skip "no PostgreSQL server binaries (initdb)"
}

# Whether nfsdcld's database in DIR (its -s folder) holds a client record:
# an NFSv4 client of this head that a takeover's grace period will let
# reclaim.
kt_nfsdcld_records() {  # DIR
  python3 - "$1" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}/main.sqlite?mode=ro", uri=True)
tables = [t for (t,) in c.execute(
    "select name from sqlite_master where type='table' and name like 'rec-%'")]
sys.exit(0 if any(c.execute(f'select count(*) from "{t}"').fetchone()[0]
                  for t in tables) else 1)
EOF
}

# What a takeover between heads needs: nfsdcld (the NFSv4 records) and
# the shipped script. Sets TAKEOVER (sharemgrd/sharemgr-takeover) and
# exports SHARECTL for its --socket check.
kt_takeover_require() {
  command -v nfsdcld >/dev/null || skip "no nfsdcld (nfs-kernel-server)"
  TAKEOVER=$KT_SRC/sharemgrd/sharemgr-takeover
  export SHARECTL
}
