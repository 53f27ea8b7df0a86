#!/usr/bin/env bash
# Boots the real Linux nfsd and NFS client under QEMU (software emulation,
# TCG) and runs scenario scripts inside that one guest.
#
#   tests/kernel/guest.sh prepare
#       Fetches the Debian kernel package that linux-image-amd64 depends on
#       (apt-get download, unpacked with dpkg-deb -x, never installed) and
#       builds an initramfs (busybox + the NFS, 9p, loop and ext4 modules +
#       an /init) into the cache folder. Rebuilds only what changed.
#   tests/kernel/guest.sh run [--prepare] SCENARIO|all ...
#       Boots ONE guest, runs the scenarios in order (each its own process,
#       log and result), powers off. Prints one line per scenario and then
#       "N passed, M failed"; exits 1 if any failed or the guest did not
#       boot. "all" means every tests/kernel/scenarios/*.sh.
#   tests/kernel/guest.sh shell
#       Boots a guest with the services started and an interactive shell on
#       the serial console (for debugging; exit to power off).
#
# The guest mounts the host's / read-only over 9p and runs the host's
# programs (so the freshly built sharemgrd and sharectl), on a tmpfs root
# whose folders bind-mount the host's. Scenarios see, from lib.sh, the
# variables KT_SRC, KT_RESULTS, SHAREMGRD, SHARECTL. Facts: KERNEL.md, last
# section.
#
# Environment:
#   SHAREMGR_GUEST_CACHE   cache folder (default /var/cache/sharemgr-guest)
#   SHAREMGR_GUEST_KERNEL  kernel package (default: what linux-image-amd64
#                          depends on)
#   SHAREMGR_GUEST_RESULTS keep results and logs in this folder (default: a
#                          temporary folder, removed when all passed)
#   SHAREMGRD, SHARECTL    programs the scenarios run (default build/bin/*)
#   KT_SCENARIO_TIMEOUT    seconds one scenario may take (default 150)
#   KT_BOOT_TIMEOUT        seconds the guest may take to boot (default 150)
#   KT_TOTAL_TIMEOUT       at most this many seconds for QEMU in all
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
HERE=$SRC/tests/kernel
CACHE=${SHAREMGR_GUEST_CACHE:-/var/cache/sharemgr-guest}
QEMU=${QEMU:-qemu-system-x86_64}

# Loaded in the guest by /init, with their dependencies first. Everything
# the scenarios need, as nothing can load a module later (no kmod).
MODULES=(virtio_pci 9pnet_virtio 9p loop crc32c_generic ext4
         nfsd nfs nfsv3 nfsv4 veth)

die() {
  echo "guest.sh: $*" >&2
  exit 1
}

# ---------------------------------------------------------------- prepare

# The /init of the initramfs (busybox sh). Its text is an input of the
# cache stamp, so editing it rebuilds the initramfs.
init_script() {
  cat <<'INIT'
#!/bin/busybox sh
# Loads the modules, mounts the host's / (9p, read-only) and the results
# share, builds a tmpfs root whose folders bind-mount the host's, and
# switches to the host's bash running guest.sh guest-main.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo /bin/false >/proc/sys/kernel/modprobe
while read -r m; do
  insmod "/modules/$m" || echo "kguest: init: insmod $m failed"
done </modules/order
R=/newroot
mkdir -p $R
mount -t tmpfs -o mode=755,size=380m root $R
mkdir -p $R/host $R/results
o=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $o,ro hostroot $R/host || { echo "kguest: init: no 9p host root"; poweroff -f; }
mount -t 9p -o $o results $R/results || { echo "kguest: init: no results share"; poweroff -f; }
. $R/results/guest.env
for p in $R/host/*; do
  n=${p##*/}
  if [ -L "$p" ]; then ln -s "$(readlink "$p")" "$R/$n"; continue; fi
  [ -d "$p" ] || continue
  case " $KT_SKIP_DIRS " in *" $n "*) mkdir -p "$R/$n"; continue ;; esac
  mkdir -p "$R/$n" && mount --bind "$p" "$R/$n"
