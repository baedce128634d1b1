# CalDAV: a real client from Debian's packages (vdirsyncer) discovers the calendar
# from /dav/ (current-user-principal → calendar-home-set → calendars) and syncs a
# local folder of events up to Atrium and back down; REST and CalDAV see the same
# events, and what the client wrote that Atrium's model does not hold (an alarm,
# X- properties) is kept.
# shellcheck shell=bash

CV=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email caldav@example.test --role member)
CV_TOKEN=$(jq -r .token <<<"$CV")
CV_EMAIL=$(jq -r .email <<<"$CV")
CV_PASS=$(jq -r .app_password <<<"$CV")
CV_USER=$(jq -r .user_id <<<"$CV")
CV_DIR=$(mktemp -d)
CV_CAL=$(curl -fsS -H "Authorization: Bearer $CV_TOKEN" "$ATRIUM_URL/api/v1/calendar/calendars" | jq -r '.[0].id')
CV_API="$ATRIUM_URL/api/v1/calendar/calendars/$CV_CAL"
mkdir -p "$CV_DIR/local" "$CV_DIR/status"
cat >"$CV_DIR/config" <<CONF
[general]
status_path = "$CV_DIR/status/"

[pair atrium]
a = "atrium_local"
b = "atrium_remote"
collections = ["from a", "from b"]
conflict_resolution = "b wins"

[storage atrium_local]
type = "filesystem"
path = "$CV_DIR/local/"
fileext = ".ics"

[storage atrium_remote]
type = "caldav"
url = "$ATRIUM_URL/dav/"
username = "$CV_EMAIL"
password = "$CV_PASS"
auth = "basic"
CONF
export CV_DIR CV_TOKEN CV_EMAIL CV_PASS CV_USER CV_CAL CV_API
vdc() { vdirsyncer -c "$CV_DIR/config" "$@"; }
export -f vdc

check "/.well-known/caldav redirects to /dav/" bash -c \
  "curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -X PROPFIND '$ATRIUM_URL/.well-known/caldav' | grep -q '^301 .*/dav/$'"
check "CalDAV without a credential → 401 with a Basic challenge" bash -c \
  "curl -s -D - -o /dev/null -X PROPFIND '$ATRIUM_URL/dav/calendars/' | grep -qi '^www-authenticate: Basic'"
check "vdirsyncer discovers the default calendar (principal → home set → calendars)" bash -c \
  "yes | vdc discover >/dev/null && test -d \"\$CV_DIR/local/\$CV_CAL\""

printf '%s\r\n' \
  'BEGIN:VCALENDAR' \
  'VERSION:2.0' \
  'PRODID:-//Interop//vdirsyncer suite//EN' \
  'BEGIN:VEVENT' \
  'UID:interop-event-1' \
  'DTSTAMP:20300101T000000Z' \
  'DTSTART:20300615T090000Z' \
  'DTEND:20300615T100000Z' \
  'SUMMARY:Interop planning' \
  'RRULE:FREQ=WEEKLY;COUNT=4' \
  'X-INTEROP-NOTE:kept as written' \
  'BEGIN:VALARM' \
  'ACTION:DISPLAY' \
  'DESCRIPTION:Planning soon' \
  'TRIGGER:-PT10M' \
  'END:VALARM' \
  'END:VEVENT' \
  'END:VCALENDAR' >"$CV_DIR/local/$CV_CAL/interop-event-1.ics"

# A second event stays on both sides: vdirsyncer refuses to sync a side that was
# emptied completely.
printf '%s\r\n' 'BEGIN:VCALENDAR' 'VERSION:2.0' 'PRODID:-//Interop//vdirsyncer suite//EN' 'BEGIN:VEVENT' \
  'UID:interop-keep' 'DTSTAMP:20300101T000000Z' 'DTSTART;VALUE=DATE:20300701' 'DTEND;VALUE=DATE:20300702' \
  'SUMMARY:Interop all-day' 'END:VEVENT' 'END:VCALENDAR' >"$CV_DIR/local/$CV_CAL/interop-keep.ics"

