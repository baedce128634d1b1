#!/usr/bin/env bash
# Drive transfer targets (issue 7), measured in one run on the same disk:
#   presigned PUT and GET of a 1 GiB file through Atrium >= 0.7 x the throughput
#   of `cp` of the same file; RSS growth of the server during each transfer < 32 MiB.
# Prints one figure per line with PASS or MISS (MiB = 2^20 bytes). Exits non-zero
# only when the measurement cannot be set up, never because a target is missed.
#
#   bash bench/drive-transfer.sh          # SIZE_MIB=1024 by default
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
SIZE_MIB="${SIZE_MIB:-1024}"

TMP="$(mktemp -d "${BENCH_DIR:-/tmp}/atrium-transfer.XXXXXX")"
. bench/lib.sh

echo "== machine: $(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3)"
echo "== disk: $(df -h "$TMP" | awk 'NR==2 { print $1, $2 }')"
start_atrium

SRC="$TMP/src.bin"
BYTES=$((SIZE_MIB * 1048576))
head -c "$BYTES" /dev/urandom >"$SRC" || die "make source file"
sync

# cp of the same file on the same disk, made durable like Atrium's store (fsync).
t0=$(now); cp "$SRC" "$TMP/copy.bin"; sync "$TMP/copy.bin"; t1=$(now)
cp_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
cp_rate=$(mibps "$BYTES" "$cp_s")
fig "cp ${SIZE_MIB} MiB (+ fsync)" "$cp_rate MiB/s"
rm -f "$TMP/copy.bin"

# Step 1: announce.
ticket=$(curl -sf -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d "{\"name\":\"big.bin\",\"size\":$BYTES,\"mime_type\":\"application/octet-stream\"}" "$BASE/api/v1/drive/upload") || die "upload request"
URL=$(printf '%s' "$ticket" | python3 -c 'import json,sys; print(json.load(sys.stdin)["upload_url"])')
ID=$(printf '%s' "$ticket" | python3 -c 'import json,sys; print(json.load(sys.stdin)["file"]["id"])')

# Step 2: presigned PUT, RSS sampled.
base_rss=$(rss_kib)
sample_rss "$TMP/peak-put" & SAMPLER_PID=$!
t0=$(now)
code=$(curl -s -o /dev/null -w '%{http_code}' -T "$SRC" -H 'Content-Type: application/octet-stream' "$URL")
t1=$(now)
kill "$SAMPLER_PID" 2>/dev/null || true; wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=""
[ "$code" = 200 ] || die "PUT answered $code"
put_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
put_rate=$(mibps "$BYTES" "$put_s")
put_growth=$(( ($(cat "$TMP/peak-put" 2>/dev/null || echo "$base_rss") - base_rss) / 1024 ))
fig "presigned PUT ${SIZE_MIB} MiB" "$put_rate MiB/s ($(awk -v a="$put_rate" -v b="$cp_rate" 'BEGIN { printf "%.2f", a / b }') x cp)" ">= 0.7 x" "$(ge "$(awk -v a="$put_rate" -v b="$cp_rate" 'BEGIN { print a / b }')" 0.7)"
fig "RSS growth during PUT" "$put_growth MiB" "< 32 MiB" "$(lt "$put_growth" 32)"

# Step 3: confirm, then GET through the presigned URL.
curl -sf -X POST -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/drive/$ID/confirm" >/dev/null || die "confirm"
DL=$(curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/drive/$ID/download" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
sync
base_rss=$(rss_kib)
sample_rss "$TMP/peak-get" & SAMPLER_PID=$!
t0=$(now)
code=$(curl -s -o "$TMP/got.bin" -w '%{http_code}' "$DL")
sync "$TMP/got.bin"
t1=$(now)
kill "$SAMPLER_PID" 2>/dev/null || true; wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=""
[ "$code" = 200 ] || die "GET answered $code"
get_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
get_rate=$(mibps "$BYTES" "$get_s")
get_growth=$(( ($(cat "$TMP/peak-get" 2>/dev/null || echo "$base_rss") - base_rss) / 1024 ))
fig "presigned GET ${SIZE_MIB} MiB (to disk + fsync)" "$get_rate MiB/s ($(awk -v a="$get_rate" -v b="$cp_rate" 'BEGIN { printf "%.2f", a / b }') x cp)" ">= 0.7 x" "$(ge "$(awk -v a="$get_rate" -v b="$cp_rate" 'BEGIN { print a / b }')" 0.7)"
fig "RSS growth during GET" "$get_growth MiB" "< 32 MiB" "$(lt "$get_growth" 32)"
cmp -s "$SRC" "$TMP/got.bin" && fig "downloaded bytes equal the source" "yes" || fig "downloaded bytes equal the source" "NO"
