#!/usr/bin/env bash
# libnfs's nfs-ls, a MOUNT client we did not write: MNT is admitted for a
# client the options admit, MNT3ERR_ACCES for one they refuse, and
# MNT3ERR_ACCES too for a shared path deleted from disk (a share not served,
# refused as an unshared path; sharemgrd.8). There is no NFS server,
# so an admitted nfs-ls fails later, at the NFS stage; we assert on the
# MOUNT stage only (its message, and DUMP for the admitted mount).
# nfs-ls is pointed at the daemon with libnfs's URL argument mountport=,
# and at a closed port for NFS (nfsport=) so the NFS stage fails at once.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
command -v nfs-ls >/dev/null || fail "nfs-ls (libnfs-utils) is not installed"
# --insecure: nfs-ls binds a reserved source port when it can get one, and
# falls back to another when a parallel suite holds them all (once in
# scripts/test, 2026-12-06: "source port is not reserved"). This test is
# about the MOUNT stage; unreserved_port_refused tests the port rule.
start_daemon --insecure
read -r ok refused gone <<<"$(make_dirs ok refused gone)"
cat >"$SM_DIR/batch" <<B
create g
add-share -o rw=@127.0.0.0/8 -s $ok g
add-share -o rw=@192.0.2.0/24 -s $refused g
add-share -s $gone g
B
sc batch "$SM_DIR/batch" || fail "batch refused"
rmdir "$gone"
closed=$(free_port)

nfsls() {  # PATH: prints nfs-ls's output, never fails
  timeout 20 nfs-ls "nfs://127.0.0.1$1?version=3&mountport=$MOUNT_PORT&nfsport=$closed" 2>&1 || true
}

out=$(nfsls "$ok")
echo "admitted: $out"
assert_not_contains "$out" "Mount failed" "nfs-ls of $ok"
dump=$(probe dump)
grep -q "^127.0.0.1 $ok\$" <<<"$dump" || grep -q " $ok\$" <<<"$dump" ||
  fail "nfs-ls's MNT of $ok is not in DUMP: $dump"

out=$(nfsls "$refused")
echo "refused: $out"
assert_contains "$out" "MNT3ERR_ACCES" "nfs-ls of $refused"

out=$(nfsls "$gone")
echo "deleted: $out"
# A share whose folder is gone is not served: refused as an unshared path.
assert_contains "$out" "MNT3ERR_ACCES" "nfs-ls of $gone"
echo "ok"
