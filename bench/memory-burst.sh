#!/usr/bin/env bash
# Memory through bursts of small files (issue 47): the server's peak resident
# set while a burst of small text files arrives over WebDAV and while the
# search index takes it in afterwards, and that of `atrium reindex`:
#   1. N_SMALL x SIZE-byte PUTs, C keep-alive clients: peak RSS <= 128 MiB
#   2. N_BIG of them: peak RSS <= 128 MiB
#   3. a WebDAV COPY (Depth infinity) within the drive of a folder of N_COPY
#      files (put in and indexed first, then the server restarted, so that
#      its high-water mark is the copy's): peak RSS <= 128 MiB
#   4. `atrium reindex` of the N_BIG files (the server stopped): its peak RSS
#      <= 128 MiB
# Each burst runs on a fresh server (its own data directory), from before the
# burst until the index has caught up (atrium_search_documents on /metrics)
# and at least AFTER seconds after the burst: the peak is the kernel's
# high-water mark of the process (VmHWM), which no sample can miss; RSS is
# also sampled every 100 ms. Also shown: how fast the index took the burst in
# (items a second, from its first batch to caught up). The files are text of
# words (bench/memburst), so each one's content is extracted and indexed.
# Prints one figure per line with PASS or MISS; exits non-zero only when the
# measurement cannot be set up.
#
#   bash bench/memory-burst.sh
#   N_SMALL=2000 N_BIG=10000 N_COPY=5000 AFTER=10 bash bench/memory-burst.sh   # a quick trial
# Environment: N_SMALL (10000), N_BIG (100000), N_COPY (30000), SIZE (1024),
# C (4), AFTER (30), SCENARIOS ("small big copy reindex"); for looking into a
# miss: PPROF_DIR (each server's heap profile every second into that directory,
# through the metrics listener's profiler) and LOG_DIR (the servers' logs kept
# there; with GODEBUG=gctrace=1, each collection's live heap).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
N_SMALL="${N_SMALL:-10000}"
N_BIG="${N_BIG:-100000}"
N_COPY="${N_COPY:-30000}"
SIZE="${SIZE:-1024}"
C="${C:-4}"
AFTER="${AFTER:-30}"
SCENARIOS="${SCENARIOS:-small big copy reindex}"
PPROF_DIR="${PPROF_DIR:-}"
LOG_DIR="${LOG_DIR:-}"

TMP="$(mktemp -d /tmp/atrium-memburst.XXXXXX)"
source bench/lib.sh
PROFILER_PID=""
burst_cleanup() {
  [ -n "$PROFILER_PID" ] && kill "$PROFILER_PID" 2>/dev/null || true
  [ -n "$LOG_DIR" ] && mkdir -p "$LOG_DIR" && cp "$TMP/serve.log" "$LOG_DIR/" 2>/dev/null
  cleanup
}
trap burst_cleanup EXIT
for tool in curl python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

echo "== machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
go build -trimpath -ldflags "-s -w" -o "$TMP/atrium" ./cmd/atrium || die "go build"
go build -o "$TMP/memburst" ./bench/memburst || die "build bench/memburst"
BIN="$TMP/atrium"