done
# /etc: symlinks to the host's files, so scenarios can replace any one.
mkdir -p $R/etc
for p in $R/host/etc/* $R/host/etc/.[!.]*; do
  [ -e "$p" ] || [ -L "$p" ] || continue
  ln -s "/host/etc/${p##*/}" "$R/etc/${p##*/}"
done
rm -f $R/etc/mtab $R/etc/exports $R/etc/exports.d
mkdir $R/etc/exports.d
# /etc/nfs.conf stays the host's: Debian's sets manage-gids=y, which
# rpc.mountd and sharemgrd both read (sharemgrd_switch_from_mountd).
ln -s /proc/self/mounts $R/etc/mtab
: >$R/etc/exports
mkdir -p $R/var/lib/nfs/v4recovery $R/var/lib/nfs/sm $R/var/lib/nfs/sm.bak \
  $R/var/tmp $R/run/rpcbind $R/run/rpc_pipefs $R/tmp $R/root $R/srv $R/mnt
chmod 1777 $R/tmp $R/var/tmp
ln -s /run $R/var/run
ln -s /run/lock $R/var/lock
# Folders the plan needs that the skipped ones hid (a source tree in /tmp).
for d in $KT_EXTRA_BINDS; do
  mkdir -p "$R$d" && mount --bind "$R/host$d" "$R$d"
done
mount --move /proc $R/proc
mount --move /sys $R/sys
mount --move /dev $R/dev
exec switch_root $R /bin/bash "$KT_SRC/tests/support/kernel/guest.sh" guest-main
INIT
}

# The kernel package linux-image-amd64 depends on (linux-image-6.1.0-N-amd64).
kernel_package() {
  if [[ -n ${SHAREMGR_GUEST_KERNEL:-} ]]; then
    echo "$SHAREMGR_GUEST_KERNEL"
    return
  fi
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ && !done {print $2; done = 1}'
}

