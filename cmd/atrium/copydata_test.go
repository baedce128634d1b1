package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"atrium/app/identity"
	"atrium/storage/sqldb"
	"atrium/web/ui"
	"atrium/webtest"
	"atrium/wire"
)

// The names webtest gives, in a test data directory, to the URL of its
// PostgreSQL database and to its bucket (webtest.New): a target written
// this way opens with webtest.Start as its server would.
const (
	testDatabaseFile = "test-database-url"
	testBucketFile   = "test-s3-bucket"
)

// copyTarget makes the target of a copy: a data directory with a fresh
// PostgreSQL database and, when ATRIUM_TEST_S3_ENDPOINT is set, a fresh
// bucket; config is a configuration file naming them as an operator's
// would. It skips the test without ATRIUM_TEST_DATABASE_URL.
func copyTarget(t *testing.T) (dir, config string) {
	t.Helper()
	admin := sqldb.TestPostgresURL()
	if admin == "" {
		t.Skip("copy-data copies into PostgreSQL: set " + sqldb.TestDatabaseEnv)
	}
	ctx := context.Background()
	dir = t.TempDir()
	url, drop, err := sqldb.NewTestPostgres(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	if err := os.WriteFile(filepath.Join(dir, testDatabaseFile), []byte(url), 0o600); err != nil {
		t.Fatal(err)
	}
	if wire.TestS3() {
		bucket, dropBucket, err := wire.NewTestBucket(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dropBucket() })
		if err := os.WriteFile(filepath.Join(dir, testBucketFile), []byte(bucket), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config = filepath.Join(t.TempDir(), "atrium.toml")
	toml := "data = " + tomlQuote(dir) + "\npublic_url = \"http://127.0.0.1:1\"\n[log]\nlevel = \"warn\"\n" + webtest.ConfigTOML(dir)
	if err := os.WriteFile(config, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, config
}

// embedded starts a server on a new embedded installation (SQLite, blobs on
// the local disk, whatever the test environment names).
func embedded(t *testing.T) *webtest.Server {
	t.Helper()
	return webtest.Start(t, t.TempDir(), func(c *wire.Config) { c.Webhooks.AllowPrivateTargets = true })
}

// world is what fill made in an embedded installation.
type world struct {
	ann, bob        webtest.Creds
	annPassword     string
	session         string // Ann's web session
	big, small      []byte // /Projects/big.bin (two versions: big is the second) and /small.txt
	bigV1           []byte
	bigID, smallID  string
	trashedID       string
	linkToken       string
	cursor          string // Ann's delta cursor after everything
	tusPath         string // an upload in progress, 100 KiB of tusFull received
	tusFull         []byte
	bookID, calID   string
	webhookID       string
	contact, eventT string
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func dav(t *testing.T, s *webtest.Server, method, path, user, pw string, body []byte, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/webdav/"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, pw)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func davOK(t *testing.T, s *webtest.Server, method, path, user, pw string, body []byte) []byte {
	t.Helper()
	res := dav(t, s, method, path, user, pw, body, map[string]string{"Depth": "1"})
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("%s /webdav/%s: %d %s", method, path, res.StatusCode, b)
	}
	return b
}

// itemID finds the id of the item named name in a listing.
func itemID(t *testing.T, res *webtest.Response, name string) string {
	t.Helper()
	var l struct {
		Items []struct{ ID, Name string } `json:"items"`
	}
	res.Decode(t, &l)
	for _, it := range l.Items {
		if it.Name == name {
			return it.ID
		}
	}
	t.Fatalf("%s not in %s", name, res.Body)
	return ""
}

func ok(t *testing.T, res *webtest.Response, what string) *webtest.Response {
	t.Helper()
	if res.StatusCode >= 300 {
		t.Fatalf("%s: %d %s", what, res.StatusCode, res.Body)
	}
	return res
}

// fill makes real data through the server's HTTP API and services.
func fill(t *testing.T, s *webtest.Server) world {
	t.Helper()
	ctx := context.Background()
	w := world{annPassword: "ann's password 1"}
	w.ann = s.Bootstrap("Copy Org", "ann@copy.test", "admin")
	w.bob = s.Bootstrap("Copy Org", "bob@copy.test", "member")
	tok := w.ann.Token
	resetToken := w.ann.PasswordURL[strings.LastIndexByte(w.ann.PasswordURL, '/')+1:]
	ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/password-resets/" + resetToken + "/accept", Body: map[string]any{"password": w.annPassword}}), "set password")
	secret, _, err := s.Main.Identity.SignIn(ctx, identity.SignInInput{Email: "ann@copy.test", Password: w.annPassword})
	if err != nil {
		t.Fatal(err)
	}
	w.session = secret

	// Files through WebDAV with the app password: a folder, a file over
	// 64 KiB (a blob) in two versions, small ones (kept in the database).
	w.bigV1, w.big, w.small = randomBytes(t, 100<<10), randomBytes(t, 200<<10), []byte("small and kept in the database")
	davOK(t, s, "MKCOL", "Projects", "ann@copy.test", w.ann.AppPassword, nil)
	davOK(t, s, "PUT", "Projects/big.bin", "ann@copy.test", w.ann.AppPassword, w.bigV1)
	davOK(t, s, "PUT", "Projects/big.bin", "ann@copy.test", w.ann.AppPassword, w.big)
	davOK(t, s, "PUT", "small.txt", "ann@copy.test", w.ann.AppPassword, w.small)
	davOK(t, s, "PUT", "old.txt", "ann@copy.test", w.ann.AppPassword, []byte("to the trash"))

	root := ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/browse", Token: tok}), "browse")
	projects := itemID(t, root, "Projects")
	w.smallID = itemID(t, root, "small.txt")
	w.trashedID = itemID(t, root, "old.txt")
	w.bigID = itemID(t, ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/browse/" + projects, Token: tok}), "browse Projects"), "big.bin")
	ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + w.trashedID + "/trash", Token: tok}), "trash")

	// A share with Bob, a link to the big file.
	ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + w.smallID + "/shares", Token: tok,
		Body: map[string]any{"email": "bob@copy.test", "permission": "view"}}), "share with Bob")
	var link struct {
		ShareLink string `json:"share_link"`
	}
	ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/" + w.bigID + "/shares", Token: tok,
		Body: map[string]any{"create_link": true, "permission": "view"}}), "share link").Decode(t, &link)
	w.linkToken = link.ShareLink[strings.LastIndexByte(link.ShareLink, '/')+1:]

	// Contacts, an event, a webhook subscription.
	var books []struct{ ID string }
	ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/contacts/books", Token: tok}), "books").Decode(t, &books)
	w.bookID = books[0].ID
	w.contact = "Grace Hopper"
	ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + w.bookID, Token: tok,
		Body: map[string]any{"first_name": "Grace", "last_name": "Hopper", "emails": []map[string]string{{"value": "grace@navy.test"}}}}), "contact")
	var cals []struct{ ID string }
	ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars", Token: tok}), "calendars").Decode(t, &cals)
	w.calID = cals[0].ID
	w.eventT = "Move to PostgreSQL"
	ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars/" + w.calID + "/events", Token: tok,
		Body: map[string]any{"title": w.eventT, "start": "2026-12-08T10:00:00Z", "end": "2026-12-08T11:00:00Z"}}), "event")
	var hook struct{ ID string }
	ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/webhooks/subscriptions", Token: tok,
		Body: map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"drive.file.created"}}}), "webhook").Decode(t, &hook)
	w.webhookID = hook.ID

	// A resumable upload under way: 100 KiB of 150 received.
	w.tusFull = randomBytes(t, 150<<10)
	res := ok(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: tok, Header: map[string]string{
		"Tus-Resumable": "1.0.0", "Upload-Length": strconv.Itoa(len(w.tusFull)),
		"Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("resumed.bin"))}}), "tus create")
	w.tusPath = strings.TrimPrefix(res.Header.Get("Location"), s.URL)
	tusPatch(t, s, tok, w.tusPath, 0, w.tusFull[:100<<10])

	// A sync client's cursor, after all of it.
	w.cursor = deltaToEnd(t, s, tok, "")
	return w
}

// tusPatch sends body at offset to the resumable upload at path.
func tusPatch(t *testing.T, s *webtest.Server, tok, path string, offset int, body []byte) {
	t.Helper()
	res := s.Do(webtest.Request{Method: "PATCH", Path: path, Token: tok, Body: body, Header: map[string]string{
		"Tus-Resumable": "1.0.0", "Upload-Offset": strconv.Itoa(offset), "Content-Type": "application/offset+octet-stream"}})
	if res.StatusCode != 204 {
		t.Fatalf("PATCH %s at %d: %d %s", path, offset, res.StatusCode, res.Body)
	}
}

// deltaToEnd pages the delta feed from cursor to its end and returns the
// last cursor.
func deltaToEnd(t *testing.T, s *webtest.Server, tok, cursor string) string {
	t.Helper()
	for range 100 {
		var page struct {
			Cursor  string `json:"cursor"`
			HasMore bool   `json:"has_more"`
		}
		path := "/api/v1/drive/sync/delta?device_id=laptop"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		ok(t, s.Do(webtest.Request{Method: "GET", Path: path, Token: tok}), "delta").Decode(t, &page)
		cursor = page.Cursor
		if !page.HasMore {
			return cursor
		}
	}
	t.Fatal("the delta feed does not end")
	return ""
}

// fetchURL downloads a presigned URL (the server's or the store's).
func fetchURL(t *testing.T, s *webtest.Server, res *webtest.Response) []byte {
	t.Helper()
	var u struct{ URL string }
	res.Decode(t, &u)
	r, err := s.Client().Get(u.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", u.URL, r.StatusCode, err)
	}
	return b
}

// checkMoved checks, over HTTP on a server opened on the target as serve
// opens it, that everything of w came along.
func checkMoved(t *testing.T, s *webtest.Server, w world) {
	t.Helper()
	tok := w.ann.Token
	// The PAT on REST.
	if res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: tok}); res.StatusCode != 200 || !strings.Contains(string(res.Body), "ann@copy.test") {
		t.Errorf("the PAT after the move: %d %s", res.StatusCode, res.Body)
	}
	// The app password on WebDAV: PROPFIND and GET give the same bytes.
	if b := davOK(t, s, "PROPFIND", "Projects/", "ann@copy.test", w.ann.AppPassword, nil); !strings.Contains(string(b), "big.bin") {
		t.Errorf("PROPFIND /Projects/ after the move: %s", b)
	}
	if b := davOK(t, s, "GET", "Projects/big.bin", "ann@copy.test", w.ann.AppPassword, nil); !bytes.Equal(b, w.big) {
		t.Errorf("GET big.bin after the move: %d bytes, not the same", len(b))
	}
	if b := davOK(t, s, "GET", "small.txt", "ann@copy.test", w.ann.AppPassword, nil); !bytes.Equal(b, w.small) {
		t.Errorf("GET small.txt after the move: %q", b)
	}
	// The web session, its cookie on REST.
	req, _ := http.NewRequest("GET", s.URL+"/api/v1/me", nil)
	req.AddCookie(&http.Cookie{Name: ui.SessionCookieName(s.URL), Value: w.session})
	if res, err := s.Client().Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("the web session after the move: %v %v", res.StatusCode, err)
	} else {
		res.Body.Close()
	}
	// The share link downloads, without a credential.
	if b := fetchURL(t, s, ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/shared-link/" + w.linkToken + "/download"}), "link download")); !bytes.Equal(b, w.big) {
		t.Errorf("the share link's download after the move: %d bytes, not the same", len(b))
	}
	// Bob's share.
	if res := ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/shared", Token: w.bob.Token}), "shared with Bob"); !strings.Contains(string(res.Body), "small.txt") {
		t.Errorf("shared with Bob after the move: %s", res.Body)
	}
	// The trash, the versions (the first version's bytes too).
	if res := ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/trash", Token: tok}), "trash"); !strings.Contains(string(res.Body), w.trashedID) {
		t.Errorf("trash after the move: %s", res.Body)
	}
	var versions []struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
	}
	ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/" + w.bigID + "/versions", Token: tok}), "versions").Decode(t, &versions)
	if len(versions) != 2 {
		t.Fatalf("versions of big.bin after the move: %+v", versions)
	}
	for _, v := range versions {
		if v.Version == 1 {
			b := fetchURL(t, s, ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/" + w.bigID + "/versions/" + v.ID + "/download", Token: tok}), "version download"))
			if !bytes.Equal(b, w.bigV1) {
				t.Errorf("version 1 after the move: %d bytes, not the same", len(b))
			}
		}
	}
	// Contacts (and their search), the event, the webhook.
	if res := ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + w.bookID, Token: tok}), "book"); !strings.Contains(string(res.Body), w.contact) {
		t.Errorf("the address book after the move: %s", res.Body)
	}
	if res := ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/contacts/search?q=hopper", Token: tok}), "contact search"); !strings.Contains(string(res.Body), w.contact) {
		t.Errorf("contact search after the move: %s", res.Body)
	}
	if res := ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars/" + w.calID + "/events?start=2026-12-01T00:00:00Z&end=2027-01-01T00:00:00Z", Token: tok}), "events"); !strings.Contains(string(res.Body), w.eventT) {
		t.Errorf("events after the move: %s", res.Body)
	}
	if res := ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/webhooks/subscriptions", Token: tok}), "webhooks"); !strings.Contains(string(res.Body), w.webhookID) {
		t.Errorf("webhooks after the move: %s", res.Body)
	}
	// The upload under way resumes where it was.
	res := s.Do(webtest.Request{Method: "HEAD", Path: w.tusPath, Token: tok, Header: map[string]string{"Tus-Resumable": "1.0.0"}})
	if got := res.Header.Get("Upload-Offset"); res.StatusCode != 200 || got != strconv.Itoa(100<<10) {
		t.Fatalf("HEAD of the upload under way after the move: %d, offset %q", res.StatusCode, got)
	}
	tusPatch(t, s, tok, w.tusPath, 100<<10, w.tusFull[100<<10:])
	if b := davOK(t, s, "GET", "resumed.bin", "ann@copy.test", w.ann.AppPassword, nil); !bytes.Equal(b, w.tusFull) {
		t.Errorf("the upload finished after the move: %d bytes, not the same", len(b))
	}
	// A new upload works (the sequences moved on) and the sync client's
	// cursor carries on: it sees the new files, and only those.
	fresh := randomBytes(t, 70<<10)
	davOK(t, s, "PUT", "Projects/after.bin", "ann@copy.test", w.ann.AppPassword, fresh)
	var page struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/sync/delta?device_id=laptop&cursor=" + w.cursor, Token: tok}), "delta after the move").Decode(t, &page)
	var names []string
	for _, it := range page.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "after.bin,resumed.bin" {
		t.Errorf("the delta from the cursor of before the move: %v, want [after.bin resumed.bin]", names)
	}
}

