#!/usr/bin/env bash
# Foundation performance targets, measured on this machine:
#   1. full middleware stack vs. bare gin, same process: throughput ratio >= 0.5
#   2. wrk on loopback, authenticated GET /api/v1/me: >= 10,000 req/s, p99 < 10 ms
#   3. start to /readyz < 300 ms with >= 100k rows; idle RSS < 40 MB; binary < 60 MB
# Prints one figure per line with PASS or MISS (MB = 10^6 bytes). Exits non-zero
# only when the measurement itself cannot be set up (build, install, server
# start), never because a target is missed.
#
#   bash bench/foundation.sh            # from the repository root or anywhere
# Environment: WRK_DURATION (default 15s), STARTS (default 5), BENCHTIME (default 3s).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

WRK_DURATION="${WRK_DURATION:-15s}"
STARTS="${STARTS:-5}"
BENCHTIME="${BENCHTIME:-3s}"

TMP="$(mktemp -d /tmp/atrium-foundation.XXXXXX)"
source bench/lib.sh # cleanup (the server, $TMP), die, verdict, lt, ge, fig
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; } # decimal MB

echo "== machine: $(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3)"

# --- build --------------------------------------------------------------------
go build -trimpath -o "$TMP/atrium" ./cmd/atrium || die "go build"
go build -trimpath -ldflags "-s -w" -o "$TMP/atrium-release" ./cmd/atrium || die "go build (release)"
go build -o "$TMP/seed" ./bench/seed || die "go build bench/seed"
go build -o "$TMP/readyz" ./bench/readyz || die "go build bench/readyz"
BIN="$TMP/atrium-release"
size_dev=$(stat -c %s "$TMP/atrium")
size_rel=$(stat -c %s "$BIN")
fig "binary size (-trimpath)" "$(mb "$size_dev") MB"
fig "binary size (release, -s -w)" "$(mb "$size_rel") MB" "< 60 MB" "$(lt "$size_rel" 60000000)"

# --- wrk ------------------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
  echo "== installing wrk"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; } >"$TMP/apt.log" 2>&1 ||
    { cat "$TMP/apt.log" >&2; die "apt-get install wrk"; }
fi
command -v curl >/dev/null 2>&1 || die "curl is needed"

# --- 1. in-process: full stack vs. bare gin -----------------------------------
go test -run '^$' -bench 'BenchmarkStackMe|BenchmarkBareGin' -benchtime "$BENCHTIME" ./web/ >"$TMP/gobench.txt" 2>&1 ||
  { cat "$TMP/gobench.txt" >&2; die "go test -bench"; }
nsop() { awk -v n="$1" '$1 ~ "^"n"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($i == "ns/op") print $(i-1) }' "$TMP/gobench.txt"; }
allocs() { awk -v n="$1" '$1 ~ "^"n"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($i == "allocs/op") print $(i-1) }' "$TMP/gobench.txt"; }
stack_ns=$(nsop BenchmarkStackMe)
bare_ns=$(nsop BenchmarkBareGin)
[ -n "$stack_ns" ] && [ -n "$bare_ns" ] || { cat "$TMP/gobench.txt" >&2; die "no ns/op in benchmark output"; }
ratio=$(awk -v s="$stack_ns" -v b="$bare_ns" 'BEGIN { printf "%.4f", b / s }')
fig "BenchmarkStackMe (full stack)" "$stack_ns ns/op, $(allocs BenchmarkStackMe) allocs/op"
fig "BenchmarkBareGin (same bytes)" "$bare_ns ns/op, $(allocs BenchmarkBareGin) allocs/op"
fig "throughput ratio stack/bare" "$ratio" ">= 0.5" "$(ge "$ratio" 0.5)"

# --- 2. wrk on loopback ---------------------------------------------------------
# wait_ready URL: up to 10 s for a 200.
wait_ready() {
  for _ in $(seq 1 1000); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" 2>/dev/null)" = 200 ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}

