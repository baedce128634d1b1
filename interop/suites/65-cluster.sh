# Cross-node checks, in cluster mode only (ATRIUM_CLUSTER=N: scripts/cluster.sh,
# N nodes behind nginx on one PostgreSQL database and one bucket): what one
# node does, another sees — a WebDAV lock, a resumable upload, a web session, a
# revoked token, failed sign-ins, webhook deliveries, the search index — each
# talking to the nodes' own addresses; then the leader: exactly one node runs
# the background work, and when it is killed (kill -9) another takes over.
# shellcheck shell=bash

if [ -z "${ATRIUM_NODE_URLS:-}" ] || [ "$(wc -w <<<"$ATRIUM_NODE_URLS")" -lt 2 ]; then
  echo "skip 65-cluster: not in cluster mode (ATRIUM_CLUSTER=2)"
  return 0 2>/dev/null || exit 0
fi

read -r CL_A CL_B _ <<<"$ATRIUM_NODE_URLS"
CL_DIR=$(mktemp -d)
CL=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email cluster@example.test --role member)
CL_TOKEN=$(jq -r .token <<<"$CL")
CL_EMAIL=$(jq -r .email <<<"$CL")
CL_PASS=$(jq -r .app_password <<<"$CL")
export CL_A CL_B CL_DIR CL_TOKEN CL_EMAIL CL_PASS

# cl_code CURL-ARGS...: the HTTP status of one request
cl_code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# cl_want WANT CURL-ARGS...: the request answers WANT
cl_want() { local w=$1 got; shift; got=$(cl_code "$@"); [ "$got" = "$w" ] || { echo "got $got, want $w: $*"; return 1; }; }
cl_dav() { echo "$1/api/v1/webdav/$2"; }
export -f cl_code cl_want cl_dav

# docs/cluster.md shows the balancer's configuration the tests run, as it is.
cl_doc_conf() {
  local fence='```'
  awk -v op="${fence}nginx" -v cl="$fence" '$0 == op { f = 1; next } $0 == cl && f { exit } f' docs/cluster.md |
    diff - scripts/nginx-cluster.conf.tmpl
}
check "cluster: docs/cluster.md shows scripts/nginx-cluster.conf.tmpl as it is" cl_doc_conf

# A LOCK taken on node A holds on node B.
cl_lock() {
  local tok
  cl_want 201 -u "$CL_EMAIL:$CL_PASS" -T /etc/hostname "$(cl_dav "$CL_A" locked.txt)" || return 1
  tok=$(curl -fsS -D - -o /dev/null -u "$CL_EMAIL:$CL_PASS" -X LOCK -H 'Timeout: Second-600' -H 'Content-Type: application/xml' \
    --data '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>interop</D:owner></D:lockinfo>' \
    "$(cl_dav "$CL_A" locked.txt)" | tr -d '\r' | sed -n 's/^[Ll]ock-[Tt]oken: *//p')
  [ -n "$tok" ] || { echo "LOCK on A gave no Lock-Token"; return 1; }
  cl_want 423 -u "$CL_EMAIL:$CL_PASS" -T /etc/hostname "$(cl_dav "$CL_B" locked.txt)" || return 1
  cl_want 204 -u "$CL_EMAIL:$CL_PASS" -T /etc/hostname -H "If: ($tok)" "$(cl_dav "$CL_B" locked.txt)" || return 1
  cl_want 204 -u "$CL_EMAIL:$CL_PASS" -X UNLOCK -H "Lock-Token: $tok" "$(cl_dav "$CL_B" locked.txt)" || return 1
  cl_want 204 -u "$CL_EMAIL:$CL_PASS" -T /etc/hostname "$(cl_dav "$CL_A" locked.txt)"
}
export -f cl_lock
check "cluster: a WebDAV LOCK on node A refuses a PUT without its token on node B (423), takes one with it" cl_lock

