#!/usr/bin/env bash
# rpcinfo -p lists MOUNT (100005) versions 1 and 3 on tcp and udp, on the
# daemon's port.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
ensure_rpcbind
SM_RPCBIND=1 start_daemon

out=$(rpcinfo -p 127.0.0.1)
for v in 1 3; do
  for proto in tcp udp; do
    grep -Eq "^ *100005 +$v +$proto +$MOUNT_PORT( |$)" <<<"$out" ||
      fail "rpcinfo -p lacks 100005 v$v $proto port $MOUNT_PORT: $out"
  done
done
echo "ok: 100005 v1,v3 tcp,udp on port $MOUNT_PORT"
