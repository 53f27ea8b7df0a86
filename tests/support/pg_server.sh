#!/usr/bin/env bash
# A PostgreSQL of a test's own, in a folder of its own: the cluster tests'
# engine (issue 46). It listens on a Unix socket in that folder only (no
# TCP port to collide with another test), runs as the postgres user when
# started by root (initdb refuses root), and is stopped by the test.
#
#   pg_server.sh start DIR      initdb if needed, start; prints the libpq
#                               connection string ("host=DIR port=5432 ...")
#   pg_server.sh stop DIR [MODE]   pg_ctl stop (MODE fast, the default, or
#                               immediate: as a crash)
#   pg_server.sh psql DIR SQL   runs SQL, prints the rows unaligned
#   pg_server.sh bindir         where initdb and pg_ctl are
#   pg_server.sh initdb DIR     only the initdb (DIR/pgdata): a template
#
# With SHAREMGR_PG_TEMPLATE naming such a DIR/pgdata, start copies it
# instead of running initdb (the kernel guest: initdb takes about 80 s
# under QEMU's emulation, a copy a few). With SHAREMGR_PG_LISTEN naming
# addresses, start also listens there over TCP (port 5432), trusting the
# clients of the subnets this machine is on (a head cut from the engine
# by a route, in the kernel guest).
set -euo pipefail

bindir() {
  local d
  if [[ -n ${SHAREMGR_PG_BIN:-} ]]; then echo "$SHAREMGR_PG_BIN"; return; fi
  if command -v pg_config >/dev/null && d=$(pg_config --bindir) &&
     [[ -x $d/initdb ]]; then
    echo "$d"; return
  fi
  for d in /usr/lib/postgresql/*/bin; do
    [[ -x $d/initdb ]] && { echo "$d"; return; }
  done
  echo "pg_server.sh: no initdb found (install postgresql)" >&2
  exit 1
}

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

cmd=${1:?usage: pg_server.sh start|stop|psql|bindir DIR}
bin=$(bindir)
[[ $cmd == bindir ]] && { echo "$bin"; exit 0; }
dir=${2:?usage: pg_server.sh $cmd DIR}
data=$dir/pgdata
case $cmd in
  start)
    mkdir -p "$dir"
    if [[ $(id -u) -eq 0 ]]; then
      # The folders above it must let postgres through (mode 0755).
      chown postgres: "$dir"
    fi
    if [[ ! -d $data && -f ${SHAREMGR_PG_TEMPLATE:-/nonexistent}/PG_VERSION ]]; then
      cp -a "$SHAREMGR_PG_TEMPLATE" "$data"
      [[ $(id -u) -eq 0 ]] && chown -R postgres: "$data"
      chmod 700 "$data"
    fi
    if [[ ! -d $data ]]; then
      as_owner "$bin/initdb" -D "$data" -A trust -U postgres -E UTF8 \
        --no-instructions >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if [[ -n ${SHAREMGR_PG_LISTEN:-} ]] &&
       ! grep -q '^host all all samenet trust' "$data/pg_hba.conf"; then
      echo "host all all samenet trust" >>"$data/pg_hba.conf"
    fi
    as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
      -o "-k $dir -p 5432 -c listen_addresses=${SHAREMGR_PG_LISTEN:-} -c max_connections=60" \
      start >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
    echo "host=$dir port=5432 dbname=postgres user=postgres"
    ;;
  initdb)
    mkdir -p "$dir"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
    as_owner "$bin/initdb" -D "$data" -A trust -U postgres -E UTF8 \
      --no-instructions >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    # initdb chose by this host (POSIX shared memory); where a copy starts
    # (the guest) may have no /dev/shm: files in the data folder always do.
    echo "dynamic_shared_memory_type = mmap" >>"$data/postgresql.conf"
    ;;
  stop)
    as_owner "$bin/pg_ctl" -D "$data" -m "${3:-fast}" -w -t 60 stop >/dev/null
    ;;
  psql)
    as_owner psql -X -q -A -t -v ON_ERROR_STOP=1 \
      "host=$dir port=5432 dbname=${PGDATABASE:-postgres} user=postgres" \
      -c "${3:?SQL}"
    ;;
  *)
    echo "pg_server.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
