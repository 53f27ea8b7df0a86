#!/usr/bin/env bash
# A caller who may not change anything cannot make the daemon hold big
# management calls: one 64 MiB BATCH, 8 in parallel, and 12 incomplete
# 60 MiB records leave the daemon's RSS within 64 MiB of where it was (they
# once took 579 MB, 3.9 GB and 745 MB). Root's own batch still works.
source "$(dirname "$0")/lib.sh"
sm_setup
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to run as nobody"; exit 0; }
start_daemon
chmod 0666 "$SM_SOCKET"
chmod 0755 "$SM_DIR"
read -r a <<<"$(make_dirs a)"
sc create g && sc add-share -s "$a" g || fail "setup refused"
# nobody may not read the work tree or the pyenv shims.
driver=$SM_DIR/rpc_driver.py
cp "$(dirname "$0")/rpc_driver.py" "$driver"
chmod 0644 "$driver"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
for args in "--mib 64 --parallel 1" "--mib 64 --parallel 8" \
            "--mib 60 --parallel 0 --incomplete 12"; do
  # shellcheck disable=SC2086
  out=$(as_nobody /usr/bin/python3 "$driver" mgmt-flood --socket "$SM_SOCKET" \
    --pid "$DAEMON_PID" $args --rss-bound-kib $((64 * 1024))) ||
    fail "RSS not bounded ($args): $out"
  echo "$out"
  kill -0 "$DAEMON_PID" || fail "daemon died ($args)"
done
out=$(sc stats) || fail "stats after the floods"
read -r b <<<"$(make_dirs b)"
sc add-share -s "$b" g || fail "root's change refused after the floods"
echo "ok"
