#!/usr/bin/env bash
# kt-timeout: 240
# Switching a running server between rpc.mountd and sharemgrd --kernel=on,
# as a Debian administrator would (the host's /etc/nfs.conf, which sets
# manage-gids=y, read by both), while a v3 and a v4.2 client stay mounted
# and keep writing and reading (new files, and O_DIRECT reads of a file
# opened before the first switch), and a third, v4.2, has the NFSv4
# pseudo-root directory above the share mounted. Every switch, both ways, with and
# without managed gids, and rpc.mountd's own restart as the baseline:
# no request fails (no ESTALE: sharemgrd answers the uuid rpc.mountd
# takes from libblkid), and the first request after each switch is
# answered within 10 s. Logs "TIMING switch ..." lines: the time from the
# old responder's stop to each client's first request served after it.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_sharemgrd_has_kernel || skip "$SHAREMGRD has no --kernel option"
[[ $("$SHAREMGRD" --help 2>&1) == *--nfs-conf* ]] || skip "$SHAREMGRD does not read nfs.conf"
kt_setup
kt_fs data
mkdir /srv/data/v3 /srv/data/v4
EXPORTS='/srv/data 127.0.0.1(rw,no_root_squash,no_subtree_check)'
# The host's nfs.conf as Debian ships it (manage-gids=y), and a copy
# without it.
grep -q '^manage-gids *= *y' /etc/nfs.conf ||
  skip "/etc/nfs.conf does not set manage-gids=y (not Debian's)"
grep -v '^manage-gids' /etc/nfs.conf >"$KT_WORK/nfs-nogids.conf"

kt_mountd_start "$EXPORTS"
kt_must_mount 3 127.0.0.1:/srv/data /mnt/v3
kt_must_mount 4.2 127.0.0.1:/srv/data /mnt/v4
# /srv is no share: NFSv4 reaches it as a pseudo-root directory, whose
# handle carries the uuid rpc.mountd makes from its path (actimeo=0: every
# stat of it is a GETATTR of that handle).
kt_must_mount 4.2 127.0.0.1:/srv /mnt/ps actimeo=0
mkdir /srv/data/ps
kt_assert_rw /mnt/v3 /srv/data
kt_assert_rw /mnt/v4 /srv/data

