# The web app in a real browser: Debian's chromium driven by playwright-core
# (interop/browser, pinned in its lockfile), every page checked with axe-core.
# A person is invited to a customer organisation through the partner API and
# takes it from there in the browser (interop/browser/*.test.mjs).
# shellcheck shell=bash

BR_ADMIN_TOKEN=$(jq -r .token <<<"$CREDS")
BR_EMAIL=browser.person@browser.test
curl -fsS -H "Authorization: Bearer $BR_ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "{\"name\":\"Browser Customer\",\"plan_slug\":\"business\",\"admin_email\":\"$BR_EMAIL\",\"seats\":5}" \
  "$ATRIUM_URL/api/v1/partner/orgs" >/dev/null
BR_INVITE=$("$BIN" mail list --data "$DATA_DIR" --json | jq -r --arg to "$BR_EMAIL" 'map(select(.to == $to))[0].body' | grep -o "$ATRIUM_URL/invite/[0-9a-f]*" | head -1)

check "chromium is installed" command -v chromium
check "npm ci installs playwright-core and axe-core" bash -c "cd interop/browser && npm ci --no-audit --no-fund --prefer-offline --loglevel=error"
check "the invitation mail has a link" test -n "$BR_INVITE"
check "browser tests (node --test interop/browser)" bash -c \
  "cd interop/browser && ATRIUM_URL='$ATRIUM_URL' INVITE_URL='$BR_INVITE' USER_EMAIL='$BR_EMAIL' SCREENSHOTS="${SCREENSHOTS:-}" node --test --test-concurrency=1 --test-reporter=spec *.test.mjs 2>&1"