check "vdirsyncer uploads local events" vdc sync
check "the uploaded event is visible via REST" bash -c \
  "curl -fsS -H \"Authorization: Bearer \$CV_TOKEN\" \"\$CV_API/events/interop-event-1\" | jq -e '.title == \"Interop planning\" and .rrule == \"FREQ=WEEKLY;COUNT=4\"'"
check "the uploaded all-day event is visible via REST" bash -c \
  "curl -fsS -H \"Authorization: Bearer \$CV_TOKEN\" \"\$CV_API/events/interop-keep\" | jq -e '.title == \"Interop all-day\" and .all_day'"
check "REST expands the uploaded series (third week)" bash -c \
  "curl -fsS -H \"Authorization: Bearer \$CV_TOKEN\" \"\$CV_API/events?start=2030-06-29T00:00:00Z&end=2030-06-30T00:00:00Z\" | jq -e 'length == 1 and .[0].uid == \"interop-event-1\"'"
check "the stored event keeps the client's alarm and X- property" bash -c "
  body=\$(curl -fsS -u \"\$CV_EMAIL:\$CV_PASS\" \"$ATRIUM_URL/dav/calendars/\$CV_USER/\$CV_CAL/interop-event-1.ics\")
  grep -q '^X-INTEROP-NOTE:kept as written' <<<\"\$body\" && grep -q '^BEGIN:VALARM' <<<\"\$body\" && grep -q '^TRIGGER:-PT10M' <<<\"\$body\""
check "an edit via REST (If-Match) is synced down to the local file" bash -c "
  url=\"\$CV_API/events/interop-event-1\"
  etag=\$(curl -fsS -D - -o /dev/null -H \"Authorization: Bearer \$CV_TOKEN\" \"\$url\" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
  curl -fsS -X PUT -H \"Authorization: Bearer \$CV_TOKEN\" -H \"If-Match: \$etag\" -H 'Content-Type: application/json' \
    -d '{\"title\":\"Interop planning (moved)\",\"location\":\"Room 4\"}' \"\$url\" >/dev/null
  vdc sync >/dev/null
  f=\"\$CV_DIR/local/\$CV_CAL/interop-event-1.ics\"
  grep -q '^SUMMARY:Interop planning (moved)' \"\$f\" && grep -q '^LOCATION:Room 4' \"\$f\" && grep -q '^X-INTEROP-NOTE:kept as written' \"\$f\""
check "an event created via REST is synced down" bash -c "
  curl -fsS -X POST -H \"Authorization: Bearer \$CV_TOKEN\" -H 'Content-Type: application/json' \
    -d '{\"title\":\"Made in REST\",\"start\":\"2030-07-01T13:00:00Z\",\"end\":\"2030-07-01T14:00:00Z\"}' \"\$CV_API/events\" >/dev/null
  vdc sync >/dev/null
  grep -l '^SUMMARY:Made in REST' \"\$CV_DIR/local/\$CV_CAL\"/*.ics >/dev/null"
check "a deletion via REST is synced down" bash -c "
  uid=\$(grep -l '^SUMMARY:Made in REST' \"\$CV_DIR/local/\$CV_CAL\"/*.ics | xargs grep -h '^UID:' | tr -d '\r' | cut -d: -f2-)
  curl -fsS -X DELETE -H \"Authorization: Bearer \$CV_TOKEN\" \"\$CV_API/events/\$uid\" >/dev/null
  vdc sync >/dev/null
  ! grep -l '^SUMMARY:Made in REST' \"\$CV_DIR/local/\$CV_CAL\"/*.ics >/dev/null 2>&1"
check "a local deletion is synced up" bash -c "
  rm \"\$CV_DIR/local/\$CV_CAL/interop-event-1.ics\"
  vdc sync >/dev/null
  test \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"Authorization: Bearer \$CV_TOKEN\" \"\$CV_API/events/interop-event-1\")\" = 404"
rm -rf "$CV_DIR"
