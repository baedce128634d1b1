#!/usr/bin/env bash
# PostgreSQL against SQLite (issue 49), side by side on the same machine
# (PostgreSQL 15 shares its cores, fsync and synchronous_commit on): one Atrium
# server at a time, first on SQLite (a fresh data directory), then on a
# throwaway PostgreSQL cluster (scripts/pg-cluster.sh; a fresh database and a
# fresh data directory), each measured by bench/pgcompare:
#   1. REST GET /api/v1/me and GET /api/v1/contacts/books, REST_C keep-alive
#      clients for REST_D each: requests/s and p99
#   2. PUTS WebDAV PUTs of 1 KiB, C clients: wall time and p99
#   3. browse of a 5,000-item folder through REST, 500 a page: median of 5
#   4. the full delta snapshot of the drive (N_FILES files): median of 3
#   5. search p50 over 50 searches of words in the files' text, once the
#      index has taken in every file
# Goal: PostgreSQL within 2x of SQLite on each (a time: Y/X <= 2; a rate:
# X/Y <= 2). Prints one line a figure with PASS or MISS; exits non-zero only
# when the measurement cannot be set up.
#
#   bash bench/postgres.sh
# Environment: N_FILES (default 100000), PUTS (10000), C (4), REST_C (8),
# REST_D (10s), FOLDER (5000), FILL_C_SQLITE (8) and FILL_C_POSTGRES (1): the
# clients that fill the drive after the timed PUTs, FILL (put; copy: the
# folders after the timed PUTs' as WebDAV COPYs of the first, which on
# PostgreSQL were about 1.5x faster than PUTs, the same text in every
# folder), ENGINES ("sqlite postgres"), KEEP_LOGS (a directory
# to keep the servers' logs and pgcompare's outputs in).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
N_FILES="${N_FILES:-100000}"
PUTS="${PUTS:-10000}"
C="${C:-4}"
REST_C="${REST_C:-8}"
REST_D="${REST_D:-10s}"
FOLDER="${FOLDER:-5000}"
# The fill is not timed: each engine gets its fastest client count. On
# PostgreSQL one owner's concurrent writes conflict on the drive's change
# sequence and are run again (serialization failures): one client is faster.
FILL="${FILL:-put}"
FILL_C_SQLITE="${FILL_C_SQLITE:-8}"
FILL_C_POSTGRES="${FILL_C_POSTGRES:-1}"
ENGINES="${ENGINES:-sqlite postgres}"

TMP="$(mktemp -d /tmp/atrium-postgres.XXXXXX)"
source bench/lib.sh
PG_DIR="$TMP/pg"
chmod 755 "$TMP" # the cluster runs as the postgres user when this runs as root
pg_cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
  [ -n "${KEEP_LOGS:-}" ] && mkdir -p "$KEEP_LOGS" && cp "$TMP"/*.log "$TMP"/*.out "$KEEP_LOGS"/ 2>/dev/null
  [ -f "$PG_DIR/data/postmaster.pid" ] && bash scripts/pg-cluster.sh stop "$PG_DIR" >/dev/null 2>&1 || true
  cleanup
}
trap pg_cleanup EXIT

for tool in curl python3 psql; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
T0=$SECONDS
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(go version | cut -d' ' -f3-), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "== load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
go build -trimpath -ldflags "-s -w" -o "$TMP/atrium" ./cmd/atrium || die "go build"
go build -o "$TMP/pgcompare" ./bench/pgcompare || die "build bench/pgcompare"
BIN="$TMP/atrium"

if [[ " $ENGINES " == *" postgres "* ]]; then
  eval "$(bash scripts/pg-cluster.sh start "$PG_DIR")" || die "scripts/pg-cluster.sh start"
  echo "== PostgreSQL: $(psql "$ATRIUM_TEST_DATABASE_URL" -Atc 'SHOW server_version') (fsync $(psql "$ATRIUM_TEST_DATABASE_URL" -Atc 'SHOW fsync'), synchronous_commit $(psql "$ATRIUM_TEST_DATABASE_URL" -Atc 'SHOW synchronous_commit'), shared_buffers $(psql "$ATRIUM_TEST_DATABASE_URL" -Atc 'SHOW shared_buffers'))"
fi
echo "== $N_FILES files of 1 KiB in folders of $FOLDER (the first $PUTS timed, $C clients); REST $REST_C clients for $REST_D per endpoint; engines in turn: $ENGINES"

for engine in $ENGINES; do
  DATA="$TMP/data-$engine"
  fill_c=$FILL_C_SQLITE
  unset ATRIUM_DATABASE_URL
  if [ "$engine" = postgres ]; then
    psql "$ATRIUM_TEST_DATABASE_URL" -qc "CREATE DATABASE bench" || die "CREATE DATABASE bench"
    export ATRIUM_DATABASE_URL="${ATRIUM_TEST_DATABASE_URL%/postgres*}/bench?sslmode=disable"
    fill_c=$FILL_C_POSTGRES
  fi
  PORT=$(free_port) || die "no free port"
  BASE="http://127.0.0.1:$PORT"
  CREDS=$("$BIN" bootstrap --data "$DATA" --json --admin-email bench@example.test --public-url "$BASE") || die "atrium bootstrap ($engine)"
  TOKEN=$(printf '%s' "$CREDS" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  APP_PASS=$(printf '%s' "$CREDS" | sed -n 's/.*"app_password":"\([^"]*\)".*/\1/p')
  "$BIN" serve --data "$DATA" --listen "127.0.0.1:$PORT" >"$TMP/serve-$engine.log" 2>&1 &
  SERVER_PID=$!
  ready=0
  for _ in $(seq 500); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] && { ready=1; break; }
    sleep 0.02
  done
  [ "$ready" = 1 ] || { tail -20 "$TMP/serve-$engine.log" >&2; die "atrium ($engine) did not become ready"; }
  wait_quiet 20
  echo "== $engine: server ready, load $(cut -d' ' -f1-3 /proc/loadavg)"
  t=$SECONDS
  "$TMP/pgcompare" -base "$BASE" -token "$TOKEN" -user bench@example.test -pass "$APP_PASS" \
    -files "$N_FILES" -puts "$PUTS" -c "$C" -rest-c "$REST_C" -rest-d "$REST_D" -folder "$FOLDER" -fill-c "$fill_c" $([ "$FILL" = copy ] && echo -fill-copy) \
    >"$TMP/$engine.out" || { tail -20 "$TMP/serve-$engine.log" >&2; die "bench/pgcompare failed on $engine"; }
  if [ "$engine" = postgres ]; then
    # Write transactions that PostgreSQL failed (and Atrium ran again): its log has each one's ERROR.
    echo "pg_serialization_failures $(grep -c 'could not serialize access' "$PG_DIR/log" || true)" >>"$TMP/$engine.out"
    echo "pg_deadlocks $(grep -c 'deadlock detected' "$PG_DIR/log" || true)" >>"$TMP/$engine.out"
  fi
  sed "s/^/   $engine /" "$TMP/$engine.out"
  echo "== $engine: $((SECONDS - t)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
