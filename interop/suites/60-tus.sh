# Resumable upload: tus-js-client (npm; the client of Uppy's Tus plugin) uploads a
# 20 MiB file in chunks to /api/v1/drive/tus/, aborts half-way, resumes from its
# stored fingerprint at the server's offset and completes; REST then shows the
# drive file with the file's SHA-256. The same client with its defaults (one
# PATCH, as Uppy sends) uploads too, and a second upload of a taken name waits
# in conflict until resolve renames it.
# shellcheck shell=bash

TUS=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email tus@example.test --role member)
TUS_TOKEN=$(jq -r .token <<<"$TUS")
TUS_DIR=$(mktemp -d)
TUS_ENDPOINT="$ATRIUM_URL/api/v1/drive/tus/"
export TUS_TOKEN TUS_DIR TUS_ENDPOINT
head -c $((20 << 20)) /dev/urandom >"$TUS_DIR/video.bin"
head -c $((3 << 20)) /dev/urandom >"$TUS_DIR/photo.jpg"

# tus_file_hash ID: the content_hash REST reports for file ID.
tus_file_hash() {
  curl -fsS -H "Authorization: Bearer $TUS_TOKEN" "$ATRIUM_URL/api/v1/drive/$1/detail" | jq -r .content_hash
}
# tus_same_hash JSON FILE: the file of the upload result JSON has FILE's SHA-256.
tus_same_hash() {
  local id want got
  id=$(jq -r .file_id "$1")
  want="sha256:$(sha256sum "$2" | cut -d' ' -f1)"
  got=$(tus_file_hash "$id")
  [ "$got" = "$want" ] || { echo "file $id: content_hash $got, want $want"; return 1; }
}
export -f tus_file_hash tus_same_hash

check "node is installed" command -v node
check "npm ci installs tus-js-client" bash -c "cd interop/tus && npm ci --no-audit --no-fund --prefer-offline --loglevel=error"
check "OPTIONS advertises tus 1.0.0 with creation, defer-length, termination, expiration" bash -c \
  "curl -fsS -X OPTIONS -D - -o /dev/null '$TUS_ENDPOINT' | tr -d '\r' | grep -i '^tus-extension:' | grep -q 'creation.*termination.*creation-defer-length.*expiration'"
check "tus-js-client uploads 20 MiB in 2 MiB chunks, aborts half-way and resumes" bash -c \
  "node interop/tus/upload.mjs resume '$TUS_ENDPOINT' \"\$TUS_TOKEN\" '$TUS_DIR/video.bin' '$TUS_DIR/urls.json' >'$TUS_DIR/resume.json'"
check "the resume started at the server's offset (HEAD), between 0 and the size" \
  jq -e '.resumed_from > 0 and .resumed_from < .size and .status == "done"' "$TUS_DIR/resume.json"
check "the resumed upload is a drive file with the SHA-256 of the file (sha256sum)" \
  tus_same_hash "$TUS_DIR/resume.json" "$TUS_DIR/video.bin"
check "the drive file downloads byte for byte" bash -c '
  id=$(jq -r .file_id "$TUS_DIR/resume.json")
  url=$(curl -fsS -H "Authorization: Bearer $TUS_TOKEN" "$ATRIUM_URL/api/v1/drive/$id/download" | jq -r .url)
  curl -fsS "$url" | cmp - "$TUS_DIR/video.bin"'
check "tus-js-client with its defaults (Uppy's: the whole file in one PATCH) uploads" bash -c \
  "node interop/tus/upload.mjs defaults '$TUS_ENDPOINT' \"\$TUS_TOKEN\" '$TUS_DIR/photo.jpg' >'$TUS_DIR/defaults.json' && tus_same_hash '$TUS_DIR/defaults.json' '$TUS_DIR/photo.jpg'"
check "a second upload of the same name waits in conflict; resolve?strategy=rename keeps both" bash -c '
  node interop/tus/upload.mjs defaults "$TUS_ENDPOINT" "$TUS_TOKEN" "$TUS_DIR/photo.jpg" >"$TUS_DIR/again.json" &&
  jq -e ".status == \"conflict\"" "$TUS_DIR/again.json" >/dev/null &&
  id=$(jq -r .upload_url "$TUS_DIR/again.json" | sed "s|.*/||") &&
  curl -fsS -X POST -H "Authorization: Bearer $TUS_TOKEN" "$ATRIUM_URL/api/v1/drive/tus/$id/resolve?strategy=rename" |
    jq -e ".strategy == \"rename\" and .file.name == \"photo (1).jpg\"" >/dev/null'
check "an upload without a credential is refused with 401 problem+json" bash -c \
  "curl -s -X POST -H 'Tus-Resumable: 1.0.0' -H 'Upload-Length: 1' -D - -o /dev/null '$TUS_ENDPOINT' | tr -d '\r' | grep -qi '^content-type: application/problem+json'"
rm -rf "$TUS_DIR"
