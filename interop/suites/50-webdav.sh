# WebDAV file mount: litmus (Debian) runs its basic, copymove, props, locks and
# http suites against /api/v1/webdav/ and must report no failures and no
# warnings; rclone (Debian) copies a generated tree of 1,000 files into the
# mount, checks it and syncs a change, cleanly; with the owncloud vendor it
# keeps modification times and compares hashes. Both sign in with e-mail and an
# app password; REST sees what they wrote.
# shellcheck shell=bash

WD=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email webdav@example.test --role member)
WD_EMAIL=$(jq -r .email <<<"$WD")
WD_PASS=$(jq -r .app_password <<<"$WD")
WD_TOKEN=$(jq -r .token <<<"$WD")
WD_DIR=$(mktemp -d)
export WD_EMAIL WD_PASS WD_TOKEN WD_DIR

wd_litmus() {
  (cd "$WD_DIR" && litmus "$ATRIUM_URL/api/v1/webdav/" "$WD_EMAIL" "$WD_PASS") >"$WD_DIR/litmus.out" 2>&1
  local rc=$?
  grep -E 'summary for|WARNING|FAIL' "$WD_DIR/litmus.out"
  [ "$rc" -eq 0 ] || return 1
  [ "$(grep -c '<- summary for' "$WD_DIR/litmus.out")" -eq 5 ] || return 1
  ! grep -qE 'FAIL|WARNING|warning' "$WD_DIR/litmus.out"
}
export -f wd_litmus
check "webdav: litmus basic, copymove, props, locks, http pass without warnings" wd_litmus

# rclone against the mount, configured through the environment.
export RCLONE_CONFIG_ATR_TYPE=webdav
export RCLONE_CONFIG_ATR_URL="$ATRIUM_URL/api/v1/webdav/"
export RCLONE_CONFIG_ATR_VENDOR=other
export RCLONE_CONFIG_ATR_USER="$WD_EMAIL"
RCLONE_CONFIG_ATR_PASS=$(rclone obscure "$WD_PASS")
export RCLONE_CONFIG_ATR_PASS
export RCLONE_CONFIG=/dev/null

