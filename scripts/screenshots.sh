#!/usr/bin/env bash
# Takes the README's screenshots (docs/screenshots/*.png) of the web app's main
# pages with the demo data: builds Atrium, starts `atrium serve --demo` on a
# fresh data directory and a free loopback port, signs in as the demo person in
# headless chromium (interop/browser, playwright-core) and saves each page.
#   bash scripts/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/atrium" ./cmd/atrium
(cd interop/browser && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
url="http://127.0.0.1:$port"
"$tmp/atrium" serve --demo --data "$tmp/data" --listen "127.0.0.1:$port" >"$tmp/out" 2>"$tmp/log" &
pid=$!
for _ in $(seq 1 300); do curl -fsS "$url/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
for _ in $(seq 1 100); do [ -s "$tmp/data/demo-credentials.json" ] && break; sleep 0.1; done
email=$(jq -r 'map(select(.email == "alice@acme.example"))[0].email' "$tmp/data/demo-credentials.json")
password=$(jq -r 'map(select(.email == "alice@acme.example"))[0].password' "$tmp/data/demo-credentials.json")
mkdir -p docs/screenshots
(cd interop/browser && ATRIUM_URL="$url" DEMO_EMAIL="$email" DEMO_PASSWORD="$password" OUT="$PWD/../../docs/screenshots" node screenshots.mjs)
