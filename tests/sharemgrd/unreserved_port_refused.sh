#!/usr/bin/env bash
# MNT from a non-reserved source port is refused unless --insecure.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
start_daemon
read -r p <<<"$(make_dirs p)"
sc create g && sc add-share -s "$p" g || fail "setup refused"

got=$(probe --source 127.0.2.7 --unreserved mnt "$p" 2>&1) || true
[[ $got != MNT3_OK* ]] || fail "MNT from an unreserved port admitted: $got"
echo "unreserved: $got"
got=$(probe --source 127.0.2.7 --reserved mnt "$p")
[[ $got == MNT3_OK\ * ]] || fail "MNT from a reserved port refused: $got"

restart_daemon --insecure
got=$(probe --source 127.0.2.7 --unreserved mnt "$p")
[[ $got == MNT3_OK\ * ]] || fail "MNT from an unreserved port with --insecure refused: $got"
echo "ok"
