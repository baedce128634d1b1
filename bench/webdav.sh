#!/usr/bin/env bash
# WebDAV file mount against `rclone serve webdav` (Debian's rclone, the peer)
# serving a local directory with the same content, in one run:
#   1. PROPFIND Depth 1 of a 10,000-item folder: Atrium's time <= 1.0x the peer's
#   2. GET of a 1 GiB file: Atrium's throughput >= 0.9x the peer's
#   3. PUT of a 512 MiB file (the mount's per-file cap): >= 0.8x the peer's
#   4. RSS of Atrium while transferring: flat (growth < 64 MB over idle)
# Timings are curl's (median of RUNS runs). Prints one figure per line with
# PASS or MISS; exits non-zero only when the measurement cannot be set up.
#
#   bash bench/webdav.sh
# Environment: RUNS (default 3), ITEMS (default 10000), GET_MB (default 1024), PUT_MB (default 512).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

RUNS="${RUNS:-3}"
ITEMS="${ITEMS:-10000}"
GET_MB="${GET_MB:-1024}"
PUT_MB="${PUT_MB:-512}"

TMP="$(mktemp -d /tmp/atrium-webdav-bench.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "SETUP FAILURE: $*" >&2; exit 2; }
verdict() { if [ "$1" = 1 ]; then echo PASS; else echo MISS; fi; }
fig() { printf '%-58s %14s  %s\n' "$1" "$2" "${3:-}"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

for tool in curl jq python3 rclone; do command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install $tool)"; done

echo "== build"
go build -trimpath -o "$TMP/atrium" ./cmd/atrium || die "build"

A_PORT=$(free_port)
P_PORT=$(free_port)
A_URL="http://127.0.0.1:$A_PORT"
P_URL="http://127.0.0.1:$P_PORT"
mkdir -p "$TMP/data" "$TMP/peer/big"
"$TMP/atrium" serve --data "$TMP/data" --listen "127.0.0.1:$A_PORT" >"$TMP/atrium.log" 2>&1 &
A_PID=$!
PIDS+=("$A_PID")
for _ in $(seq 100); do curl -fsS "$A_URL/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$A_URL/readyz" >/dev/null || die "atrium did not start"

CREDS=$("$TMP/atrium" bootstrap --data "$TMP/data" --json --admin-email bench@example.test)
EMAIL=$(jq -r .email <<<"$CREDS")
PASS=$(jq -r .app_password <<<"$CREDS")
TOKEN=$(jq -r .token <<<"$CREDS")
A_DAV="$A_URL/api/v1/webdav"
AUTH_A=(-u "$EMAIL:$PASS")
AUTH_P=(-u bench:bench)