done

[[ " $ENGINES " == *" sqlite "* && " $ENGINES " == *" postgres "* ]] || exit 0
val() { awk -v k="$2" '$1 == k { print $2 }' "$TMP/$1.out"; }
# line WHAT KEY UNIT HIGHER: sqlite X, postgres Y, ratio Y/X; HIGHER=1 when more is better (the goal is then X/Y <= 2).
line() {
  local x y r ok
  x=$(val sqlite "$2")
  y=$(val postgres "$2")
  r=$(ratio "$y" "$x")
  if [ "$4" = 1 ]; then
    ok=$(awk -v a="$x" -v b="$y" 'BEGIN { print (a / b <= 2.0) ? 1 : 0 }')
  else
    ok=$(awk -v r="$r" 'BEGIN { print (r <= 2.0) ? 1 : 0 }')
  fi
  printf "%s: sqlite %s %s, postgres %s %s, ratio %sx (goal %s) %s\n" "$1" "$x" "$3" "$y" "$3" "$r" \
    "$([ "$4" = 1 ] && echo '>= 0.5x' || echo '<= 2.0x')" "$(verdict "$ok")"
}
echo
echo "== figures (PostgreSQL against SQLite, the same binary and client)"
line "REST GET /api/v1/me requests/s" rest_me_rps "req/s" 1
line "REST GET /api/v1/me p99" rest_me_p99_ms ms 0
line "REST GET /api/v1/contacts/books requests/s" rest_books_rps "req/s" 1
line "REST GET /api/v1/contacts/books p99" rest_books_p99_ms ms 0
line "$PUTS WebDAV PUTs of 1 KiB ($C clients) wall time" puts_s s 0
line "$PUTS WebDAV PUTs of 1 KiB p99" puts_p99_ms ms 0
line "browse of a $(val sqlite browse_items)-item folder (REST, 500 a page)" browse_ms ms 0
line "delta snapshot of $(val sqlite delta_items) items (1,000 a page)" delta_ms ms 0
line "search p50 at $N_FILES files (50 searches)" search_p50_ms ms 0
echo "other: fill of the drive after the timed PUTs ($FILL, untimed): sqlite $(val sqlite fill_s)$(val sqlite copy_s) s, postgres $(val postgres fill_s)$(val postgres copy_s) s; the index caught up $(val sqlite index_wait_s) s / $(val postgres index_wait_s) s after the delta snapshots; search p99 $(val sqlite search_p99_ms) / $(val postgres search_p99_ms) ms, $(val sqlite search_mean_hits) hits a search on average; PostgreSQL failed $(val postgres pg_serialization_failures) write transactions for serialization and $(val postgres pg_deadlocks) for deadlocks over the run (Atrium ran them again)"
echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg); the script took $((SECONDS - T0)) s"
