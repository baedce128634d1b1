# Backup and restore: back up the running server to a .tar.zst, restore it into a
# fresh data directory, serve that on another port and compare it with the first.
# shellcheck shell=bash

BK_TOKEN=$(jq -r .token <<<"$CREDS")
BK_DIR=$(mktemp -d)
BK_PORT=$(free_port)
BK_URL="http://127.0.0.1:$BK_PORT"
BK_PID=

# Files of this suite's own, so that the backup carries bytes whatever ran before
# it: a small one (its content kept in the database) and one of 200 KiB (a blob).
bk_upload() { # name file -> the new file's id
  local t
  t=$(curl -fsS -H "Authorization: Bearer $BK_TOKEN" -H 'Content-Type: application/json' \
    -d "{\"name\":\"$1\",\"mime_type\":\"application/octet-stream\",\"size\":$(stat -c %s "$2")}" \
    "$ATRIUM_URL/api/v1/drive/upload") &&
    curl -fsS -X PUT -H "Content-Type: $(jq -r '.headers["Content-Type"]' <<<"$t")" --data-binary "@$2" \
      "$(jq -r .upload_url <<<"$t")" >/dev/null &&
    curl -fsS -X POST -H "Authorization: Bearer $BK_TOKEN" "$ATRIUM_URL/api/v1/drive/$(jq -r .file.id <<<"$t")/confirm" | jq -r .id
}
printf 'backed up and back' >"$BK_DIR/small.txt"
head -c 204800 /dev/urandom >"$BK_DIR/large.bin"
BK_FILE=$(bk_upload backup-interop.txt "$BK_DIR/small.txt")
BK_LARGE=$(bk_upload backup-interop-large.bin "$BK_DIR/large.bin")

# The default address book and calendar are made on first use: use them before the backup.
for p in /api/v1/contacts/books /api/v1/calendar/calendars; do
  curl -fsS -o /dev/null -H "Authorization: Bearer $BK_TOKEN" "$ATRIUM_URL$p"
done

check "backup: a .tar.zst of the running server" bash -c \
  "'$BIN' backup --data '$DATA_DIR' --to '$BK_DIR/atrium.tar.zst' --quiet | grep -q '^backed up .* blobs'"
check "backup: the manifest lists the database and its blobs" bash -c \
  "tar --zstd -xOf '$BK_DIR/atrium.tar.zst' manifest.json 2>/dev/null | jq -e '.format_version == 1 and .blobs.count > 0 and (.database.sha256|length) == 64' ||
   zstd -dc '$BK_DIR/atrium.tar.zst' | tar -xOf - manifest.json | jq -e '.format_version == 1 and .blobs.count > 0'"
check "restore: into a fresh data directory" "$BIN" restore --from "$BK_DIR/atrium.tar.zst" --data "$BK_DIR/data" --quiet
check "restore: refuses a data directory that is not empty" bash -c \
  "! out=\$('$BIN' restore --from '$BK_DIR/atrium.tar.zst' --data '$BK_DIR/data' --quiet 2>&1) && grep -q 'not empty' <<<\"\$out\""
"$BIN" serve --data "$BK_DIR/data" --listen "127.0.0.1:$BK_PORT" >"$BK_DIR/server.log" 2>&1 &
BK_PID=$!
if check "restore: the restored directory serves" wait_ready "$BK_URL" "$BK_DIR/server.log"; then
  for path in /api/v1/me /api/v1/contacts/books /api/v1/calendar/calendars "/api/v1/drive/browse?per_page=500"; do
    check "restore: same answer to GET ${path%%\?*} (the same token)" same_json "$BK_TOKEN" "$ATRIUM_URL$path" "$BK_URL$path"
  done
  for f in "$BK_FILE small.txt" "$BK_LARGE large.bin"; do
    read -r id name <<<"$f"
    check "restore: $name downloads byte for byte" bash -c \
      "u=\$(curl -fsS -H 'Authorization: Bearer $BK_TOKEN' '$BK_URL/api/v1/drive/$id/download' | jq -r .url) &&
       curl -fsS \"\$u\" | cmp -s - '$BK_DIR/$name'"
  done
fi
kill -TERM "$BK_PID" 2>/dev/null
wait "$BK_PID" 2>/dev/null
rm -rf "$BK_DIR"
