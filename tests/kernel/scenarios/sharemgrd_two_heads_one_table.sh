#!/usr/bin/env bash
# kt-timeout: 300
# Two heads, one table, with the real nfsd (issue 47: "one table" and
# "mounted clients outlive both daemons", on the guest's one nfsd).
# PostgreSQL runs in the guest (the host's binaries, its data in the
# guest's tmpfs). Head A serves the kernel (--kernel=on --store); head B is
# a second sharemgrd on the same engine (its own --db, socket and port,
# --no-rpcbind, MOUNT mode: one nfsd per network namespace, and this
# scenario has one).
# - A batch of 1,000 adds given to B is served by A's kernel: A reaches B's
#   generation, a new share mounts from A, A's nfsd.export flush time and
#   its mounted clients' entries stay as they were (no flush), A's kernel
#   counts no flush; a share removed on B refuses its client on A.
# - kill -9 of both daemons: the mounted clients go on.
# - A started again while PostgreSQL is down serves from its copy (a new
#   mount works) and refuses changes naming the engine (exit 3); once the
#   engine is back, A takes changes again.
# Logs "TIMING" lines: B's reply to A's generation, for 1 and 1,000 adds.
source "$(dirname "$0")/../../support/kernel/lib.sh"
kt_pg_require
kt_setup
chmod 755 "$KT_WORK"
PGDIR=$KT_WORK/pg
trap 'st=$?; set +e; "$PG" stop "$PGDIR" immediate >/dev/null 2>&1; kt_reset; exit $st' EXIT
step "PostgreSQL in the guest"
url=$("$PG" start "$PGDIR") || fail "PostgreSQL did not start"
echo "engine: $url"

kt_fs_many data 2048 32 /srv/data
mkdir /srv/data/d{1..3} /srv/data/n{1..1000}  # one process (emulated: each costs)

step "head A (kernel) and head B on the engine"
KT_SM_DB=$KT_WORK/a.db kt_sharemgrd_start --store "$url" --head a
B_LOG=$KT_WORK/b.log
start_b() {
  "$SHAREMGRD" --kernel=off --foreground --db "$KT_WORK/b.db" \
    --socket "$KT_WORK/b.sock" --sharetab "$KT_WORK/b.sharetab" \
    --no-rpcbind --mount-port 0 --store "$url" --head b 2>>"$B_LOG" &
  B_PID=$!
  echo "$B_PID" >"$KT_STATE/head-b.pid"
  kt_wait_until 60 "head B serving" grep -q '^sharemgrd: serving' "$B_LOG"
}
start_b
scb() { "$SHARECTL" --socket "$KT_WORK/b.sock" "$@"; }
gen() { "$SHARECTL" --socket "$1" --json stats | jq -r .generation; }

kt_sc create g -o rw=127.0.0.1,root=127.0.0.1 >/dev/null 2>&1 || fail "create on A"
kt_sc add-share -s /srv/data/d1 g || fail "add-share d1 on A"
kt_sc add-share -s /srv/data/d2 g || fail "add-share d2 on A"
kt_must_mount 3 127.0.0.1:/srv/data/d1 /mnt/d1
kt_must_mount 4.2 127.0.0.1:/srv/data/d2 /mnt/d2
kt_assert_rw /mnt/d1 /srv/data/d1
kt_assert_rw /mnt/d2 /srv/data/d2
entry_d1=$(kt_export_entry /srv/data/d1)
entry_d2=$(kt_export_entry /srv/data/d2)
[[ -n $entry_d1 && -n $entry_d2 ]] || fail "no nfsd.export entries for the mounted shares"
flush_before=$(kt_flush_time nfsd.export)
flushes_before=$(kt_kernel_stat flushes)
sleep 1.1  # a flush now would move the flush time

# Runs a change on B; waits until A's generation is B's; logs the time.
on_b_then_a() {  # WHAT COMMAND...
  local what=$1 t0 g
  shift
  t0=$(date +%s.%N)
  "$@" || fail "$what on B failed"
  g=$(gen "$KT_WORK/b.sock")
  kt_wait_until 30 "A at B's generation $g after $what" \
    bash -c "[[ \$('$SHARECTL' --socket '$KT_SM_SOCKET' --json stats | jq -r .generation) == $g ]]"
  echo "TIMING $what: B's command to A at generation $g: $(kt_since "$t0") s"
}

step "one add on B"
on_b_then_a "1 add" scb add-share -s /srv/data/d3 g
kt_must_mount 3 127.0.0.1:/srv/data/d3 /mnt/d3
kt_assert_rw /mnt/d3 /srv/data/d3

step "1,000 adds on B, one batch"
for ((i = 1; i <= 1000; i++)); do echo "add-share -s /srv/data/n$i g"; done >"$KT_WORK/adds.batch"
on_b_then_a "1000 adds" scb batch "$KT_WORK/adds.batch"
kt_must_mount 3 127.0.0.1:/srv/data/n500 /mnt/n500
kt_assert_rw /mnt/n500 /srv/data/n500
assert_eq "$flush_before" "$(kt_flush_time nfsd.export)" "A's nfsd.export flush time"
assert_eq "$entry_d1" "$(kt_export_entry /srv/data/d1)" "A's kernel entry of the mounted d1"
assert_eq "$entry_d2" "$(kt_export_entry /srv/data/d2)" "A's kernel entry of the mounted d2"
assert_eq "$flushes_before" "$(kt_kernel_stat flushes)" "flushes A's kernel mode made"
assert_eq 1003 "$(kt_sc --json stats | jq -r .shares)" "shares on A"

step "a share removed on B"
on_b_then_a "1 remove" scb remove-share -s /srv/data/n500 g
assert_fails "" "write into the share removed on B" bash -c "echo x >/mnt/n500/after-remove"
echo "the removed share refuses on A: $KT_ERR"
kt_assert_rw /mnt/d1 /srv/data/d1

step "kill -9 of both heads: mounted clients go on"
kill -KILL "$KT_SHAREMGRD_PID" "$B_PID"
wait "$KT_SHAREMGRD_PID" "$B_PID" 2>/dev/null || true
KT_SHAREMGRD_PID=
kt_assert_rw /mnt/d1 /srv/data/d1
kt_assert_rw /mnt/d2 /srv/data/d2

step "head A again, the engine down: serves its copy, refuses changes"
"$PG" stop "$PGDIR" immediate || fail "PostgreSQL did not stop"
KT_SM_DB=$KT_WORK/a.db kt_sharemgrd_start --store "$url" --head a
assert_eq 1002 "$(kt_sc --json stats | jq -r .shares)" "shares A serves from its copy"
kt_must_mount 3 127.0.0.1:/srv/data/n7 /mnt/n7
kt_assert_rw /mnt/n7 /srv/data/n7
kt_assert_rw /mnt/d1 /srv/data/d1
rc=0
out=$(kt_sc add-share -s /srv/data/n500 g 2>&1) || rc=$?
assert_eq 3 "$rc" "a change while the engine is down (exit code)"
assert_contains "$out" "engine is unreachable (PostgreSQL at" "the refusal names the engine"

step "the engine back: A takes changes again"
"$PG" start "$PGDIR" >/dev/null || fail "PostgreSQL did not start again"
kt_wait_until 30 "A takes changes again" kt_sc add-share -s /srv/data/n500 g
kt_must_mount 3 127.0.0.1:/srv/data/n500 /mnt/n500b
kt_assert_rw /mnt/n500b /srv/data/n500
kt_sharemgrd_stop || fail "sharemgrd exited $? on SIGTERM"
echo ok
