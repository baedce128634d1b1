# Drills, in cluster mode only (ATRIUM_CLUSTER=N, N >= 2), all through the
# balancer as a client would: kill -9 of a node during 40 concurrent small
# WebDAV uploads (each retried on failure, as clients do) and during a 64 MiB
# tus upload (a failed PATCH is followed by a HEAD and the rest from the
# offset it reports): every acknowledged upload is there with its SHA-256.
# Then a rolling restart (SIGTERM, wait for ready and nginx's fail_timeout,
# next node) under a load of GET, PUT and PROPFIND: at most 1% of the requests
# fail, and each failed one succeeds when retried.
# shellcheck shell=bash

if [ -z "${ATRIUM_NODE_URLS:-}" ] || [ "$(wc -w <<<"$ATRIUM_NODE_URLS")" -lt 2 ]; then
  echo "skip 66-cluster-drills: not in cluster mode (ATRIUM_CLUSTER=2)"
  return 0 2>/dev/null || exit 0
fi

DR_DIR=$(mktemp -d)
DR=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email drills@example.test --role member)
DR_TOKEN=$(jq -r .token <<<"$DR")
DR_EMAIL=$(jq -r .email <<<"$DR")
DR_PASS=$(jq -r .app_password <<<"$DR")
DR_DAV="$ATRIUM_URL/api/v1/webdav"
DR_NODES=$(wc -w <<<"$ATRIUM_NODE_URLS")
export DR_DIR DR_TOKEN DR_EMAIL DR_PASS DR_DAV DR_NODES
curl -fsS -o /dev/null -u "$DR_EMAIL:$DR_PASS" -X MKCOL "$DR_DAV/drill"
curl -fsS -o /dev/null -u "$DR_EMAIL:$DR_PASS" -X MKCOL "$DR_DAV/load"

# dr_ready: every node answers /readyz
dr_ready() {
  local u
  for u in $ATRIUM_NODE_URLS; do curl -fsS -o /dev/null "$u/readyz" || return 1; done
}
export -f dr_ready

# dr_put I: uploads small-I.bin (PUT, slowed so that uploads are in flight when
# a node dies), again on failure, up to 10 times; logs each attempt's status
# and, once acknowledged (2xx), "ack I".
dr_put() {
  local i=$1 a code
  sleep "0.$((RANDOM % 10))"
  for a in $(seq 1 10); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --limit-rate 100k -u "$DR_EMAIL:$DR_PASS" \
      -T "$DR_DIR/small/small-$i.bin" "$DR_DAV/drill/small-$i.bin")
    echo "try $i $a $code" >>"$DR_DIR/puts.log"
    case "$code" in 2??) echo "ack $i" >>"$DR_DIR/puts.log"; return 0 ;; esac
    sleep 0.3
  done
  return 1
}
export -f dr_put
dr_kill_uploads() {
  local i victim=$((RANDOM % DR_NODES + 1)) pids=() rc=0
  mkdir -p "$DR_DIR/small"
  # 128 to 384 KiB at 100 KiB/s after up to 0.9 s: in flight when the node dies.
  for i in $(seq 1 40); do head -c $((131072 + RANDOM * 8)) /dev/urandom >"$DR_DIR/small/small-$i.bin"; done
  : >"$DR_DIR/puts.log"
  for i in $(seq 1 40); do dr_put "$i" & pids+=($!); done
  sleep 1.2
  bash scripts/cluster.sh kill-node "$CLUSTER_DIR" "$victim" || return 1
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  echo "uploads: node $victim killed; $(grep -c '^try' "$DR_DIR/puts.log") attempts, $(grep '^try' "$DR_DIR/puts.log" | grep -vc ' 2..$') failed, $(grep -c '^ack' "$DR_DIR/puts.log") acknowledged" | tee -a "$DR_DIR/summary"
  bash scripts/cluster.sh restart-node "$CLUSTER_DIR" "$victim" >/dev/null || return 1
  [ "$rc" = 0 ] || { echo "an upload was not acknowledged after 10 attempts"; return 1; }
  for i in $(grep '^ack' "$DR_DIR/puts.log" | cut -d' ' -f2); do
    [ "$(curl -fsS -u "$DR_EMAIL:$DR_PASS" "$DR_DAV/drill/small-$i.bin" | sha256sum)" = "$(sha256sum <"$DR_DIR/small/small-$i.bin")" ] ||
      { echo "small-$i.bin: not the bytes acknowledged"; return 1; }
  done
  [ "$(grep -c '^ack' "$DR_DIR/puts.log")" = 40 ]
}
export -f dr_kill_uploads
check "drill: kill -9 of a node during 40 concurrent WebDAV uploads: every acknowledged one is there, byte for byte" dr_kill_uploads
check "drill: the killed node is ready again" dr_ready

