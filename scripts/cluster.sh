#!/usr/bin/env bash
# A throwaway Atrium cluster for tests and drills: N nodes (default 2) on one
# PostgreSQL database and one S3 bucket, behind nginx (plain round robin, no
# affinity; the configuration is scripts/nginx-cluster.conf.tmpl), all on
# 127.0.0.1 at free ports, everything in DIR.
#
#   eval "$(bash scripts/cluster.sh start DIR)"   # sets ATRIUM_URL, ATRIUM_NODE_URLS, ...
#   bash scripts/cluster.sh restart-node DIR I    # SIGTERM node I (1-based), wait, start it again,
#                                                 # wait until nginx takes it back (fail_timeout)
#   bash scripts/cluster.sh kill-node DIR I       # kill -9 node I (restart-node starts it again)
#   bash scripts/cluster.sh stop DIR              # stops everything by PID, removes DIR
#
# The database and the bucket are ATRIUM_DATABASE_URL and ATRIUM_S3_* when set
# (as CI sets them); else start runs its own PostgreSQL (scripts/pg-cluster.sh,
# DIR/pg) and versitygw (scripts/s3-server.sh, DIR/s3) and stop stops them.
# The binary is $ATRIUM_BIN (default bin/atrium), the number of nodes
# $ATRIUM_CLUSTER (default 2). Every ATRIUM_* variable of the caller's
# environment is passed to the nodes (webhook settings, limits, ...);
# ATRIUM_PUBLIC_URL is the balancer's address and ATRIUM_TRUSTED_PROXIES
# 127.0.0.1 (the balancer), unless set. ATRIUM_NODE_ENV adds other variables
# for the nodes alone, as NAME=VALUE words (e.g. "GOMAXPROCS=1" to hold each
# node to one core, as bench/cluster.sh does).
#
# start prints shell assignments and nothing else on stdout: ATRIUM_URL (the
# balancer), ATRIUM_PUBLIC_URL, ATRIUM_NODE_URLS, ATRIUM_NODE_PIDS,
# ATRIUM_NODE_DATA_DIRS (space-separated, node 1 first), CLUSTER_DIR, and the
# database's and bucket's variables when it started them. restart-node prints
# ATRIUM_NODE_PIDS anew (node I's PID is also in DIR/node-I.pid). Logs:
# DIR/node-I.log (appended to across restarts), DIR/nginx-error.log,
# DIR/nginx-access.log.
set -euo pipefail

cmd="${1:-}"
dir="${2:-}"
usage() { echo "usage: $0 start|stop DIR | restart-node|kill-node DIR I" >&2; exit 2; }
[ -n "$cmd" ] && [ -n "$dir" ] || usage
here=$(cd "$(dirname "$0")" && pwd)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_url URL PID LOG: URL/readyz answers 200 within 30 s, while PID lives
wait_url() {
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "$1/readyz" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  tail -50 "$3" >&2
  echo "cluster: $1 did not become ready (log: $3)" >&2
  return 1
}

# start_node I: starts node I from DIR/node-I.run, records its PID
start_node() {
  local i=$1
  setsid bash "$dir/node-$i.run" >>"$dir/node-$i.log" 2>&1 </dev/null &
  echo $! >"$dir/node-$i.pid"
}

pids() {
  local i out=""
  for i in $(seq 1 "$(cat "$dir/nodes")"); do out="$out $(cat "$dir/node-$i.pid")"; done
  echo "${out# }"
}

# stop_pid PID SECONDS: SIGTERM, then SIGKILL after SECONDS
stop_pid() {
  kill -TERM "$1" 2>/dev/null || return 0
  for _ in $(seq 1 $(($2 * 10))); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
}

