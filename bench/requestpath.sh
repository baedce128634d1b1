#!/usr/bin/env bash
# The REST request path (issue 21): GET /api/v1/me through Atrium's whole stack
# (authentication from the credential cache, rate limits, huma, the access
# log) against a bare net/http server answering the same bytes
# (bench/bareserver), with wrk -t2 -c64 on loopback, the two in turns (RUNS
# each, medians):
#   1. Atrium's requests/s >= 0.5x the bare server's
#   2. Atrium's p99 latency < 10 ms
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
rp_cleanup() { [ -n "$BARE_PID" ] && kill "$BARE_PID" 2>/dev/null; cleanup; }
trap rp_cleanup EXIT
for tool in curl wrk python3; do command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install $tool)"; done
go build -o "$TMP/bareserver" ./bench/bareserver || die "build bench/bareserver"

echo "== machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
start_atrium
ME="$BASE/api/v1/me"
code=$(curl -s -D "$TMP/me.headers" -o "$TMP/me.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$ME")
[ "$code" = 200 ] || die "GET /api/v1/me answered $code"
B_PORT=$(free_port)
"$TMP/bareserver" -listen "127.0.0.1:$B_PORT" -body "$TMP/me.json" -type "$(awk -F': ' 'tolower($1) == "content-type" { sub(/\r$/, "", $2); print $2 }' "$TMP/me.headers")" &
BARE_PID=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$B_PORT/" && break; sleep 0.05; done
echo "   the body: $(stat -c %s "$TMP/me.json") bytes"

# run NAME URL: one wrk run; appends "rps p99ms" to $TMP/NAME.
run() {
  wrk -t2 -c64 -d"$DURATION" --latency -H "Authorization: Bearer $TOKEN" "$2" >"$TMP/wrk.txt" 2>&1 || { cat "$TMP/wrk.txt" >&2; die "wrk"; }
  if grep -q "Non-2xx" "$TMP/wrk.txt"; then cat "$TMP/wrk.txt" >&2; die "$1 answered errors"; fi
  awk '/^Requests\/sec:/ { rps = $2 } /Latency Distribution/ { d = 1 } d && $1 == "99%" {
    v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
    p = v * ((u == "us") ? 0.001 : (u == "ms") ? 1 : 1000); d = 0 } END { printf "%.0f %.2f\n", rps, p }' "$TMP/wrk.txt" >>"$TMP/res.$1"
  printf '   %-7s %s req/s, p99 %s ms\n' "$1" $(tail -1 "$TMP/res.$1")
}
wrk -t2 -c64 -d2s -H "Authorization: Bearer $TOKEN" "$ME" >/dev/null 2>&1 # warm-up
echo "== wrk -t2 -c64 -d$DURATION, $RUNS runs each, in turns"
for _ in $(seq "$RUNS"); do
  run atrium "$ME"
  run bare "http://127.0.0.1:$B_PORT/api/v1/me"
done
med() { awk -v c="$2" '{ print $c }' "$TMP/res.$1" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
a_rps=$(med atrium 1); b_rps=$(med bare 1); a_p99=$(med atrium 2); b_p99=$(med bare 2)
r=$(ratio "$a_rps" "$b_rps")
fig "REST GET /api/v1/me atrium/bare Go" "${r}x ($a_rps vs $b_rps req/s)" ">= 0.5" "$(ge "$r" 0.5)"
fig "REST GET p99 latency (bare Go: $b_p99 ms)" "$a_p99 ms" "< 10 ms" "$(lt "$a_p99" 10)"
