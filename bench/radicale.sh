#!/usr/bin/env bash
# CardDAV and CalDAV sync against Radicale (Debian's radicale, the peer), with
# the same client (bench/davsync, a sync-collection + multiget client) for both
# servers, on loopback, each on its own temporary storage:
#   1,000 contacts and 1,000 events: initial upload (PUT each), full sync down
#   into an empty local store, incremental sync after 10 changes.
# Target: Atrium not slower than Radicale (ratio atrium/radicale <= 1.0).
# Prints one figure per line with PASS or MISS; exits non-zero only when the
# measurement cannot be set up. Installs radicale with apt-get when missing.
#
#   bash bench/radicale.sh          # N=1000 RUNS=3 BATCH=100
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
N="${N:-1000}"
RUNS="${RUNS:-3}"
BATCH="${BATCH:-100}"

TMP="$(mktemp -d "${BENCH_DIR:-/tmp}/atrium-radicale.XXXXXX")"
. bench/lib.sh
PEER_PID=""
trap 'cleanup_all' EXIT
cleanup_all() {
  if [ -n "$PEER_PID" ]; then kill -TERM "$PEER_PID" 2>/dev/null || true; wait "$PEER_PID" 2>/dev/null || true; fi
  cleanup
}

if ! command -v radicale >/dev/null 2>&1; then
  echo "== installing radicale"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq radicale; } >"$TMP/apt.log" 2>&1 ||
    { cat "$TMP/apt.log" >&2; die "apt-get install radicale"; }
fi
command -v curl >/dev/null || die "curl is needed"
echo "== machine: $(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== radicale $(radicale --version 2>/dev/null || echo '?') ($(dpkg-query -W -f '${Version}' radicale 2>/dev/null || echo 'not from dpkg'))"

go build -trimpath -ldflags "-s -w" -o "$TMP/atrium" ./cmd/atrium || die "go build"
go build -o "$TMP/davsync" ./bench/davsync || die "go build bench/davsync"

# --- Atrium ---------------------------------------------------------------------
DATA="$TMP/data"
PORT=$(free_port) || die "no free port"
BASE="http://127.0.0.1:$PORT"
boot=$("$TMP/atrium" bootstrap --data "$DATA" --json --admin-email dav@example.test) || die "atrium bootstrap"
field() { printf '%s' "$boot" | sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"; }
"$TMP/atrium" serve --data "$DATA" --listen "127.0.0.1:$PORT" >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 500); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] && break
  sleep 0.02
done
TOKEN=$(field token)
USER_ID=$(field user_id)
BOOK=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/contacts/books" | sed -n 's/^\[{"id":"\([^"]*\)".*/\1/p')
CAL=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/calendar/calendars" | sed -n 's/^\[{"id":"\([^"]*\)".*/\1/p')
[ -n "$BOOK" ] && [ -n "$CAL" ] || die "no default address book ($BOOK) or calendar ($CAL)"

# --- Radicale ---------------------------------------------------------------------
RPORT=$(free_port) || die "no free port"
RBASE="http://127.0.0.1:$RPORT"
mkdir -p "$TMP/radicale"
cat >"$TMP/radicale.conf" <<CONF
[server]
hosts = 127.0.0.1:$RPORT
[auth]
type = none
[rights]
type = owner_only
[storage]
filesystem_folder = $TMP/radicale/collections
[logging]
level = warning
CONF
radicale --config "$TMP/radicale.conf" >"$TMP/radicale.log" 2>&1 &
PEER_PID=$!
for _ in $(seq 500); do
  curl -s -o /dev/null -u bench:bench "$RBASE/" && break
  kill -0 "$PEER_PID" 2>/dev/null || { cat "$TMP/radicale.log" >&2; die "radicale exited"; }
  sleep 0.02
done
code=$(curl -s -o "$TMP/mkcol.txt" -w '%{http_code}' -u bench:bench -X MKCOL -H 'Content-Type: application/xml' --data \
  '<?xml version="1.0"?><d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:set><d:prop><d:resourcetype><d:collection/><c:addressbook/></d:resourcetype><d:displayname>Contacts</d:displayname></d:prop></d:set></d:mkcol>' \
  "$RBASE/bench/contacts/")
[ "$code" = 201 ] || die "radicale MKCOL address book: $code $(cat "$TMP/mkcol.txt")"
code=$(curl -s -o "$TMP/mkcal.txt" -w '%{http_code}' -u bench:bench -X MKCALENDAR "$RBASE/bench/calendar/")
[ "$code" = 201 ] || die "radicale MKCALENDAR: $code $(cat "$TMP/mkcal.txt")"

# --- the same client against both ------------------------------------------------------
mkdir -p "$TMP/local"
"$TMP/davsync" -n "$N" -runs "$RUNS" -batch "$BATCH" -local "$TMP/local" \
  -a-card "$BASE/dav/addressbooks/$USER_ID/$BOOK/" -a-cal "$BASE/dav/calendars/$USER_ID/$CAL/" \
  -a-user "$(field email)" -a-pass "$(field app_password)" \
  -b-name radicale -b-card "$RBASE/bench/contacts/" -b-cal "$RBASE/bench/calendar/" -b-user bench -b-pass bench ||
  { tail -20 "$TMP/serve.log" >&2; tail -20 "$TMP/radicale.log" >&2; die "davsync"; }
fig "atrium RSS at the end" "$(( $(rss_kib) / 1024 )) MiB"
fig "radicale RSS at the end" "$(( $(awk '/^VmRSS:/ { print $2 }' "/proc/$PEER_PID/status") / 1024 )) MiB"
