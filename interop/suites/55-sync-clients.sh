# The desktop sync clients: Debian's nextcloudcmd (Nextcloud 3.7) and
# owncloudcmd (ownCloud 2.11), pointed at the server's address with an
# e-mail address and an app password, each syncing a drive of its own:
# a seeded tree syncs down, a re-sync with nothing changed transfers nothing,
# a local tree syncs up, remote and local renames, moves, deletes,
# overwrites and additions sync, a conflict keeps both contents,
# modification times are kept both ways, odd names (spaces, #, %, accents
# composed and decomposed) and 0-byte files survive, and a local edit in
# Shared with me is not pushed; a 600 MiB file uploads in chunks, and an
# interrupted chunked upload goes on from the chunks already sent. What the
# server holds is read by a fresh sync into an empty folder, and by the mount
# and REST.
# shellcheck shell=bash

SC_DIR=$(mktemp -d)
# owncloudcmd reads its exclude list from the desktop client's package,
# which Debian's owncloud-client-cmd does not bring: it gets its own.
printf '*~\n.~lock.*\n.*.sw?\n' >"$SC_DIR/exclude.lst"
SC_TREE="python3 interop/sync/tree.py"
SC_OWNER=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email sc-owner@example.test --role member)
SC_OWNER_TOKEN=$(jq -r .token <<<"$SC_OWNER")

sc_enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
# sc_dav METHOD PATH [curl args...]: a request to the mount as the client's user
sc_dav() {
  local m=$1 path=$2; shift 2
  curl -fsS -u "$SC_USER:$SC_PASS" -X "$m" "$@" "$ATRIUM_URL/api/v1/webdav/$(sc_enc "$path")"
}
# sc_put LOCAL PATH: upload a file with its modification time
sc_put() { sc_dav PUT "$2" -T "$1" -H "X-OC-Mtime: $(stat -c %Y "$1")" -o /dev/null; }
# sc_sync DIR NAME: one sync run of the client into DIR, its log kept as NAME
sc_sync() {
  local log=$SC_DIR/$SC_CLIENT-$2.log
  # shellcheck disable=SC2046
  timeout 600 $(sc_client_args) --non-interactive -u "$SC_USER" -p "$SC_PASS" "$1" "$ATRIUM_URL" >"$log" 2>&1 ||
    { echo "$SC_CLIENT exited $?"; grep -E 'warning|critical|fatal' "$log" | tail -20; return 1; }
}
# sc_transfers NAME: the requests of a run that moved content or changed the server
sc_transfers() {
  grep -E 'accessmanager \]:\s+([2345] ""|6 "(MOVE|MKCOL|DELETE|PROPPATCH|COPY)") "[^"]*/remote\.php/' "$SC_DIR/$SC_CLIENT-$1.log" | grep -v '/ocs/'
}
# sc_same DIR: DIR matches a fresh sync of the server into an empty folder
sc_same() {
  local fresh; fresh=$(mktemp -d -p "$SC_DIR")
  sc_sync "$fresh" fresh || return 1
  diff <($SC_TREE snap "$1") <($SC_TREE snap "$fresh")
}

