#!/usr/bin/env bash
# The REST request path (issue 21): GET /api/v1/me through Atrium's whole stack
# (authentication from the credential cache, rate limits, huma, the access
# log) against a bare net/http server answering the same bytes
# (bench/bareserver), with wrk -t2 -c64 on loopback, the two in turns (RUNS
# each, medians):
#   1. Atrium's requests/s >= 0.5x the bare server's
#   2. Atrium's p99 latency < 10 ms
# Beside them, without a target: each server's CPU per request (from /proc,
# over its runs) and, as a third server after the turns, the bare server spending
# Atrium's extra CPU per request (bareserver -cpu, the difference measured in
# the runs, after them) — what that much CPU a request alone does to the
# throughput and the p99 when wrk and the server share the two cores.
# Prints one figure per line with PASS or MISS; exits non-zero only when the
# measurement cannot be set up.
#
#   bash bench/requestpath.sh
# Environment: RUNS (default 3), DURATION (wrk -d, default 10s).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
RUNS="${RUNS:-3}"
DURATION="${DURATION:-10s}"
TMP="$(mktemp -d /tmp/atrium-requestpath.XXXXXX)"
source bench/lib.sh
BARE_PID=""
CPU_PID=""
rp_cleanup() {
  [ -n "$BARE_PID" ] && kill "$BARE_PID" 2>/dev/null
  [ -n "$CPU_PID" ] && kill "$CPU_PID" 2>/dev/null
  cleanup
}
trap rp_cleanup EXIT
for tool in curl wrk python3; do command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install $tool)"; done
go build -o "$TMP/bareserver" ./bench/bareserver || die "build bench/bareserver"

echo "== machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
start_atrium
ME="$BASE/api/v1/me"
code=$(curl -s -D "$TMP/me.headers" -o "$TMP/me.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$ME")
[ "$code" = 200 ] || die "GET /api/v1/me answered $code"
B_TYPE="$(awk -F': ' 'tolower($1) == "content-type" { sub(/\r$/, "", $2); print $2 }' "$TMP/me.headers")"
B_PORT=$(free_port)
"$TMP/bareserver" -listen "127.0.0.1:$B_PORT" -body "$TMP/me.json" -type "$B_TYPE" &
BARE_PID=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$B_PORT/" && break; sleep 0.05; done
echo "   the body: $(stat -c %s "$TMP/me.json") bytes"

# ticks PID: the CPU time the process has used, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
# run NAME URL PID [DURATION]: one wrk run; appends "rps p99ms cpu-us-per-request" to $TMP/res.NAME.
run() {
  local t0 t1
  t0=$(ticks "$3")
  wrk -t2 -c64 -d"${4:-$DURATION}" --latency -H "Authorization: Bearer $TOKEN" "$2" >"$TMP/wrk.txt" 2>&1 || { cat "$TMP/wrk.txt" >&2; die "wrk"; }
  t1=$(ticks "$3")
  if grep -q "Non-2xx" "$TMP/wrk.txt"; then cat "$TMP/wrk.txt" >&2; die "$1 answered errors"; fi
  # Columns: req/s, p99 ms, us of CPU a request, p50 ms, p90 ms.
  awk -v cpu=$(((t1 - t0) * 1000000 / HZ)) 'function msv(s,   u) { u = s; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", s); return s * ((u == "us") ? 0.001 : (u == "ms") ? 1 : 1000) }
    /^Requests\/sec:/ { rps = $2 } / requests in / { n = $1 } /Latency Distribution/ { d = 1 }
    d && $1 == "50%" { p50 = msv($2) } d && $1 == "90%" { p90 = msv($2) } d && $1 == "99%" { p = msv($2); d = 0 }
    END { printf "%.0f %.2f %.1f %.2f %.2f\n", rps, p, cpu / n, p50, p90 }' "$TMP/wrk.txt" >>"$TMP/res.$1"
  printf '   %-9s %s req/s, p99 %s ms, %s us of CPU a request (p50 %s ms, p90 %s ms)\n' "$1" $(tail -1 "$TMP/res.$1")
}
wrk -t2 -c64 -d5s -H "Authorization: Bearer $TOKEN" "$ME" >/dev/null 2>&1 # warm-up: the first seconds cost more CPU a request
echo "== wrk -t2 -c64 -d$DURATION, $RUNS runs each, in turns"
for _ in $(seq "$RUNS"); do
  run atrium "$ME" "$SERVER_PID"
  run bare "http://127.0.0.1:$B_PORT/api/v1/me" "$BARE_PID"
done
med() { awk -v c="$2" '{ print $c }' "$TMP/res.$1" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# The third server spends the CPU a request Atrium spent beyond the bare
# server (the medians above).
EXTRA=$(awk -v a="$(med atrium 3)" -v b="$(med bare 3)" 'BEGIN { printf "%.1f", (a > b) ? a - b : 0 }')
C_PORT=$(free_port)
"$TMP/bareserver" -listen "127.0.0.1:$C_PORT" -body "$TMP/me.json" -type "$B_TYPE" -cpu "${EXTRA}us" &
CPU_PID=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$C_PORT/" && break; sleep 0.05; done
echo "== the bare server spending ${EXTRA} us more CPU a request, $RUNS runs"
for _ in $(seq "$RUNS"); do
  run bare+cpu "http://127.0.0.1:$C_PORT/api/v1/me" "$CPU_PID"
done
a_rps=$(med atrium 1); b_rps=$(med bare 1); a_p99=$(med atrium 2); b_p99=$(med bare 2)
r=$(ratio "$a_rps" "$b_rps")
fig "REST GET /api/v1/me atrium/bare Go" "${r}x ($a_rps vs $b_rps req/s)" ">= 0.5" "$(ge "$r" 0.5)"
fig "REST GET p99 latency (bare Go: $b_p99 ms)" "$a_p99 ms" "< 10 ms" "$(lt "$a_p99" 10)"
fig "server CPU a request, atrium vs bare Go" "$(med atrium 3) vs $(med bare 3) us"
fig "REST GET p50 and p90, atrium vs bare Go" "$(med atrium 4) and $(med atrium 5) ms vs $(med bare 4) and $(med bare 5) ms"
fig "bare Go + ${EXTRA} us of CPU a request" "$(med bare+cpu 1) req/s, p99 $(med bare+cpu 2) ms ($(med bare+cpu 3) us a request)"