# A client: every 0.2 s writes a new file and reads it back by name, and
# reads with O_DIRECT through a descriptor opened at its start (its file
# handle was given under rpc.mountd: the client cannot look it up again);
# logs "ok TIME" or "err TIME ERROR" per round until KT_WORK/stop exists.
# With ROOT, each round also lists ROOT.
client_loop() {  # DIR TAG [ROOT]
  python3 - "$1" "$2" "$KT_WORK" "${3:-}" <<'PY'
import mmap, os, sys, time
d, tag, work, root = sys.argv[1:]
with open(os.path.join(d, "open"), "w") as f:
    f.write("opened before the switches\n")
fd = os.open(os.path.join(d, "open"), os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
log = open(os.path.join(work, tag + ".log"), "a", buffering=1)
i = 0
while not os.path.exists(os.path.join(work, "stop")):
    i += 1
    log.write("start %.3f %d\n" % (time.time(), i))
    try:
        name = os.path.join(d, "f%d" % i)
        with open(name, "w") as f:
            f.write("%s %d\n" % (tag, i))
        with open(name) as f:
            assert f.read() == "%s %d\n" % (tag, i), "read back differs"
        os.unlink(name)
        if root:
            assert "data" in os.listdir(root), "data not listed in " + root
        n = os.preadv(fd, [buf], 0)
        assert buf[:6] == b"opened", "open file reads %r" % bytes(buf[:n])
        log.write("ok %.3f %d\n" % (time.time(), i))
    except Exception as e:
        log.write("err %.3f %d %s\n" % (time.time(), i, e))
    time.sleep(0.2)
PY
}
# The clients running, by tag (TAGS) and pid (PIDS); what each is (WHAT).
TAGS=() PIDS=()
declare -A WHAT
start_client() {  # TAG WHAT DIR [ROOT]
  client_loop "$3" "$1" "${4:-}" 2>"$KT_WORK/$1.err" &
  TAGS+=("$1")
  PIDS+=($!)
  WHAT[$1]=$2
}
start_client v3 "v3" /mnt/v3/v3
start_client v4 "v4.2" /mnt/v4/v4
start_client ps "v4.2 pseudo-root mounted under rpc.mountd" /mnt/ps/data/ps /mnt/ps
trap 'st=$?; touch "$KT_WORK/stop"; kill "${PIDS[@]}" 2>/dev/null || true; (exit $st) || true; kt_cleanup' EXIT
sleep 2

# The time from START to the end of each client's first round begun
# after it and served.
first_ok_after() {  # TAG START
  awk -v s="$2" '$1 == "start" && $2 > s {begun = 1}
    begun && $1 == "ok" {printf "%.1f", $2 - s; found = 1; exit}
    END {if (!found) print "none"}' "$KT_WORK/$1.log"
}
# The longest time between two served rounds from START on.
longest_gap_after() {  # TAG START
  awk -v s="$2" '$1 == "ok" {if (last && $2 > s && $2 - last > g) g = $2 - last; last = $2}
    END {printf "%.1f", g}' "$KT_WORK/$1.log"
}

# Runs the switch command, then waits until every client was served
# again (at most 30 s); each must have been within 10 s.
switch() {  # WHAT COMMAND...
  local what=$1 t0 t1 tag waiting firsts gaps
  local -A first
  shift
  step "switch: $what"
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  echo "switch command took $(kt_since "$t0") s"
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    waiting=0
    for tag in "${TAGS[@]}"; do
      first[$tag]=$(first_ok_after "$tag" "$t1")
      [[ ${first[$tag]} == none ]] && waiting=1
    done
    ((waiting)) || break
    sleep 0.1
  done
  firsts= gaps=
  for tag in "${TAGS[@]}"; do
    firsts+="${WHAT[$tag]} ${first[$tag]} s; "
  done
  echo "TIMING switch $what: once the new responder serves, each client's first round done after: $firsts"
  if ((waiting)); then
    for c in auth.unix.ip auth.unix.gid nfsd.fh nfsd.export; do
      echo "--- /proc/net/rpc/$c/content:"
      tail -n 8 "/proc/net/rpc/$c/content"
    done
    for tag in "${TAGS[@]}"; do tail -n 4 "$KT_WORK/$tag.log"; done
    tail -n 20 "$KT_WORK/sharemgrd.log"
    fail "switch $what: a client was not served within 30 s"
  fi
  for tag in "${TAGS[@]}"; do
    awk -v a="${first[$tag]}" 'BEGIN {exit !(a <= 10)}' ||
      fail "switch $what: the ${WHAT[$tag]} client waited ${first[$tag]} s (over 10 s)"
  done
  sleep 1.5
  for tag in "${TAGS[@]}"; do
    gaps+="${WHAT[$tag]} $(longest_gap_after "$tag" "$t0") s; "
  done
  echo "TIMING switch $what: longest pause between served rounds from the old responder's stop on: $gaps"
}

to_sharemgrd() {  # [ARGS]
  kt_mountd_stop
  kt_sharemgrd_start --follow-exports /etc/exports "$@"
}
to_mountd() {
  local t0
  t0=$(date +%s.%N)
  kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
  echo "sharemgrd stopped in $(kt_since "$t0") s"
  kt_mountd_start "$EXPORTS"
}
mountd_restart() {
  kt_mountd_stop
  kt_mountd_start "$EXPORTS"
}

switch "rpc.mountd restart (baseline)" mountd_restart
switch "rpc.mountd -> sharemgrd (nfs.conf: manage-gids=y)" to_sharemgrd
# A pseudo-root directory mounted under sharemgrd: its handle must stay
# valid under rpc.mountd after the switches back.
kt_must_mount 4.2 127.0.0.1:/srv /mnt/ps2 actimeo=0
mkdir -p /srv/data/ps2
start_client ps2 "v4.2 pseudo-root mounted under sharemgrd" /mnt/ps2/data/ps2 /mnt/ps2
sleep 1
assert_contains "$(cat "$KT_LOG")" "manage-gids" "sharemgrd's start-up log (what it took from nfs.conf)"
kt_sc check 127.0.0.1 /srv/data >/dev/null || fail "sharemgrd does not grant the followed export"
switch "sharemgrd -> rpc.mountd" to_mountd
switch "rpc.mountd -> sharemgrd (nfs.conf without manage-gids)" to_sharemgrd --nfs-conf "$KT_WORK/nfs-nogids.conf"
switch "sharemgrd (no manage-gids) -> rpc.mountd" to_mountd

touch "$KT_WORK/stop"
wait "${PIDS[@]}" 2>/dev/null || true
for tag in "${TAGS[@]}"; do
  rounds=$(grep -c '^start' "$KT_WORK/$tag.log")
  errors=$(grep -c '^err' "$KT_WORK/$tag.log" || true)
  echo "$tag: $rounds rounds, $errors failed"
  if [[ $errors != 0 ]]; then
    grep '^err' "$KT_WORK/$tag.log" | head -n 5
    fail "$tag: $errors rounds failed across the switches: $(head -c 600 "$KT_WORK/$tag.err")"
  fi
  assert_not_contains "$(cat "$KT_WORK/$tag.err")" "Stale" "$tag client's errors"
done
kt_mountd_stop
echo ok
