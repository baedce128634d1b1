#!/usr/bin/env bash
# Benchmark report (issue 10): runs every benchmark the module issues named,
# the peer comparisons (rclone serve webdav, Radicale) and the soak, keeps each
# step's raw output under bench/out/, and writes docs/benchmarks.md with the
# machine, and per area the target, the figure and PASS/MISS, parsed from the
# outputs.
#
#   bash bench/report.sh                    # the full run (about 70-90 minutes on 2 cores)
#   bash bench/report.sh --quick            # a trial: short benchtimes, smaller files, 2,000-document
#                                           # index, 1-minute soak (about 15-20 minutes)
#   bash bench/report.sh --soak-duration 20m
#   bash bench/report.sh --only radicale,soak   # some steps (names: see STEPS below); the other
#                                           # sections of docs/benchmarks.md are kept as they are
# Exits non-zero only when the report cannot be written; a step that fails is
# reported as such.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

QUICK=0
SOAK_DURATION=""
ONLY=""
OUT_MD="docs/benchmarks.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --soak-duration) SOAK_DURATION="$2"; shift 2 ;;
    --soak-duration=*) SOAK_DURATION="${1#*=}"; shift ;;
    --only) ONLY="$2"; shift 2 ;;
    --only=*) ONLY="${1#*=}"; shift ;;
    --out) OUT_MD="$2"; shift 2 ;;
    *) echo "unknown flag $1 (--quick, --soak-duration D, --only a,b, --out FILE)" >&2; exit 2 ;;
  esac
done
OUT=bench/out
mkdir -p "$OUT" "$(dirname "$OUT_MD")"

if [ "$QUICK" = 1 ]; then
  SOAK_DURATION="${SOAK_DURATION:-1m}"
  BT_FAST=20x; BT_SLOW=3x; BT_ONE=1x; BT_THUMB=2x; BT_INDEX=50x; BT_HOOKS=2000x
  INDEX_DOCS=2000
  export WRK_DURATION=5s STARTS=3 BENCHTIME=1s
  TRANSFER_MIB=256 DAV_ITEMS=2000 DAV_GET=256 DAV_PUT=128 DAV_RUNS=1 RAD_N=1000 RAD_RUNS=1
  WEB_ITEMS=1000 WEB_BIG=2000 WEB_RUNS=3
  BURST_SMALL=2000 BURST_BIG=10000 BURST_COPY=5000 BURST_AFTER=10
  PG_FILES=${PG_FILES:-2000} PG_PUTS=${PG_PUTS:-1000}
  S3_MIB=${S3_MIB:-256} S3_PUTS=${S3_PUTS:-1000}
  CL_C=8 CL_D=5s CL_K=50
else
  SOAK_DURATION="${SOAK_DURATION:-10m}"
  BT_FAST=1s; BT_SLOW=1s; BT_ONE=1x; BT_THUMB=10x; BT_INDEX=300x; BT_HOOKS=20000x
  INDEX_DOCS=100000
  TRANSFER_MIB=1024 DAV_ITEMS=10000 DAV_GET=1024 DAV_PUT=512 DAV_RUNS=3 RAD_N=1000 RAD_RUNS=3
  WEB_ITEMS=1000 WEB_BIG=10000 WEB_RUNS=5
  BURST_SMALL=10000 BURST_BIG=100000 BURST_COPY=30000 BURST_AFTER=30
  PG_FILES=${PG_FILES:-100000} PG_PUTS=${PG_PUTS:-10000}
  S3_MIB=${S3_MIB:-1024} S3_PUTS=${S3_PUTS:-10000}
  CL_C=16 CL_D=20s CL_K=200
fi
# Soak windows: a minute, or a sixth of a short soak.
soak_secs=$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+)(s|m|h)','$SOAK_DURATION'); sys.exit(1) if not m else print(int(m[1])*{'s':1,'m':60,'h':3600}[m[2]])") ||
  { echo "--soak-duration: use e.g. 90s, 10m, 1h" >&2; exit 2; }
if [ "$soak_secs" -ge 300 ]; then SOAK_WINDOW=1m; else SOAK_WINDOW="$((soak_secs / 6))s"; fi

STEPS="foundation partner webhooks contacts calendar drive thumbnail index blob transfer tus webdav smallfiles smalluploads requestpath memory memburst radicale webapp postgres s3 cluster soak"
want() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

machine() {
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "cores: $(nproc)"
  echo "memory: $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "kernel: $(uname -sr)"
  echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  echo "go: $(go version | cut -d' ' -f3-)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "disk: $(df -h "${BENCH_DIR:-/tmp}" | awk 'NR==2 { print $1, $2 }')"
}