// atrium copy-data moves an embedded installation that is serving into
// PostgreSQL (and a bucket when the test environment has one); a server on
// the target serves the same users with the same credentials and links.
func TestCopyDataMovesEverything(t *testing.T) {
	t.Parallel()
	dst, config := copyTarget(t)
	src := embedded(t)
	w := fill(t, src)
	davOK(t, src, "PUT", "gone.txt", "ann@copy.test", w.ann.AppPassword, []byte("copied, then deleted"))
	w.cursor = deltaToEnd(t, src, w.ann.Token, w.cursor)
	out, errOut, err := run(t, "copy-data", "--config", config, "--from", src.Data)
	if err != nil {
		t.Fatalf("copy-data: %v\n%s", err, errOut)
	}
	t.Logf("atrium copy-data: %s", out)
	if !strings.Contains(out, "copied "+src.Data) || !strings.Contains(out, "indexed ") {
		t.Errorf("copy-data summary %q", out)
	}
	if !strings.Contains(errOut, "copy-data: table drive_files ") {
		t.Errorf("copy-data progress %q, want a line per table", errOut)
	}
	// A second run says it is done and changes nothing.
	out, _, err = run(t, "copy-data", "--config", config, "--from", src.Data, "--quiet")
	if err != nil || !strings.Contains(out, "copied into this database already") {
		t.Errorf("copy-data again: %v %q", err, out)
	}
	// The old server goes on: a file written and one deleted after the
	// snapshot. Once it stopped, --again copies the rows anew; the blobs
	// already there are passed over.
	late := randomBytes(t, 80<<10)
	davOK(t, src, "PUT", "late.bin", "ann@copy.test", w.ann.AppPassword, late)
	davOK(t, src, "DELETE", "gone.txt", "ann@copy.test", w.ann.AppPassword, nil)
	w.cursor = deltaToEnd(t, src, w.ann.Token, w.cursor)
	src.Stop()
	out, errOut, err = run(t, "copy-data", "--config", config, "--from", src.Data, "--again", "--quiet")
	if err != nil || !strings.Contains(out, "3 blobs and 0 archived (2 already there)") {
		t.Fatalf("copy-data --again: %v %q %s", err, out, errOut)
	}
	if webtest.S3(dst) {
		// The bytes went to the bucket, not to the target's directory.
		if objects, _ := filepath.Glob(filepath.Join(dst, "blobs", "objects", "*", "*", "*")); len(objects) > 0 {
			t.Errorf("with a bucket configured, copy-data wrote %d objects to the data directory", len(objects))
		}
	}
	dstServer := webtest.Start(t, dst)
	checkMoved(t, dstServer, w)
	if b := davOK(t, dstServer, "GET", "late.bin", "ann@copy.test", w.ann.AppPassword, nil); !bytes.Equal(b, late) {
		t.Errorf("a file written after the first pass: %d bytes, not the same", len(b))
	}
	res := dav(t, dstServer, "GET", "gone.txt", "ann@copy.test", w.ann.AppPassword, nil, nil)
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("a file deleted after the first pass: GET %d, want 404", res.StatusCode)
	}
	// Once a server on the copy took a write, --again refuses: the rows
	// anew would lose it. The write is still there.
	davOK(t, dstServer, "PUT", "after.txt", "ann@copy.test", w.ann.AppPassword, []byte("written on the copy"))
	dstServer.Stop()
	_, _, err = run(t, "copy-data", "--config", config, "--from", src.Data, "--again", "--quiet")
	if err == nil || !strings.Contains(err.Error(), "would lose them") || !strings.Contains(err.Error(), "--discard-changes") {
		t.Fatalf("copy-data --again after a write on the copy: %v, want a refusal", err)
	}
	dstServer = webtest.Start(t, dst)
	if b := davOK(t, dstServer, "GET", "after.txt", "ann@copy.test", w.ann.AppPassword, nil); string(b) != "written on the copy" {
		t.Errorf("the write on the copy after a refused --again: %q", b)
	}
	// With --discard-changes it copies again, and the write is gone.
	dstServer.Stop()
	if _, errOut, err := run(t, "copy-data", "--config", config, "--from", src.Data, "--again", "--discard-changes", "--quiet"); err != nil {
		t.Fatalf("copy-data --again --discard-changes: %v %s", err, errOut)
	}
	dstServer = webtest.Start(t, dst)
	res = dav(t, dstServer, "GET", "after.txt", "ann@copy.test", w.ann.AppPassword, nil, nil)
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("a write on the copy after --again --discard-changes: GET %d, want 404", res.StatusCode)
	}
}

