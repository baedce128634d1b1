# The web app in a real browser: Debian's chromium driven by playwright-core
# (interop/browser, pinned in its lockfile), every page checked with axe-core.
# A person is invited to a customer organisation through the partner API and
# takes it from there in the browser (account.test.mjs); a second person of the
# organisation, whose invitation is accepted here, uses the pages (the other
# *.test.mjs files, through browser.mjs's signIn).
# shellcheck shell=bash

BR_ADMIN_TOKEN=$(jq -r .token <<<"$CREDS")
BR_EMAIL=browser.person@browser.test
BR_PAGES_EMAIL=pages.person@browser.test
BR_PAGES_PASSWORD='pages person password 1'
br_api() { curl -fsS -H "Authorization: Bearer $BR_ADMIN_TOKEN" -H 'Content-Type: application/json' "$@"; }
br_invite() { # br_invite EMAIL: the invitation link mailed to EMAIL
  "$BIN" mail list --data "$DATA_DIR" --json | jq -r --arg to "$1" 'map(select(.to == $to))[0].body' | grep -o "$ATRIUM_URL/invite/[0-9a-f]*" | head -1
}
BR_ORG=$(br_api -d "{\"name\":\"Browser Customer\",\"plan_slug\":\"business\",\"admin_email\":\"$BR_EMAIL\",\"seats\":10}" \
  "$ATRIUM_URL/api/v1/partner/orgs" | jq -r .id)
br_api -d "{\"email\":\"$BR_PAGES_EMAIL\",\"first_name\":\"Pat\",\"last_name\":\"<img src=x onerror=alert(1)>\"}" \
  "$ATRIUM_URL/api/v1/partner/orgs/$BR_ORG/users" >/dev/null
BR_INVITE=$(br_invite "$BR_EMAIL")
BR_PAGES_INVITE=$(br_invite "$BR_PAGES_EMAIL")
curl -fsS -H 'Content-Type: application/json' -d "{\"password\":\"$BR_PAGES_PASSWORD\"}" \
  "$ATRIUM_URL/api/v1/invitations/${BR_PAGES_INVITE##*/}/accept" >/dev/null

# More fixtures: a page's tests may add interop/browser/fixtures/<page>.sh,
# sourced here, that makes what its *.test.mjs needs and exports it (node
# inherits the environment; br_api, br_invite and BR_ORG are at hand).
# browser.mjs has signInAs and mailLink for people made there.
for fixture in interop/browser/fixtures/*.sh; do
  [ -f "$fixture" ] || continue
  # shellcheck source=/dev/null
  source "$fixture"
done
export ATRIUM_URL ATRIUM_BIN="$BIN" ATRIUM_DATA="$DATA_DIR" ADMIN_TOKEN="$BR_ADMIN_TOKEN" BR_ORG \
  INVITE_URL="$BR_INVITE" USER_EMAIL="$BR_EMAIL" PAGES_EMAIL="$BR_PAGES_EMAIL" PAGES_PASSWORD="$BR_PAGES_PASSWORD"

check "chromium is installed" command -v chromium
check "npm ci installs playwright-core and axe-core" bash -c "cd interop/browser && npm ci --no-audit --no-fund --prefer-offline --loglevel=error"
check "the invitation mails have links" test -n "$BR_INVITE" -a -n "$BR_PAGES_INVITE"
check "browser tests (node --test interop/browser)" bash -c \
  "cd interop/browser && SCREENSHOTS=\"\${SCREENSHOTS:-}\" node --test --test-concurrency=1 --test-reporter=spec *.test.mjs 2>&1"
