# Shared helpers of the transfer benchmarks (bench/drive-transfer.sh, bench/tus.sh).
# Source after setting TMP; the caller sets SERVER_PID once the server runs.
# Every script prints one figure per line with PASS or MISS and exits non-zero
# only when the measurement cannot be set up.
SERVER_PID=""
SAMPLER_PID=""
cleanup() {
  [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "SETUP FAILURE: $*" >&2; exit 2; }
verdict() { if [ "$1" = 1 ]; then echo PASS; else echo MISS; fi; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { print (a >= b) ? 1 : 0 }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) ? 1 : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# fig LABEL VALUE [TARGET OK]: one aligned figure line; OK (1 or 0) gives PASS or MISS.
fig() {
  if [ $# -ge 4 ]; then
    printf "%-44s %-40s target %-10s %s\n" "$1" "$2" "$3" "$(verdict "$4")"
  else
    printf "%-44s %s\n" "$1" "$2"
  fi
}
now() { date +%s.%N; }
# wait_quiet [MAX_S]: waits until the machine's CPUs were under 15% busy in
# five half-seconds in a row (at most MAX_S seconds, default 30), so that no
# server's background work after its run falls on the next server's run.
# Two and a half seconds, not one half-second: Atrium's search indexer takes
# in a burst of writes at its next tick (drive.index_interval, 2 s by
# default), up to that long after the burst, and a machine quiet for the
# half-second before that tick is not done. Says so on stderr when it gives up.
cpu_busy_idle() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
wait_quiet() {
  local max=${1:-30} start a b quiet=0
  start=$(date +%s)
  while :; do
    a=$(cpu_busy_idle)
    sleep 0.5
    b=$(cpu_busy_idle)
    if [ "$(awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); busy = y[1] - x[1]; idle = y[2] - x[2]; print (busy < 0.15 * (busy + idle)) ? 1 : 0 }')" = 1 ]; then
      quiet=$((quiet + 1))
      [ "$quiet" -ge 5 ] && return 0
    else
      quiet=0
    fi
    if [ $(($(date +%s) - start)) -ge "$max" ]; then
      echo "wait_quiet: the machine was still busy after ${max} s" >&2
      return 0
    fi
  done
}
# inproc_fig TEST PATTERN N LABEL: runs the go test binary TEST's benchmark
# PATTERN for N ops in the web package, in a process of its own (its CPU
# figure is the whole process's, which what another benchmark left running,
# index merges and checkpoints, would swell), and prints its cpu-us/op and
# allocs/op as figure LABEL.
inproc_fig() {
  local out line cpu allocs
  out=$(cd web && "$1" -test.run '^$' -test.bench "$2" -test.benchtime "${3}x" 2>&1) || { printf '%s\n' "$out" >&2; die "benchmark $2 failed"; }
  line=$(printf '%s\n' "$out" | grep "^Benchmark")
  cpu=$(printf '%s\n' "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "cpu-us/op") print $(i - 1) }')
  allocs=$(printf '%s\n' "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "allocs/op") print $(i - 1) }')
  fig "$4" "$cpu us ($allocs allocs)"
}
# The database writer's figures (/metrics, atrium_db_*: local clients may read
# them). writer_scrape URL FILE saves them; writer_delta BEFORE AFTER prints
# what changed between two scrapes, a "name value" line each; writer_fig LABEL
# DELTAS SECONDS sums such lines and prints how the writer spent SECONDS of
# wall time: writes per commit, a commit's statements and its log writes and
# fsync, a write's wait for the writer, and the writer's busy share.
writer_scrape() { curl -fs "$1/metrics" | awk '/^atrium_db_/ { print $1, $2 }' >"$2" || die "scrape $1/metrics"; }
writer_delta() { awk 'FNR == NR { b[$1] = $2; next } { print $1, $2 - b[$1] }' "$1" "$2"; }
writer_fig() {
  fig "$1" "$(awk -v secs="$3" '{ d[$1] += $2 } END {
    tx = d["atrium_db_write_transactions_total"]; c = d["atrium_db_commits_total"]
    st = d["atrium_db_write_statements_seconds_total"]; cm = d["atrium_db_commit_seconds_total"]
    if (c < 1) { print "no commits"; exit }
    printf "%.2f writes a commit; a commit %.2f ms of statements + %.2f ms of log writes and fsync; a write waited %.2f ms for the writer; the writer busy %.0f%% of %.1f s",
      tx / c, 1000 * st / c, 1000 * cm / c, 1000 * d["atrium_db_write_wait_seconds_total"] / tx, 100 * (st + cm) / secs, secs }' "$2")"
}
mibps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1048576 / s }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# sample_rss FILE: writes the server's peak RSS (KiB) seen every 50 ms to FILE until killed.
sample_rss() {
  local peak=0 v
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    v=$(rss_kib || echo 0)
    [ "${v:-0}" -gt "$peak" ] && peak=$v && echo "$peak" >"$1"
    sleep 0.05
  done
}

# start_atrium: builds the release binary and serves a fresh data directory on
# a free loopback port, with an operator bootstrapped first; sets BIN, DATA,
# PORT, BASE, TOKEN (the operator's token) and SERVER_PID, and returns once
# /readyz answers.
start_atrium() {
  go build -trimpath -ldflags "-s -w" -o "$TMP/atrium" ./cmd/atrium || die "go build"
  BIN="$TMP/atrium"
  DATA="$TMP/data"
  PORT=$(free_port) || die "no free port"
  BASE="http://127.0.0.1:$PORT"
  local boot
  boot=$("$BIN" bootstrap --data "$DATA" --json) || die "atrium bootstrap"
  TOKEN=$(printf '%s' "$boot" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  "$BIN" serve --data "$DATA" --listen "127.0.0.1:$PORT" >"$TMP/serve.log" 2>&1 &
  SERVER_PID=$!
  await_ready "$TMP/serve.log"
}

# await_ready LOG: returns once $BASE/readyz answers 200 (up to 10 s), else
# dies naming the server's log.
await_ready() {
  for _ in $(seq 500); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] && return 0
    sleep 0.02
  done
  die "atrium did not become ready (log: $1)"
}