# serve DATA: serves DATA on a free loopback port (metrics and, with
# PPROF_DIR, the profiler on a second one); sets PORT, BASE, MBASE, SERVER_PID.
serve() {
  PORT=$(free_port) || die "no free port"
  BASE="http://127.0.0.1:$PORT"
  MBASE="$BASE"
  local env=()
  if [ -n "$PPROF_DIR" ]; then
    local mport
    mport=$(free_port)
    MBASE="http://127.0.0.1:$mport"
    env=(ATRIUM_METRICS_LISTEN="127.0.0.1:$mport" ATRIUM_METRICS_PPROF=true)
  fi
  env "${env[@]}" "$BIN" serve --data "$1" --listen "127.0.0.1:$PORT" >>"$TMP/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 500); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] && break
    sleep 0.02
  done
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] || die "atrium did not become ready (log: $TMP/serve.log)"
  if [ -n "$PPROF_DIR" ]; then
    mkdir -p "$PPROF_DIR"
    (
      i=0
      while kill -0 "$SERVER_PID" 2>/dev/null; do
        sleep 1
        curl -fs -o "$PPROF_DIR/heap.$SERVER_PID.$(printf %03d $i).pb.gz" "$MBASE/debug/pprof/heap" || true
        i=$((i + 1))
      done
    ) &
    PROFILER_PID=$!
  fi
}
stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  if [ -n "$PROFILER_PID" ]; then
    kill "$PROFILER_PID" 2>/dev/null || true
    wait "$PROFILER_PID" 2>/dev/null || true
    PROFILER_PID=""
  fi
}
# fresh NAME: a new data directory with its operator; sets DATA and DAV (the
# operator's WebDAV root, with an app password in its user info).
fresh() {
  DATA="$TMP/$1"
  local creds email pass
  creds=$("$BIN" bootstrap --data "$DATA" --json) || die "atrium bootstrap"
  email=$(printf '%s' "$creds" | sed -n 's/.*"email":"\([^"]*\)".*/\1/p')
  pass=$(printf '%s' "$creds" | sed -n 's/.*"app_password":"\([^"]*\)".*/\1/p')
  email=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$email")
  DAV_USER="$email:$pass"
}
dav() { echo "http://$DAV_USER@127.0.0.1:$PORT/api/v1/webdav/"; }
# burst NAME ARGS...: runs bench/memburst against the server, its output to
# $TMP/NAME.out and the terminal.
burst() {
  local name=$1
  shift
  "$TMP/memburst" "$@" -pid "$SERVER_PID" -base "$MBASE" -dav "$(dav)" -after "${AFTER}s" | tee "$TMP/$name.out" || die "bench/memburst $name failed"
}
peak_of() { awk '/^rss:/ { print $3 }' "$TMP/$1.out"; }
rate_of() { awk '/^index:/ { for (i = 1; i <= NF; i++) if ($i == "items/s") print $(i - 1) }' "$TMP/$1.out"; }
# split_of NAME: the sampled peaks of the process's own memory and of its mapped files.
split_of() { awk '/^rss:/ { for (i = 1; i <= NF; i++) { if ($i == "(RssAnon)") a = $(i + 1); if ($i == "(RssFile)") f = $(i + 1) } print a " MiB own, " f " MiB mapped files" }' "$TMP/$1.out"; }
lag_of() { awk '/^index:/ { for (i = 1; i <= NF; i++) if ($i == "ended);") { v = $(i - 4); sub(/^\(/, "", v); print v } }' "$TMP/$1.out"; }
fig_peak() {
  local v=$2
  fig "$1" "$v MiB$3" "<= 128 MiB" "$(awk -v v="$v" 'BEGIN { print (v <= 128) ? 1 : 0 }')"
}
# fig_more NAME LABEL: the figures beside a burst's peak.
fig_more() {
  fig "$2: sampled peaks" "$(split_of "$1")"
  fig "$2: the index caught up" "$(lag_of "$1") s after the burst ended"
}

want_scenario() { [[ " $SCENARIOS " == *" $1 "* ]]; }

if want_scenario small; then
  echo "== $N_SMALL PUTs of $SIZE B, $C in parallel, on a fresh server"
  fresh small
  serve "$DATA"
  burst small put -folder small -n "$N_SMALL" -size "$SIZE" -c "$C"
  stop_server
fi
if want_scenario big || want_scenario reindex; then
  echo "== $N_BIG PUTs of $SIZE B, $C in parallel, on a fresh server"
  fresh big
  serve "$DATA"
  burst big put -folder big -n "$N_BIG" -size "$SIZE" -c "$C"
  stop_server
  BIG_DATA="$DATA"
fi
if want_scenario copy; then
  echo "== COPY Depth infinity of a folder of $N_COPY files (put in first; the server restarted before the copy)"
  fresh copy
  serve "$DATA"
  "$TMP/memburst" put -pid "$SERVER_PID" -base "$MBASE" -dav "$(dav)" -after 1s -folder src -n "$N_COPY" -size "$SIZE" -c "$C" >"$TMP/copy-seed.out" ||
    die "putting in the folder to copy failed"
  stop_server
  serve "$DATA"
  sleep 2
  burst copy copy -from src -to dst -add $((N_COPY + 1))
  stop_server
fi
if want_scenario reindex; then
  echo "== atrium reindex of the $N_BIG files (the server stopped)"
  "$TMP/memburst" exec -- "$BIN" reindex --data "$BIG_DATA" --quiet | tee "$TMP/reindex.out" || die "atrium reindex failed"
fi

echo
if want_scenario small; then
  fig_peak "peak RSS, $N_SMALL small PUTs and indexing" "$(peak_of small)" " (indexed $(rate_of small) files/s)"
  fig_more small "$N_SMALL PUTs"
fi
if want_scenario big; then
  fig_peak "peak RSS, $N_BIG small PUTs and indexing" "$(peak_of big)" " (indexed $(rate_of big) files/s)"
  fig_more big "$N_BIG PUTs"
fi
if want_scenario copy; then
  fig_peak "peak RSS, COPY of a $N_COPY-file folder" "$(peak_of copy)" " (indexed $(rate_of copy) items/s)"
  fig_more copy "the COPY"
fi
if want_scenario reindex; then
  secs=$(awk '/^exec:/ { print $2 }' "$TMP/reindex.out")
  fig_peak "peak RSS, reindex of $N_BIG files" "$(awk '/^exec:/ { print $6 }' "$TMP/reindex.out")" " ($secs s, $(awk -v n="$N_BIG" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') files/s)"
  fig "the reindex: sampled peaks" "$(split_of reindex)"
fi
true
