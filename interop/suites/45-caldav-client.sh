# CalDAV with a client library nobody here wrote: Debian's python3-caldav (the
# library behind many calendar tools). Each step runs on its own, and fails if
# the library logs "Deviation from expectations found" (it checks the server's
# answers): interop/caldav/client.py.
# shellcheck shell=bash

PC=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email pycaldav@example.test --role member)
PC_EMAIL=$(jq -r .email <<<"$PC")
PC_PASS=$(jq -r .app_password <<<"$PC")
for step in event-by-uid uid-matches-nothing expanded-recurrences sync-after-delete tasks tasks-calendar; do
  check "python3-caldav: $step" /usr/bin/python3 interop/caldav/client.py "$ATRIUM_URL/dav/" "$PC_EMAIL" "$PC_PASS" "$step"
done
