#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks: Debian's
# postgresql-15 (or the newest under /usr/lib/postgresql), initialised in a
# directory of its own, listening on 127.0.0.1 at a free port, owned by the
# user running this script (as root, by the postgres user).
#
#   eval "$(bash scripts/pg-cluster.sh start DIR)"   # sets ATRIUM_TEST_DATABASE_URL, PG_CLUSTER_DIR
#   go test ./...                                   # the suite on SQLite and on PostgreSQL
#   bash scripts/pg-cluster.sh stop DIR             # stops the server by its PID, removes DIR
#
# PG_FSYNC=off makes it fast rather than durable (tests); PG_EXTRA_CONF adds
# lines to its postgresql.conf (for example
# "shared_preload_libraries = 'pg_stat_statements'" for a benchmark that counts
# statements).
#
# start prints shell assignments (ATRIUM_TEST_DATABASE_URL, PG_CLUSTER_DIR) and
# nothing else on stdout; the server's log is DIR/log.
set -euo pipefail

cmd="${1:-}"
dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

bin=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
  if [ -x "$d/initdb" ]; then bin="$d"; break; fi
done
[ -n "$bin" ] || { echo "no PostgreSQL server found under /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }

# as runs a command as the cluster's owner: the postgres user when run as root
# (initdb refuses root), else the caller.
as() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # Connections over TCP sign in with a password (user atrium, password
  # atrium), as a real server's do, so that a wrong one is refused.
  echo atrium >"$dir/pwfile"
  [ "$(id -u)" = 0 ] && chown postgres "$dir/pwfile"
  as "$bin/initdb" -D "$dir/data" -U atrium --pwfile="$dir/pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  # Tests make and drop a database each: fast over durable. The server's own
  # settings otherwise stay the defaults (synchronous_commit on).
  cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 400
shared_buffers = 128MB
fsync = ${PG_FSYNC:-on}
full_page_writes = ${PG_FSYNC:-on}
${PG_EXTRA_CONF:-}
EOF
  as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null ||
    { cat "$dir/log" >&2; exit 1; }
  echo "ATRIUM_TEST_DATABASE_URL='postgres://atrium:atrium@127.0.0.1:$port/postgres?sslmode=disable'; export ATRIUM_TEST_DATABASE_URL"
  echo "PG_CLUSTER_DIR='$dir'; export PG_CLUSTER_DIR"
  ;;
stop)
  if [ -f "$dir/data/postmaster.pid" ]; then
    pid=$(head -1 "$dir/data/postmaster.pid")
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
