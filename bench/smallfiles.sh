#!/usr/bin/env bash
# Many small files over WebDAV (issue 21), side by side in one run against
# `rclone serve webdav` and nginx's dav modules (Debian's nginx with
# libnginx-mod-http-dav-ext) on the same machine:
#   1. N x SIZE-byte PUTs into one fresh folder, C clients in parallel
#      (keep-alive): Atrium's wall time <= 1.0x rclone's
#   2. PROPFIND Depth 1 of that folder (N files): Atrium <= 0.5x rclone, once
#      each server has settled (5 s after the PUTs and the machine quiet again:
#      Atrium's search index takes in the new files in the background); the
#      PROPFIND right after the PUTs is shown beside it. Every run starts once
#      the machine is quiet, so no server's leftover work falls on another's
#   3. how Atrium's one database writer spent the PUT runs (its /metrics):
#      writes per commit, what a commit costs, how busy the writer was
#   4. the server's CPU per small PUT in process, with and without the search
#      indexer (web BenchmarkWebDAVPutSmall): no client on the same cores
# The servers take turns, run by run (bench/smallfiles/main.go); medians of
# RUNS. Atrium runs with its defaults: synchronous=FULL, every acknowledged PUT
# on disk before its 201. Prints one figure per line with PASS or MISS; exits
# non-zero only when the measurement cannot be set up.
#
#   bash bench/smallfiles.sh
# Environment: N (default 10000), SIZE (1024), C (4), RUNS (3), PEERS ("rclone nginx").
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
N="${N:-10000}"
SIZE="${SIZE:-1024}"
C="${C:-4}"
RUNS="${RUNS:-3}"
PEERS="${PEERS:-rclone nginx}"

TMP="$(mktemp -d /tmp/atrium-smallfiles.XXXXXX)"
source bench/lib.sh
PEER_PIDS=()
peer_cleanup() { for p in "${PEER_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; cleanup; }
trap peer_cleanup EXIT

for tool in curl python3; do command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install $tool)"; done
go build -o "$TMP/smallfiles" ./bench/smallfiles || die "build bench/smallfiles"

echo "== machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r), $(findmnt -no FSTYPE -T "$TMP") under $TMP"
start_atrium
CREDS=$("$BIN" bootstrap --data "$DATA" --json --admin-email small@example.test)
USER_EMAIL=$(printf '%s' "$CREDS" | sed -n 's/.*"email":"\([^"]*\)".*/\1/p')
APP_PASS=$(printf '%s' "$CREDS" | sed -n 's/.*"app_password":"\([^"]*\)".*/\1/p')
TARGETS=("atrium=http://$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$USER_EMAIL"):$APP_PASS@127.0.0.1:$PORT/api/v1/webdav/")

for peer in $PEERS; do
  case $peer in
  rclone)
    command -v rclone >/dev/null || die "rclone is not installed (apt-get install rclone)"
    P_PORT=$(free_port)
    mkdir -p "$TMP/rclone"
    rclone serve webdav "$TMP/rclone" --addr "127.0.0.1:$P_PORT" --user bench --pass bench >"$TMP/rclone.log" 2>&1 &
    PEER_PIDS+=("$!")
    for _ in $(seq 100); do curl -s -o /dev/null -u bench:bench "http://127.0.0.1:$P_PORT/" && break; sleep 0.1; done
    TARGETS+=("rclone=http://bench:bench@127.0.0.1:$P_PORT/")
    ;;
  nginx)
    command -v nginx >/dev/null && [ -f /usr/lib/nginx/modules/ngx_http_dav_ext_module.so ] ||
      die "nginx with dav-ext is not installed (apt-get install nginx libnginx-mod-http-dav-ext)"
    N_PORT=$(free_port)
    mkdir -p "$TMP/nginx/root" "$TMP/nginx/tmp"
    cat >"$TMP/nginx/nginx.conf" <<EOF