// An interrupted copy-data (after some rows, or some blobs) finishes when run
// again, with every row once.
func TestCopyDataCarriesOnAfterAnInterruption(t *testing.T) {
	dst, config := copyTarget(t)
	// A server started on the target once: its own keys, which the
	// source's replace.
	webtest.Start(t, dst).Stop()
	src := embedded(t)
	w := fill(t, src)
	src.Stop()
	for _, stop := range []struct{ rows, blobs int64 }{{0, 1}, {5, 0}, {40, 0}} {
		testStopAfterRows, testStopAfterBlobs = stop.rows, stop.blobs
		_, _, err := run(t, "copy-data", "--config", config, "--from", src.Data, "--quiet", "--no-reindex")
		testStopAfterRows, testStopAfterBlobs = 0, 0
		if err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Fatalf("copy-data stopped after %+v: %v, want the interruption", stop, err)
		}
	}
	out, errOut, err := run(t, "copy-data", "--config", config, "--from", src.Data, "--quiet")
	if err != nil {
		t.Fatalf("copy-data after interruptions: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "already there") {
		t.Errorf("summary %q", out)
	}
	// Every table has as many rows as the source's.
	srcDB, err := sqldb.Open(context.Background(), filepath.Join(src.Data, "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dstDB := webtest.OpenDatabase(t, dst)
	for _, table := range []string{"users", "personal_access_tokens", "app_passwords", "web_sessions", "drive_files", "drive_versions",
		"drive_shares", "drive_small_blobs", "outbox", "contacts", "calendar_objects", "webhook_subscriptions", "audit_log"} {
		var a, b int
		if err := srcDB.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&a); err != nil {
			t.Fatal(err)
		}
		if err := dstDB.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&b); err != nil {
			t.Fatal(err)
		}
		if a != b || a == 0 {
			t.Errorf("table %s: %d rows in the source, %d in the copy", table, a, b)
		}
	}
	srcDB.Close()
	dstDB.Close()
	checkMoved(t, webtest.Start(t, dst), w)
}