# Makes sure CACHE/debs holds the kernel package's current version; prints
# its path. Works offline when the cache already has a kernel.
fetch_kernel() {
  local pkg ver deb
  mkdir -p "$CACHE/debs"
  pkg=$(kernel_package)
  if [[ -z $pkg ]]; then
    deb=$(ls -t "$CACHE"/debs/linux-image-*.deb 2>/dev/null | sed -n 1p || true)
    [[ -n $deb ]] || die "cannot tell which kernel to use: apt-cache knows no linux-image-amd64 (run apt-get update)"
    echo "$deb"
    return
  fi
  ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
  deb=$(ls "$CACHE/debs/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | sed -n 1p || true)
  if [[ -z $deb ]]; then
    echo "guest.sh: downloading $pkg $ver (Debian archive)" >&2
    (cd "$CACHE/debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) ||
      (cd "$CACHE/debs" && apt-get update -qq >&2 && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) ||
      die "apt-get download $pkg failed"
    deb=$(ls -t "$CACHE/debs/${pkg}_"*.deb | sed -n 1p)
    # Older kernels are of no further use.
    find "$CACHE/debs" -name 'linux-image-*.deb' ! -path "$deb" -delete
  fi
  echo "$deb"
}

# Prints the modules (paths relative to lib/modules/VER) to load, each
# after its dependencies, from modules.dep made by busybox depmod.
module_order() {  # MODDIR
  local dir=$1
  declare -A path=() deps=() seen=()
  local line mod rest k
  while IFS= read -r line; do
    mod=${line%%:*}
    rest=${line#*:}
    k=${mod##*/}
    k=${k%.ko*}
    path[$k]=$mod
    deps[$mod]=$rest
  done <"$dir/modules.dep"
  local out=()
  visit() {
    local m=$1 d
    [[ -n ${seen[$m]:-} ]] && return
    seen[$m]=1
    for d in ${deps[$m]}; do visit "$d"; done
    out+=("$m")
  }
  for k in "${MODULES[@]}"; do
    if [[ -n ${path[$k]:-} ]]; then
      visit "${path[$k]}"
    elif ! grep -q "/$k.ko" "$dir/modules.builtin" 2>/dev/null; then
      die "kernel module $k not found in $dir"
    fi
  done
  printf '%s\n' "${out[@]}"
}

prepare() {
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
  local busybox=/bin/busybox
  # Whole outputs, not "| grep -q": under pipefail an early grep exit
  # fails the writer with SIGPIPE.
  [[ -x $busybox && $'\n'$("$busybox" --list)$'\n' == *$'\ncpio\n'* ]] ||
    die "busybox (static, with cpio) not found: run scripts/deps (package busybox-static)"
  [[ $(ldd "$busybox" 2>&1 || true) == *"not a dynamic"* ]] ||
    die "$busybox is not statically linked: install busybox-static"
  mkdir -p "$CACHE" || die "cannot create the cache folder $CACHE (set SHAREMGR_GUEST_CACHE)"
  local deb stamp
  deb=$(fetch_kernel)
  stamp=$( {
    echo "$deb"
    sha256sum "$busybox" | cut -d' ' -f1
    echo "${MODULES[*]}"
    init_script
  } | sha256sum | cut -d' ' -f1)
  if [[ -f $CACHE/stamp && $(cat "$CACHE/stamp") == "$stamp" &&
        -f $CACHE/vmlinuz && -f $CACHE/initrd.cpio ]]; then
    echo "guest.sh: cache up to date ($CACHE, $(basename "$deb"))"
    return
  fi
  local t0=$SECONDS
  echo "guest.sh: building the guest in $CACHE from $(basename "$deb")"
  rm -f "$CACHE/stamp"
  local tmp
  tmp=$(mktemp -d "$CACHE/build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  dpkg-deb -x "$deb" "$tmp/k"
  local ver
  ver=$(ls "$tmp/k/lib/modules" | sed -n 1p)
  [[ -n $ver && -f $tmp/k/boot/vmlinuz-$ver ]] || die "no kernel in $deb"
  busybox depmod -b "$tmp/k" "$ver" || die "busybox depmod failed"
  local moddir=$tmp/k/lib/modules/$ver
  local order
  order=$(module_order "$moddir")
  # The initramfs: busybox, the modules in load order, /init.
  local ir=$tmp/ir
  mkdir -p "$ir"/{bin,dev,proc,sys,modules}
  cp "$busybox" "$ir/bin/busybox"
  local m i=0
  : >"$ir/modules/order"
  while IFS= read -r m; do
    cp "$moddir/$m" "$ir/modules/"
    echo "${m##*/}" >>"$ir/modules/order"
    i=$((i + 1))
  done <<<"$order"
  init_script >"$ir/init"
  chmod 755 "$ir/init"
  # Uncompressed: TCG decompresses slowly and the archive is small.
  (cd "$ir" && find . | busybox cpio -o -H newc >"$tmp/initrd.cpio" 2>/dev/null)
  cp "$tmp/k/boot/vmlinuz-$ver" "$tmp/vmlinuz"
  echo "$order" >"$tmp/modules.order"
  echo "$ver" >"$tmp/kernel.version"
  mv -f "$tmp/vmlinuz" "$tmp/initrd.cpio" "$tmp/modules.order" "$tmp/kernel.version" "$CACHE/"
  echo "$stamp" >"$CACHE/stamp"
  rm -rf "$tmp"
  trap - EXIT
  echo "guest.sh: guest ready: kernel $ver, $i modules, initramfs" \
    "$(($(stat -c %s "$CACHE/initrd.cpio") / 1024)) KiB, in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- run

resolve_scenario() {  # NAME or PATH -> absolute path
  local s=$1
  [[ -f $s ]] && { realpath "$s"; return; }
  [[ -f $HERE/scenarios/$s.sh ]] && { echo "$HERE/scenarios/$s.sh"; return; }
  [[ -f $HERE/scenarios/$s ]] && { echo "$HERE/scenarios/$s"; return; }
  die "no scenario $s (looked in $HERE/scenarios)"
}

# Top-level folders of the host the guest does not bind (its own tmpfs
# ones instead).
SKIP_DIRS="proc sys dev run tmp var etc root host results boot lost+found mnt media srv"

# Folders that must be visible in the guest: what lies under a skipped one
# gets its own bind mount.
extra_binds() {
  local d top out=()
  for d in "$@"; do
    top=${d#/}
    top=${top%%/*}
    [[ " $SKIP_DIRS " == *" $top "* && " ${out[*]:-} " != *" $d "* ]] && out+=("$d")
  done
  echo "${out[*]:-}"
}

boot() {  # MODE (run|shell) SCENARIO_PATH...
  local mode=$1
  shift
  local why=
  if ! command -v "$QEMU" >/dev/null; then
    why="$QEMU not found: the kernel tests need QEMU (run scripts/deps: package qemu-system-x86)"
  elif [[ ! -f $CACHE/vmlinuz || ! -f $CACHE/initrd.cpio ]]; then
    why="no guest in $CACHE: run tests/support/kernel/guest.sh prepare (or scripts/deps)"
  fi
  if [[ -n $why && $mode == run ]]; then
    echo "guest.sh: cannot run the kernel scenarios: $why"
    echo "0 passed, $# failed"
    exit 1
  fi
  [[ -z $why ]] || die "$why"
  local sharemgrd=${SHAREMGRD:-$SRC/build/bin/sharemgrd}
  local sharectl=${SHARECTL:-$SRC/build/bin/sharectl}
  sharemgrd=$(realpath -m "$sharemgrd")
  sharectl=$(realpath -m "$sharectl")
  local res
  if [[ -n ${SHAREMGR_GUEST_RESULTS:-} ]]; then
    res=$SHAREMGR_GUEST_RESULTS
    mkdir -p "$res"
    # Emptied before each run: only a folder this script made.
    if [[ -n $(ls -A "$res") && ! -f $res/.sharemgr-guest-results ]]; then
      die "SHAREMGR_GUEST_RESULTS=$res is not empty and not ours: name a new folder"
    fi
    rm -rf "${res:?}"/*
    : >"$res/.sharemgr-guest-results"
  else
    res=$(mktemp -d "${TMPDIR:-/tmp}/sharemgr-guest.XXXXXX")
  fi
  chmod 777 "$res"
  res=$(realpath "$res")
  local scenarios=("$@") s
  {
    echo "KT_SRC='$SRC'"
    echo "KT_MODE='$mode'"
    echo "KT_SKIP_DIRS='$SKIP_DIRS'"
    local dirs=("$SRC" "$(dirname "$sharemgrd")" "$(dirname "$sharectl")")
    for s in "${scenarios[@]}"; do dirs+=("$(dirname "$s")"); done
    echo "KT_EXTRA_BINDS='$(extra_binds "${dirs[@]}")'"
    echo "SHAREMGRD='$sharemgrd'"
    echo "SHARECTL='$sharectl'"
    echo "KT_SCENARIO_TIMEOUT='${KT_SCENARIO_TIMEOUT:-150}'"
    # A PostgreSQL data folder made here, for scenarios with an engine
    # (pg_server.sh copies it: initdb under emulation takes about 80 s).
    if "$SRC/tests/support/pg_server.sh" initdb "$res/pg-template" >/dev/null 2>&1; then
      echo "SHAREMGR_PG_TEMPLATE='/results/pg-template/pgdata'"
    fi
  } >"$res/guest.env"
  printf '%s\n' "${scenarios[@]}" >"$res/scenarios"

  local boot_timeout=${KT_BOOT_TIMEOUT:-150}
  local total=$((boot_timeout + 30)) t
  for s in "${scenarios[@]}"; do
    t=$(scenario_timeout "$s" "${KT_SCENARIO_TIMEOUT:-150}")
    total=$((total + t))
  done
  # Under ctest, stop before ctest's own timeout so the report says which
  # scenario hung.
  if [[ -n ${KT_TOTAL_TIMEOUT:-} ]] && ((KT_TOTAL_TIMEOUT < total)); then
    total=$KT_TOTAL_TIMEOUT
  fi
  local qemu_args=(-accel tcg,tb-size=128 -smp 1 -m 512 -nic none
    -display none -no-reboot -serial stdio -monitor none
    -kernel "$CACHE/vmlinuz" -initrd "$CACHE/initrd.cpio"
    -append "console=ttyS0 quiet panic=-1"
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
    -virtfs "local,path=$res,mount_tag=results,security_model=none,multidevs=remap")
  local t0 rc=0
  t0=$(date +%s.%N)
  if [[ $mode == shell ]]; then
    "$QEMU" "${qemu_args[@]}"
    return
  fi
  echo "guest.sh: booting (results in $res)"
  # The console goes to a file; the guest's own progress lines to stdout.
  # A guest not booted within boot_timeout, or still running after total
  # seconds, is killed.
  : >"$res/console.raw"
  timeout -k 10 "$total" "$QEMU" "${qemu_args[@]}" </dev/null >"$res/console.raw" 2>&1 &
  local qpid=$! booted_late=0
  trap 'kill -TERM "$qpid" 2>/dev/null' EXIT INT TERM
  tail -n +1 -f --pid="$qpid" "$res/console.raw" 2>/dev/null |
    tr -d '\r' | grep --line-buffered '^kguest: ' &
  local tpid=$!
  while kill -0 "$qpid" 2>/dev/null; do
    if [[ ! -f $res/booted ]] &&
       (($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print int(b - a)}') > boot_timeout)); then
      booted_late=1
      kill -TERM "$qpid" 2>/dev/null
    fi
    sleep 0.5
  done
  set +e
  wait "$qpid"
  rc=$?
  wait "$tpid"
  set -e
  trap - EXIT INT TERM
  tr -d '\r' <"$res/console.raw" >"$res/console.log"
  rm -f "$res/console.raw"
  if ((booted_late)); then
    echo "guest.sh: the guest did not boot within $boot_timeout s (KT_BOOT_TIMEOUT): killed"
    rc=124
  fi
  local wall
  wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  report "$res" "$rc" "$wall" "${scenarios[@]}"
}

# Reads the results the guest wrote and prints the summary.
report() {  # RESULTS QEMU_RC WALL SCENARIO...
  local res=$1 qrc=$2 wall=$3
  shift 3
  local passed=0 failed=0 skipped=0 s n r t
  local problem=
  if [[ $qrc == 124 || $qrc == 137 ]]; then
    problem="the guest was killed by a timeout (KT_BOOT_TIMEOUT, or the overall one)"
  elif [[ $qrc != 0 ]]; then
    problem="$QEMU exited $qrc"
  fi
  if [[ ! -f $res/booted ]]; then
    echo "guest.sh: the guest did not boot${problem:+ ($problem)}; console, last lines:"
    tail -n 40 "$res/console.log" || true
    echo "0 passed, $# failed"
    exit 1
  fi
  echo "guest.sh: boot to services ready: $(cat "$res/booted") s (guest clock)"
  for s in "$@"; do
    n=$(basename "$s" .sh)
    if [[ ! -f $res/$n.rc ]]; then
      echo "FAIL $n: no result (${problem:-the guest stopped before it})"
      failed=$((failed + 1))
      [[ -f $res/$n.log ]] && tail -n 90 "$res/$n.log" | sed 's/^/    /'
      continue
    fi
    r=$(cat "$res/$n.rc")
    t=$(cat "$res/$n.time" 2>/dev/null || echo '?')
    case $r in
      0) echo "PASS $n ($t s)"; passed=$((passed + 1)) ;;
      77) echo "SKIP $n: $(grep -m1 '^SKIP' "$res/$n.log" | sed 's/^SKIP: *//')"
          skipped=$((skipped + 1)) ;;
      124) echo "FAIL $n: timed out after $t s"; failed=$((failed + 1))
           tail -n 90 "$res/$n.log" | sed 's/^/    /' ;;
      *) echo "FAIL $n (exit $r, $t s)"; failed=$((failed + 1))
         tail -n 90 "$res/$n.log" | sed 's/^/    /' ;;
    esac
  done
  echo "guest.sh: wall time $wall s (boot, $# scenarios, poweroff)$( ((skipped)) && echo "; $skipped skipped")"
  [[ -n $problem && $failed == 0 ]] && { echo "guest.sh: $problem" >&2; failed=$((failed + 1)); }
  if ((failed == 0)) && [[ -z ${SHAREMGR_GUEST_RESULTS:-} ]]; then
    rm -rf "$res"
  else
    echo "guest.sh: logs in $res"
  fi
  echo "$passed passed, $failed failed"
  ((failed == 0))
}

run() {
  local want_prepare=0
  if [[ ${1:-} == --prepare ]]; then
    want_prepare=1
    shift
  fi
  (($#)) || die "usage: guest.sh run [--prepare] SCENARIO|all ..."
  local list=() s f
  for s in "$@"; do
    if [[ $s == all ]]; then
      for f in "$HERE"/scenarios/*.sh; do list+=("$f"); done
    else
      list+=("$(resolve_scenario "$s")")
    fi
  done
  if ((want_prepare)) && ! (prepare); then
    echo "guest.sh: cannot run the kernel scenarios: prepare failed"
    echo "0 passed, ${#list[@]} failed"
    exit 1
  fi
  boot run "${list[@]}"
}

# ---------------------------------------------------------------- guest side

# A scenario's time limit: DEFAULT, or its "# kt-timeout: SECONDS" header
# line (among its first 5) when that is longer.
scenario_timeout() {  # SCENARIO DEFAULT
  local t
  t=$(head -n 5 "$1" 2>/dev/null | sed -n 's/^# kt-timeout: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
  if [[ -n $t ]] && ((t > $2)); then echo "$t"; else echo "$2"; fi
}

# Runs as PID 1 in the guest (the host's bash, after switch_root): starts
# rpcbind and nfsd, runs each scenario, powers off.
guest_main() {
  set +e
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  export HOME=/root LANG=C.UTF-8
  cd /
  # shellcheck disable=SC1091
  source /results/guest.env
  export KT_SRC SHAREMGRD SHARECTL KT_RESULTS=/results
  [[ -n ${SHAREMGR_PG_TEMPLATE:-} ]] && export SHAREMGR_PG_TEMPLATE
  local log=/results/services.log
  {
    hostname kguest
    ip link set lo up
    touch /var/lib/nfs/etab /var/lib/nfs/rmtab
    mount -t nfsd nfsd /proc/fs/nfsd
    mount -t rpc_pipefs rpc_pipefs /run/rpc_pipefs
    rpcbind -w
    rpc.nfsd -G 10 4
    echo Y >/proc/fs/nfsd/v4_end_grace
    echo "kernel $(uname -r); nfsd versions: $(cat /proc/fs/nfsd/versions)"
  } >>"$log" 2>&1
  local up
  up=$(cut -d' ' -f1 /proc/uptime)
  if [[ $(rpcinfo -p 127.0.0.1 2>>"$log") != *nfs* ]]; then
    echo "kguest: nfsd is not registered with rpcbind; see services.log"
  fi
  echo "$up" >/results/booted
  echo "kguest: services ready at $up s"
  if [[ $KT_MODE == shell ]]; then
    setsid -c bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
  else
    local s n t0 t1 rc
    while IFS= read -r s; do
      n=$(basename "$s" .sh)
      t0=$(cut -d' ' -f1 /proc/uptime)
      timeout -k 5 "$(scenario_timeout "$s" "$KT_SCENARIO_TIMEOUT")" \
        setsid bash "$s" >"/results/$n.log" 2>&1 </dev/null
      rc=$?
      # 137: killed after it ignored the TERM of the timeout.
      [[ $rc == 137 ]] && rc=124
      t1=$(cut -d' ' -f1 /proc/uptime)
      awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", b - a}' >"/results/$n.time"
      bash "$KT_SRC/tests/support/kernel/lib.sh" reset >>"/results/$n.log" 2>&1
      echo "$rc" >"/results/$n.rc"
      echo "kguest: $n exit $rc ($(cat "/results/$n.time") s)"
    done </results/scenarios
  fi
  sync
  echo "kguest: powering off at $(cut -d' ' -f1 /proc/uptime) s"
  # -no-reboot turns the reboot into QEMU's exit.
  echo b >/proc/sysrq-trigger
  sleep 10
}

case ${1:-} in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  shell) shift; prepare; boot shell ;;
  guest-main) guest_main ;;
  *) die "usage: guest.sh prepare | run [--prepare] SCENARIO|all ... | shell" ;;
esac
