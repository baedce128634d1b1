#!/usr/bin/env bash
# Several nodes (issue "Several nodes"): a mixed workload through nginx on one
# Atrium node and on two, on one PostgreSQL (pg_stat_statements preloaded,
# fsync and synchronous_commit on) and one versitygw bucket, all on this
# machine's cores; each node held to one core (GOMAXPROCS=1, through
# scripts/cluster.sh's ATRIUM_NODE_ENV). For each node count (NODES):
#   1. a fresh database and bucket; N nodes behind nginx (scripts/cluster.sh);
#      one user seeded with FOLDERS x PER_FOLDER files of 2 KiB of text and
#      EVENTS events in the default calendar; the search index waited for
#   2. the mix, C keep-alive clients for D (bench/mixload -mode mix): browse
#      30% (REST, a folder of 100), PROPFIND Depth 1 20% (a folder of 100),
#      download 20% (WebDAV GET of 2 KiB), search 10% (REST), small upload 10%
#      (WebDAV PUT of 4 KiB), CalDAV REPORT 10% (calendar-query of a month):
#      requests/s, p50/p99 per operation, errors (must be 0), and the CPU each
#      process used (/proc/PID/stat), per request
# Then, on SERIAL_AT nodes, for each operation alone, K of them one at a time
# after pg_stat_statements_reset(): statements and round trips to PostgreSQL
# per operation (every statement is one round trip; BEGIN/COMMIT/ROLLBACK
# counted apart as well), PostgreSQL's mean execution time per statement, the
# CPU of the nodes and of PostgreSQL per operation, and the store's requests
# and bytes per operation, counted by a TCP proxy between the nodes and
# versitygw (mixload -mode proxy; it is in the path of every run). The
# background statements of an idle cluster (the leader's jobs), measured for
# IDLE seconds, are taken off pro rata.
#
#   bash bench/cluster.sh
# Environment: NODES ("1 2"), C (16), D (20s), K (200), FOLDERS (20),
# PER_FOLDER (100), EVENTS (200), SERIAL_AT (1), IDLE (10), KEEP_LOGS (a
# directory for the nodes', nginx's and PostgreSQL's logs).
# Prints one line a figure ("LABEL  FIGURE", two spaces apart; errors with
# target and PASS/MISS); exits non-zero only when it cannot be set up.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
NODES="${NODES:-1 2}"
C="${C:-16}"
D="${D:-20s}"
K="${K:-200}"
FOLDERS="${FOLDERS:-20}"
PER_FOLDER="${PER_FOLDER:-100}"
EVENTS="${EVENTS:-200}"
SERIAL_AT="${SERIAL_AT:-1}"
IDLE="${IDLE:-10}"
AFTER="${AFTER:-3}"
OPS="browse propfind download search upload caldav"
# Serial only: a 1 MiB upload, larger than the 64 KiB a file's content may be
# to be kept in the database ([drive] small_bytes), so that it goes to the store.
SERIAL_OPS="$OPS upload_big"