# A resumable upload begun on A (POST, first PATCH) goes on on B (HEAD, the rest).
cl_tus() {
  local f=$CL_DIR/tus.bin size loc path off chunk=$((1 << 20)) id got
  head -c $((5 * chunk + 12345)) /dev/urandom >"$f"
  size=$(stat -c %s "$f")
  loc=$(curl -fsS -D - -o /dev/null -X POST -H "Authorization: Bearer $CL_TOKEN" -H 'Tus-Resumable: 1.0.0' \
    -H "Upload-Length: $size" -H "Upload-Metadata: filename $(printf cluster-tus.bin | base64 -w0)" \
    "$CL_A/api/v1/drive/tus/" | tr -d '\r' | sed -n 's/^[Ll]ocation: *//p')
  path=/${loc#*://*/}
  [ -n "$loc" ] || { echo "no Location"; return 1; }
  tail -c +1 "$f" | head -c "$chunk" | curl -fsS -o /dev/null -X PATCH -H "Authorization: Bearer $CL_TOKEN" -H 'Tus-Resumable: 1.0.0' \
    -H 'Content-Type: application/offset+octet-stream' -H 'Upload-Offset: 0' --data-binary @- "$CL_A$path" || return 1
  while :; do
    off=$(curl -fsS -I -H "Authorization: Bearer $CL_TOKEN" -H 'Tus-Resumable: 1.0.0' "$CL_B$path" | tr -d '\r' | sed -n 's/^[Uu]pload-[Oo]ffset: *//p')
    [ -n "$off" ] || { echo "HEAD on B gave no Upload-Offset"; return 1; }
    [ "$off" -lt "$size" ] || break
    id=$(tail -c +$((off + 1)) "$f" | head -c "$chunk" | curl -fsS -D - -o /dev/null -X PATCH -H "Authorization: Bearer $CL_TOKEN" \
      -H 'Tus-Resumable: 1.0.0' -H 'Content-Type: application/offset+octet-stream' -H "Upload-Offset: $off" --data-binary @- "$CL_B$path" |
      tr -d '\r' | sed -n 's/^[Aa]trium-[Ff]ile-[Ii]d: *//p') || return 1
  done
  [ -n "$id" ] || { echo "the last PATCH on B named no file"; return 1; }
  got=$(curl -fsS -H "Authorization: Bearer $CL_TOKEN" "$CL_A/api/v1/drive/$id/detail" | jq -r .content_hash)
  [ "$got" = "sha256:$(sha256sum <"$f" | cut -d' ' -f1)" ] || { echo "content_hash $got"; return 1; }
  [ "$(curl -fsS -u "$CL_EMAIL:$CL_PASS" "$(cl_dav "$CL_B" cluster-tus.bin)" | sha256sum)" = "$(sha256sum <"$f")" ]
}
export -f cl_tus
check "cluster: a tus upload begun on node A (POST, first PATCH) ends on node B (HEAD, PATCHes), byte for byte" cl_tus

# A web session made on A opens pages on B. The person is invited to an
# organisation of their own through the partner API (as 95-browser does).
CL_WEB_EMAIL=web.person@cluster.test
CL_WEB_PASSWORD='cluster person password 1'
curl -fsS -H "Authorization: Bearer $(jq -r .token <<<"$CREDS")" -H 'Content-Type: application/json' \
  -d "{\"name\":\"Cluster Customer\",\"plan_slug\":\"business\",\"admin_email\":\"$CL_WEB_EMAIL\",\"seats\":2}" \
  "$ATRIUM_URL/api/v1/partner/orgs" >/dev/null
CL_INVITE=$("$BIN" mail list --data "$DATA_DIR" --json | jq -r --arg to "$CL_WEB_EMAIL" 'map(select(.to == $to))[0].body' | grep -o '/invite/[0-9a-f]*' | head -1)
curl -fsS -H 'Content-Type: application/json' -d "{\"password\":\"$CL_WEB_PASSWORD\"}" \
  "$ATRIUM_URL/api/v1/invitations/${CL_INVITE##*/}/accept" >/dev/null
export CL_WEB_EMAIL CL_WEB_PASSWORD
cl_web() {
  local jar=$CL_DIR/jar csrf
  rm -f "$jar"
  csrf=$(curl -fsS -c "$jar" -b "$jar" "$CL_A/signin" | grep -o 'name="csrf" value="[^"]*"' | head -1 | sed 's/.*value="//; s/"$//')
  [ -n "$csrf" ] || { echo "no csrf field on A's sign-in page"; return 1; }
  cl_want 303 -c "$jar" -b "$jar" --data-urlencode "csrf=$csrf" --data-urlencode "email=$CL_WEB_EMAIL" \
    --data-urlencode "password=$CL_WEB_PASSWORD" "$CL_A/signin" || return 1
  cl_want 200 -b "$jar" "$CL_B/drive" || return 1
  curl -fsS -b "$jar" "$CL_B/drive" | grep -q 'Sign out' || { echo "B's /drive is not a signed-in page"; return 1; }
  # Without the cookie, B sends the browser to sign in.
  [ "$(cl_code "$CL_B/drive")" != 200 ]
}
export -f cl_web
check "cluster: a web session signed in on node A opens /drive on node B" cl_web

# A token revoked on A is refused by B within 2 s.
cl_revoke() {
  local t id tok i
  t=$(curl -fsS -H "Authorization: Bearer $CL_TOKEN" -H 'Content-Type: application/json' -d '{"name":"cluster revoke"}' "$CL_A/api/v1/me/tokens") || return 1
  id=$(jq -r .id <<<"$t") tok=$(jq -r .token <<<"$t")
  cl_want 200 -H "Authorization: Bearer $tok" "$CL_B/api/v1/me" || return 1
  cl_want 200 -H "Authorization: Bearer $tok" "$CL_A/api/v1/me" || return 1
  cl_want 204 -X DELETE -H "Authorization: Bearer $CL_TOKEN" "$CL_A/api/v1/me/tokens/$id" || return 1
  local t0; t0=$(date +%s%N)
  for i in $(seq 1 40); do
    [ "$(cl_code -H "Authorization: Bearer $tok" "$CL_B/api/v1/me")" = 401 ] && break
    sleep 0.1
  done
  local ms=$((($(date +%s%N) - t0) / 1000000))
  echo "revoke: refused by B after $ms ms" | tee -a "$CL_DIR/summary"
  [ "$ms" -le 2000 ] && cl_want 401 -H "Authorization: Bearer $tok" "$CL_B/api/v1/me"
}
export -f cl_revoke
check "cluster: a token revoked on node A is refused by node B within 2 s" cl_revoke

# Failed sign-ins sent to A and B in turn add up to [limits] auth_failures (10):
# then the right app password waits on both nodes.
CL_LIM=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email cluster-limits@example.test --role member)
export CL_LIM_EMAIL CL_LIM_PASS
CL_LIM_EMAIL=$(jq -r .email <<<"$CL_LIM") CL_LIM_PASS=$(jq -r .app_password <<<"$CL_LIM")
cl_limits() {
  local i u
  cl_want 207 -u "$CL_LIM_EMAIL:$CL_LIM_PASS" -X PROPFIND -H 'Depth: 0' "$(cl_dav "$CL_A" "")" || return 1
  for i in $(seq 1 10); do
    u=$CL_A; [ $((i % 2)) = 0 ] && u=$CL_B
    cl_want 401 -u "$CL_LIM_EMAIL:wrong-$i" -X PROPFIND -H 'Depth: 0' "$(cl_dav "$u" "")" || return 1
  done
  sleep 1.2 # a node trusts a count it read for a second
  cl_want 429 -u "$CL_LIM_EMAIL:$CL_LIM_PASS" -X PROPFIND -H 'Depth: 0' "$(cl_dav "$CL_A" "")" || return 1
  cl_want 429 -u "$CL_LIM_EMAIL:$CL_LIM_PASS" -X PROPFIND -H 'Depth: 0' "$(cl_dav "$CL_B" "")" || return 1
  # The wait ends (5 s after the last failure) and the right password works again.
  sleep 4.5
  cl_want 207 -u "$CL_LIM_EMAIL:$CL_LIM_PASS" -X PROPFIND -H 'Depth: 0' "$(cl_dav "$CL_B" "")"
}
export -f cl_limits
check "cluster: failed sign-ins on nodes A and B in turn reach auth_failures together (then 429 on both)" cl_limits