sc_seed() { # the seeded tree, uploaded through the mount with its modification times
  local seed=$SC_DIR/$SC_CLIENT-seed
  mkdir -p "$seed/docs/deep/er" "$seed/Ünïcödé folder" &&
    printf 'quarterly\n' >"$seed/docs/report.txt" &&
    head -c 204800 /dev/urandom >"$seed/docs/deep/er/blob.bin" &&
    printf 'odd\n' >"$seed/a b #1 %41.txt" &&
    printf 'composed\n' >"$seed/café.txt" &&
    printf 'decomposed\n' >"$seed/$(printf 'noe\xcc\x88l.txt')" &&
    : >"$seed/empty.dat" &&
    printf 'x\n' >"$seed/Ünïcödé folder/x.txt" || return 1
  local i=0 f
  while IFS= read -r -d '' f; do
    i=$((i + 1)) && touch -d "@$((1500000000 + i * 86400))" "$f"
  done < <(find "$seed" -type f -print0 | sort -z)
  (cd "$seed" && find . -mindepth 1 -type d | sort) | while IFS= read -r d; do sc_dav MKCOL "${d#./}" -o /dev/null || exit 1; done || return 1
  (cd "$seed" && find . -type f | sort) | while IFS= read -r f; do sc_put "$seed/${f#./}" "${f#./}" || exit 1; done
}
sc_share() { # the owner shares a folder with the client's user (edit: still read-only to the clients)
  local id
  curl -fsS -u "sc-owner@example.test:$(jq -r .app_password <<<"$SC_OWNER")" -X MKCOL "$ATRIUM_URL/api/v1/webdav/team-$SC_CLIENT" -o /dev/null &&
    printf 'the plan\n' | curl -fsS -u "sc-owner@example.test:$(jq -r .app_password <<<"$SC_OWNER")" -T - "$ATRIUM_URL/api/v1/webdav/team-$SC_CLIENT/plan.txt" &&
    id=$(curl -fsS -H "Authorization: Bearer $SC_OWNER_TOKEN" "$ATRIUM_URL/api/v1/drive/browse" | jq -r ".items[] | select(.name == \"team-$SC_CLIENT\") | .id") &&
    curl -fsS -H "Authorization: Bearer $SC_OWNER_TOKEN" -H 'Content-Type: application/json' \
      -d "{\"email\":\"$SC_USER\",\"permission\":\"edit\"}" "$ATRIUM_URL/api/v1/drive/$id/shares" -o /dev/null
}
sc_down() {
  sc_seed && sc_share && sc_sync "$SC_LOCAL" down || return 1
  diff <($SC_TREE snap "$SC_DIR/$SC_CLIENT-seed") <($SC_TREE snap "$SC_LOCAL") || return 1
  [ "$(stat -c %Y "$SC_LOCAL/docs/report.txt")" = "$(stat -c %Y "$SC_DIR/$SC_CLIENT-seed/docs/report.txt")" ] || return 1
  cmp <(printf 'the plan\n') "$SC_LOCAL/Shared with me/team-$SC_CLIENT/plan.txt"
}
sc_nochange() {
  sc_sync "$SC_LOCAL" again || return 1
  ! sc_transfers again
}
sc_up() {
  mkdir -p "$SC_LOCAL/up/sub" &&
    printf 'new\n' >"$SC_LOCAL/up/new.txt" &&
    printf 'percent\n' >"$SC_LOCAL/up/100%#.txt" &&
    printf 'decomposed up\n' >"$SC_LOCAL/up/sub/$(printf 'man\xcc\x83ana.txt')" &&
    : >"$SC_LOCAL/up/sub/zero" &&
    head -c 300000 /dev/urandom >"$SC_LOCAL/up/sub/big.bin" &&
    touch -d @1400000000 "$SC_LOCAL/up/new.txt" || return 1
  sc_sync "$SC_LOCAL" up && sc_same "$SC_LOCAL" || return 1
  # The modification time the client sent is what the mount answers.
  sc_dav PROPFIND up/new.txt -H 'Depth: 0' | grep -q 'Tue, 13 May 2014 16:53:20 GMT'
}
sc_remote_changes() {
  local u="$ATRIUM_URL/api/v1/webdav"
  sc_dav MOVE docs/report.txt -H "Destination: $u/docs/report-renamed.txt" -o /dev/null &&
    sc_dav MOVE 'a b #1 %41.txt' -H "Destination: $u/docs/deep/$(sc_enc 'a b #1 %41.txt')" -o /dev/null &&
    sc_dav MOVE 'Ünïcödé folder' -H "Destination: $u/docs/$(sc_enc 'moved folder')" -o /dev/null &&
    sc_dav DELETE empty.dat -o /dev/null &&
    printf 'overwritten remotely\n' >"$SC_DIR/ow" && touch -d @1600000000 "$SC_DIR/ow" && sc_put "$SC_DIR/ow" docs/deep/er/blob.bin &&
    printf 'added remotely\n' >"$SC_DIR/add" && sc_put "$SC_DIR/add" 'added remotely.txt' || return 1
  sc_sync "$SC_LOCAL" remote || return 1
  [ -f "$SC_LOCAL/docs/report-renamed.txt" ] && [ ! -e "$SC_LOCAL/docs/report.txt" ] &&
    [ -f "$SC_LOCAL/docs/deep/a b #1 %41.txt" ] && [ ! -e "$SC_LOCAL/a b #1 %41.txt" ] &&
    [ -f "$SC_LOCAL/docs/moved folder/x.txt" ] && [ ! -e "$SC_LOCAL/Ünïcödé folder" ] &&
    [ ! -e "$SC_LOCAL/empty.dat" ] && cmp "$SC_DIR/ow" "$SC_LOCAL/docs/deep/er/blob.bin" &&
    [ "$(stat -c %Y "$SC_LOCAL/docs/deep/er/blob.bin")" = 1600000000 ] &&
    cmp "$SC_DIR/add" "$SC_LOCAL/added remotely.txt" || { find "$SC_LOCAL" | sort; return 1; }
  # A rename or a move is not a download again.
  ! sc_transfers remote | grep -E 'report-renamed|moved%20folder|a%20b'
}
sc_local_changes() {
  mv "$SC_LOCAL/up/new.txt" "$SC_LOCAL/up/renamed.txt" &&
    mv "$SC_LOCAL/up/sub" "$SC_LOCAL/docs/sub-moved" &&
    rm "$SC_LOCAL/café.txt" &&
    printf 'overwritten locally\n' >"$SC_LOCAL/docs/report-renamed.txt" &&
    printf 'added locally\n' >"$SC_LOCAL/added locally.txt" || return 1
  sc_sync "$SC_LOCAL" local && sc_same "$SC_LOCAL" || return 1
  [ "$(sc_dav GET docs/report-renamed.txt)" = 'overwritten locally' ] &&
    [ "$(sc_dav GET 'added locally.txt')" = 'added locally' ] &&
    ! sc_dav GET 'café.txt' -o /dev/null 2>/dev/null &&
    sc_dav GET docs/sub-moved/big.bin -o /dev/null
}
sc_conflict() {
  printf 'base\n' >"$SC_LOCAL/both.txt" && sc_sync "$SC_LOCAL" conflict-base || return 1
  printf 'the remote side\n' >"$SC_DIR/remote-side" && sc_put "$SC_DIR/remote-side" both.txt &&
    printf 'the local side, longer\n' >"$SC_LOCAL/both.txt" || return 1
  sc_sync "$SC_LOCAL" conflict || return 1
  local copies; copies=$($SC_TREE conflicts "$SC_LOCAL")
  [ -n "$copies" ] || { echo "no conflict copy"; find "$SC_LOCAL" -maxdepth 1; return 1; }
  cat "$SC_LOCAL/both.txt" "$SC_LOCAL/$copies" | sort | diff - <(printf 'the local side, longer\nthe remote side\n') || return 1
  rm "$SC_LOCAL/$copies" # the clients do not upload it: a person settles the conflict
}
sc_shared_readonly() {
  printf 'changed by the sharee\n' >"$SC_LOCAL/Shared with me/team-$SC_CLIENT/plan.txt" &&
    printf 'new\n' >"$SC_LOCAL/Shared with me/team-$SC_CLIENT/new.txt" || return 1
  sc_sync "$SC_LOCAL" shared # may report the refusal; what counts is the server
  [ "$(curl -fsS -u "sc-owner@example.test:$(jq -r .app_password <<<"$SC_OWNER")" "$ATRIUM_URL/api/v1/webdav/team-$SC_CLIENT/plan.txt")" = 'the plan' ] &&
    ! curl -fsS -o /dev/null -u "sc-owner@example.test:$(jq -r .app_password <<<"$SC_OWNER")" "$ATRIUM_URL/api/v1/webdav/team-$SC_CLIENT/new.txt" 2>/dev/null || return 1
  # The client put the server's version back; what it kept aside goes.
  [ "$(cat "$SC_LOCAL/Shared with me/team-$SC_CLIENT/plan.txt")" = 'the plan' ] || return 1
  rm -f "$SC_LOCAL/Shared with me/team-$SC_CLIENT/new.txt" && $SC_TREE conflicts "$SC_LOCAL" | while IFS= read -r c; do [ -z "$c" ] || rm "$SC_LOCAL/$c"; done
}

