#!/usr/bin/env bash
# The web app's drive page, measured in a real browser (Debian's chromium driven
# by playwright-core from interop/browser, pinned in its lockfile):
#   /drive/{id} of a folder of 1,000 items shows its list in < 500 ms on
#   loopback (navigation timing, median of 5 loads);
#   the page's assets (document, styles, scripts, icon) weigh <= 300 KB
#   compressed (gzip -6 of each response body; the server itself sends them
#   uncompressed, a reverse proxy usually compresses);
#   a folder of 10,000 items stays responsive: its first page, a change of
#   sort and the next page each show in < 1 s (first contentful paint of the
#   navigation, median of 5; the click-to-list wall time is printed beside).
# Prints one figure per line with PASS or MISS; exits non-zero only when the
# measurement cannot be set up.
#
#   bash bench/webapp.sh        # ITEMS=1000 BIG_ITEMS=10000 RUNS=5 by default
#   BIG_ITEMS=0 bash bench/webapp.sh   # without the 10,000-item folder
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
TMP="$(mktemp -d "${BENCH_DIR:-/tmp}/atrium-webapp.XXXXXX")"
. bench/lib.sh

command -v "${CHROMIUM:-/usr/bin/chromium}" >/dev/null || die "chromium is not installed (apt-get install chromium)"
(cd interop/browser && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) || die "npm ci in interop/browser"
echo "== machine: $(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3)"
start_atrium
ADMIN=$TOKEN

# A person with an account password: invited to a customer organisation, the
# invitation accepted.
EMAIL=bench.person@webapp.test
PASSWORD='bench person password 1'
curl -fsS -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
  -d "{\"name\":\"Bench Customer\",\"plan_slug\":\"business\",\"admin_email\":\"$EMAIL\",\"seats\":5}" \
  "$BASE/api/v1/partner/orgs" >/dev/null || die "create the organisation"
INVITE=$("$BIN" mail list --data "$DATA" --json | python3 -c '
import json, re, sys
for m in json.load(sys.stdin):
    if m.get("to") == sys.argv[1]:
        x = re.search(r"/invite/([0-9a-f]+)", m.get("body", ""))
        if x: print(x.group(1)); break' "$EMAIL")
[ -n "$INVITE" ] || die "no invitation mail"
curl -fsS -H 'Content-Type: application/json' -d "{\"password\":\"$PASSWORD\"}" \
  "$BASE/api/v1/invitations/$INVITE/accept" >/dev/null || die "accept the invitation"
TOKEN=$("$BIN" token create --data "$DATA" --user "$EMAIL" --json | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
[ -n "$TOKEN" ] || die "token for $EMAIL"

BASE="$BASE" TOKEN="$TOKEN" EMAIL="$EMAIL" PASSWORD="$PASSWORD" ITEMS="${ITEMS:-1000}" BIG_ITEMS="${BIG_ITEMS:-10000}" RUNS="${RUNS:-5}" \
  node bench/webapp-drive.mjs || die "the browser measurement"