wd_tree() { # 1,000 files in 10 folders of 10 subfolders, sizes 0 to ~20 KiB
  local src=$WD_DIR/src
  python3 - "$src" <<'PY'
import os, random, sys
root = sys.argv[1]
random.seed(8)
for i in range(1000):
    d = os.path.join(root, "d%02d" % (i // 100), "s%d" % (i // 10 % 10))
    os.makedirs(d, exist_ok=True)
    name = "f%04d%s" % (i, [".txt", ".bin", " with space.dat", "-ünï.md"][i % 4])
    with open(os.path.join(d, name), "wb") as f:
        f.write(random.randbytes(random.randrange(0, 20000)))
PY
}
wd_files() { curl -fsS -H "Authorization: Bearer $WD_TOKEN" "$ATRIUM_URL/api/v1/drive/storage" | jq .user_file_count; }
wd_rclone_copy() {
  wd_files >"$WD_DIR/before" || return 1
  wd_tree && rclone copy --transfers 8 --checkers 8 "$WD_DIR/src" atr:tree 2>&1 | tail -5
}
wd_rclone_check() {
  rclone check "$WD_DIR/src" atr:tree 2>&1 | tail -5
}
wd_rest_count() {
  local n
  n=$(($(wd_files) - $(cat "$WD_DIR/before")))
  [ "$n" -eq 1000 ] || { echo "REST counts $n new files"; return 1; }
}
wd_rclone_sync() {
  # Change, add and remove files locally, sync, and compare again.
  echo changed >"$WD_DIR/src/d00/s0/f0000.txt"
  echo new >"$WD_DIR/src/d09/s9/added.txt"
  rm -f "$WD_DIR/src/d05/s5/f0550.txt"
  rclone sync --transfers 8 "$WD_DIR/src" atr:tree 2>&1 | tail -5 || return 1
  rclone check "$WD_DIR/src" atr:tree 2>&1 | tail -5 || return 1
  rclone copy atr:tree "$WD_DIR/back" 2>&1 | tail -5 || return 1
  diff -r "$WD_DIR/src" "$WD_DIR/back"
}
export -f wd_files wd_tree wd_rclone_copy wd_rclone_check wd_rest_count wd_rclone_sync
check "webdav: rclone copies a tree of 1,000 files into the mount" wd_rclone_copy
check "webdav: rclone check finds the mount identical" wd_rclone_check
check "webdav: REST sees the 1,000 files" wd_rest_count
wd_search() { # the search index follows what rclone wrote
  curl -fsS -H "Authorization: Bearer $WD_TOKEN" "$ATRIUM_URL/api/v1/drive/search?q=f0421&facets=true" |
    jq -e '.total_hits == 1 and .hits[0].name == "f0421.bin" and .facet_distribution.is_folder.false == 1' >/dev/null
}
export -f wd_search
check "webdav: search finds a file rclone wrote, by name" wd_search
check "webdav: rclone sync of changes, then a copy back, is identical" wd_rclone_sync
# rclone with the owncloud vendor: it sends X-OC-Mtime on PUT and reads
# oc:checksums, so modification times are kept and `rclone check` compares
# hashes (MD5) rather than sizes only.
wd_rclone_owncloud() {
  local src=$WD_DIR/oc
  mkdir -p "$src/sub" && echo one >"$src/a.txt" && echo two >"$src/sub/b.txt" && head -c 70000 /dev/urandom >"$src/sub/c.bin"
  touch -d '2019-03-04 05:06:07' "$src/a.txt" && touch -d '2001-09-09 01:46:40' "$src/sub/b.txt" && touch -d '2015-01-02 03:04:05' "$src/sub/c.bin"
  local oc=(--webdav-vendor owncloud)
  rclone copy "${oc[@]}" "$src" atr:oc 2>&1 | tail -5 || return 1
  diff <(rclone lsf -R --files-only --format tsp "$src" | sort) <(rclone lsf -R --files-only --format tsp "${oc[@]}" atr:oc | sort) || return 1
  rclone check "${oc[@]}" "$src" atr:oc >"$WD_DIR/occheck.out" 2>&1 || { cat "$WD_DIR/occheck.out"; return 1; }
  grep -q '0 differences found' "$WD_DIR/occheck.out" || { cat "$WD_DIR/occheck.out"; return 1; }
  if grep -qiE 'no common hash|could not be checked' "$WD_DIR/occheck.out"; then cat "$WD_DIR/occheck.out"; return 1; fi
  # A changed file of the same size and time is found by its hash.
  printf 'ONE\n' >"$WD_DIR/a.txt" && touch -r "$src/a.txt" "$WD_DIR/a.txt" && mv "$WD_DIR/a.txt" "$src/a.txt" || return 1
  ! rclone check "${oc[@]}" "$src" atr:oc >"$WD_DIR/occheck.out" 2>&1 && grep -q 'md5 differ' "$WD_DIR/occheck.out" ||
    { cat "$WD_DIR/occheck.out"; return 1; }
}
export -f wd_rclone_owncloud
check "webdav: rclone (vendor owncloud) keeps modification times and check compares hashes" wd_rclone_owncloud
# cadaver (Debian): the command-line DAV client, credentials from a .netrc.
wd_cadaver() {
  local home=$WD_DIR/cadaver-home host
  host=$(sed -E 's#^https?://([^:/]+).*#\1#' <<<"$ATRIUM_URL")
  mkdir -p "$home" && printf 'machine %s\nlogin %s\npassword %s\n' "$host" "$WD_EMAIL" "$WD_PASS" >"$home/.netrc" && chmod 600 "$home/.netrc"
  echo "written by cadaver" >"$WD_DIR/cad.txt"
  (cd "$WD_DIR" && printf 'mkcol cad\ncd cad\nput cad.txt\nlock cad.txt\nput cad.txt\nunlock cad.txt\nmove cad.txt moved.txt\nget moved.txt back.txt\nls\nquit\n' |
    HOME=$home timeout 60 cadaver "$ATRIUM_URL/webdav/") >"$WD_DIR/cadaver.out" 2>&1
  if grep -qiE 'failed|error' "$WD_DIR/cadaver.out"; then cat "$WD_DIR/cadaver.out"; return 1; fi
  [ "$(grep -c 'succeeded' "$WD_DIR/cadaver.out")" -ge 8 ] || { cat "$WD_DIR/cadaver.out"; return 1; }
  cmp "$WD_DIR/cad.txt" "$WD_DIR/back.txt"
}
export -f wd_cadaver
check "webdav: cadaver mkcol, put, lock, put with the lock, unlock, move, get through /webdav/" wd_cadaver
rm -rf "$WD_DIR"