# Webhook deliveries: 20 files made on A and B in turn are delivered once each.
cl_hooks() {
  local port pid sub i u n
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  python3 - "$port" "$CL_DIR/deliveries" <<'PY' &
import http.server, sys, json
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        ev = json.loads(body)
        with open(out, 'a') as f:
            f.write(json.dumps({'delivery': self.headers.get('X-Service-Delivery'), 'id': ev['id'], 'type': ev['type'], 'name': ev.get('data', {}).get('name', '')}) + '\n')
        self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(('127.0.0.1', port), H).serve_forever()
PY
  pid=$!
  # Listening before the first event: a delivery is attempted once here.
  for i in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done
  sub=$(curl -fsS -H "Authorization: Bearer $(jq -r .token <<<"$CREDS")" -H 'Content-Type: application/json' \
    -d "{\"url\":\"http://127.0.0.1:$port/hook\",\"events\":[\"drive.file.created\"]}" "$ATRIUM_URL/api/v1/webhooks/subscriptions" | jq -r .id)
  [ -n "$sub" ] && [ "$sub" != null ] || { kill "$pid"; echo "no subscription"; return 1; }
  # The subscription is the admin's organisation's: the admin's files.
  local admin_email admin_pass
  admin_email=$(jq -r .email <<<"$CREDS") admin_pass=$(jq -r .app_password <<<"$CREDS")
  curl -fsS -o /dev/null -u "$admin_email:$admin_pass" -X MKCOL "$(cl_dav "$CL_A" hooks)" || { kill "$pid"; return 1; }
  for i in $(seq -w 1 20); do
    u=$CL_A; [ $((10#$i % 2)) = 0 ] && u=$CL_B
    echo "event $i" | curl -fsS -o /dev/null -u "$admin_email:$admin_pass" -T - "$(cl_dav "$u" "hooks/hook-$i.txt")" || { kill "$pid"; return 1; }
  done
  for i in $(seq 1 150); do
    n=$(grep -c '"name": "hook-' "$CL_DIR/deliveries" 2>/dev/null)
    [ "${n:-0}" -ge 20 ] && break
    sleep 0.2
  done
  sleep 2 # a second delivery of one, if any, would come now
  kill "$pid"; wait "$pid" 2>/dev/null
  curl -fsS -X DELETE -H "Authorization: Bearer $(jq -r .token <<<"$CREDS")" "$ATRIUM_URL/api/v1/webhooks/subscriptions/$sub" >/dev/null
  jq -s -e '[.[] | select(.name | startswith("hook-"))] | (length == 20) and ((map(.id) | unique | length) == 20) and ((map(.name) | unique | length) == 20)' \
    "$CL_DIR/deliveries" || { cat "$CL_DIR/deliveries"; return 1; }
}
export -f cl_hooks
check "cluster: 20 files made on nodes A and B in turn are delivered to a webhook once each" cl_hooks

# The search index: a file written through A is found by a search on B at once.
cl_search() {
  echo "cluster search words" | curl -fsS -o /dev/null -u "$CL_EMAIL:$CL_PASS" -T - "$(cl_dav "$CL_A" zeppelinquartz.txt)" || return 1
  curl -fsS -H "Authorization: Bearer $CL_TOKEN" "$CL_B/api/v1/drive/search?q=zeppelinquartz" |
    jq -e '.total_hits == 1 and .hits[0].name == "zeppelinquartz.txt"'
}
export -f cl_search
check "cluster: a file written through node A is found by a search on node B at once" cl_search

# The leader: exactly one node says it leads; kill -9 it, and another says so
# within 15 s; then the killed node is started again.
cl_leaders() { # the nodes whose log says they lead, since the offsets in $CL_DIR/offsets
  local i=0 url off
  for url in $ATRIUM_NODE_URLS; do
    i=$((i + 1))
    off=$(sed -n "${i}p" "$CL_DIR/offsets" 2>/dev/null)
    tail -c +$((${off:-0} + 1)) "$CLUSTER_DIR/node-$i.log" | grep -q "leading: this node runs the cluster's background work" && echo "$i"
  done
}
cl_mark() { # remember each node's log length
  local i; : >"$CL_DIR/offsets"
  for i in $(seq 1 "$(wc -w <<<"$ATRIUM_NODE_URLS")"); do stat -c %s "$CLUSTER_DIR/node-$i.log" >>"$CL_DIR/offsets"; done
}
export -f cl_leaders cl_mark
cl_leader() {
  local i leaders
  rm -f "$CL_DIR/offsets"
  for i in $(seq 1 150); do leaders=$(cl_leaders); [ -n "$leaders" ] && break; sleep 0.1; done
  # Leadership that moved (a node restarted before this suite) leaves an older
  # line in a log: the leader is the one node whose line is its log's latest
  # leadership event.
  leaders=""
  for i in $(seq 1 "$(wc -w <<<"$ATRIUM_NODE_URLS")"); do
    grep -E "leading: this node|leadership lost|shutting down" "$CLUSTER_DIR/node-$i.log" | tail -1 | grep -q 'leading: this node' && leaders="$leaders $i"
  done
  echo "leading:$leaders"
  [ "$(wc -w <<<"$leaders")" = 1 ] || return 1
  echo "${leaders# }" >"$CL_DIR/leader"
}
cl_failover() {
  local l i t0 now ms
  l=$(cat "$CL_DIR/leader") || return 1
  cl_mark
  bash scripts/cluster.sh kill-node "$CLUSTER_DIR" "$l" || return 1
  t0=$(date +%s%N)
  for i in $(seq 1 150); do
    now=$(cl_leaders | grep -vx "$l")
    [ -n "$now" ] && break
    sleep 0.1
  done
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "failover: node $l killed; node(s) ${now:-none} lead after $ms ms" | tee -a "$CL_DIR/summary"
  bash scripts/cluster.sh restart-node "$CLUSTER_DIR" "$l" >/dev/null || return 1
  [ -n "$now" ] && [ "$ms" -le 15000 ]
}
export -f cl_leader cl_failover
check "cluster: exactly one node leads the background work" cl_leader
check "cluster: kill -9 of the leader: another node leads within 15 s (the killed node starts again)" cl_failover
check "cluster: every node is ready again" bash -c 'for u in $ATRIUM_NODE_URLS; do curl -fsS -o /dev/null "$u/readyz" || exit 1; done'
[ -f "$CL_DIR/summary" ] && sed 's/^/     /' "$CL_DIR/summary"
rm -rf "$CL_DIR"
