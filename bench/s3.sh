#!/usr/bin/env bash
# Object storage (issue 50), side by side in one run on the same machine, the
# store a throwaway versitygw on 127.0.0.1 (scripts/s3-server.sh; its posix
# backend on the same disk):
#   1. a 1 GiB file PUT and GET with the store's own client (minio-go, the
#      client Atrium uses: the limit), then the same bytes through Atrium's
#      three-step upload with s3_public_endpoint (the presigned PUT goes to the
#      store; confirm reads the object back for its SHA-256) and a presigned
#      GET: goal >= 0.9x the direct client;
#   2. TUS 1 GiB in 8 MiB chunks through Atrium into the bucket (every PATCH an
#      object; the finish reads them into one), against tusd's own S3 store
#      (bench/tusdpeer) on the same bucket with the same client;
#   3. a WebDAV PUT of 512 MiB into the bucket and its GET (whole and by
#      range), relayed by the node;
#   the server's peak RSS through the 1 GiB transfers: goal <= 64 MiB (and
#   with the WebDAV ones after, a figure);
#   4. N small WebDAV PUTs (SMALL_KIB each, above the 64 KiB kept in the
#      database, so that each is an object) on S3 against a server on the
#      local disk.
# Prints one line a figure with PASS or MISS; exits non-zero only when the
# measurement cannot be set up.
#
#   bash bench/s3.sh
# Environment: SIZE_MIB (1024), CHUNK_MIB (8), PUTS (10000), SMALL_KIB (128), C (4).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
SIZE_MIB="${SIZE_MIB:-1024}"
CHUNK_MIB="${CHUNK_MIB:-8}"
PUTS="${PUTS:-10000}"
SMALL_KIB="${SMALL_KIB:-128}"
C="${C:-4}"

TMP="$(mktemp -d "${BENCH_DIR:-/tmp}/atrium-s3.XXXXXX")"
. bench/lib.sh
S3_DIR="$TMP/s3"
s3_cleanup() {
  if [ -n "${SERVER_PID:-}" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
  [ -f "$S3_DIR/pid" ] && bash scripts/s3-server.sh stop "$S3_DIR" >/dev/null 2>&1 || true
  cleanup
}
trap s3_cleanup EXIT

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3), commit $(git rev-parse --short HEAD)"
echo "== load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
eval "$(bash scripts/s3-server.sh start "$S3_DIR")" || die "versitygw did not start"
echo "== store: versitygw v1.8.0 (scripts/s3-server.sh) on $ATRIUM_TEST_S3_ENDPOINT, its files on $(df -h "$S3_DIR" | awk 'NR==2 { print $1 }')"
go build -o "$TMP/s3bench" ./bench/s3bench || die "go build s3bench"
go build -trimpath -ldflags "-s -w" -o "$TMP/atrium" ./cmd/atrium || die "go build atrium"
(cd bench/tusdpeer && go build -o "$TMP/tusdpeer" .) || die "go build tusdpeer"
BIN="$TMP/atrium"

