# Continuous replication with Litestream, as docs/operations.md tells it: replicate
# the running server's database to a file replica while it takes writes, restore
# the replica into a fresh data directory, copy the blobs beside it, check it with
# `atrium backup`, serve it and compare it with the live server.
# shellcheck shell=bash

LS_BIN=$(command -v litestream || echo "$PWD/bin/litestream")
if [ ! -x "$LS_BIN" ]; then
  FAIL=$((FAIL + 1))
  printf 'FAIL litestream: not installed (.ci/run builds it into bin/litestream)\n'
else
  LS_TOKEN=$(jq -r .token <<<"$CREDS")
  LS_EMAIL=$(jq -r .email <<<"$CREDS")
  LS_PW=$(jq -r .app_password <<<"$CREDS")
  LS_DIR=$(mktemp -d)
  LS_PORT=$(free_port)
  LS_URL="http://127.0.0.1:$LS_PORT"
  LS_RESTORED_PID=
  LS_BOOK=$(curl -fsS -H "Authorization: Bearer $LS_TOKEN" "$ATRIUM_URL/api/v1/contacts/books" | jq -r '.[0].id')
  cat >"$LS_DIR/litestream.yml" <<YAML
dbs:
  - path: $DATA_DIR/atrium.db
    replicas:
      - type: file
        path: $LS_DIR/replica
        sync-interval: 1s
YAML
  "$LS_BIN" replicate -config "$LS_DIR/litestream.yml" >"$LS_DIR/litestream.log" 2>&1 &
  LS_PID=$!

  ls_snapshot() { # the first snapshot of the replica is written
    for _ in $(seq 1 100); do
      compgen -G "$LS_DIR/replica/generations/*/snapshots/*" >/dev/null && return 0
      sleep 0.1
    done
    cat "$LS_DIR/litestream.log"
    return 1
  }
  ls_writes() { # 200 WebDAV PUTs and a contact while Litestream replicates
    mkdir -p "$LS_DIR/files"
    curl -fsS -u "$LS_EMAIL:$LS_PW" -X MKCOL "$ATRIUM_URL/api/v1/webdav/litestream/" -o /dev/null || return 1
    for i in $(seq 1 200); do
      head -c $((1000 + i * 37)) /dev/urandom >"$LS_DIR/files/f$i.bin"
      curl -fsS -u "$LS_EMAIL:$LS_PW" -T "$LS_DIR/files/f$i.bin" "$ATRIUM_URL/api/v1/webdav/litestream/f$i.bin" -o /dev/null || return 1
    done
    curl -fsS -H "Authorization: Bearer $LS_TOKEN" -H 'Content-Type: application/json' \
      -d '{"first_name":"Lita","last_name":"Stream","emails":[{"type":"work","value":"lita@example.test"}]}' \
      "$ATRIUM_URL/api/v1/contacts/books/$LS_BOOK" -o /dev/null
  }
  ls_restore() { # the replica, caught up, restores into a fresh data directory with the blobs copied beside
    sleep 3 # a few sync intervals
    "$LS_BIN" restore -config "$LS_DIR/litestream.yml" -o "$LS_DIR/data/atrium.db" "$DATA_DIR/atrium.db" &&
      mkdir -p "$LS_DIR/data/blobs" && cp -a "$DATA_DIR/blobs/objects" "$LS_DIR/data/blobs/" &&
      cp -a "$DATA_DIR/archive" "$LS_DIR/data/"
  }
  ls_propfind() { # the same listing of the folder written under replication, over WebDAV
    local q='<?xml version="1.0"?><propfind xmlns="DAV:"><prop><getcontentlength/><getetag/></prop></propfind>' a b
    a=$(set -o pipefail; curl -fsS -u "$LS_EMAIL:$LS_PW" -X PROPFIND -H 'Depth: 1' --data "$q" "$ATRIUM_URL/api/v1/webdav/litestream/" | sed 's/></>\n</g' | sort) || return 1
    b=$(set -o pipefail; curl -fsS -u "$LS_EMAIL:$LS_PW" -X PROPFIND -H 'Depth: 1' --data "$q" "$LS_URL/api/v1/webdav/litestream/" | sed 's/></>\n</g' | sort) || return 1
    [ "$(grep -c 'f[0-9]*\.bin' <<<"$a")" -eq 200 ] || { echo "live server lists $(grep -c 'f[0-9]*\.bin' <<<"$a") files"; return 1; }
    diff <(echo "$a") <(echo "$b")
  }

  check "litestream: replicates the running server's database" ls_snapshot
  check "litestream: the server takes 200 WebDAV PUTs and a contact meanwhile" ls_writes
  check "litestream: restores the replica, blobs copied beside it" ls_restore
  check "litestream: atrium backup of the restored directory finds every blob" \
    "$BIN" backup --data "$LS_DIR/data" --to "$LS_DIR/check.tar.zst" --quiet
  "$BIN" serve --data "$LS_DIR/data" --listen "127.0.0.1:$LS_PORT" >"$LS_DIR/server.log" 2>&1 &
  LS_RESTORED_PID=$!
  if check "litestream: the restored directory serves" wait_ready "$LS_URL" "$LS_DIR/server.log"; then
    for path in /api/v1/me "/api/v1/contacts/books/$LS_BOOK" "/api/v1/drive/browse?per_page=500"; do
      check "litestream: same answer to GET $(sed "s/$LS_BOOK/{book_id}/" <<<"${path%%\?*}")" same_json "$LS_TOKEN" "$ATRIUM_URL$path" "$LS_URL$path"
    done
    check "litestream: the same 200 files over WebDAV, sizes and etags" ls_propfind
    check "litestream: the last file written downloads byte for byte" bash -c \
      "cmp <(curl -fsS -u '$LS_EMAIL:$LS_PW' '$LS_URL/api/v1/webdav/litestream/f200.bin') '$LS_DIR/files/f200.bin'"
  fi
  check "litestream: no new generation (Atrium's checkpoints never reset the log under it)" \
    bash -c "[ \$(grep -c 'new generation' '$LS_DIR/litestream.log') -eq 1 ]"
  kill -TERM "$LS_RESTORED_PID" "$LS_PID" 2>/dev/null
  wait "$LS_RESTORED_PID" "$LS_PID" 2>/dev/null
  rm -rf "$LS_DIR"
fi