TMP="$(mktemp -d /tmp/atrium-clusterbench.XXXXXX)"
source bench/lib.sh
chmod 755 "$TMP" # the PostgreSQL cluster runs as the postgres user when this runs as root
CL_DIR="" PROXY_PID=""
cb_cleanup() {
  [ -n "${KEEP_LOGS:-}" ] && mkdir -p "$KEEP_LOGS" && cp "$TMP"/*.log "$TMP"/cl-*/*.log "$TMP/pg/log" "$KEEP_LOGS"/ 2>/dev/null
  [ -n "$CL_DIR" ] && bash scripts/cluster.sh stop "$CL_DIR" >/dev/null 2>&1
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
  [ -d "$TMP/s3" ] && bash scripts/s3-server.sh stop "$TMP/s3" >/dev/null 2>&1
  [ -f "$TMP/pg/data/postmaster.pid" ] && bash scripts/pg-cluster.sh stop "$TMP/pg" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cb_cleanup EXIT
for tool in curl python3 psql nginx; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

# fig2 LABEL FIGURE: a figure without a target (two spaces apart, for report.py).
fig2() { printf "%-56s  %s\n" "$1" "$2"; }
# ticks PID...: CPU time (user + system, clock ticks) of the processes.
ticks() { local p s=0 t; for p in "$@"; do t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0); s=$((s + t)); done; echo "$s"; }
pg_pids() { local m; m=$(head -1 "$TMP/pg/data/postmaster.pid"); echo "$m $(ps -o pid= --ppid "$m" | tr '\n' ' ')"; }
nginx_pids() { local m; m=$(cat "$CL_DIR/nginx.master.pid"); echo "$m $(ps -o pid= --ppid "$m" | tr '\n' ' ')"; }
# snap: ticks of nodes, PostgreSQL, versitygw, nginx, the proxy, and the machine's busy ticks.
snap() {
  # shellcheck disable=SC2046
  echo "$(ticks $ATRIUM_NODE_PIDS) $(ticks $(pg_pids)) $(ticks "$(cat "$TMP/s3/pid")") $(ticks $(nginx_pids)) $(ticks "$PROXY_PID") $(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat)"
}
HZ=$(getconf CLK_TCK)
TXRE='^\s*(BEGIN|START TRANSACTION|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)' 
psql_pg() { psql "$ATRIUM_TEST_DATABASE_URL" -qAtc "$1"; }
store() { curl -fsS "http://$PROXY_STATS/" | awk -v k="$1" '$1 == k { print $2 }'; }
# make_bucket NAME: a bucket on versitygw, signed with its root credentials.
make_bucket() {
  local code
  code=$(curl -s -o "$TMP/bucket.out" -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
    -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" \
    --user "$ATRIUM_TEST_S3_ACCESS_KEY:$ATRIUM_TEST_S3_SECRET_KEY" "$ATRIUM_TEST_S3_ENDPOINT/$1")
  [ "$code" = 200 ] || { cat "$TMP/bucket.out" >&2; die "create bucket $1: HTTP $code"; }
}
val() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

T0=$SECONDS
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(go version | cut -d' ' -f3-), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "== load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
go build -trimpath -ldflags "-s -w" -o "$TMP/atrium" ./cmd/atrium || die "go build"
go build -o "$TMP/mixload" ./bench/mixload || die "build bench/mixload"
export ATRIUM_BIN="$TMP/atrium"
ML="$TMP/mixload"

eval "$(PG_EXTRA_CONF="shared_preload_libraries = 'pg_stat_statements'" bash scripts/pg-cluster.sh start "$TMP/pg")" || die "scripts/pg-cluster.sh start"
psql_pg "CREATE EXTENSION pg_stat_statements" || die "CREATE EXTENSION pg_stat_statements"
eval "$(bash scripts/s3-server.sh start "$TMP/s3")" || die "scripts/s3-server.sh start"
PROXY_ADDR="127.0.0.1:$(free_port)"
PROXY_STATS="127.0.0.1:$(free_port)"
"$ML" -mode proxy -listen "$PROXY_ADDR" -to "${ATRIUM_TEST_S3_ENDPOINT#http://}" -stats "$PROXY_STATS" >"$TMP/proxy.log" 2>&1 &
PROXY_PID=$!
for _ in $(seq 50); do curl -fs -o /dev/null "http://$PROXY_STATS/" && break; sleep 0.1; done
echo "== PostgreSQL $(psql_pg 'SHOW server_version') (fsync $(psql_pg 'SHOW fsync'), synchronous_commit $(psql_pg 'SHOW synchronous_commit'), shared_buffers $(psql_pg 'SHOW shared_buffers'), pg_stat_statements track $(psql_pg 'SHOW pg_stat_statements.track'), track_utility $(psql_pg 'SHOW pg_stat_statements.track_utility')); versitygw $(sed -n 's/^version=//p' scripts/s3-server.sh) (posix) on $(df -h "$TMP" | awk 'NR==2 { print $1 }'), behind a counting TCP proxy (bench/mixload -mode proxy); nginx $(nginx -v 2>&1 | cut -d/ -f2), 1 worker"
echo "== $((FOLDERS * PER_FOLDER)) files of 2 KiB in $FOLDERS folders, $EVENTS events; mix: $C clients for $D; serial: $K of each operation on $SERIAL_AT node(s); nodes GOMAXPROCS=1; node counts: $NODES"

for N in $NODES; do
  db="bench$N"
  psql_pg "CREATE DATABASE $db" || die "CREATE DATABASE $db"
  psql "${ATRIUM_TEST_DATABASE_URL%%/postgres\?*}/$db?sslmode=disable" -qc "CREATE EXTENSION pg_stat_statements" || die "CREATE EXTENSION in $db"
  make_bucket "bench-n$N"
  export ATRIUM_DATABASE_URL="${ATRIUM_TEST_DATABASE_URL%%/postgres\?*}/$db?sslmode=disable"
  export ATRIUM_S3_ENDPOINT="http://$PROXY_ADDR" ATRIUM_S3_BUCKET="bench-n$N" \
    ATRIUM_S3_ACCESS_KEY="$ATRIUM_TEST_S3_ACCESS_KEY" ATRIUM_S3_SECRET_KEY="$ATRIUM_TEST_S3_SECRET_KEY"
  unset ATRIUM_PUBLIC_URL ATRIUM_URL
  CL_DIR="$TMP/cl-$N"
  eval "$(ATRIUM_CLUSTER=$N ATRIUM_NODE_ENV="GOMAXPROCS=1" bash scripts/cluster.sh start "$CL_DIR")" || { CL_DIR=""; die "scripts/cluster.sh start ($N nodes)"; }
  for p in $ATRIUM_NODE_PIDS; do
    grep -qx 'GOMAXPROCS=1' <(tr '\0' '\n' <"/proc/$p/environ") || die "node $p runs without GOMAXPROCS=1"
  done
  CREDS=$("$ATRIUM_BIN" bootstrap --data "$TMP/boot-$N" --json --admin-email bench@example.test) || die "atrium bootstrap ($N nodes)"
  j() { printf '%s' "$CREDS" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
  ARGS=(-base "$ATRIUM_URL" -token "$(j token)" -user "$(j email)" -pass "$(j app_password)" -user-id "$(j user_id)"
    -folders "$FOLDERS" -per-folder "$PER_FOLDER" -events "$EVENTS")
  "$ML" -mode seed -c 4 -metrics "${ATRIUM_NODE_URLS%% *}" "${ARGS[@]}" >"$TMP/seed-$N.out" || die "mixload seed ($N nodes)"
  [ "$N" = "$(echo "$NODES" | awk '{ print $1 }')" ] &&
    echo "== seed: $(val "$TMP/seed-$N.out" seed_files) files and $(val "$TMP/seed-$N.out" seed_events) events in $(val "$TMP/seed-$N.out" seed_s) s (4 clients, $N node(s)); the index had them $(val "$TMP/seed-$N.out" index_wait_s) s after"
  wait_quiet 20
  echo "== $N node(s): load before the mix $(cut -d' ' -f1-3 /proc/loadavg)"
  a=$(snap)
  "$ML" -mode mix -c "$C" -d "$D" -tag "mix$N" "${ARGS[@]}" >"$TMP/mix-$N.out" || die "mixload mix ($N nodes)"
  b=$(snap)
  nl="$N node$([ "$N" = 1 ] || echo s)"
  rps=$(val "$TMP/mix-$N.out" mix_rps)
  reqs=$(val "$TMP/mix-$N.out" mix_requests)
  errs=$(val "$TMP/mix-$N.out" mix_errors)
  secs=$(val "$TMP/mix-$N.out" mix_seconds)
  fig2 "$nl: the mix, $C clients for $D" "**$rps requests/s** ($reqs requests)"
  fig "$nl: errors in the mix" "$errs of $reqs" "0" "$([ "$errs" = 0 ] && echo 1 || echo 0)"
  for op in $OPS; do
    l=$(grep "^op_$op " "$TMP/mix-$N.out")
    fig2 "$nl: $op p50 / p99" "$(sed -E 's/.*rps=([0-9.]+) p50_ms=([0-9.]+) p99_ms=([0-9.]+).*/\2 \/ \3 ms (\1 req\/s)/' <<<"$l")"
  done
  grep '^mix_first_error' "$TMP/mix-$N.out" >&2 || true
  # CPU of each process during the mix: cores busy, and ms per request.
  fig2 "$nl: CPU during the mix (cores busy)" "$(awk -v a="$a" -v b="$b" -v hz="$HZ" -v s="$secs" -v r="$reqs" -v n="$N" 'BEGIN {
    split(a, x, " "); split(b, y, " "); split("nodes PostgreSQL versitygw nginx proxy", name, " ")
    for (i = 1; i <= 5; i++) { c = (y[i] - x[i]) / hz; out = out sprintf("%s%s %.2f (%.2f ms a request)", (i > 1 ? ", " : ""), name[i], c / s, 1000 * c / r) }
    printf "%s; the machine %.2f of 2 cores (the rest: the client, the kernel)", out, (y[6] - x[6]) / hz / s }')"
  node_cores=$(awk -v a="$a" -v b="$b" -v hz="$HZ" -v s="$secs" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.2f", (y[1] - x[1]) / hz / s }')
  echo "mix_rps_$N $rps" >>"$TMP/summary"
  echo "node_cores_$N $node_cores" >>"$TMP/summary"

  if [ "$N" = "$SERIAL_AT" ]; then
    # The idle cluster's own statements (the leader's jobs), per second.
    wait_quiet 20
    psql_pg "SELECT pg_stat_statements_reset()" >/dev/null
    sleep "$IDLE"
    read -r idle_calls idle_tx < <(psql_pg "SELECT coalesce(sum(calls), 0), coalesce(sum(calls) FILTER (WHERE query ~* '$TXRE'), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db')" | tr '|' ' ')
    fig2 "idle cluster: statements/s in the background" "$(awk -v c="$idle_calls" -v t="$idle_tx" -v s="$IDLE" 'BEGIN { printf "%.2f, BEGIN/COMMIT among them %.2f (%d in %d s; taken off the figures below pro rata)", c / s, t / s, c, s }')"
    for op in $SERIAL_OPS; do
      psql_pg "SELECT pg_stat_statements_reset()" >/dev/null
      s0=$(store up) d0=$(store down) q0=$(store requests)
      a=$(snap)
      "$ML" -mode serial -op "$op" -k "$K" -tag "ser$N" "${ARGS[@]}" >"$TMP/serial-$op.out" || die "mixload serial $op"
      # For uploads, the work left for later (outbox, webhooks, the index's
      # tick: 2 s) counts too.
      after=0
      [[ "$op" == upload* ]] && after=$AFTER
      sleep "$after"
      b=$(snap)
      s1=$(store up) d1=$(store down) q1=$(store requests)
      # calls, of which transaction control, exec ms
      read -r calls tx ms < <(psql_pg "SELECT coalesce(sum(calls), 0), coalesce(sum(calls) FILTER (WHERE query ~* '$TXRE'), 0), coalesce(sum(total_exec_time), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db')" | tr '|' ' ')
      psql_pg "SELECT calls, left(regexp_replace(query, '\s+', ' ', 'g'), 140) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db') ORDER BY calls DESC" >"$TMP/statements-$op.txt"
      secs=$(val "$TMP/serial-$op.out" serial_seconds)
      fig2 "$op alone: round trips to PostgreSQL an operation" "$(awk -v c="$calls" -v tx="$tx" -v ms="$ms" -v k="$K" -v ic="$idle_calls" -v it="$idle_tx" -v is="$IDLE" -v s="$(awk -v s="$secs" -v a="$after" 'BEGIN { print s + a }')" -v p50="$(val "$TMP/serial-$op.out" serial_p50_ms)" 'BEGIN {
        net = (c - ic / is * s) / k; ntx = (tx - it / is * s) / k
        printf "**%.1f** (of which BEGIN/COMMIT %.1f, other statements %.1f); PostgreSQL %.3f ms a statement, %.2f ms an operation; p50 %s ms one at a time", net, ntx, net - ntx, (c ? ms / c : 0), ms / k, p50 }')"
      fig2 "$op alone: CPU an operation" "$(awk -v a="$a" -v b="$b" -v hz="$HZ" -v k="$K" 'BEGIN { split(a, x, " "); split(b, y, " ")
        printf "node %.2f ms, PostgreSQL %.2f ms, versitygw %.2f ms, nginx %.2f ms", 1000 * (y[1] - x[1]) / hz / k, 1000 * (y[2] - x[2]) / hz / k, 1000 * (y[3] - x[3]) / hz / k, 1000 * (y[4] - x[4]) / hz / k }')"
      fig2 "$op alone: the store an operation" "$(awk -v u=$((s1 - s0)) -v d=$((d1 - d0)) -v q=$((q1 - q0)) -v k="$K" 'BEGIN { printf "%.2f requests, %.0f bytes sent to it, %.0f received", q / k, u / k, d / k }')"
      if [[ "$op" == upload* ]]; then
        size=4096
        [ "$op" = upload_big ] && size=1048576
        fig2 "$op alone: bytes through the node a $size-byte file" "$(awk -v u=$((s1 - s0)) -v d=$((d1 - d0)) -v k="$K" -v sz=$size -v o="$(val "$TMP/serial-$op.out" serial_wire_out_per_op)" -v i="$(val "$TMP/serial-$op.out" serial_wire_in_per_op)" 'BEGIN {
          printf "in from the balancer ~%.0f (what the client sent, headers included), out to the store %.0f: %.2fx the file in and out (without PostgreSQL'"'"'s share); back: %.0f to the client, %.0f from the store", o, u / k, (o + u / k) / sz, i, d / k }')"
      fi
    done
    {
      echo "== the statements of each operation alone (calls over $K operations, background included)"
      for op in $SERIAL_OPS; do echo "-- $op"; head -25 "$TMP/statements-$op.txt"; done
    } >"$TMP/statements.txt"
  fi
  bash scripts/cluster.sh stop "$CL_DIR" >/dev/null 2>&1 || true
  CL_DIR=""
  unset ATRIUM_DATABASE_URL
done

if [ -f "$TMP/summary" ] && grep -q '^mix_rps_2 ' "$TMP/summary" && grep -q '^mix_rps_1 ' "$TMP/summary"; then
  fig2 "two nodes against one, the mix" "$(awk '{ v[$1] = $2 } END { printf "%.2fx the requests/s; the nodes used %.2f cores against %.2f", v["mix_rps_2"] / v["mix_rps_1"], v["node_cores_2"], v["node_cores_1"] }' "$TMP/summary")"
fi
echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg); the script took $((SECONDS - T0)) s"
[ -f "$TMP/statements.txt" ] && cat "$TMP/statements.txt"
exit 0
