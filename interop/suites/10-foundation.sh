# Foundation: health, OpenAPI, auth, problems, tokens, idempotency — with curl.
# shellcheck shell=bash

TOKEN=$(jq -r .token <<<"$CREDS")
MTOKEN=$(jq -r .token <<<"$MEMBER")
MEMAIL=$(jq -r .email <<<"$MEMBER")
MPASS=$(jq -r .app_password <<<"$MEMBER")

status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
want() { local w=$1; shift; local got; got=$(status "$@"); [ "$got" = "$w" ] || { echo "got $got, want $w"; return 1; }; }

check "healthz answers 200" want 200 "$ATRIUM_URL/healthz"
check "readyz answers 200" want 200 "$ATRIUM_URL/readyz"
# The metrics are a node's own, served to local clients (a balancer forwards
# someone else's request): in cluster mode, scraped from each node.
for FD_METRICS in ${ATRIUM_NODE_URLS:-$ATRIUM_URL}; do
  check "metrics are Prometheus text ($FD_METRICS)" bash -c "curl -fsS '$FD_METRICS/metrics' | grep -q '^# TYPE atrium_http_requests_total counter'"
done
[ -z "${ATRIUM_NODE_URLS:-}" ] || check "the balancer does not serve a node's metrics to a forwarded client" want 403 "$ATRIUM_URL/metrics"
check "openapi.json is OpenAPI 3.1.0, version 1.81.0.640" bash -c \
  "curl -fsS '$ATRIUM_URL/api/v1/openapi.json' | jq -e '.openapi == \"3.1.0\" and .info.version == \"1.81.0.640\"'"
check "docs page loads no external asset" bash -c \
  "p=\$(curl -fsS '$ATRIUM_URL/api/v1/docs'); ! grep -qE 'https?://' <<<\"\$p\""
check "bootstrap prints the contract's JSON fields" bash -c \
  "jq -e 'has(\"organization_id\") and has(\"user_id\") and has(\"email\") and (.token|startswith(\"atr_pat_\")) and (.app_password|length > 20)' <<<'$CREDS'"
check "PAT reads /api/v1/me" bash -c \
  "curl -fsS -H 'Authorization: Bearer $TOKEN' '$ATRIUM_URL/api/v1/me' | jq -e '.user.email == \"admin@example.test\"'"
check "no credential → 401 problem+json" bash -c \
  "curl -s -D - -o /tmp/atrium-401.json '$ATRIUM_URL/api/v1/me' | grep -qi '^content-type: application/problem+json' && jq -e '.status == 401 and .code == \"unauthorized\"' /tmp/atrium-401.json"
check "app password refused on REST" want 401 -u "$MEMAIL:$MPASS" "$ATRIUM_URL/api/v1/me"
check "member lacks admin:access → 403" want 403 -H "Authorization: Bearer $MTOKEN" "$ATRIUM_URL/api/v1/audit"
check "admin reads the audit log" bash -c \
  "curl -fsS -H 'Authorization: Bearer $TOKEN' '$ATRIUM_URL/api/v1/audit?limit=5' | jq -e '.limit == 5 and (.items|length) > 0'"
check "token create --json with scopes" bash -c \
  "'$BIN' token create --data '$DATA_DIR' --user member@example.test --scopes contacts:read --ttl 1h --json | jq -e '.scopes == [\"contacts:read\"] and .expires_at != null'"
check "token exchange gives a working JWT" bash -c "
  jwt=\$(curl -fsS -d grant_type=urn:ietf:params:oauth:grant-type:token-exchange -d subject_token=$MTOKEN \
    -d subject_token_type=urn:ietf:params:oauth:token-type:access_token '$ATRIUM_URL/oauth/token' | jq -r .access_token)
  curl -fsS -H \"Authorization: Bearer \$jwt\" '$ATRIUM_URL/api/v1/me' | jq -e '.credential == \"jwt\"'"
check "Idempotency-Key replays the first response" bash -c "
  a=\$(curl -fsS -H 'Authorization: Bearer $TOKEN' -H 'Idempotency-Key: interop-1' -H 'Content-Type: application/json' \
    -d '{\"name\":\"ci\",\"scopes\":[\"contacts:read\"]}' '$ATRIUM_URL/api/v1/developer/service-principals')
  h=\$(curl -fsS -D - -o /tmp/atrium-replay.json -H 'Authorization: Bearer $TOKEN' -H 'Idempotency-Key: interop-1' -H 'Content-Type: application/json' \
    -d '{\"name\":\"ci\",\"scopes\":[\"contacts:read\"]}' '$ATRIUM_URL/api/v1/developer/service-principals')
  grep -qi '^x-idempotency-replayed: true' <<<\"\$h\" && [ \"\$(jq -c . <<<\"\$a\")\" = \"\$(jq -c . /tmp/atrium-replay.json)\" ]"
check "Idempotency-Key with another body → 409" want 409 -H "Authorization: Bearer $TOKEN" -H 'Idempotency-Key: interop-1' \
  -H 'Content-Type: application/json' -d '{"name":"other","scopes":["contacts:read"]}' "$ATRIUM_URL/api/v1/developer/service-principals"
check "bad cursor → 400" want 400 -H "Authorization: Bearer $TOKEN" "$ATRIUM_URL/api/v1/audit?cursor=nope"
check "SIGTERM stops the server cleanly" bash -c "
  d=\$(mktemp -d); p=\$(python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])')
  '$BIN' serve --data \"\$d\" --listen 127.0.0.1:\$p >\"\$d/log\" 2>&1 & pid=\$!
  for i in \$(seq 50); do curl -fs http://127.0.0.1:\$p/healthz >/dev/null && break; sleep 0.1; done
  kill -TERM \$pid; wait \$pid; rc=\$?; rm -rf \"\$d\"; [ \$rc = 0 ]"