# serve DIR [s3]: Atrium on a fresh data directory, its bytes in the bucket
# (with the store's address as the clients' too) when s3 is given; sets BASE,
# TOKEN, DAV_USER, DAV_PASS, SERVER_PID.
serve() {
  local dir=$1 boot
  local -a env=()
  if [ "${2:-}" = s3 ]; then
    env=(ATRIUM_S3_ENDPOINT="$ATRIUM_TEST_S3_ENDPOINT" ATRIUM_S3_PUBLIC_ENDPOINT="$ATRIUM_TEST_S3_ENDPOINT"
      ATRIUM_S3_BUCKET="$ATRIUM_TEST_S3_BUCKET" ATRIUM_S3_ACCESS_KEY="$ATRIUM_TEST_S3_ACCESS_KEY" ATRIUM_S3_SECRET_KEY="$ATRIUM_TEST_S3_SECRET_KEY")
  fi
  PORT=$(free_port) || die "no free port"
  BASE="http://127.0.0.1:$PORT"
  boot=$(env "${env[@]}" "$BIN" bootstrap --data "$dir" --json) || die "atrium bootstrap"
  TOKEN=$(printf '%s' "$boot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
  DAV_USER=$(printf '%s' "$boot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["email"])')
  DAV_PASS=$(printf '%s' "$boot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["app_password"])')
  env "${env[@]}" "$BIN" serve --data "$dir" --listen "127.0.0.1:$PORT" >"$dir.log" 2>&1 &
  SERVER_PID=$!
  await_ready "$dir.log"
}
stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
peak_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

SRC="$TMP/src.bin"
BYTES=$((SIZE_MIB * 1048576))
head -c "$BYTES" /dev/urandom >"$SRC" || die "make source file"
sync

# 1. The store's own client.
read -r _ _ _ d_put_s < <("$TMP/s3bench" direct put "$ATRIUM_TEST_S3_ENDPOINT" "$ATRIUM_TEST_S3_BUCKET" "$ATRIUM_TEST_S3_ACCESS_KEY" "$ATRIUM_TEST_S3_SECRET_KEY" "$SRC") || die "direct put"
read -r _ _ _ d_get_s < <("$TMP/s3bench" direct get "$ATRIUM_TEST_S3_ENDPOINT" "$ATRIUM_TEST_S3_BUCKET" "$ATRIUM_TEST_S3_ACCESS_KEY" "$ATRIUM_TEST_S3_SECRET_KEY" "$SRC") || die "direct get"
rm -f "$SRC.got"
d_put=$(mibps "$BYTES" "$d_put_s"); d_get=$(mibps "$BYTES" "$d_get_s")
fig "direct PUT ${SIZE_MIB} MiB (minio-go)" "$d_put MiB/s ($d_put_s s)"
fig "direct GET ${SIZE_MIB} MiB (minio-go, + fsync)" "$d_get MiB/s ($d_get_s s)"

# 2. Through Atrium, presigned.
serve "$TMP/data-s3" s3
ticket=$(curl -sf -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d "{\"name\":\"big.bin\",\"size\":$BYTES,\"mime_type\":\"application/octet-stream\"}" "$BASE/api/v1/drive/upload") || die "upload request"
URL=$(printf '%s' "$ticket" | python3 -c 'import json,sys; print(json.load(sys.stdin)["upload_url"])')
ID=$(printf '%s' "$ticket" | python3 -c 'import json,sys; print(json.load(sys.stdin)["file"]["id"])')
case "$URL" in "$ATRIUM_TEST_S3_ENDPOINT"*) ;; *) die "the upload URL is not the store's: $URL" ;; esac
t0=$(now)
code=$(curl -s -o /dev/null -w '%{http_code}' -T "$SRC" -H 'Content-Type: application/octet-stream' "$URL")
t1=$(now)
[ "$code" = 200 ] || die "presigned PUT answered $code"
curl -sf -X POST -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/drive/$ID/confirm" >/dev/null || die "confirm"
t2=$(now)
put_s=$(secs "$t0" "$t1"); confirm_s=$(secs "$t1" "$t2")
put=$(mibps "$BYTES" "$put_s"); put_all=$(mibps "$BYTES" "$(secs "$t0" "$t2")")
fig "presigned PUT ${SIZE_MIB} MiB (curl)" "$put MiB/s ($(ratio "$put" "$d_put") x direct)" ">= 0.9 x" "$(ge "$(ratio "$put" "$d_put")" 0.9)"
fig "confirm of the ${SIZE_MIB} MiB" "$confirm_s s (read back for its SHA-256, copied to its key); PUT and confirm $put_all MiB/s"
DL=$(curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/drive/$ID/download" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
case "$DL" in "$ATRIUM_TEST_S3_ENDPOINT"*) ;; *) die "the download URL is not the store's: $DL" ;; esac
t0=$(now)
code=$(curl -s -o "$TMP/got.bin" -w '%{http_code}' "$DL")
sync "$TMP/got.bin"
t1=$(now)
[ "$code" = 200 ] || die "presigned GET answered $code"
cmp -s "$SRC" "$TMP/got.bin" || die "the presigned GET's bytes differ"
rm -f "$TMP/got.bin"
get=$(mibps "$BYTES" "$(secs "$t0" "$t1")")
fig "presigned GET ${SIZE_MIB} MiB (curl, + fsync)" "$get MiB/s ($(ratio "$get" "$d_get") x direct)" ">= 0.9 x" "$(ge "$(ratio "$get" "$d_get")" 0.9)"

