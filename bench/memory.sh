#!/usr/bin/env bash
# Memory (issue 21): the resident set of each server while a 1 GiB GET and a
# 480 MiB PUT stream at once over WebDAV, side by side with `rclone serve
# webdav` and nginx's dav modules, and Atrium's RSS idle after start.
#   1. Atrium's peak RSS during the transfers <= 64 MiB
#   2. Atrium's idle RSS < 40 MB (also shown: the part that is its own memory,
#      RssAnon, the rest being the binary's pages the kernel keeps mapped)
# RSS is sampled every 50 ms from /proc. Prints one figure per line with PASS
# or MISS; exits non-zero only when the measurement cannot be set up.
#
#   bash bench/memory.sh
# Environment: GET_MB (default 1024), PUT_MB (default 480), PEERS ("rclone nginx").
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
GET_MB="${GET_MB:-1024}"
PUT_MB="${PUT_MB:-480}"
PEERS="${PEERS:-rclone nginx}"
TMP="$(mktemp -d /tmp/atrium-memory.XXXXXX)"
source bench/lib.sh
PEER_PIDS=()
mem_cleanup() { for p in "${PEER_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; cleanup; }
trap mem_cleanup EXIT
for tool in curl python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

echo "== machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
head -c $((GET_MB << 20)) /dev/urandom >"$TMP/get.bin"
head -c $((PUT_MB << 20)) /dev/urandom >"$TMP/put.bin"
start_atrium
sleep 5
idle=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status")
idle_anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$SERVER_PID/status")
A_DAV="$BASE/api/v1/webdav"
# The 1 GiB file goes in by the REST upload (the mount takes at most 512 MiB per PUT).
TICKET=$(curl -fsS -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d "{\"name\":\"get.bin\",\"size\":$((GET_MB << 20)),\"mime_type\":\"application/octet-stream\"}" "$BASE/api/v1/drive/upload") || die "announce"
UP_URL=$(printf '%s' "$TICKET" | python3 -c 'import json, sys; print(json.load(sys.stdin)["upload_url"])')
FILE_ID=$(printf '%s' "$TICKET" | python3 -c 'import json, sys; print(json.load(sys.stdin)["file"]["id"])')
curl -fsS -o /dev/null -T "$TMP/get.bin" -H 'Content-Type: application/octet-stream' "$UP_URL" || die "upload"
curl -fsS -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/drive/$FILE_ID/confirm" || die "confirm"
# An app password of the operator, whose drive holds the file, for the mount.
OP_CREDS=$("$BIN" bootstrap --data "$DATA" --json)
OP_EMAIL=$(printf '%s' "$OP_CREDS" | sed -n 's/.*"email":"\([^"]*\)".*/\1/p')
OP_PASS=$(printf '%s' "$OP_CREDS" | sed -n 's/.*"app_password":"\([^"]*\)".*/\1/p')
sleep 3

# measure NAME PID GET_URL PUT_URL USER PASS: peak RSS (KiB) of PID while both transfers run.
measure() {
  local name=$1 pid=$2 peak=0 v
  local auth=()
  [ -n "$5" ] && auth=(-u "$5:$6")
  curl -fsS -o /dev/null "${auth[@]}" "$3" &
  local g=$!
  curl -fsS -o /dev/null "${auth[@]}" -T "$TMP/put.bin" "$4" &
  local p=$!
  while kill -0 "$g" 2>/dev/null || kill -0 "$p" 2>/dev/null; do
    v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "${v:-0}" -gt "$peak" ] && peak=$v
    sleep 0.05
  done
  wait "$g" || die "$name GET failed"
  wait "$p" || die "$name PUT failed"
  echo "$peak" >"$TMP/peak.$name"
  printf '   %-7s peak RSS %6.1f MiB\n' "$name" "$(awk -v k="$peak" 'BEGIN { print k / 1024 }')"
}
echo "== a ${GET_MB} MiB GET and a ${PUT_MB} MiB PUT at once"
measure atrium "$SERVER_PID" "$A_DAV/get.bin" "$A_DAV/put.bin" "$OP_EMAIL" "$OP_PASS"
for peer in $PEERS; do
  P_PORT=$(free_port)
  mkdir -p "$TMP/$peer"
  cp "$TMP/get.bin" "$TMP/$peer/get.bin"
  case $peer in
  rclone)
    rclone serve webdav "$TMP/rclone" --addr "127.0.0.1:$P_PORT" >"$TMP/rclone.log" 2>&1 &
    ;;
  nginx)
    mkdir -p "$TMP/nginx-tmp"
    cat >"$TMP/nginx.conf" <<NGINX
load_module /usr/lib/nginx/modules/ngx_http_dav_ext_module.so;
daemon off; master_process off; error_log $TMP/nginx-error.log; pid $TMP/nginx.pid;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $TMP/nginx-tmp; proxy_temp_path $TMP/nginx-tmp; fastcgi_temp_path $TMP/nginx-tmp;
  uwsgi_temp_path $TMP/nginx-tmp; scgi_temp_path $TMP/nginx-tmp;
  server { listen 127.0.0.1:$P_PORT; root $TMP/nginx; client_max_body_size 0;
    location / { dav_methods PUT DELETE MKCOL COPY MOVE; dav_ext_methods PROPFIND OPTIONS; } } }
NGINX
    nginx -c "$TMP/nginx.conf" -p "$TMP" >"$TMP/nginx.log" 2>&1 &
    ;;
  *) die "unknown peer $peer" ;;
  esac
  PEER_PIDS+=("$!")
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$P_PORT/" && break; sleep 0.1; done
  measure "$peer" "${PEER_PIDS[-1]}" "http://127.0.0.1:$P_PORT/get.bin" "http://127.0.0.1:$P_PORT/put.bin" "" ""
done
echo
peak=$(cat "$TMP/peak.atrium")
fig "peak RSS, ${GET_MB} MiB GET + ${PUT_MB} MiB PUT" "$(awk -v k="$peak" 'BEGIN { printf "%.1f MiB", k / 1024 }')" "<= 64 MiB" "$(awk -v k="$peak" 'BEGIN { print (k <= 65536) ? 1 : 0 }')"
for peer in $PEERS; do
  fig "  $peer, the same transfers" "$(awk -v k="$(cat "$TMP/peak.$peer")" 'BEGIN { printf "%.1f MiB", k / 1024 }')"
done
fig "idle RSS after start" "$(awk -v k="$idle" 'BEGIN { printf "%.1f MB", k * 1.024 / 1000 }') (own memory: $(awk -v k="$idle_anon" 'BEGIN { printf "%.1f MB", k * 1.024 / 1000 }'))" "< 40 MB" "$(awk -v k="$idle" 'BEGIN { print (k * 1.024 < 40000) ? 1 : 0 }')"