# dr_tus: 64 MiB in 4 MiB PATCHes through the balancer; after the 4th, the node
# that did not answer it (round robin: the one taking the 5th) is killed mid-PATCH.
dr_tus() {
  local f=$DR_DIR/big.bin size chunk=$((4 << 20)) loc path off=0 n=0 id="" code last victim="" failed=0 a
  head -c $((64 << 20)) /dev/urandom >"$f"
  size=$(stat -c %s "$f")
  loc=$(curl -fsS -D - -o /dev/null -X POST -H "Authorization: Bearer $DR_TOKEN" -H 'Tus-Resumable: 1.0.0' \
    -H "Upload-Length: $size" -H "Upload-Metadata: filename $(printf drill-big.bin | base64 -w0)" \
    "$ATRIUM_URL/api/v1/drive/tus/" | tr -d '\r' | sed -n 's/^[Ll]ocation: *//p')
  [ -n "$loc" ] || { echo "no Location"; return 1; }
  path=/${loc#*://*/}
  for a in $(seq 1 60); do
    [ "$off" -lt "$size" ] || break
    n=$((n + 1))
    if [ "$n" = 5 ]; then
      last=$(grep '"PATCH ' "$CLUSTER_DIR/nginx-access.log" | tail -1 | sed -n 's/.* upstream=\([^ ]*\).*/\1/p')
      local i=0 u
      for u in $ATRIUM_NODE_URLS; do i=$((i + 1)); [ "$u" = "http://$last" ] || { victim=$i; break; }; done
      (sleep 0.4 && bash scripts/cluster.sh kill-node "$CLUSTER_DIR" "$victim") &
    fi
    code=$(tail -c +$((off + 1)) "$f" | head -c "$chunk" | curl -s -D "$DR_DIR/patch.h" -o /dev/null -w '%{http_code}' --limit-rate 8M \
      -X PATCH -H "Authorization: Bearer $DR_TOKEN" -H 'Tus-Resumable: 1.0.0' -H 'Content-Type: application/offset+octet-stream' \
      -H "Upload-Offset: $off" --data-binary @- "$ATRIUM_URL$path")
    if [ "$code" = 204 ]; then
      off=$(tr -d '\r' <"$DR_DIR/patch.h" | sed -n 's/^[Uu]pload-[Oo]ffset: *//p')
      id=$(tr -d '\r' <"$DR_DIR/patch.h" | sed -n 's/^[Aa]trium-[Ff]ile-[Ii]d: *//p')
      continue
    fi
    # As a tus client does: ask where the upload stands, go on from there.
    failed=$((failed + 1))
    sleep 0.2
    off=$(curl -fsS -I -H "Authorization: Bearer $DR_TOKEN" -H 'Tus-Resumable: 1.0.0' "$ATRIUM_URL$path" | tr -d '\r' | sed -n 's/^[Uu]pload-[Oo]ffset: *//p')
    [ -n "$off" ] || { echo "HEAD after a failed PATCH gave no offset"; return 1; }
    echo "PATCH $n failed ($code); the upload goes on from $off"
  done
  wait
  echo "tus: node $victim killed during PATCH 5; $failed PATCH(es) failed" | tee -a "$DR_DIR/summary"
  bash scripts/cluster.sh restart-node "$CLUSTER_DIR" "$victim" >/dev/null || return 1
  [ "$off" = "$size" ] && [ -n "$id" ] || { echo "upload at $off of $size, file '$id'"; return 1; }
  local got
  got=$(curl -fsS -H "Authorization: Bearer $DR_TOKEN" "$ATRIUM_URL/api/v1/drive/$id/detail" | jq -r .content_hash)
  [ "$got" = "sha256:$(sha256sum <"$f" | cut -d' ' -f1)" ] || { echo "content_hash $got"; return 1; }
  [ "$(curl -fsS -u "$DR_EMAIL:$DR_PASS" "$DR_DAV/drill-big.bin" | sha256sum)" = "$(sha256sum <"$f")" ]
}
export -f dr_tus
check "drill: kill -9 of a node during a 64 MiB tus upload: it resumes from the offset (HEAD) and completes, byte for byte" dr_tus
check "drill: the killed node is ready again" dr_ready

# dr_load W: a client's loop of PUT, GET and PROPFIND until $DR_DIR/stop
# exists; logs "METHOD CODE" per request and "retry METHOD CODE" for the
# retry of a failed one.
dr_load() {
  local w=$1 n=0 m code
  head -c 8192 /dev/urandom >"$DR_DIR/load-$w.bin"
  while [ ! -f "$DR_DIR/stop" ]; do
    n=$((n + 1))
    for m in PUT GET PROPFIND; do
      local args=(-u "$DR_EMAIL:$DR_PASS")
      case $m in
      PUT) args+=(-T "$DR_DIR/load-$w.bin" "$DR_DAV/load/w$w-$((n % 5)).bin") ;;
      GET) args+=("$DR_DAV/load/w$w-$((n % 5)).bin") ;;
      PROPFIND) args+=(-X PROPFIND -H 'Depth: 1' "$DR_DAV/load/") ;;
      esac
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "${args[@]}")
      echo "$m $code" >>"$DR_DIR/load-$w.log"
      case "$code" in
      2??) ;;
      *)
        sleep 0.2
        echo "retry $m $(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "${args[@]}")" >>"$DR_DIR/load-$w.log"
        ;;
      esac
    done
  done
}
export -f dr_load
dr_rolling() {
  local w pids=() i total failed
  rm -f "$DR_DIR/stop" "$DR_DIR"/load-*.log
  for w in 1 2 3 4; do dr_load "$w" & pids+=($!); done
  sleep 2
  for i in $(seq 1 "$DR_NODES"); do
    # restart-node returns once the node is ready and nginx's fail_timeout
    # has passed (nginx takes it back): only then does the next node go down.
    bash scripts/cluster.sh restart-node "$CLUSTER_DIR" "$i" >/dev/null || { touch "$DR_DIR/stop"; wait; return 1; }
  done
  touch "$DR_DIR/stop"
  for w in "${pids[@]}"; do wait "$w"; done
  cat "$DR_DIR"/load-*.log >"$DR_DIR/load.log"
  total=$(grep -vc '^retry' "$DR_DIR/load.log")
  failed=$(grep -v '^retry' "$DR_DIR/load.log" | grep -vc ' 2..$')
  echo "rolling restart: $total requests during the restart of $DR_NODES nodes, $failed failed" | tee -a "$DR_DIR/summary"
  grep -v ' 2..$' "$DR_DIR/load.log" | sort | uniq -c
  [ "$total" -ge 100 ] || { echo "too little load to judge"; return 1; }
  [ $((failed * 100)) -le "$total" ] || return 1
  ! grep '^retry' "$DR_DIR/load.log" | grep -v ' 2..$'
}
export -f dr_rolling
check "drill: rolling restart (SIGTERM, ready, next) under GET/PUT/PROPFIND load: at most 1% fail, each succeeds on retry" dr_rolling
check "drill: every node is ready after the rolling restart" dr_ready
# What the drills saw, for the log.
[ -f "$DR_DIR/summary" ] && sed 's/^/     /' "$DR_DIR/summary"
rm -rf "$DR_DIR"