case "$cmd" in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # A start that fails stops what it started (the logs were shown).
  trap 'rc=$?; [ "$rc" = 0 ] || bash "$here/cluster.sh" stop "$dir" >&2; exit "$rc"' EXIT
  bin=$(realpath "${ATRIUM_BIN:-$here/../bin/atrium}")
  [ -x "$bin" ] || { echo "cluster: no binary at $bin (set ATRIUM_BIN)" >&2; exit 1; }
  n=${ATRIUM_CLUSTER:-2}
  command -v nginx >/dev/null || { echo "cluster: nginx not found (apt-get install nginx)" >&2; exit 1; }
  exports=()
  if [ -z "${ATRIUM_DATABASE_URL:-}" ]; then
    # The postgres user (pg-cluster.sh as root) must reach DIR/pg.
    [ "$(id -u)" = 0 ] && chmod 755 "$dir"
    out=$(bash "$here/pg-cluster.sh" start "$dir/pg") || exit 1
    eval "$out"
    psql "$ATRIUM_TEST_DATABASE_URL" -qc "CREATE DATABASE atrium" >&2
    ATRIUM_DATABASE_URL="${ATRIUM_TEST_DATABASE_URL%%/postgres\?*}/atrium?sslmode=disable"
    export ATRIUM_DATABASE_URL
    exports+=(ATRIUM_DATABASE_URL)
  fi
  if [ -z "${ATRIUM_S3_ENDPOINT:-}" ]; then
    out=$(bash "$here/s3-server.sh" start "$dir/s3") || exit 1
    eval "$out"
    export ATRIUM_S3_ENDPOINT="$ATRIUM_TEST_S3_ENDPOINT" ATRIUM_S3_BUCKET="$ATRIUM_TEST_S3_BUCKET" \
      ATRIUM_S3_ACCESS_KEY="$ATRIUM_TEST_S3_ACCESS_KEY" ATRIUM_S3_SECRET_KEY="$ATRIUM_TEST_S3_SECRET_KEY"
    exports+=(ATRIUM_S3_ENDPOINT ATRIUM_S3_BUCKET ATRIUM_S3_ACCESS_KEY ATRIUM_S3_SECRET_KEY)
  fi
  lb_port=$(free_port)
  export ATRIUM_PUBLIC_URL="http://127.0.0.1:$lb_port"
  export ATRIUM_TRUSTED_PROXIES="${ATRIUM_TRUSTED_PROXIES:-127.0.0.1}"
  echo "$n" >"$dir/nodes"
  # The nodes' environment: every ATRIUM_* of the caller's, and the above.
  export -p | grep -E '^declare -x ATRIUM_' >"$dir/env"
  for kv in ${ATRIUM_NODE_ENV:-}; do
    [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || { echo "cluster: ATRIUM_NODE_ENV: $kv is not NAME=VALUE" >&2; exit 1; }
    printf 'export %q\n' "$kv" >>"$dir/env"
  done
  servers="" urls="" datas=""
  for i in $(seq 1 "$n"); do
    port=$(free_port)
    mkdir -p "$dir/node-$i"
    printf '%s\n' "source '$dir/env'" "exec '$bin' serve --data '$dir/node-$i' --listen '127.0.0.1:$port'" >"$dir/node-$i.run"
    echo "http://127.0.0.1:$port" >"$dir/node-$i.url"
    servers="${servers}server 127.0.0.1:$port max_fails=1 fail_timeout=5s; "
    urls="$urls http://127.0.0.1:$port"
    datas="$datas $dir/node-$i"
    start_node "$i"
  done
  for i in $(seq 1 "$n"); do
    wait_url "$(cat "$dir/node-$i.url")" "$(cat "$dir/node-$i.pid")" "$dir/node-$i.log"
  done
  mkdir -p "$dir/tmp"
  sed -e "s|@PREFIX@|$dir|g" -e "s|@LISTEN@|127.0.0.1:$lb_port|g" -e "s|@SERVERS@|$servers|" \
    "$here/nginx-cluster.conf.tmpl" >"$dir/nginx.conf"
  setsid nginx -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf" -g 'daemon off;' >>"$dir/nginx-error.log" 2>&1 </dev/null &
  echo $! >"$dir/nginx.master.pid"
  wait_url "$ATRIUM_PUBLIC_URL" "$(cat "$dir/nginx.master.pid")" "$dir/nginx-error.log"
  for v in "${exports[@]}"; do echo "$v='${!v}'; export $v"; done
  echo "ATRIUM_URL='$ATRIUM_PUBLIC_URL'; export ATRIUM_URL"
  echo "ATRIUM_PUBLIC_URL='$ATRIUM_PUBLIC_URL'; export ATRIUM_PUBLIC_URL"
  echo "ATRIUM_NODE_URLS='${urls# }'; export ATRIUM_NODE_URLS"
  echo "ATRIUM_NODE_PIDS='$(pids)'; export ATRIUM_NODE_PIDS"
  echo "ATRIUM_NODE_DATA_DIRS='${datas# }'; export ATRIUM_NODE_DATA_DIRS"
  echo "CLUSTER_DIR='$dir'; export CLUSTER_DIR"
  ;;
restart-node | kill-node)
  i="${3:-}"
  [ -n "$i" ] && [ -f "$dir/node-$i.run" ] || usage
  pid=$(cat "$dir/node-$i.pid")
  if [ "$cmd" = kill-node ]; then
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    exit 0
  fi
  # SIGTERM: the node drains ([http] shutdown_timeout, 15 s by default).
  stop_pid "$pid" 30
  start_node "$i"
  wait_url "$(cat "$dir/node-$i.url")" "$(cat "$dir/node-$i.pid")" "$dir/node-$i.log"
  # nginx left the node out when it stopped answering, for fail_timeout (5 s)
  # from its last failure: it is back behind the balancer only then. Another
  # node stopped before that would leave nginx without a node (502).
  sleep "${CLUSTER_READMIT_SECONDS:-6}"
  echo "ATRIUM_NODE_PIDS='$(pids)'; export ATRIUM_NODE_PIDS"
  ;;
stop)
  [ -d "$dir" ] || exit 0
  [ -f "$dir/nginx.master.pid" ] && stop_pid "$(cat "$dir/nginx.master.pid")" 10
  for f in "$dir"/node-*.pid; do
    [ -f "$f" ] && stop_pid "$(cat "$f")" 30 &
  done
  wait
  [ -d "$dir/s3" ] && bash "$here/s3-server.sh" stop "$dir/s3"
  [ -d "$dir/pg" ] && bash "$here/pg-cluster.sh" stop "$dir/pg"
  rm -rf "$dir"
  ;;
*)
  usage
  ;;
esac