echo "== seed: $ITEMS items in one folder (WebDAV PUT and MKCOL, 8 connections), a ${GET_MB} MiB file"
start=$(date +%s)
python3 - "$TMP/peer/big" "$ITEMS" "$A_DAV/big" "$EMAIL" "$PASS" <<'PY' || die "seed"
import base64, http.client, os, sys, threading, urllib.parse
d, n, url, user, pw = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
u = urllib.parse.urlsplit(url)
auth = {"Authorization": "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()}
def call(conn, method, path, body=None):
    conn.request(method, path, body=body, headers=auth)
    r = conn.getresponse(); r.read()
    if r.status not in (201, 204):
        raise SystemExit(f"{method} {path}: {r.status}")
c = http.client.HTTPConnection(u.hostname, u.port); call(c, "MKCOL", u.path)
def item(i):
    # One item in twenty is a folder, the rest small files.
    if i % 20 == 0:
        name = "folder%05d" % i
        os.makedirs(os.path.join(d, name), exist_ok=True)
        return "MKCOL", name, None
    name, body = "file%05d.txt" % i, ("item %d\n" % i).encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(body)
    return "PUT", name, body
def worker(k):
    conn = http.client.HTTPConnection(u.hostname, u.port)
    for i in range(k, n, 8):
        m, name, body = item(i)
        call(conn, m, u.path + "/" + name, body)
ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
echo "   seeded in $(($(date +%s) - start)) s"
head -c $((GET_MB << 20)) /dev/urandom >"$TMP/peer/large.bin"
# The mount takes at most 512 MiB per PUT: the large file goes in by the REST upload.
TICKET=$(curl -fsS -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d "{\"name\":\"large.bin\",\"size\":$((GET_MB << 20)),\"mime_type\":\"application/octet-stream\"}" "$A_URL/api/v1/drive/upload")
curl -fsS -H 'Content-Type: application/octet-stream' -T "$TMP/peer/large.bin" "$(jq -r .upload_url <<<"$TICKET")" >/dev/null || die "upload"
curl -fsS -X POST -H "Authorization: Bearer $TOKEN" "$A_URL/api/v1/drive/$(jq -r .file.id <<<"$TICKET")/confirm" >/dev/null || die "confirm"
head -c $((PUT_MB << 20)) /dev/urandom >"$TMP/put.bin"
# The peer starts on the finished content (rclone caches directory listings).
rclone serve webdav "$TMP/peer" --addr "127.0.0.1:$P_PORT" --user bench --pass bench >"$TMP/peer.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do curl -s -o /dev/null -u bench:bench "$P_URL/" && break; sleep 0.1; done

PROPS='<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:getlastmodified/><d:getcontentlength/><d:resourcetype/><d:getcontenttype/><d:getetag/></d:prop></d:propfind>'
count_a=$(curl -fsS "${AUTH_A[@]}" -X PROPFIND -H 'Depth: 1' --data "$PROPS" "$A_DAV/big/" | grep -o '<D:response>' | wc -l)
count_p=$(curl -fsS "${AUTH_P[@]}" -X PROPFIND -H 'Depth: 1' --data "$PROPS" "$P_URL/big/" | grep -oi '<D:response>' | wc -l)
echo "   PROPFIND responses: atrium $count_a, peer $count_p"
[ "$count_a" -eq $((ITEMS + 1)) ] || die "atrium lists $count_a of $((ITEMS + 1))"

rss() { awk '/VmRSS/ { print $2 }' "/proc/$A_PID/status"; }
# sample_rss FILE: writes the peak RSS (kB) seen while the caller's job runs.
sample_rss() { local peak=0 r; while :; do r=$(rss); [ "$r" -gt "$peak" ] && peak=$r && echo "$peak" >"$1"; sleep 0.1; done; }

echo "== measure ($RUNS runs each, medians)"
for who in a p; do
  for _ in $(seq "$RUNS"); do
    if [ $who = a ]; then
      curl -fsS -o /dev/null -w '%{time_total}\n' "${AUTH_A[@]}" -X PROPFIND -H 'Depth: 1' --data "$PROPS" "$A_DAV/big/"
    else
      curl -fsS -o /dev/null -w '%{time_total}\n' "${AUTH_P[@]}" -X PROPFIND -H 'Depth: 1' --data "$PROPS" "$P_URL/big/"
    fi
  done | median >"$TMP/propfind.$who"
done
IDLE=$(rss)
sample_rss "$TMP/peak" &
SAMPLER=$!
PIDS+=("$SAMPLER")
for _ in $(seq "$RUNS"); do curl -fsS -o /dev/null -w '%{speed_download}\n' "${AUTH_A[@]}" "$A_DAV/large.bin"; done | median >"$TMP/get.a"
for _ in $(seq "$RUNS"); do curl -fsS -o /dev/null -w '%{speed_download}\n' "${AUTH_P[@]}" "$P_URL/large.bin"; done | median >"$TMP/get.p"
for i in $(seq "$RUNS"); do curl -fsS -o /dev/null -w '%{speed_upload}\n' "${AUTH_A[@]}" -T "$TMP/put.bin" "$A_DAV/put$i.bin"; done | median >"$TMP/put.a"
for i in $(seq "$RUNS"); do curl -fsS -o /dev/null -w '%{speed_upload}\n' "${AUTH_P[@]}" -T "$TMP/put.bin" "$P_URL/put$i.bin"; done | median >"$TMP/put.p"
kill "$SAMPLER" 2>/dev/null || true
PEAK=$(cat "$TMP/peak" 2>/dev/null || echo "$IDLE")

pa=$(cat "$TMP/propfind.a"); pp=$(cat "$TMP/propfind.p")
ga=$(cat "$TMP/get.a"); gp=$(cat "$TMP/get.p")
ua=$(cat "$TMP/put.a"); up=$(cat "$TMP/put.p")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ok() { awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN { if (op == "<=") print (a <= b) ? 1 : 0; else print (a >= b) ? 1 : 0 }'; }
mbs() { awk -v v="$1" 'BEGIN { printf "%.0f MB/s", v / 1e6 }'; }

echo "== results"
fig "PROPFIND Depth 1, $ITEMS items: atrium" "$(printf '%.3f s' "$pa")"
fig "PROPFIND Depth 1, $ITEMS items: rclone serve webdav" "$(printf '%.3f s' "$pp")"
r=$(ratio "$pa" "$pp"); fig "PROPFIND time ratio atrium/peer (target <= 1.0)" "$r" "$(verdict "$(ok "$r" '<=' 1.0)")"
fig "GET ${GET_MB} MiB: atrium" "$(mbs "$ga")"
fig "GET ${GET_MB} MiB: rclone serve webdav" "$(mbs "$gp")"
r=$(ratio "$ga" "$gp"); fig "GET throughput ratio atrium/peer (target >= 0.9)" "$r" "$(verdict "$(ok "$r" '>=' 0.9)")"
fig "PUT ${PUT_MB} MiB: atrium" "$(mbs "$ua")"
fig "PUT ${PUT_MB} MiB: rclone serve webdav" "$(mbs "$up")"
r=$(ratio "$ua" "$up"); fig "PUT throughput ratio atrium/peer (target >= 0.8)" "$r" "$(verdict "$(ok "$r" '>=' 0.8)")"
growth=$(( (PEAK - IDLE) / 1000 ))
fig "atrium RSS: idle $((IDLE / 1000)) MB, peak during transfers" "$((PEAK / 1000)) MB" "$(verdict "$(ok "$growth" '<=' 64)")"