# sc_client_args: the client's command line, without the local folder and the server
sc_client_args() {
  case $SC_CLIENT in
  nextcloudcmd) echo nextcloudcmd ;;
  owncloudcmd) echo owncloudcmd --exclude "$SC_DIR/exclude.lst" ;;
  esac
}
sc_sha() { sha256sum | cut -d' ' -f1; }
sc_big() { # a 600 MiB file goes up in chunks, whole
  head -c $((600 << 20)) /dev/urandom >"$SC_LOCAL/big.bin" || return 1
  sc_sync "$SC_LOCAL" big || return 1
  grep -qE 'accessmanager \]:\s+6 "MKCOL" "[^"]*/remote\.php/dav/uploads/' "$SC_DIR/$SC_CLIENT-big.log" &&
    grep -qE 'accessmanager \]:\s+6 "MOVE" "[^"]*/remote\.php/dav/uploads/[^"]*/\.file"' "$SC_DIR/$SC_CLIENT-big.log" ||
    { echo "no chunked upload in the log"; return 1; }
  [ "$(sc_dav GET big.bin | sc_sha)" = "$(sc_sha <"$SC_LOCAL/big.bin")" ]
}
# sc_chunks_sent: the names of the chunks of the client's user's uploads in
# progress that the server holds whole, one a line; with a bucket, listed from
# the bucket (curl signs the request), else found under the data directory.
sc_chunks_sent() {
  local uid; uid=$(jq -r .user_id <<<"$SC_CREDS")
  if [ -n "${ATRIUM_S3_ENDPOINT:-}" ]; then
    # The payload's hash is that of an empty body; the prefix is encoded as
    # the store encodes it when it checks the signature.
    curl -fsS --aws-sigv4 "aws:amz:${ATRIUM_S3_REGION:-us-east-1}:s3" -u "$ATRIUM_S3_ACCESS_KEY:$ATRIUM_S3_SECRET_KEY" \
      -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
      "${ATRIUM_S3_ENDPOINT%/}/$ATRIUM_S3_BUCKET?list-type=2&prefix=chunks%2F$uid%2F" |
      grep -o '<Key>[^<]*</Key>' | sed 's|<Key>.*/\([^/]*\)</Key>|\1|' | grep '^0' | sort
  else
    (cd "$DATA_DIR/chunks/$uid" 2>/dev/null && find . -name '0*' -type f | sed 's|.*/||' | sort)
  fi
}
# sc_chunk_in_progress: a chunk is being received (on the local disk: its
# partial file is past 1 MB; a bucket shows only whole objects, so a moment
# after the first whole chunk stands for it).
sc_chunk_in_progress() {
  if [ -n "${ATRIUM_S3_ENDPOINT:-}" ]; then
    sleep 0.3
  else
    [ -n "$(find "$DATA_DIR/chunks/$(jq -r .user_id <<<"$SC_CREDS")" -name '.part-*' -size +1M 2>/dev/null)" ]
  fi
}
sc_resume() { # an upload interrupted after its first chunks goes on from them
  local f=$SC_LOCAL/resume.bin sent log=$SC_DIR/$SC_CLIENT-interrupted.log
  head -c $((200 << 20)) /dev/urandom >"$f" || return 1
  # Slowed down, so that the upload is under way long enough to interrupt.
  $(sc_client_args) --non-interactive --uplimit 20000 -u "$SC_USER" -p "$SC_PASS" "$SC_LOCAL" "$ATRIUM_URL" >"$log" 2>&1 &
  local pid=$! i
  for i in $(seq 1 600); do
    sent=$(sc_chunks_sent)
    [ -n "$sent" ] && sc_chunk_in_progress && break
    sleep 0.05
  done
  kill -KILL "$pid" && wait "$pid" 2>/dev/null
  [ -n "$sent" ] || { echo "no chunk arrived before the upload ended"; return 1; }
  sc_sync "$SC_LOCAL" resumed || return 1
  local c
  for c in $sent; do
    if grep -E 'accessmanager \]:\s+3 ""' "$SC_DIR/$SC_CLIENT-resumed.log" | grep -q "/${c##*/}\""; then
      echo "chunk ${c##*/} was sent again"; return 1
    fi
  done
  [ "$(sc_dav GET resume.bin | sc_sha)" = "$(sc_sha <"$f")" ]
}
sc_big_gone() { # the big files go again, so that the next runs are small
  rm -f "$SC_LOCAL/big.bin" "$SC_LOCAL/resume.bin" && sc_sync "$SC_LOCAL" big-gone &&
    ! sc_dav GET big.bin -o /dev/null 2>/dev/null
}

