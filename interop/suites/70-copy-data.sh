# Moving to PostgreSQL and S3: an embedded server of this suite's own (SQLite,
# blobs on its disk) is filled by real clients (curl on REST, rclone on WebDAV
# with an app password) and, while it still serves, `atrium copy-data` copies it
# into a fresh database on the PostgreSQL server of ATRIUM_DATABASE_URL and a
# fresh bucket of ATRIUM_S3_ENDPOINT; the old server writes on, stops, and
# `copy-data --again` makes the final pass; a server on the copy then answers
# the same clients with the same credentials and share link.
# shellcheck shell=bash

if [ -z "${ATRIUM_DATABASE_URL:-}" ] || [ -z "${ATRIUM_S3_ENDPOINT:-}" ]; then
  printf 'skip 70-copy-data: needs ATRIUM_DATABASE_URL and ATRIUM_S3_ENDPOINT (the target of the copy)\n'
  return 0 2>/dev/null || exit 0
fi

CD_DIR=$(mktemp -d)
CD_SRC_PORT=$(free_port)
CD_SRC="http://127.0.0.1:$CD_SRC_PORT"
CD_DST_PORT=$(free_port)
CD_DST="http://127.0.0.1:$CD_DST_PORT"
CD_SRC_PID=
CD_DST_PID=
CD_NAME="atrium_copy_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
CD_BUCKET=${CD_NAME//_/-}
# The new database: on the server of ATRIUM_DATABASE_URL, under another name.
CD_BASE=${ATRIUM_DATABASE_URL%%\?*}
CD_DB_URL="${CD_BASE%/*}/$CD_NAME${ATRIUM_DATABASE_URL#"$CD_BASE"}"
CD_REGION=${ATRIUM_S3_REGION:-us-east-1}

# The source runs embedded: none of the cluster's settings. (A command, not a
# function: a server started with it in the background is $!, which the
# cleanup stops.)
CD_EMBEDDED=(env -u ATRIUM_DATABASE_URL -u ATRIUM_S3_ENDPOINT -u ATRIUM_S3_BUCKET -u ATRIUM_S3_ACCESS_KEY
  -u ATRIUM_S3_SECRET_KEY -u ATRIUM_S3_REGION -u ATRIUM_S3_PUBLIC_ENDPOINT -u ATRIUM_PUBLIC_URL)
# The target: the new database and bucket, its own public URL.
cd_target() {
  ATRIUM_DATABASE_URL="$CD_DB_URL" ATRIUM_S3_BUCKET="$CD_BUCKET" ATRIUM_PUBLIC_URL="$CD_DST" "$@"
}
# cd_s3 METHOD PATH [CURL ARGS...]: a request to the store signed with the cluster's keys.
cd_s3() {
  local method=$1 path=$2
  shift 2
  curl -sS -X "$method" --aws-sigv4 "aws:amz:$CD_REGION:s3" \
    -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" \
    --user "$ATRIUM_S3_ACCESS_KEY:$ATRIUM_S3_SECRET_KEY" "$@" "$ATRIUM_S3_ENDPOINT/$path"
}
cd_cleanup() {
  local pid key
  for pid in "$CD_SRC_PID" "$CD_DST_PID"; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  psql "$ATRIUM_DATABASE_URL" -qc "DROP DATABASE IF EXISTS $CD_NAME WITH (FORCE)" >/dev/null 2>&1
  for _ in 1 2 3; do
    keys=$(cd_s3 GET "$CD_BUCKET?list-type=2" 2>/dev/null | grep -o '<Key>[^<]*</Key>' | sed 's/<Key>\(.*\)<\/Key>/\1/')
    [ -n "$keys" ] || break
    for key in $keys; do cd_s3 DELETE "$CD_BUCKET/$key" -o /dev/null; done
  done
  cd_s3 DELETE "$CD_BUCKET" -o /dev/null 2>/dev/null
  rm -rf "$CD_DIR"
}

"${CD_EMBEDDED[@]}" "$BIN" serve --data "$CD_DIR/src" --listen "127.0.0.1:$CD_SRC_PORT" >"$CD_DIR/source.log" 2>&1 &
CD_SRC_PID=$!
if ! check "copy-data: an embedded server of its own serves" wait_ready "$CD_SRC" "$CD_DIR/source.log"; then
  cd_cleanup
  return 0 2>/dev/null || exit 0
fi
CD_CREDS=$("${CD_EMBEDDED[@]}" "$BIN" bootstrap --data "$CD_DIR/src" --json --admin-email mover@example.test --public-url "$CD_SRC")
CD_TOKEN=$(jq -r .token <<<"$CD_CREDS")
CD_PASS=$(jq -r .app_password <<<"$CD_CREDS")

# Real clients fill it: rclone over WebDAV (a tree of small and large files),
# curl over REST (a folder, a share link).
mkdir -p "$CD_DIR/tree/docs"
head -c 300000 /dev/urandom >"$CD_DIR/tree/large.bin"
head -c 150000 /dev/urandom >"$CD_DIR/tree/docs/medium.bin"
for i in 1 2 3 4 5; do printf 'small file %s\n' "$i" >"$CD_DIR/tree/docs/small-$i.txt"; done
cd_rclone() { # cd_rclone URL ARGS...: rclone on the WebDAV mount at URL with the app password
  local url=$1
  shift
  RCLONE_CONFIG=/dev/null RCLONE_CONFIG_CD_TYPE=webdav RCLONE_CONFIG_CD_URL="$url/api/v1/webdav/" RCLONE_CONFIG_CD_VENDOR=other \
    RCLONE_CONFIG_CD_USER=mover@example.test RCLONE_CONFIG_CD_PASS="$(rclone obscure "$CD_PASS")" rclone "$@"
}
export -f cd_rclone
export CD_PASS CD_DIR
check "copy-data: rclone copies a tree into the embedded server" cd_rclone "$CD_SRC" copy "$CD_DIR/tree" cd:moved
CD_LARGE=$(curl -fsS -H "Authorization: Bearer $CD_TOKEN" "$CD_SRC/api/v1/drive/browse?per_page=500" |
  jq -r '.items[] | select(.name == "moved") | .id')
CD_LARGE=$(curl -fsS -H "Authorization: Bearer $CD_TOKEN" "$CD_SRC/api/v1/drive/browse/$CD_LARGE?per_page=500" |
  jq -r '.items[] | select(.name == "large.bin") | .id')
CD_LINK=$(curl -fsS -H "Authorization: Bearer $CD_TOKEN" -H 'Content-Type: application/json' \
  -d '{"create_link":true,"permission":"view"}' "$CD_SRC/api/v1/drive/$CD_LARGE/shares" | jq -r .share_link)
CD_LINK=${CD_LINK##*/}
curl -fsS -o /dev/null -H "Authorization: Bearer $CD_TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"made over REST"}' "$CD_SRC/api/v1/drive/folders"
for p in /api/v1/contacts/books /api/v1/calendar/calendars; do
  curl -fsS -o /dev/null -H "Authorization: Bearer $CD_TOKEN" "$CD_SRC$p"
done

# The target: a fresh database and bucket, copied into while the source serves.
psql "$ATRIUM_DATABASE_URL" -qc "CREATE DATABASE $CD_NAME" >/dev/null
cd_s3 PUT "$CD_BUCKET" -o /dev/null
check "copy-data: copies the serving installation into PostgreSQL and the bucket" bash -c \
  "$(declare -f cd_target); CD_DB_URL='$CD_DB_URL' CD_BUCKET='$CD_BUCKET' CD_DST='$CD_DST';
   cd_target '$BIN' copy-data --from '$CD_DIR/src' --data '$CD_DIR/dst' --quiet | tee '$CD_DIR/copy.out' | grep -q '^copied .* 2 blobs'"
check "copy-data: a second run finds it done" bash -c \
  "$(declare -f cd_target); CD_DB_URL='$CD_DB_URL' CD_BUCKET='$CD_BUCKET' CD_DST='$CD_DST';
   cd_target '$BIN' copy-data --from '$CD_DIR/src' --data '$CD_DIR/dst' --quiet | grep -q 'already'"
check "copy-data: the password is never printed" bash -c \
  "! grep -qF '$(sed -n 's|^postgres[a-z]*://[^:]*:\([^@]*\)@.*|\1|p' <<<"$CD_DB_URL")@' '$CD_DIR/copy.out'"

# The procedure of docs/operations.md: the old server wrote on after the first
# pass; once it stopped, --again copies the rows anew (the blobs already in the
# bucket are passed over).
head -c 120000 /dev/urandom >"$CD_DIR/tree/late.bin"
check "copy-data: rclone writes on the old server after the first pass" cd_rclone "$CD_SRC" copy "$CD_DIR/tree" cd:moved
CD_PATHS=(/api/v1/me /api/v1/contacts/books /api/v1/calendar/calendars "/api/v1/drive/browse?per_page=500")
for i in "${!CD_PATHS[@]}"; do
  curl -fsS -H "Authorization: Bearer $CD_TOKEN" "$CD_SRC${CD_PATHS[$i]}" | jq -S . >"$CD_DIR/before-$i.json"
done
kill -TERM "$CD_SRC_PID" 2>/dev/null
wait "$CD_SRC_PID" 2>/dev/null
CD_SRC_PID=
check "copy-data --again: the rows anew once the old server stopped, the blobs in the bucket kept" bash -c \
  "$(declare -f cd_target); CD_DB_URL='$CD_DB_URL' CD_BUCKET='$CD_BUCKET' CD_DST='$CD_DST';
   cd_target '$BIN' copy-data --from '$CD_DIR/src' --data '$CD_DIR/dst' --again --quiet | grep -q '^copied .* 3 blobs and 0 archived (2 already there)'"

ATRIUM_DATABASE_URL="$CD_DB_URL" ATRIUM_S3_BUCKET="$CD_BUCKET" ATRIUM_PUBLIC_URL="$CD_DST" \
  "$BIN" serve --data "$CD_DIR/dst" --listen "127.0.0.1:$CD_DST_PORT" >"$CD_DIR/target.log" 2>&1 &
CD_DST_PID=$!
if check "copy-data: a server on the copy serves" wait_ready "$CD_DST" "$CD_DIR/target.log"; then
  cd_same() { # cd_same I: the copy answers CD_PATHS[I] as the old server did last
    diff "$CD_DIR/before-$1.json" <(set -o pipefail; curl -fsS -H "Authorization: Bearer $CD_TOKEN" "$CD_DST${CD_PATHS[$1]}" | jq -S .)
  }
  for i in "${!CD_PATHS[@]}"; do
    path=${CD_PATHS[$i]}
    check "copy-data: same answer to GET ${path%%\?*} (the same token)" cd_same "$i"
  done
  check "copy-data: rclone with the same app password finds the same tree" cd_rclone "$CD_DST" check "$CD_DIR/tree" cd:moved
  check "copy-data: the share link downloads the same bytes" bash -c \
    "u=\$(curl -fsS '$CD_DST/api/v1/drive/shared-link/$CD_LINK/download' | jq -r .url) && curl -fsS \"\$u\" | cmp -s - '$CD_DIR/tree/large.bin'"
  check "copy-data: a new upload on the copy" bash -c \
    "head -c 100000 /dev/urandom >'$CD_DIR/tree/after.bin' && cd_rclone '$CD_DST' copy '$CD_DIR/tree' cd:moved && cd_rclone '$CD_DST' check '$CD_DIR/tree' cd:moved"
fi
cd_cleanup
