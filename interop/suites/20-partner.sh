# Partner API with curl: provision a customer, follow the invitation e-mail from
# the outbox (atrium mail list --json), seat floor, suspension.
# shellcheck shell=bash

PTOKEN=$(jq -r .token <<<"$CREDS")
papi() { curl -s -H "Authorization: Bearer $PTOKEN" -H 'Content-Type: application/json' "$@"; }

ORG_JSON=$(papi -d '{"name":"Interop Customer","plan_slug":"business","admin_email":"boss@interop.test","seats":2}' "$ATRIUM_URL/api/v1/partner/orgs")
CORG=$(jq -r .id <<<"$ORG_JSON")
check "provision a customer organisation" jq -e '.plan_slug == "business" and .user_count == 1 and .reseller_depth == 0' <<<"$ORG_JSON"
check "the customer is listed by name search" bash -c \
  "curl -fsS -H 'Authorization: Bearer $PTOKEN' '$ATRIUM_URL/api/v1/partner/orgs?q=interop' | jq -e '.items | map(.id) | index(\"$CORG\") != null'"
check "the invitation e-mail is in the outbox" bash -c \
  "'$BIN' mail list --data '$DATA_DIR' --json | jq -e 'map(select(.to == \"boss@interop.test\" and (.body | contains(\"$ATRIUM_URL/invite/\")))) | length == 1'"
INVITE=$("$BIN" mail list --data "$DATA_DIR" --json | jq -r 'map(select(.to == "boss@interop.test"))[0].body' | grep -o '/invite/[0-9a-f]*' | cut -d/ -f3)
check "the invitation page opens" bash -c "curl -fsS '$ATRIUM_URL/invite/$INVITE' | grep -q 'Accept your invitation'"
check "accepting the invitation activates the admin" bash -c \
  "curl -fsS -H 'Content-Type: application/json' -d '{\"password\":\"interop password 1\"}' '$ATRIUM_URL/api/v1/invitations/$INVITE/accept' | jq -e '.status == \"active\"'"
check "an invitation link works once" bash -c \
  "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d '{\"password\":\"interop password 1\"}' '$ATRIUM_URL/api/v1/invitations/$INVITE/accept')\" = 404 ]"
papi -d '{"email":"second@interop.test"}' "$ATRIUM_URL/api/v1/partner/orgs/$CORG/users" >/dev/null
check "seat change below the floor → 409 seat_floor" bash -c \
  "curl -s -H 'Authorization: Bearer $PTOKEN' -H 'Content-Type: application/json' -d '{\"seats\":1}' '$ATRIUM_URL/api/v1/partner/orgs/$CORG/subscription/change-seats' | jq -e '.status == 409 and .code == \"seat_floor\"'"
check "seat change at the floor is accepted" bash -c \
  "curl -fsS -H 'Authorization: Bearer $PTOKEN' -H 'Content-Type: application/json' -d '{\"seats\":2}' '$ATRIUM_URL/api/v1/partner/orgs/$CORG/subscription/change-seats' | jq -e '.seats == 2 and .used_seats == 2'"
check "suspend the customer" bash -c \
  "curl -fsS -X POST -H 'Authorization: Bearer $PTOKEN' '$ATRIUM_URL/api/v1/partner/orgs/$CORG/suspend' | jq -e '.status == \"suspended\"'"
check "another reseller's token gets 404 for the customer" bash -c "
  other=\$('$BIN' bootstrap --data '$DATA_DIR' --json --org-name 'Interop Other' --admin-email ops@interop-other.test | jq -r .token)
  [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"Authorization: Bearer \$other\" '$ATRIUM_URL/api/v1/partner/orgs/$CORG')\" = 404 ]"