load_module /usr/lib/nginx/modules/ngx_http_dav_ext_module.so;
daemon off;
master_process off;
error_log $TMP/nginx/error.log;
pid $TMP/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx/tmp;
  proxy_temp_path $TMP/nginx/tmp;
  fastcgi_temp_path $TMP/nginx/tmp;
  uwsgi_temp_path $TMP/nginx/tmp;
  scgi_temp_path $TMP/nginx/tmp;
  server {
    listen 127.0.0.1:$N_PORT;
    root $TMP/nginx/root;
    client_max_body_size 0;
    location / {
      dav_methods PUT DELETE MKCOL COPY MOVE;
      dav_ext_methods PROPFIND OPTIONS;
      create_full_put_path on;
    }
  }
}
EOF
    nginx -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" >"$TMP/nginx.log" 2>&1 &
    PEER_PIDS+=("$!")
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$N_PORT/" && break; sleep 0.1; done
    TARGETS+=("nginx=http://127.0.0.1:$N_PORT/")
    ;;
  *) die "unknown peer $peer (rclone, nginx)" ;;
  esac
done

echo "== $N PUTs of $SIZE B, $C in parallel, then PROPFIND Depth 1; $RUNS runs, servers in turn"
writer_scrape "$BASE" "$TMP/writer.before"
"$TMP/smallfiles" -n "$N" -size "$SIZE" -c "$C" -runs "$RUNS" "${TARGETS[@]}" | tee "$TMP/out" || die "bench/smallfiles failed"
writer_scrape "$BASE" "$TMP/writer.after"
echo
put_a=$(awk '/^median atrium/ { print $4 }' "$TMP/out")
find_a=$(awk '/^median atrium/ { for (i = 1; i <= NF; i++) if ($i == "PROPFIND") print $(i + 1) }' "$TMP/out")
first_a=$(awk '/^median atrium/ { for (i = 1; i <= NF; i++) if ($i == "right-after") print $(i + 1) }' "$TMP/out")
for peer in $PEERS; do
  put_p=$(awk -v p="$peer" '$1 == "median" && $2 == p { print $4 }' "$TMP/out")
  find_p=$(awk -v p="$peer" '$1 == "median" && $2 == p { for (i = 1; i <= NF; i++) if ($i == "PROPFIND") print $(i + 1) }' "$TMP/out")
  first_p=$(awk -v p="$peer" '$1 == "median" && $2 == p { for (i = 1; i <= NF; i++) if ($i == "right-after") print $(i + 1) }' "$TMP/out")
  r=$(ratio "$put_a" "$put_p")
  if [ "$peer" = rclone ]; then
    fig "small-file PUTs atrium/$peer" "${r}x ($put_a s vs $put_p s)" "<= 1.0" "$(awk -v r="$r" 'BEGIN { print (r <= 1.0) ? 1 : 0 }')"
    r=$(ratio "$find_a" "$find_p")
    fig "PROPFIND depth 1 of $N atrium/$peer" "${r}x ($find_a ms vs $find_p ms)" "<= 0.5" "$(awk -v r="$r" 'BEGIN { print (r <= 0.5) ? 1 : 0 }')"
    fig "PROPFIND right after the PUTs atrium/$peer" "$(ratio "$first_a" "$first_p")x ($first_a ms vs $first_p ms)"
  else
    fig "small-file PUTs atrium/$peer" "${r}x ($put_a s vs $put_p s)"
    fig "PROPFIND depth 1 of $N atrium/$peer" "$(ratio "$find_a" "$find_p")x ($find_a ms vs $find_p ms)"
  fi
done
# How Atrium's one database writer spent its PUT runs (/metrics, group commit).
writer_delta "$TMP/writer.before" "$TMP/writer.after" >"$TMP/writer.delta"
writer_fig "atrium's writer during its PUTs" "$TMP/writer.delta" "$(awk '$1 == "run" && $3 == "atrium" { s += $11 } END { print s }' "$TMP/out")"

# The server's CPU per small PUT, in process (no client on the same cores):
# web BenchmarkWebDAVPutSmall, with and without the search indexer.
echo
echo "== server CPU per PUT in process: go test -bench BenchmarkWebDAVPutSmall (5000 PUTs, 4 at a time, each sub-benchmark in a process of its own)"
go test -c -o "$TMP/web.test" ./web/ || die "go test -c ./web/"
for sub in indexed requests; do
  inproc_fig "$TMP/web.test" "^BenchmarkWebDAVPutSmall\$/^$sub\$" 5000 "server CPU per small PUT ($sub)"
done