// An archived file's compressed copy moves to the target's archive tier
// (checked decompressed) and is restored from there.
func TestCopyDataArchivedFiles(t *testing.T) {
	t.Parallel()
	dst, config := copyTarget(t)
	archiving := func(c *wire.Config) { c.Drive.ArchiveAfter = 30 * 24 * time.Hour }
	src := webtest.Start(t, t.TempDir(), archiving)
	cr := src.Bootstrap("Copy Org", "ann@copy.test", "admin")
	cold := randomBytes(t, 90<<10)
	davOK(t, src, "PUT", "cold.bin", "ann@copy.test", cr.AppPassword, cold)
	id := itemID(t, ok(t, src.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/browse", Token: cr.Token}), "browse"), "cold.bin")
	src.Clock.Advance(31 * 24 * time.Hour)
	if done, err := src.Main.Drive.Maintain(context.Background()); err != nil || done["files_archived"] != 1 {
		t.Fatalf("maintenance: %v %v", done, err)
	}
	src.Stop()
	out, errOut, err := run(t, "copy-data", "--config", config, "--from", src.Data, "--quiet")
	if err != nil || !strings.Contains(out, "1 archived") {
		t.Fatalf("copy-data: %v %q %s", err, out, errOut)
	}
	s := webtest.Start(t, dst, archiving)
	if res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/" + id + "/download", Token: cr.Token}); res.StatusCode != 202 {
		t.Fatalf("download of the archived file after the move: %d %s", res.StatusCode, res.Body)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		var st struct{ Status string }
		ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/" + id + "/restore-status", Token: cr.Token}), "restore status").Decode(t, &st)
		if st.Status == "active" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restore did not finish: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b := fetchURL(t, s, ok(t, s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/" + id + "/download", Token: cr.Token}), "download")); !bytes.Equal(b, cold) {
		t.Errorf("the archived file restored after the move: %d bytes, not the same", len(b))
	}
}

// copy-data refuses what it must not do, saying why, and never shows a
// secret.
func TestCopyDataRefuses(t *testing.T) {
	// No database URL.
	if _, _, err := run(t, "copy-data", "--data", t.TempDir(), "--from", t.TempDir()); err == nil || !strings.Contains(err.Error(), "ATRIUM_DATABASE_URL") {
		t.Errorf("copy-data without a database: %v, want a refusal naming ATRIUM_DATABASE_URL", err)
	}
	dst, config := copyTarget(t)
	src := embedded(t)
	davPW := src.Bootstrap("Copy Org", "ann@copy.test", "admin").AppPassword
	big := randomBytes(t, 100<<10)
	davOK(t, src, "PUT", "big.bin", "ann@copy.test", davPW, big)
	src.Stop()

	// Not an Atrium directory; the target's own directory.
	for _, tc := range []struct{ from, want string }{
		{t.TempDir(), "not an Atrium data directory"},
		{dst, "source directory itself"},
	} {
		if _, _, err := run(t, "copy-data", "--config", config, "--from", tc.from); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("copy-data --from %s: %v, want %q", tc.from, err, tc.want)
		}
	}
	// A corrupt blob: the copy fails naming it, and copies nothing of it.
	sum := sha256.Sum256(big)
	hash := hex.EncodeToString(sum[:])
	obj := filepath.Join(src.Data, "blobs", "objects", hash[:2], hash[2:4], hash)
	if err := os.Chmod(obj, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, append([]byte("x"), big[1:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "copy-data", "--config", config, "--from", src.Data, "--quiet")
	if err == nil || !strings.Contains(err.Error(), hash) || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("copy-data of a corrupt blob: %v, want a failure naming %s", err, hash)
	}
	if err != nil && (strings.Contains(err.Error(), "atrium:atrium@") || webtest.S3(dst) && strings.Contains(err.Error(), webtest.Blob(dst).S3SecretKey)) {
		t.Errorf("the error shows a secret: %v", err)
	}
	// A target that is not empty and not a copy of this installation.
	if err := os.WriteFile(obj, big, 0o600); err != nil {
		t.Fatal(err)
	}
	other := webtest.Start(t, dst)
	other.Bootstrap("Other Org", "zed@other.test", "admin")
	other.Stop()
	db := webtest.OpenDatabase(t, dst)
	if _, err := db.Exec(context.Background(), `DELETE FROM server_secrets WHERE name = 'copy_data'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, _, err := run(t, "copy-data", "--config", config, "--from", src.Data); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("copy-data into a database in use: %v, want a refusal (not empty)", err)
	}
}
