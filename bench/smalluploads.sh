#!/usr/bin/env bash
# Many small uploads through the web app's two ways in (issue 21): N files of
# SIZE bytes, C at a time, through TUS (tus-js-client as the web app uploads,
# a small file's bytes with its creation, one request; and with its
# defaults, a POST, then a PATCH) and through the three-step presigned upload (announce, PUT, confirm; a Go
# client, bench/presign, whose CPU weighs little beside the server's), against
# this checkout and against the commit before issue 21's work (BASELINE,
# built from git), servers in turn run by run so the machine's noise falls on
# both alike, each run once the machine is quiet (bench/lib.sh wait_quiet: no
# server's background work after its run falls on the next). Target: each way at least 3x faster than the baseline. A TUS run
# is three rounds of N uploads in one node process: the third, with the
# client warm, is the one timed against the target; the first, a fresh
# process's, is printed beside it, since V8 compiles tus-js-client's code
# through the first thousands of uploads and a cold client's own CPU, not the
# server, then bounds a run against a fast server. Then how
# this checkout's one database writer spent each way's runs (its /metrics:
# writes per commit, what a commit costs, how busy the writer was), and the
# server's CPU per upload in process (web BenchmarkTusSmall and
# BenchmarkPresignSmall).
#
#   bash bench/smalluploads.sh
# Environment: N (default 1000), SIZE (1024), C (4), RUNS (3), BASELINE
# (default feb6ede, the parent of the first commit of issue 21).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
N="${N:-1000}"
SIZE="${SIZE:-1024}"
C="${C:-4}"
RUNS="${RUNS:-3}"
BASELINE="${BASELINE:-feb6ede}"
TMP="$(mktemp -d /tmp/atrium-smalluploads.XXXXXX)"
source bench/lib.sh
PIDS=()
su_cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  git worktree remove --force "$TMP/baseline-src" 2>/dev/null || true
  cleanup
}
trap su_cleanup EXIT
for tool in node npm curl git; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
git cat-file -e "$BASELINE^{commit}" 2>/dev/null || die "baseline commit $BASELINE is not in this clone (git fetch it, or set BASELINE)"
(cd bench/smalluploads && npm ci --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null) || die "npm ci in bench/smalluploads"

echo "== machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $N uploads of $SIZE B, $C at a time, per way; $RUNS runs; baseline $(git rev-parse --short "$BASELINE")"
go build -trimpath -ldflags "-s -w" -o "$TMP/atrium-now" ./cmd/atrium || die "go build"
go build -o "$TMP/presign" ./bench/presign || die "go build bench/presign"
git worktree add --detach "$TMP/baseline-src" "$BASELINE" >/dev/null 2>&1 || die "git worktree add $BASELINE"
(cd "$TMP/baseline-src" && go build -trimpath -ldflags "-s -w" -o "$TMP/atrium-base" ./cmd/atrium) || die "go build $BASELINE"

# serve NAME: starts the binary NAME on a fresh data directory; sets URL_<NAME>, TOK_<NAME>.
serve() {
  local name=$1 bin="$TMP/atrium-$1" data="$TMP/data-$1" port boot
  port=$(free_port) || die "no free port"
  boot=$("$bin" bootstrap --data "$data" --json) || die "$name bootstrap"
  printf -v "TOK_$name" '%s' "$(printf '%s' "$boot" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')"
  printf -v "URL_$name" '%s' "http://127.0.0.1:$port"
  "$bin" serve --data "$data" --listen "127.0.0.1:$port" >"$TMP/serve-$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 500); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ] && return 0
    sleep 0.02
  done
  die "$name did not become ready (log: $TMP/serve-$name.log)"
}
serve now
serve base

