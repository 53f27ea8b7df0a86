#!/usr/bin/env bash
# Shares follow their file systems: a share on a tmpfs nested below another
# share is served while the tmpfs is mounted; once it is unmounted (its
# path is now the parent's empty mountpoint folder) MNT refuses it as an
# unshared path, showmount -e and the sharetab view leave it out, and
# check, list -v and the log say why. Mounted again, it is served again
# with no admin step, and a restart while it is unmounted keeps it
# unserved (the recorded file system survives). A share whose folder was
# removed is refused at once.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || fail "needs root (mounts a tmpfs)"
ensure_rpcbind
read -r home other <<<"$(make_dirs home other)"
alice=$home/alice
mkdir -p "$alice"
mount_alice() { mount -t tmpfs -o size=1m sm_alice "$alice" || fail "mount tmpfs"; }
mount_alice
on_exit "umount '$alice' 2>/dev/null"
SM_RPCBIND=1 start_daemon

sc create g || fail "create"
sc add-share -s "$home" g || fail "add-share $home"
sc add-share -s "$alice" g || fail "add-share $alice (another file system)"
sc add-share -s "$other" g || fail "add-share $other"

# EXPORT straight from the daemon's port; showmount -e (through rpcbind)
# as well while rpcbind still names this daemon's port: other test runs on
# the host may register MOUNT meanwhile.
exported() {
  local direct
  direct=$(probe export | awk '{print $1}' | sort | tr '\n' ' ')
  if rpcinfo -p 127.0.0.1 2>/dev/null | awk '$5 == "mountd" {print $4}' |
    grep -qx "$MOUNT_PORT"; then
    assert_eq "$direct" "$(showmount -e 127.0.0.1 | tail -n +2 |
      awk '{print $1}' | sort | tr '\n' ' ')" "showmount -e beside EXPORT"
  else
    echo "note: rpcbind names another MOUNT port; showmount -e not compared" >&2
  fi
  echo "$direct"
}
tabbed() { cut -f1 "$SM_SHARETAB" | sort | tr '\n' ' '; }
all=$(printf '%s\n' "$home" "$alice" "$other" | sort | tr '\n' ' ')
without_alice=$(printf '%s\n' "$home" "$other" | sort | tr '\n' ' ')

# The sharetab view is rewritten just after the served state changes:
# waits (up to 5 s) until it lists $1.
wait_tab() {
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(tabbed) == "$1" ]] && return 0
    sleep 0.05
  done
  fail "sharetab: expected '$1', got '$(tabbed)'"
}

assert_contains "$(probe mnt "$alice")" "MNT3_OK" "MNT while mounted"
assert_eq "$all" "$(exported)" "showmount -e while mounted"
wait_tab "$all"
sc check 127.0.0.1 "$alice" >/dev/null || fail "check exit while mounted"
# Unmounted once its place is recorded (unmounted before that:
# unmounted_before_recorded_not_served).
wait_recorded "$alice"
assert_eq "$alice" "$(recorded_mount "$alice")" "recorded place"

umount "$alice" || fail "umount"
wait_check "$alice" 1
wait_tab "$without_alice"
mkdir "$alice/planted"  # in the parent's empty mountpoint folder
assert_contains "$(probe mnt "$alice")" "MNT3ERR_ACCES" "MNT while unmounted"
assert_contains "$(probe mnt "$alice/planted")" "MNT3ERR_ACCES" \
  "MNT below it while unmounted"
assert_contains "$(probe mnt "$home")" "MNT3_OK" "MNT of the parent share"
assert_eq "$without_alice" "$(exported)" "showmount -e while unmounted"
assert_eq "$without_alice" "$(tabbed)" "sharetab while unmounted"
assert_not_contains "$(sc share)" "$alice" "sharectl share while unmounted"
out=$(sc check 127.0.0.1 "$alice") && fail "check exited 0 while unmounted"
assert_contains "$out" "$alice: not served: recorded on a file system mounted at $alice, now " \
  "check's reason"
assert_contains "$out" "access:  none" "check's access"
assert_contains "$(sc list -v)" "$alice: not served: recorded on a file system mounted at $alice" \
  "list -v"
assert_contains "$(sc --json show g | jq -r ".groups[0].shares[] | select(.path == \"$alice\") | .not_served")" \
  "recorded on a file system mounted at $alice" "show --json not_served"
assert_contains "$(cat "$SM_LOG")" "$alice: not served: recorded on a file system mounted at $alice" \
  "the log"

# Back without an admin step.
rmdir "$alice/planted"
mount_alice
wait_check "$alice" 0
wait_tab "$all"
assert_contains "$(probe mnt "$alice")" "MNT3_OK" "MNT mounted again"
assert_eq "$all" "$(exported)" "showmount -e mounted again"
assert_eq "$all" "$(tabbed)" "sharetab mounted again"
assert_contains "$(cat "$SM_LOG")" "$alice: served again" "the log, mounted again"
assert_not_contains "$(sc list -v)" "not served" "list -v mounted again"

# What was recorded survives a restart with the dataset missing.
umount "$alice" || fail "umount before restart"
SM_RPCBIND=1 restart_daemon
out=$(sc check 127.0.0.1 "$alice") && fail "check exited 0 after restart unmounted"
assert_contains "$out" "recorded on a file system mounted at $alice, now" \
  "check after restart"
assert_eq "$without_alice" "$(exported)" "showmount -e after restart"
assert_contains "$(probe mnt "$alice")" "MNT3ERR_ACCES" "MNT after restart"
mount_alice
wait_check "$alice" 0

# A folder moved away: refused at once, named in the reason.
mv "$other" "$other.moved"
out=$(sc check 127.0.0.1 "$other") && fail "check exited 0 for a moved folder"
assert_contains "$out" "$other: not served: the folder does not exist"
assert_contains "$(probe mnt "$other")" "MNT3ERR_ACCES" "MNT of a moved folder"
mv "$other.moved" "$other"
echo ok
