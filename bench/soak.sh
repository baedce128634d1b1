#!/usr/bin/env bash
# Soak (issue 10, "Load"): a steady, open-loop mix of reads and writes across
# the modules (drive browse/upload/download/search, WebDAV PROPFIND/GET/PUT,
# contacts create/update/get/list/search, calendar create/update/range, CardDAV
# and CalDAV sync-collection, webhook subscriptions, with three webhook
# subscriptions delivering every write to a loopback receiver) against a server
# built from this tree, on a temporary data directory, on loopback.
# Targets: error rate 0; p99 latency and RSS flat (growth < 10% from window 2 to
# the last window). Prints a line per window and PASS/MISS lines; exits non-zero
# only when the measurement cannot be set up.
#
#   bash bench/soak.sh                         # 10 minutes at 40 ops/s, windows of 1 minute
#   bash bench/soak.sh --duration 2m --window 20s --rate 60
# Any other flag is passed to the load generator (bench/soak/main.go).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

DURATION=10m
WINDOW=1m
RATE=40
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --duration=*) DURATION="${1#*=}"; shift ;;
    --window) WINDOW="$2"; shift 2 ;;
    --window=*) WINDOW="${1#*=}"; shift ;;
    --rate) RATE="$2"; shift 2 ;;
    --rate=*) RATE="${1#*=}"; shift ;;
    *) EXTRA+=("$1"); shift ;;
  esac
done

TMP="$(mktemp -d "${BENCH_DIR:-/tmp}/atrium-soak.XXXXXX")"
. bench/lib.sh

echo "== machine: $(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
go build -trimpath -ldflags "-s -w" -o "$TMP/atrium" ./cmd/atrium || die "go build"
go build -o "$TMP/soak" ./bench/soak || die "go build bench/soak"

DATA="$TMP/data"
PORT=$(free_port) || die "no free port"
BASE="http://127.0.0.1:$PORT"
boot=$("$TMP/atrium" bootstrap --data "$DATA" --json --admin-email soak@example.test) || die "atrium bootstrap"
field() { printf '%s' "$boot" | sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"; }
# The soak's webhook receiver listens on loopback.
ATRIUM_WEBHOOK_ALLOW_PRIVATE=true "$TMP/atrium" serve --data "$DATA" --listen "127.0.0.1:$PORT" >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 500); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$TMP/serve.log" >&2; die "server exited"; }
  sleep 0.02
done

set +e
"$TMP/soak" -base "$BASE" -token "$(field token)" -email "$(field email)" -password "$(field app_password)" \
  -user "$(field user_id)" -pid "$SERVER_PID" -data "$DATA" -duration "$DURATION" -window "$WINDOW" -rate "$RATE" "${EXTRA[@]}"
rc=$?
set -e
if [ "$rc" -ge 2 ]; then
  echo "== last lines of the server log:" >&2
  tail -20 "$TMP/serve.log" >&2
  die "soak could not run"
fi
errors=$(grep -c 'level=ERROR' "$TMP/serve.log" || true)
fig "server log ERROR lines" "$errors"
# Write transactions that held the writer over 100 ms (the server logs them):
# the disk's fsync stalls, which the p99 of a window follows.
slow=$(grep -c 'slow write transaction' "$TMP/serve.log" || true)
# (none is a good run: the pipeline's empty grep must not end the script)
longest=$(grep 'slow write transaction' "$TMP/serve.log" | grep -o 'held_ms=[0-9]*' | cut -d= -f2 | sort -n | tail -1 || true)
fig "server slow write transactions (> 100 ms)" "$slow${longest:+, the longest $longest ms}"
exit 0
