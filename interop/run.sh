#!/usr/bin/env bash
# The interop suite: drives a real Atrium binary with real third-party clients.
# Usage: interop/run.sh path/to/atrium [SUITE...]   (e.g. 50-webdav; default: every suite)
# With ATRIUM_CLUSTER=N (N >= 2) the clients talk to N nodes behind nginx on
# one PostgreSQL database and one bucket (scripts/cluster.sh; ATRIUM_DATABASE_URL
# and ATRIUM_S3_* when set, else servers of its own), and 65-cluster runs.
set -u
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-bin/atrium}")
source interop/lib.sh
trap stop_atrium EXIT

start_atrium "$BIN" || { FAIL=1; summary; exit 1; }
CREDS=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email admin@example.test)
MEMBER=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email member@example.test --role member)
export BIN ATRIUM_URL DATA_DIR CREDS MEMBER

shift $(($# > 0 ? 1 : 0))
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(interop/suites/*.sh)
for suite in "${suites[@]}"; do
  [ -f "$suite" ] || suite=interop/suites/${suite%.sh}.sh
  # Backup, restore and Litestream copy the embedded SQLite database and the
  # data directory's blobs, and the crash suite's verifier reads them: with
  # the metadata in PostgreSQL (ATRIUM_DATABASE_URL) or the bytes in a bucket
  # (ATRIUM_S3_ENDPOINT) they are not run.
  case "$suite" in
  */80-backup.sh | */85-litestream.sh | */90-crash.sh)
    if [ -n "${ATRIUM_DATABASE_URL:-}" ] || [ -n "${ATRIUM_S3_ENDPOINT:-}" ]; then
      printf 'skip %s: works on the embedded SQLite database and the local disk\n' "$(basename "$suite")"
      continue
    fi
    ;;
  esac
  # shellcheck source=/dev/null
  source "$suite"
done
summary