for SC_CLIENT in nextcloudcmd owncloudcmd; do
  if ! command -v "$SC_CLIENT" >/dev/null; then
    check "sync: $SC_CLIENT is installed" false
    continue
  fi
  SC_CREDS=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email "sc-$SC_CLIENT@example.test" --role member)
  SC_USER=$(jq -r .email <<<"$SC_CREDS")
  SC_PASS=$(jq -r .app_password <<<"$SC_CREDS")
  SC_LOCAL=$SC_DIR/$SC_CLIENT-local
  mkdir -p "$SC_LOCAL"
  check "sync $SC_CLIENT: a seeded tree syncs down (odd names, 0-byte files, contents, modification times, Shared with me)" sc_down
  check "sync $SC_CLIENT: a re-sync with nothing changed transfers nothing" sc_nochange
  check "sync $SC_CLIENT: a local tree syncs up, with its modification times" sc_up
  check "sync $SC_CLIENT: remote renames, moves, deletes, overwrites and additions sync down" sc_remote_changes
  check "sync $SC_CLIENT: local renames, moves, deletes, overwrites and additions sync up" sc_local_changes
  check "sync $SC_CLIENT: a conflict keeps both contents" sc_conflict
  check "sync $SC_CLIENT: a local edit in Shared with me is not pushed" sc_shared_readonly
  check "sync $SC_CLIENT: a 600 MiB file uploads in chunks with the right SHA-256" sc_big
  check "sync $SC_CLIENT: an interrupted chunked upload resumes with the chunks already sent" sc_resume
  check "sync $SC_CLIENT: the big files deleted locally go on the server too" sc_big_gone
  check "sync $SC_CLIENT: then a re-sync transfers nothing" sc_nochange
done
rm -rf "$SC_DIR"