# step NAME CMD...: runs one step, its output to bench/out/NAME.txt, its status and time to bench/out/NAME.status.
step() {
  local name=$1; shift
  want "$name" || return 0
  echo "== $name: $*"
  local t0=$SECONDS
  "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "rc=$rc seconds=$((SECONDS - t0)) load=$(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/$name.status"
  echo "   rc=$rc, $((SECONDS - t0)) s"
}
gobench() { # gobench BENCHTIME PATTERN PKG [env...]
  local bt=$1 pat=$2 pkg=$3
  go test -run '^$' -bench "$pat" -benchtime "$bt" -benchmem -timeout 60m "$pkg"
}

{ machine; echo "load_start: $(cut -d' ' -f1-3 /proc/loadavg)"; echo "quick: $QUICK"; echo "soak: $SOAK_DURATION (windows of $SOAK_WINDOW)"; } >"$OUT/machine.txt"
cat "$OUT/machine.txt"

step foundation bash bench/foundation.sh
step partner gobench "$BT_FAST" 'BenchmarkProvisionOrg|BenchmarkListOrgsPaged' ./app/partner/
step webhooks gobench "$BT_HOOKS" BenchmarkDelivery ./bench/webhooks/
step contacts gobench "$BT_FAST" 'BenchmarkContacts$' ./web/
step calendar bash -c "go test -run '^\$' -bench 'BenchmarkRangeQueryMonth|BenchmarkExpandDailyWithOverrides|BenchmarkBoundedExpand' -benchtime $BT_FAST ./app/calendar/ &&
  go test -run '^\$' -bench 'BenchmarkImport5000|BenchmarkImportLarge' -benchtime $BT_ONE ./app/calendar/ &&
  go test -run '^\$' -bench 'BenchmarkCalendarImportHTTP' -benchtime $BT_ONE ./web/"
step drive gobench "$BT_SLOW" 'BenchmarkDrive(Browse5000|Snapshot100k|DeltaAfter10|StorageUsage)$' ./web/
step thumbnail gobench "$BT_THUMB" 'BenchmarkDriveThumbnail12MP$' ./web/
step index env ATRIUM_BENCH_INDEX_DOCS="$INDEX_DOCS" go test -run '^$' -bench . -benchtime "$BT_INDEX" -timeout 60m ./index/
step blob gobench "$BT_SLOW" 'BenchmarkPut$' ./storage/blob/
step transfer env SIZE_MIB="$TRANSFER_MIB" bash bench/drive-transfer.sh
step tus env SIZE_MIB="$TRANSFER_MIB" bash bench/tus.sh
step webdav env ITEMS="$DAV_ITEMS" GET_MB="$DAV_GET" PUT_MB="$DAV_PUT" RUNS="$DAV_RUNS" bash bench/webdav.sh
step smallfiles env N="$DAV_ITEMS" RUNS="$DAV_RUNS" bash bench/smallfiles.sh
step smalluploads env RUNS="$DAV_RUNS" bash bench/smalluploads.sh
step requestpath env RUNS="$DAV_RUNS" bash bench/requestpath.sh
step memory env GET_MB="$DAV_GET" bash bench/memory.sh
step memburst env N_SMALL="$BURST_SMALL" N_BIG="$BURST_BIG" N_COPY="$BURST_COPY" AFTER="$BURST_AFTER" bash bench/memory-burst.sh
step radicale env N="$RAD_N" RUNS="$RAD_RUNS" bash bench/radicale.sh
step webapp env ITEMS="$WEB_ITEMS" BIG_ITEMS="$WEB_BIG" RUNS="$WEB_RUNS" bash bench/webapp.sh
step postgres env N_FILES="$PG_FILES" PUTS="$PG_PUTS" bash bench/postgres.sh
step s3 env SIZE_MIB="$S3_MIB" PUTS="$S3_PUTS" bash bench/s3.sh
step cluster env C="$CL_C" D="$CL_D" K="$CL_K" bash bench/cluster.sh
step soak bash bench/soak.sh --duration "$SOAK_DURATION" --window "$SOAK_WINDOW"
echo "load_end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

# With --only, the steps not run keep their sections of the existing report.
ONLY="$ONLY" KEEP_PREVIOUS=$([ -n "$ONLY" ] && echo 1 || echo 0) python3 bench/report.py "$OUT" "$OUT_MD" "$STEPS" "$INDEX_DOCS" || { echo "report: cannot write $OUT_MD" >&2; exit 1; }
echo "== wrote $OUT_MD"
grep -c '| MISS' "$OUT_MD" | xargs -I{} echo "   {} MISS rows"