for run in $(seq "$RUNS"); do
  for way in tus-app tus presign; do
    for name in base now; do
      wait_quiet # neither server's background work after its last run falls on this one
      url="URL_$name" tok="TOK_$name"
      [ "$name" = now ] && writer_scrape "${!url}" "$TMP/writer.before"
      if [ "$way" != presign ]; then
        # Three rounds of N in one node process: the first is a fresh
        # client's (way-cold), the second warms it (way-warming), the third
        # is a warm client's (way).
        lines=$(node bench/smalluploads/upload.mjs "$way" "${!url}" "${!tok}" "$N" "$SIZE" "$C" 3) || die "$way upload to $name"
        printf '%s\n' "$lines" | awk -v p="run $run $name" '{ $1 = $1 ($NF == 1 ? "-cold" : $NF == 2 ? "-warming" : ""); print p, $0 }' | tee -a "$TMP/out"
      else
        line=$("$TMP/presign" "${!url}" "${!tok}" "$N" "$SIZE" "$C") || die "presigned upload to $name"
        echo "run $run $name $line" | tee -a "$TMP/out"
      fi
      if [ "$name" = now ]; then
        writer_scrape "${!url}" "$TMP/writer.after"
        writer_delta "$TMP/writer.before" "$TMP/writer.after" >>"$TMP/writer.$way"
      fi
    done
  done
done

echo
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for way in tus-app tus presign; do
  b=$(awk -v w="$way" '$3 == "base" && $4 == w { print $6 }' "$TMP/out" | median)
  n=$(awk -v w="$way" '$3 == "now" && $4 == w { print $6 }' "$TMP/out" | median)
  r=$(ratio "$b" "$n")
  fig "$N small uploads, $way: speed-up" "${r}x ($n s now vs $b s at $(git rev-parse --short "$BASELINE"))" ">= 3x" "$(ge "$r" 3)"
done
# The same with a fresh node process's first N uploads, where V8 is still
# compiling the client's code: for a fast server the client's CPU is then the
# bound (see its CPU below), not the server.
for way in tus-app tus; do
  b=$(awk -v w="$way-cold" '$3 == "base" && $4 == w { print $6 }' "$TMP/out" | median)
  n=$(awk -v w="$way-cold" '$3 == "now" && $4 == w { print $6 }' "$TMP/out" | median)
  fig "fresh client, $way: speed-up" "$(ratio "$b" "$n")x ($n s now vs $b s at $(git rev-parse --short "$BASELINE"))"
done
# tus-js-client's own CPU per upload (one node process runs the C uploads)
# and its share of the run's wall time: near 100%, the client bounds the run.
for way in tus-app tus-app-cold tus tus-cold; do
  for name in base now; do
    c=$(awk -v n="$name" -v w="$way" '$3 == n && $4 == w { print $13 }' "$TMP/out" | median)
    w=$(awk -v n="$name" -v w="$way" '$3 == n && $4 == w { print $6 }' "$TMP/out" | median)
    fig "tus-js-client CPU ($way, $name)" "$c ms an upload, $(awk -v c="$c" -v w="$w" -v n="$N" 'BEGIN { printf "%.0f", 100 * c * n / 1000 / w }')% of the median run's wall time"
  done
done
# How this checkout's one database writer spent its runs (/metrics).
for way in tus-app tus presign; do
  writer_fig "the writer during the $way runs" "$TMP/writer.$way" "$(awk -v w="$way" '$3 == "now" && ($4 == w || $4 == w "-cold" || $4 == w "-warming") { s += $6 } END { print s }' "$TMP/out")"
done

# The server's CPU per upload, in process (no client on the same cores): web
# BenchmarkTusSmall and BenchmarkPresignSmall.
echo
echo "== server CPU per upload in process: go test -bench 'BenchmarkTusSmall|BenchmarkTusSmallWithCreation|BenchmarkPresignSmall' (3000 uploads each, 4 at a time, each in a process of its own)"
go test -c -o "$TMP/web.test" ./web/ || die "go test -c ./web/"
inproc_fig "$TMP/web.test" '^BenchmarkTusSmallWithCreation$' 3000 "server CPU per TUS upload, one request"
inproc_fig "$TMP/web.test" '^BenchmarkTusSmall$' 3000 "server CPU per TUS upload"
inproc_fig "$TMP/web.test" '^BenchmarkPresignSmall$' 3000 "server CPU per three-step upload"
