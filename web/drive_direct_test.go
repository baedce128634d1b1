package web_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"atrium/storage/blob"
	"atrium/storage/s3blob"
	"atrium/web/presign"
	"atrium/webtest"
)

// newDirect starts a server whose clients send and fetch the bytes at the
// object store itself (webtest.DirectS3), skipping the test without a test
// store, and returns it, a client of a fresh organisation and the server's
// bucket as the test sees it from outside.
func newDirect(t *testing.T) (*webtest.Server, driveClient, *s3blob.Store) {
	t.Helper()
	s := webtest.New(t, webtest.DirectS3)
	if !webtest.S3(s.Data) {
		t.Skip(s3blob.TestEndpointEnv + " not set (scripts/s3-server.sh starts a store)")
	}
	cr := s.Bootstrap("Direct Org", "ann@direct.test", "admin")
	return s, driveClient{t: t, s: s, tok: cr.Token}, bucketOf(t, s)
}

// bucketOf opens the bucket of the test server s.
func bucketOf(t *testing.T, s *webtest.Server) *s3blob.Store {
	t.Helper()
	b := webtest.Blob(s.Data)
	store, err := s3blob.Open(context.Background(), s3blob.Config{Endpoint: b.S3Endpoint, Bucket: b.S3Bucket,
		AccessKey: b.S3AccessKey, SecretKey: b.S3SecretKey, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// host returns the host[:port] of URL u.
func host(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("URL %q: %v", u, err)
	}
	return p.Host
}

// storeHost is the clients' address of the store of server s.
func storeHost(t *testing.T, s *webtest.Server) string {
	return host(t, s3blob.TestPublicEndpoint(webtest.Blob(s.Data).S3Endpoint))
}

// announce announces an upload of size bytes and returns its ticket.
func (c driveClient) announce(name, mimeType string, size int) uploadTicket {
	c.t.Helper()
	var tk uploadTicket
	c.ok(201, "POST", "/api/v1/drive/upload", map[string]any{"name": name, "mime_type": mimeType, "size": size}, &tk)
	return tk
}

// ref is the upload ref of a ticket of the store: the last element of its
// path (uploads/<ref>).
func ref(t *testing.T, tk uploadTicket) string {
	t.Helper()
	p, err := url.Parse(tk.UploadURL)
	if err != nil {
		t.Fatal(err)
	}
	if path.Base(path.Dir(p.Path)) != "uploads" {
		t.Fatalf("upload URL %s: not under uploads/", tk.UploadURL)
	}
	return path.Base(p.Path)
}

func (c driveClient) downloadURL(id string) string {
	c.t.Helper()
	var l struct {
		URL string `json:"url"`
	}
	c.ok(200, "GET", "/api/v1/drive/"+id+"/download", nil, &l)
	return l.URL
}

func get(t *testing.T, u, rng string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// With s3_public_endpoint, the three-step upload's bytes go from the client
// to the store, and confirm checks them before the file is visible: the
// file has their size and hash, the bucket holds them as their object and
// nothing staged is left. Its download URL is the store's, answering with
// the file's type and name and serving ranges.
func TestDirectUploadAndDownload(t *testing.T) {
	t.Parallel()
	s, c, bucket := newDirect(t)
	ctx := context.Background()
	content := bytes.Repeat([]byte("0123456789abcdef"), 10000) // past the 64 KiB kept in the database
	name := "Résumé 2026 \"final\".pdf"
	tk := c.announce(name, "application/pdf", len(content))
	if h := host(t, tk.UploadURL); h != storeHost(t, s) || h == host(t, s.URL) {
		t.Fatalf("upload URL %s: want the store's public endpoint %s", tk.UploadURL, storeHost(t, s))
	}
	if res := putURL(t, tk.UploadURL, "application/pdf", content); res.StatusCode != 200 {
		t.Fatalf("PUT to the store: %d", res.StatusCode)
	}
	if l := c.list("/api/v1/drive/browse"); l.Total != 0 {
		t.Fatalf("before confirm the drive lists %d items", l.Total)
	}
	var f driveFile
	c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
	if f.Status != "active" || f.SizeBytes != int64(len(content)) || f.ContentHash != sha(content) {
		t.Fatalf("confirmed: %+v", f)
	}
	if l := c.list("/api/v1/drive/browse"); l.Total != 1 {
		t.Fatalf("after confirm the drive lists %d items", l.Total)
	}
	if n, err := bucket.Stat(ctx, hashOf(f)); err != nil || n != int64(len(content)) {
		t.Fatalf("object %s: %d bytes, %v", hashOf(f), n, err)
	}
	if _, err := bucket.StatStaged(ctx, ref(t, tk)); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("staged key after confirm: %v", err)
	}
	if u := c.usage(); u.UsedBytes != int64(len(content)) || u.FileCount != 1 {
		t.Fatalf("usage: %+v", u)
	}

	dl := c.downloadURL(f.ID)
	if h := host(t, dl); h != storeHost(t, s) {
		t.Fatalf("download URL %s: want the store's", dl)
	}
	res, body := get(t, dl, "")
	if res.StatusCode != 200 || !bytes.Equal(body, content) {
		t.Fatalf("GET download URL: %d, %d bytes", res.StatusCode, len(body))
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd, want := res.Header.Get("Content-Disposition"), presign.ContentDisposition(name, false); cd != want {
		t.Errorf("Content-Disposition %q, want %q", cd, want)
	}
	res, body = get(t, dl, "bytes=100000-100015")
	if res.StatusCode != http.StatusPartialContent || !bytes.Equal(body, content[100000:100016]) ||
		res.Header.Get("Content-Range") != "bytes 100000-100015/160000" {
		t.Fatalf("range: %d %q (%s)", res.StatusCode, body, res.Header.Get("Content-Range"))
	}
	// A version's download is the store's too.
	var vs []struct {
		ID string `json:"id"`
	}
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/versions", nil, &vs)
	var l struct {
		URL string `json:"url"`
	}
	c.ok(200, "GET", "/api/v1/drive/"+f.ID+"/versions/"+vs[0].ID+"/download", nil, &l)
	if res, body := get(t, l.URL, ""); host(t, l.URL) != storeHost(t, s) || res.StatusCode != 200 || !bytes.Equal(body, content) {
		t.Fatalf("version download %s: %d, %d bytes", l.URL, res.StatusCode, len(body))
	}
}

// A confirm that finds no bytes, or bytes of another size than announced,
// is refused as on the relayed path and changes nothing; the same URL then
// takes the right bytes.
func TestDirectConfirmRefused(t *testing.T) {
	t.Parallel()
	_, c, bucket := newDirect(t)
	ctx := context.Background()
	// One PUT to the store carries at most 5 GiB: larger files go resumable.
	webtest.Check(t, c.do("POST", "/api/v1/drive/upload", map[string]any{"name": "huge.bin", "size": 5<<30 + 1}),
		webtest.Scenario{Status: 422, Problem: "validation_failed", Contains: []string{"One upload is at most 5368709120 bytes; use the resumable upload"}})
	content := bytes.Repeat([]byte("x"), 100000)
	tk := c.announce("short.bin", "application/octet-stream", len(content))
	confirm := "/api/v1/drive/" + tk.File.ID + "/confirm"
	webtest.Check(t, c.do("POST", confirm, nil), webtest.Scenario{Status: 409, Problem: "conflict",
		Contains: []string{"No bytes have arrived for this upload yet"}})

	for _, wrong := range [][]byte{content[:99999], append(bytes.Clone(content), 'y')} {
		if res := putURL(t, tk.UploadURL, "application/octet-stream", wrong); res.StatusCode != 200 {
			t.Fatalf("PUT: %d", res.StatusCode)
		}
		webtest.Check(t, c.do("POST", confirm, nil), webtest.Scenario{Status: 422, Problem: "validation_failed",
			Contains: []string{"header.Content-Length", "The upload was announced as 100000 bytes."}})
		if l := c.list("/api/v1/drive/browse"); l.Total != 0 {
			t.Fatalf("after a refused confirm the drive lists %d items", l.Total)
		}
		if u := c.usage(); u.UsedBytes != 0 || u.FileCount != 0 {
			t.Fatalf("usage after a refused confirm: %+v", u)
		}
		if bucket.Exists(ctx, sha256hex(wrong)) {
			t.Fatal("the refused bytes became an object")
		}
	}
	putURL(t, tk.UploadURL, "application/octet-stream", content)
	var f driveFile
	c.ok(200, "POST", confirm, nil, &f)
	if f.Status != "active" || f.ContentHash != sha(content) {
		t.Fatalf("confirmed: %+v", f)
	}
	webtest.Check(t, c.do("POST", confirm, nil), webtest.Scenario{Status: 409, Problem: "conflict",
		Contains: []string{"The file has no upload waiting for confirmation."}})
}

// A small file sent to the store ends where a small file sent through the
// node ends: in the database, not an object of the bucket; its download
// URL is then the node's.
func TestDirectSmallFile(t *testing.T) {
	t.Parallel()
	s, c, bucket := newDirect(t)
	ctx := context.Background()
	content := []byte("a small note, stored with its transaction")
	tk := c.announce("note.txt", "text/plain", len(content))
	putURL(t, tk.UploadURL, "text/plain", content)
	var f driveFile
	c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
	if f.ContentHash != sha(content) || f.SizeBytes != int64(len(content)) {
		t.Fatalf("confirmed: %+v", f)
	}
	if !smallRow(t, s, hashOf(f)) || bucket.Exists(ctx, hashOf(f)) {
		t.Fatalf("small content: in the database %v, an object %v", smallRow(t, s, hashOf(f)), bucket.Exists(ctx, hashOf(f)))
	}
	if _, err := bucket.StatStaged(ctx, ref(t, tk)); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("staged key after confirm: %v", err)
	}
	if dl := c.downloadURL(f.ID); host(t, dl) != host(t, s.URL) {
		t.Fatalf("download URL of a small file %s: want the node's", dl)
	}
	if got := c.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("download: %q", got)
	}
	// An empty file too.
	tk = c.announce("empty.txt", "text/plain", 0)
	putURL(t, tk.UploadURL, "text/plain", nil)
	c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
	if f.SizeBytes != 0 || f.ContentHash != sha(nil) {
		t.Fatalf("empty file: %+v", f)
	}
}

// The same bytes sent twice are one object; the second confirm copies
// nothing.
func TestDirectDedup(t *testing.T) {
	t.Parallel()
	_, c, bucket := newDirect(t)
	ctx := context.Background()
	content := bytes.Repeat([]byte("same bytes "), 10000)
	var files []driveFile
	for _, name := range []string{"one.bin", "two.bin"} {
		tk := c.announce(name, "application/octet-stream", len(content))
		putURL(t, tk.UploadURL, "application/octet-stream", content)
		var f driveFile
		c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
		files = append(files, f)
	}
	if files[0].ContentHash != files[1].ContentHash {
		t.Fatalf("hashes differ: %s %s", files[0].ContentHash, files[1].ContentHash)
	}
	var objects []string
	if err := bucket.Walk(ctx, func(h string, _ time.Time) error { objects = append(objects, h); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(objects) != 1 || objects[0] != hashOf(files[0]) {
		t.Fatalf("objects: %v, want the one", objects)
	}
	if u := c.usage(); u.FileCount != 2 {
		t.Fatalf("usage: %+v", u)
	}
	for _, f := range files {
		if _, body := get(t, c.downloadURL(f.ID), ""); !bytes.Equal(body, content) {
			t.Fatalf("%s: %d bytes", f.Name, len(body))
		}
	}
}

// What clients staged and never confirmed goes with their upload when it
// expires; staged keys that outlived every upload (no row left) go too.
func TestDirectStagedExpire(t *testing.T) {
	t.Parallel()
	s, c, bucket := newDirect(t)
	ctx := context.Background()
	tk := c.announce("abandoned.bin", "application/octet-stream", 5)
	putURL(t, tk.UploadURL, "application/octet-stream", []byte("hello"))
	stray, err := bucket.PresignPut(ctx, "no-such-upload", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	putURL(t, stray.String(), "", []byte("stray"))
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["uploads_expired"] != 0 || done["staged_swept"] != 0 {
		t.Fatalf("maintenance before expiry: %v %v", done, err)
	}
	if _, err := bucket.StatStaged(ctx, ref(t, tk)); err != nil {
		t.Fatalf("staged bytes of a live upload: %v", err)
	}
	s.Clock.Advance(s.Main.Drive.Options().UploadTTL + time.Hour)
	done, err := s.Main.Drive.Maintain(ctx)
	if err != nil || done["uploads_expired"] < 1 || done["staged_swept"] != 1 {
		t.Fatalf("maintenance after expiry: %v %v", done, err)
	}
	for _, r := range []string{ref(t, tk), "no-such-upload"} {
		if _, err := bucket.StatStaged(ctx, r); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("staged %s after expiry: %v", r, err)
		}
	}
}

// Without s3_public_endpoint the URLs are the node's, which relays the
// bytes (on the local disk and on a store alike).
func TestRelayedWithoutPublicEndpoint(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	content := bytes.Repeat([]byte("relayed "), 10000)
	tk := c.announce("relayed.bin", "application/octet-stream", len(content))
	if host(t, tk.UploadURL) != host(t, s.URL) {
		t.Fatalf("upload URL %s: want the node's", tk.UploadURL)
	}
	putURL(t, tk.UploadURL, "application/octet-stream", content)
	var f driveFile
	c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
	dl := c.downloadURL(f.ID)
	if host(t, dl) != host(t, s.URL) {
		t.Fatalf("download URL %s: want the node's", dl)
	}
	if _, body := get(t, dl, ""); !bytes.Equal(body, content) {
		t.Fatalf("download: %d bytes", len(body))
	}
}

// The web app's pages may load the store's URLs: the drive page fetches a
// download for its text and PDF viewers (connect-src), a shared link's page
// shows an image preview that redirects to the store (img-src).
func TestDirectPagePolicies(t *testing.T) {
	t.Parallel()
	s, c, _ := newDirect(t)
	origin := "http://" + storeHost(t, s)
	page := s.Do(webtest.Request{Method: "GET", Path: "/signin"})
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' "+origin+";") {
		t.Errorf("web app CSP %q: want the store in connect-src", csp)
	}
	pic := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 20000) // not decoded: only redirected to
	tk := c.announce("pic.png", "image/png", len(pic))
	putURL(t, tk.UploadURL, "image/png", pic)
	var f driveFile
	c.ok(200, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, &f)
	tok := linkToken(t, s, c.share(f.ID, map[string]any{"create_link": true, "permission": "view"}))
	page = s.Do(webtest.Request{Method: "GET", Path: "/s/" + tok})
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' "+s.URL+" "+origin+";") {
		t.Errorf("shared link page CSP %q: want the store in img-src", csp)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(s.URL + "/s/" + tok + "/preview")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusFound || host(t, loc) != storeHost(t, s) {
		t.Fatalf("preview of a shared image: %d to %q, want a redirect to the store", res.StatusCode, loc)
	}
	res, body := get(t, res.Header.Get("Location"), "")
	if res.StatusCode != 200 || !bytes.Equal(body, pic) || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "inline;") {
		t.Fatalf("the store's preview: %d, %d bytes, %q", res.StatusCode, len(body), res.Header.Get("Content-Disposition"))
	}
}

// The quota is checked again when the staged bytes are received: an
// organisation that filled up after the announcement gets quota_exceeded at
// confirm, and nothing is kept.
func TestDirectConfirmOverQuota(t *testing.T) {
	t.Parallel()
	s, c, bucket := newDirect(t)
	ctx := context.Background()
	if _, err := s.Main.DB.Exec(ctx, `UPDATE plans SET quota_bytes = 200000 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged()
	c.tok = s.Token("ann@direct.test")
	late := bytes.Repeat([]byte("l"), 100000)
	tk := c.announce("late.bin", "application/octet-stream", len(late))
	c.upload("filler.bin", "", "application/octet-stream", bytes.Repeat([]byte("f"), 150000))
	putURL(t, tk.UploadURL, "application/octet-stream", late)
	webtest.Check(t, c.do("POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	if n := presignKept(t, s, tk.File.ID, late); n != 0 || bucket.Exists(ctx, sha256hex(late)) {
		t.Fatalf("the confirm over quota kept %d rows, an object %v", n, bucket.Exists(ctx, sha256hex(late)))
	}
	if u := c.usage(); u.UsedBytes != 150000 || u.FileCount != 1 {
		t.Fatalf("usage: %+v", u)
	}
}
