# CardDAV: a real client from Debian's packages (vdirsyncer) discovers the address
# book from /dav/ (current-user-principal → addressbook-home-set → books) and syncs
# a local folder of vCards up to Atrium and back down; REST and CardDAV see the
# same contacts.
# shellcheck shell=bash

CD=$("$BIN" bootstrap --data "$DATA_DIR" --json --admin-email carddav@example.test --role member)
CD_TOKEN=$(jq -r .token <<<"$CD")
CD_EMAIL=$(jq -r .email <<<"$CD")
CD_PASS=$(jq -r .app_password <<<"$CD")
CD_USER=$(jq -r .user_id <<<"$CD")
CD_DIR=$(mktemp -d)
CD_BOOK=$(curl -fsS -H "Authorization: Bearer $CD_TOKEN" "$ATRIUM_URL/api/v1/contacts/books" | jq -r '.[0].id')
mkdir -p "$CD_DIR/local" "$CD_DIR/status"
cat >"$CD_DIR/config" <<CONF
[general]
status_path = "$CD_DIR/status/"

[pair atrium]
a = "atrium_local"
b = "atrium_remote"
collections = ["from a", "from b"]
conflict_resolution = "b wins"

[storage atrium_local]
type = "filesystem"
path = "$CD_DIR/local/"
fileext = ".vcf"

[storage atrium_remote]
type = "carddav"
url = "$ATRIUM_URL/dav/"
username = "$CD_EMAIL"
password = "$CD_PASS"
auth = "basic"
CONF
export CD_DIR CD_TOKEN CD_EMAIL CD_PASS CD_USER CD_BOOK
vds() { vdirsyncer -c "$CD_DIR/config" "$@"; }
export -f vds

check "vdirsyncer is installed" command -v vdirsyncer
check "/.well-known/carddav redirects to /dav/" bash -c \
  "curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -X PROPFIND '$ATRIUM_URL/.well-known/carddav' | grep -q '^301 .*/dav/$'"
check "DAV without a credential → 401 with a Basic challenge" bash -c \
  "curl -s -D - -o /dev/null -X PROPFIND '$ATRIUM_URL/dav/' | grep -qi '^www-authenticate: Basic'"
check "vdirsyncer discovers the default address book (principal → home set → books)" bash -c \
  "yes | vds discover >/dev/null && test -d \"\$CD_DIR/local/\$CD_BOOK\""

cat >"$CD_DIR/local/$CD_BOOK/interop-1.vcf" <<'VCF'
BEGIN:VCARD
VERSION:3.0
UID:interop-1
FN:Ingrid Interop
N:Interop;Ingrid;;;
EMAIL;TYPE=INTERNET,WORK:ingrid@interop.example
TEL;TYPE=CELL:+46 70 123 45 67
X-INTEROP-NOTE:kept as written
END:VCARD
VCF

check "vdirsyncer uploads a local vCard" vds sync
check "the uploaded contact is visible via REST search" bash -c \
  "curl -fsS -H \"Authorization: Bearer \$CD_TOKEN\" '$ATRIUM_URL/api/v1/contacts/search?q=ingrid' | jq -e 'length == 1 and .[0].email == \"ingrid@interop.example\" and .[0].phone == \"+46 70 123 45 67\"'"
check "the stored vCard keeps the client's unknown property" bash -c \
  "curl -fsS -u \"\$CD_EMAIL:\$CD_PASS\" \"$ATRIUM_URL/dav/addressbooks/\$CD_USER/\$CD_BOOK/interop-1.vcf\" | grep -q '^X-INTEROP-NOTE:kept as written'"
check "an edit via REST (If-Match) is synced down to the local file" bash -c "
  id=\$(curl -fsS -H \"Authorization: Bearer \$CD_TOKEN\" '$ATRIUM_URL/api/v1/contacts/search?q=ingrid' | jq -r '.[0].id')
  url=\"$ATRIUM_URL/api/v1/contacts/books/\$CD_BOOK/\$id\"
  etag=\$(curl -fsS -D - -o /dev/null -H \"Authorization: Bearer \$CD_TOKEN\" \"\$url\" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
  curl -fsS -X PUT -H \"Authorization: Bearer \$CD_TOKEN\" -H \"If-Match: \$etag\" -H 'Content-Type: application/json' \
    -d '{\"job_title\":\"Protocol tester\"}' \"\$url\" >/dev/null
  vds sync >/dev/null
  f=\"\$CD_DIR/local/\$CD_BOOK/interop-1.vcf\"
  grep -q '^TITLE:Protocol tester' \"\$f\" && grep -q '^X-INTEROP-NOTE:kept as written' \"\$f\""
check "a contact created via REST is synced down" bash -c "
  curl -fsS -X POST -H \"Authorization: Bearer \$CD_TOKEN\" -H 'Content-Type: application/json' \
    -d '{\"first_name\":\"Rita\",\"last_name\":\"Rest\",\"emails\":[{\"type\":\"work\",\"value\":\"rita@rest.example\"}]}' \
    \"$ATRIUM_URL/api/v1/contacts/books/\$CD_BOOK\" >/dev/null
  vds sync >/dev/null
  grep -l '^FN:Rita Rest' \"\$CD_DIR/local/\$CD_BOOK\"/*.vcf >/dev/null"
check "a local deletion is synced up" bash -c "
  rm \"\$CD_DIR/local/\$CD_BOOK/interop-1.vcf\"
  vds sync >/dev/null
  curl -fsS -H \"Authorization: Bearer \$CD_TOKEN\" '$ATRIUM_URL/api/v1/contacts/search?q=ingrid' | jq -e 'length == 0'"
rm -rf "$CD_DIR"
