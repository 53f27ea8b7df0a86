#!/usr/bin/env bash
# 64 clients from distinct 127.0.x.y addresses MNT and UMNT while batches
# add and remove shares: no errors other than ACCES for shares being
# removed, DUMP lists exactly what the clients mounted and did not
# unmount, and RSS after warm-up stays bounded.
# SHAREMGR_SOAK_SECONDS (default 20) sets the length; long mode:
#   SHAREMGR_SOAK_SECONDS=600 bash tests/reliability/soak_mnt_umnt_during_batches.sh
source "$(dirname "$0")/lib.sh"
sm_setup
SECONDS_TO_RUN=${SHAREMGR_SOAK_SECONDS:-20}
make_many_dirs 200 s
make_many_dirs 200 x
start_daemon --insecure
sc create g || fail "create refused"
{
  for ((i = 0; i < 200; i++)); do printf 'add-share -s %s/export/s%05d g\n' "$SM_DIR" "$i"; done
} | sc batch - || fail "setup batch refused"
# Clients mount the stable shares and the churning ones.
{
  for ((i = 0; i < 200; i += 4)); do printf '%s/export/s%05d\n' "$SM_DIR" "$i"; done
  for ((i = 0; i < 200; i += 8)); do printf '%s/export/x%05d\n' "$SM_DIR" "$i"; done
} >"$SM_DIR/paths"
{ for ((i = 0; i < 200; i++)); do printf 'add-share -s %s/export/x%05d g\n' "$SM_DIR" "$i"; done; } >"$SM_DIR/add.batch"
sed 's/^add-share/remove-share/' "$SM_DIR/add.batch" >"$SM_DIR/remove.batch"

python3 "$(dirname "$0")/rpc_driver.py" soak --port "$MOUNT_PORT" \
  --paths-file "$SM_DIR/paths" --clients 64 --seconds "$SECONDS_TO_RUN" \
  --pid "$DAEMON_PID" >"$SM_DIR/soak.json" 2>&1 &
soak_pid=$!
batches=0
while kill -0 "$soak_pid" 2>/dev/null; do
  sc batch "$SM_DIR/add.batch" >/dev/null || fail "add batch refused"
  sleep 0.2
  sc batch "$SM_DIR/remove.batch" >/dev/null || fail "remove batch refused"
  batches=$((batches + 2))
  sleep 0.2
done
rc=0
wait "$soak_pid" || rc=$?
cat "$SM_DIR/soak.json"
[[ $rc == 0 ]] || fail "soak: errors or lost mount records (see above)"
# The records survive a restart too.
dump_before=$(probe dump | LC_ALL=C sort)
restart_daemon --insecure
assert_eq "$dump_before" "$(probe dump | LC_ALL=C sort)" "DUMP after restart"
echo "batches during the soak: $batches; RSS now $(rss_kib) KiB"
echo "ok"