# 3. TUS through Atrium into the bucket.
read -r _ _ tus_s < <("$TMP/s3bench" tus "$BASE" "$TOKEN" "$SRC" $((CHUNK_MIB * 1048576))) || die "tus"
fig "TUS ${SIZE_MIB} MiB, ${CHUNK_MIB} MiB chunks, to S3" "$(mibps "$BYTES" "$tus_s") MiB/s ($tus_s s; $(ratio "$(mibps "$BYTES" "$tus_s")" "$d_put") x direct PUT)"
# The peer: tusd's own S3 store (bench/tusdpeer, a module of its own: tusd
# v2 and the AWS SDK are not Atrium's dependencies) on the same bucket, with
# the same client; a finished upload is its multipart upload completed.
TUSD_PORT=$(free_port) || die "no free port"
"$TMP/tusdpeer" "127.0.0.1:$TUSD_PORT" "$ATRIUM_TEST_S3_ENDPOINT" "$ATRIUM_TEST_S3_BUCKET" "$ATRIUM_TEST_S3_ACCESS_KEY" "$ATRIUM_TEST_S3_SECRET_KEY" >"$TMP/tusd.log" 2>&1 &
TUSD_PID=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$TUSD_PORT/" && break; sleep 0.05; done
read -r _ _ tusd_s < <("$TMP/s3bench" tus "http://127.0.0.1:$TUSD_PORT" none "$SRC" $((CHUNK_MIB * 1048576))) || die "tusd"
kill "$TUSD_PID" 2>/dev/null; wait "$TUSD_PID" 2>/dev/null || true
fig "tusd s3store: ${SIZE_MIB} MiB, ${CHUNK_MIB} MiB chunks" "$(mibps "$BYTES" "$tusd_s") MiB/s ($tusd_s s); Atrium/tusd $(ratio "$(mibps "$BYTES" "$tus_s")" "$(mibps "$BYTES" "$tusd_s")") x"

peak=$(( $(peak_kib) / 1024 ))
fig "server peak RSS, the ${SIZE_MIB} MiB transfers" "$peak MiB" "<= 64 MiB" "$(ge 64 "$peak")"

# WebDAV: a PUT of up to 512 MiB and GETs relay the bytes through the node,
# streamed (the PUT spooled to scratch while hashed, the GET read by range).
DAV_MIB=$((SIZE_MIB < 512 ? SIZE_MIB : 512))
head -c $((DAV_MIB * 1048576)) "$SRC" >"$TMP/dav.bin"
t0=$(now)
code=$(curl -s -o /dev/null -w '%{http_code}' -u "$DAV_USER:$DAV_PASS" -T "$TMP/dav.bin" "$BASE/webdav/dav.bin")
t1=$(now)
[ "$code" = 201 ] || die "WebDAV PUT answered $code"
fig "WebDAV PUT ${DAV_MIB} MiB, to S3 (relayed)" "$(mibps $((DAV_MIB * 1048576)) "$(secs "$t0" "$t1")") MiB/s"
t0=$(now)
code=$(curl -s -o "$TMP/dav.got" -w '%{http_code}' -u "$DAV_USER:$DAV_PASS" "$BASE/webdav/dav.bin")
t1=$(now)
[ "$code" = 200 ] && cmp -s "$TMP/dav.bin" "$TMP/dav.got" || die "WebDAV GET answered $code or other bytes"
fig "WebDAV GET ${DAV_MIB} MiB, from S3 (relayed)" "$(mibps $((DAV_MIB * 1048576)) "$(secs "$t0" "$t1")") MiB/s"
want=$(dd if="$TMP/dav.bin" bs=1M skip=$((DAV_MIB / 2)) count=1 status=none | sha256sum | cut -d' ' -f1)
got=$(curl -sf -u "$DAV_USER:$DAV_PASS" -H "Range: bytes=$((DAV_MIB * 524288))-$((DAV_MIB * 524288 + 1048575))" "$BASE/webdav/dav.bin" | sha256sum | cut -d' ' -f1)
[ "$want" = "$got" ] || die "a WebDAV Range GET gave other bytes"
rm -f "$TMP/dav.bin" "$TMP/dav.got"
fig "server peak RSS, with the WebDAV ones" "$(( $(peak_kib) / 1024 )) MiB"

# 4. Small WebDAV PUTs, on S3 and on the local disk.
read -r _ n s3_s _ s3_p50 _ s3_p99 < <("$TMP/s3bench" davputs "$BASE" "$DAV_USER" "$DAV_PASS" "$PUTS" $((SMALL_KIB * 1024)) "$C") || die "davputs s3"
stop_server
serve "$TMP/data-disk"
read -r _ n disk_s _ disk_p50 _ disk_p99 < <("$TMP/s3bench" davputs "$BASE" "$DAV_USER" "$DAV_PASS" "$PUTS" $((SMALL_KIB * 1024)) "$C") || die "davputs disk"
stop_server
fig "$PUTS WebDAV PUTs of $SMALL_KIB KiB, S3/disk" "$(ratio "$s3_s" "$disk_s") x: S3 $s3_s s (p50 $s3_p50 ms, p99 $s3_p99 ms), disk $disk_s s (p50 $disk_p50 ms, p99 $disk_p99 ms), $C clients"
echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