DATA="$TMP/wrk-data"
PORT=$(free_port) || die "no free port"
BASE="http://127.0.0.1:$PORT"
boot=$("$BIN" bootstrap --data "$DATA" --json) || die "atrium bootstrap"
TOKEN=$(printf '%s' "$boot" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
[ -n "$TOKEN" ] || die "no token in bootstrap output: $boot"
# Default configuration: info-level access log, here to a file.
"$BIN" serve --data "$DATA" --listen "127.0.0.1:$PORT" >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
wait_ready "$BASE/readyz" || { tail -20 "$TMP/serve.log" >&2; die "server not ready"; }
code=$(curl -s -o "$TMP/me.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/me")
[ "$code" = 200 ] || die "GET /api/v1/me answered $code: $(cat "$TMP/me.json")"
fig "GET /api/v1/me response body" "$(stat -c %s "$TMP/me.json") bytes"

wrk -t2 -c32 -d3s -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/me" >/dev/null 2>&1 || die "wrk warm-up"
wrk -t2 -c32 -d"$WRK_DURATION" --latency -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/me" >"$TMP/wrk.txt" 2>&1 ||
  { cat "$TMP/wrk.txt" >&2; die "wrk"; }
rps=$(awk '/^Requests\/sec:/ { print $2 }' "$TMP/wrk.txt")
# The 99% line of the latency distribution, converted to milliseconds.
p99=$(awk '/Latency Distribution/ { d = 1 } d && $1 == "99%" {
  v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
  f = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : (u == "m") ? 60000 : -1
  printf "%.2f", v * f; exit }' "$TMP/wrk.txt")
[ -n "$rps" ] && [ -n "$p99" ] || { cat "$TMP/wrk.txt" >&2; die "cannot parse wrk output"; }
non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$TMP/wrk.txt")
errors=$(awk '/Socket errors:/ { sub(/^ *Socket errors: */, ""); print }' "$TMP/wrk.txt")
fig "wrk -t2 -c32 -d$WRK_DURATION throughput" "$(printf "%.0f" "$rps") req/s" ">= 10000" "$(ge "$rps" 10000)"
fig "wrk p99 latency" "$p99 ms" "< 10 ms" "$(lt "$p99" 10)"
[ -z "$non2xx" ] || fig "wrk non-2xx responses" "$non2xx (the wrk figures are not valid)"
[ -z "$errors" ] || fig "wrk socket errors" "$errors"
kill -TERM "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

# --- 3. start-up with >= 100k rows, idle RSS -------------------------------------
SEEDED="$TMP/seeded"
seed_out=$("$TMP/seed" -data "$SEEDED") || die "seed"
rows=$(printf '%s' "$seed_out" | sed -n 's/.*rows=\([0-9]*\).*/\1/p')
fig "seeded database" "$rows rows, $(mb "$(stat -c %s "$SEEDED/atrium.db")") MB"
[ "${rows:-0}" -ge 100000 ] || die "seeded only ${rows:-0} rows"
"$TMP/readyz" -bin "$BIN" -data "$SEEDED" -runs "$STARTS" >"$TMP/readyz.txt" 2>&1 ||
  { cat "$TMP/readyz.txt" >&2; die "readyz"; }
stat_of() { # stat_of KEY: "min median max" of KEY=value over the runs
  sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$TMP/readyz.txt" | sort -g |
    awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print v[1], m, v[NR] }'
}
read -r r_min r_med r_max < <(stat_of ready_ms)
read -r m_min m_med m_max < <(stat_of rss_kb)
fig "start to /readyz 200 ($STARTS starts)" "min $r_min ms, median $r_med ms, max $r_max ms" "< 300 ms" "$(lt "$r_med" 300)"
rss_med=$(awk -v k="$m_med" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
rss_max=$(awk -v k="$m_max" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
fig "idle RSS (2 s after ready)" "median $rss_med MB, max $rss_max MB" "< 40 MB" "$(lt "$rss_max" 40)"
# RSS counts the pages of the mapped binary the process has touched (file-backed,
# droppable by the kernel); the anonymous part is the heap, stacks and SQLite's cache.
read -r a_min a_med a_max < <(stat_of rss_anon_kb)
fig "idle RSS, anonymous part only" "median $(awk -v k="$a_med" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }') MB, max $(awk -v k="$a_max" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }') MB"
