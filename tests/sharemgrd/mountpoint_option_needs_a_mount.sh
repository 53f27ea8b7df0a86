#!/usr/bin/env bash
# The option mountpoint (exports(5)'s, which OpenZFS writes on every line of
# zfs.exports): a share with it is served only while a file system is
# mounted at its own path. Added while nothing is mounted there, it is
# refused (MNT, showmount -e, check); mounted, it is served without an admin
# step; unmounted, refused again; a share without the option on the same
# kind of folder is served throughout.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || fail "needs root (mounts a tmpfs)"
read -r parent plain <<<"$(make_dirs parent plain)"
ds=$parent/ds
mkdir -p "$ds"
on_exit "umount '$ds' 2>/dev/null"
start_daemon

sc create -o rw g || fail "create"
sc add-share -o rw,mountpoint -s "$ds" g || fail "add-share with mountpoint"
sc add-share -o rw -s "$plain" g || fail "add-share without"
assert_contains "$(sc show -v -s "$ds")" "mountpoint (share)" "show -v -s keeps the option"

wait_check "$ds" 1
out=$(sc check 127.0.0.1 "$ds") && fail "check granted with nothing mounted"
assert_contains "$out" "no file system is mounted at the path (option mountpoint)" \
  "check's reason"
assert_contains "$(probe mnt "$ds")" "MNT3ERR_ACCES" "MNT with nothing mounted"
assert_not_contains "$(probe export | awk '{print $1}')" "$ds" \
  "EXPORT with nothing mounted"
assert_contains "$(probe mnt "$plain")" "MNT3_OK" "MNT of the share without"

mount -t tmpfs -o size=1m sm_ds "$ds" || fail "mount tmpfs"
# Decided live at once (no wait for the watch's round).
assert_contains "$(probe mnt "$ds")" "MNT3_OK" "MNT right after the mount"
wait_check "$ds" 0
# EXPORT follows once the probe the mount woke has run.
for ((i = 0; i < 100; i++)); do
  probe export | awk '{print $1}' | grep -x "$ds" >/dev/null && break
  sleep 0.05
done
assert_contains "$(probe export | awk '{print $1}')" "$ds" "EXPORT once mounted"

umount "$ds" || fail "umount"
assert_contains "$(probe mnt "$ds")" "MNT3ERR_ACCES" "MNT right after umount"
wait_check "$ds" 1

# As in rpc.mountd (nfs-utils' is_mountpoint: another device than the
# parent's), a bind mount of a folder of the same file system is no mount
# point; one from another file system is. (On $ds neither would be served:
# another file system than the tmpfs recorded there.)
ds2=$parent/ds2
mkdir -p "$ds2" "$parent/same" /dev/shm/sm_mp_$$
on_exit "umount '$ds2' 2>/dev/null; rmdir /dev/shm/sm_mp_$$"
sc add-share -o rw,mountpoint -s "$ds2" g || fail "add-share ds2"
wait_check "$ds2" 1
mount --bind "$parent/same" "$ds2" || fail "bind mount (same file system)"
sleep 0.3
out=$(sc check 127.0.0.1 "$ds2") && fail "a same-file-system bind mount counted"
assert_contains "$out" "option mountpoint" "same-file-system bind mount"
umount "$ds2" || fail "umount the bind mount"
if [[ $(stat -c %d /dev/shm) != $(stat -c %d "$parent") ]]; then
  mount --bind /dev/shm/sm_mp_$$ "$ds2" || fail "bind mount (other file system)"
  wait_check "$ds2" 0
  umount "$ds2" || fail "umount the other bind mount"
  wait_check "$ds2" 1
fi

# Above 2,000 shares the sharetab view is rewritten in the background; it
# must still follow a served-state change that changes no generation.
mkdir -p "$SM_DIR/many"
for i in $(seq 1 2001); do
  mkdir "$SM_DIR/many/u$i"
  echo "add-share -s $SM_DIR/many/u$i g"
done >"$SM_DIR/many.batch"
sc batch "$SM_DIR/many.batch" >/dev/null || fail "batch of 2,001 refused"
in_tab() { cut -f1 "$SM_SHARETAB" | grep -x "$1" >/dev/null; }
wait_tab() {  # $1: 0 listed, 1 not listed
  local i rc
  for ((i = 0; i < 200; i++)); do
    rc=0
    in_tab "$2" || rc=1
    [[ $rc == "$1" ]] && return 0
    sleep 0.05
  done
  fail "sharetab: $2 $( ((${1})) && echo still listed || echo not listed) after 10 s"
}
wait_tab 1 "$ds"
mount -t tmpfs -o size=1m sm_ds "$ds" || fail "mount tmpfs again"
wait_tab 0 "$ds"
umount "$ds" || fail "umount again"
wait_tab 1 "$ds"

# The option can be unset like any other property; the share then follows
# the file system it was recorded on (the tmpfs, which is not mounted).
sc unset -p mountpoint -s "$ds" g || fail "unset mountpoint"
assert_not_contains "$(sc show -v -s "$ds")" "mountpoint (share)" "unset"
for ((i = 0; i < 100; i++)); do  # until the round the unset asked for
  out=$(sc check 127.0.0.1 "$ds") && fail "check granted after unset"
  [[ $out == *"recorded on a file system mounted at $ds"* ]] && break
  sleep 0.05
done
assert_contains "$out" "recorded on a file system mounted at $ds" "reason after unset"
echo ok
