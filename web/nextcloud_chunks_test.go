package web_test

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"atrium/storage/s3blob"
	"atrium/webtest"
)

// Chunked uploads as the Nextcloud and ownCloud clients send them: MKCOL an
// upload folder, PUT chunks named by number (in any order; one may be
// larger than a PUT may be, which the 512 MiB of a plain PUT does not
// test here), PROPFIND the folder to resume, MOVE .file to the path with
// OC-Total-Length, X-OC-Mtime and OC-Checksum: one file of the chunks in
// their numbers' order, and the folder gone.
func TestSyncClientChunkedUpload(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Chunk Org", "ann@example.test", "admin")
	bob := newDavUser(t, s, "Chunk Org", "bob@example.test", "member")
	up := "/remote.php/dav/uploads/" + ann.creds.UserID + "/4242"
	files := "/remote.php/dav/files/" + ann.creds.UserID
	do := func(u davUser, method, path string, header map[string]string, body any) *webtest.Response {
		t.Helper()
		return s.Do(webtest.Request{Method: method, Path: path, BasicID: u.creds.Email, BasicPW: u.creds.AppPassword, Header: header, Body: body})
	}
	want := func(status int, method, path string, header map[string]string, body any) *webtest.Response {
		t.Helper()
		res := do(ann, method, path, header, body)
		if res.StatusCode != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, res.Body, status)
		}
		return res
	}
	parts := []string{strings.Repeat("a", 1000), strings.Repeat("b", 70000), "c"}
	whole := strings.Join(parts, "")

	want(201, "MKCOL", up, nil, nil)
	want(405, "MKCOL", up, nil, nil)
	// Out of order, named by offset as ownCloud and Nextcloud 3.x name them.
	want(201, "PUT", up+"/0000000000071000", nil, parts[2])
	want(201, "PUT", up+"/0000000000000000", nil, parts[0])
	want(400, "PUT", up+"/not-a-number", nil, "x")
	// What is stored, for a resumed upload.
	list := want(207, "PROPFIND", up, map[string]string{"Depth": "1"}, nil)
	for _, w := range []string{up + "/0000000000000000</D:href>", "<D:getcontentlength>1000</D:getcontentlength>", up + "/0000000000071000</D:href>"} {
		if !strings.Contains(string(list.Body), w) {
			t.Fatalf("listing has no %s: %s", w, list.Body)
		}
	}
	// Another user's uploads are not found; nor is a folder never made.
	if res := do(bob, "PUT", up+"/0000000000001000", nil, "x"); res.StatusCode != 404 {
		t.Fatalf("bob's PUT into ann's upload: %d", res.StatusCode)
	}
	if res := do(bob, "MKCOL", "/remote.php/dav/uploads/"+bob.creds.UserID+"/../x", nil, nil); res.StatusCode < 400 {
		t.Fatalf("a folder outside: %d", res.StatusCode)
	}
	want(404, "PUT", "/remote.php/dav/uploads/"+ann.creds.UserID+"/never/1", nil, "x")

	dest := map[string]string{"Destination": s.URL + files + "/Big%20file.bin", "X-OC-Mtime": "1500000000"}
	// A missing chunk: the total does not add up, nothing is written.
	short := map[string]string{"OC-Total-Length": "71001"}
	for k, v := range dest {
		short[k] = v
	}
	want(400, "MOVE", up+"/.file", short, nil)
	want(201, "PUT", up+"/0000000000001000", nil, parts[1])
	sum := sha1.Sum([]byte(whole))
	full := map[string]string{"OC-Total-Length": "71001", "OC-Checksum": "SHA1:" + hex.EncodeToString(sum[:])}
	for k, v := range dest {
		full[k] = v
	}
	mv := want(201, "MOVE", up+"/.file", full, nil)
	if mv.Header.Get("OC-FileId") == "" || mv.Header.Get("OC-ETag") == "" || mv.Header.Get("X-OC-MTime") != "accepted" {
		t.Fatalf("MOVE .file headers %v", mv.Header)
	}
	got := want(200, "GET", files+"/Big%20file.bin", nil, nil)
	if h, w := sha256.Sum256(got.Body), sha256.Sum256([]byte(whole)); h != w {
		t.Fatalf("the file is not its chunks in order (%d bytes)", len(got.Body))
	}
	if lm := got.Header.Get("Last-Modified"); lm != "Fri, 14 Jul 2017 02:40:00 GMT" {
		t.Fatalf("Last-Modified %s", lm)
	}
	want(404, "PROPFIND", up, map[string]string{"Depth": "0"}, nil)

	// A new version through chunks, with an If header naming the version it
	// replaces (as the clients send it); a stale one is refused.
	etag := mv.Header.Get("OC-ETag")
	want(201, "MKCOL", up, nil, nil)
	want(201, "PUT", up+"/1", nil, "new content")
	stale := map[string]string{"Destination": s.URL + files + "/Big%20file.bin", "If": "<" + s.URL + files + `/Big%20file.bin> (["stale"])`}
	want(412, "MOVE", up+"/.file", stale, nil)
	fresh := map[string]string{"Destination": s.URL + files + "/Big%20file.bin", "If": "<" + s.URL + files + "/Big%20file.bin> ([" + etag + "])"}
	want(204, "MOVE", up+"/.file", fresh, nil)
	if g := want(200, "GET", files+"/Big%20file.bin", nil, nil); string(g.Body) != "new content" {
		t.Fatalf("after the second upload: %q", g.Body)
	}

	// Into Shared with me: read-only, as a PUT there.
	want(201, "MKCOL", up, nil, nil)
	want(201, "PUT", up+"/1", nil, "x")
	want(403, "MOVE", up+"/.file", map[string]string{"Destination": s.URL + files + "/Shared%20with%20me/x"}, nil)
	// An abandoned upload is deleted by the client, or expires.
	want(204, "DELETE", up, nil, nil)
	want(404, "PROPFIND", up, map[string]string{"Depth": "0"}, nil)

	// The chunks of one upload are held to the quota's room.
	if _, err := s.Main.DB.Exec(context.Background(), `UPDATE plans SET quota_bytes = 100000 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged() // credentials carry the quota
	want(201, "MKCOL", up, nil, nil)
	want(201, "PUT", up+"/1", nil, strings.Repeat("x", 20000))
	webtest.Check(t, do(ann, "PUT", up+"/2", nil, strings.Repeat("x", 20000)), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})

	// The capabilities offer chunking.
	caps := want(200, "GET", "/ocs/v1.php/cloud/capabilities?format=json", nil, nil)
	if !strings.Contains(string(caps.Body), `"dav":{"chunking":"1.0"}`) || !strings.Contains(string(caps.Body), `"bigfilechunking":true`) {
		t.Fatalf("capabilities %s", caps.Body)
	}
}

// With the bytes in a bucket, a chunked upload's chunks are objects of the
// bucket and nothing of them is under a node's data directory: a transfer
// begun on one node is listed, continued and assembled on another (a node
// with a data directory of its own on the same database and bucket), and
// its objects are gone after the MOVE. Without a bucket the test is skipped.
func TestSyncClientChunksAnyNode(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	_, cfg := tusBucket(t, s.Data)
	ann := newDavUser(t, s, "Chunk Nodes Org", "ann@example.test", "admin")
	up := "/remote.php/dav/uploads/" + ann.creds.UserID + "/777"
	files := "/remote.php/dav/files/" + ann.creds.UserID
	on := func(s *webtest.Server, status int, method, path string, header map[string]string, body any) *webtest.Response {
		t.Helper()
		res := s.Do(webtest.Request{Method: method, Path: path, BasicID: ann.creds.Email, BasicPW: ann.creds.AppPassword, Header: header, Body: body})
		if res.StatusCode != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, res.Body, status)
		}
		return res
	}
	keys := func() []string {
		t.Helper()
		k, err := s3blob.TestKeys(context.Background(), cfg, "chunks/"+ann.creds.UserID+"/777/")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	first, second := strings.Repeat("1", 100000), strings.Repeat("2", 5000)
	on(s, 201, "MKCOL", up, nil, nil)
	on(s, 201, "PUT", up+"/0000000000000000", nil, first)
	if k := keys(); len(k) != 2 { // the folder's mark and the chunk
		t.Fatalf("objects of the transfer: %v", k)
	}
	if webtest.DatabaseURL(s.Data) == "" {
		s.Stop() // SQLite: the database moves to the other node's directory
	}
	s2 := webtest.Node(t, s.Data)
	list := on(s2, 207, "PROPFIND", up, map[string]string{"Depth": "1"}, nil)
	if !strings.Contains(string(list.Body), up+"/0000000000000000</D:href>") || !strings.Contains(string(list.Body), "<D:getcontentlength>100000<") {
		t.Fatalf("the other node's listing: %s", list.Body)
	}
	on(s2, 405, "MKCOL", up, nil, nil)
	on(s2, 201, "PUT", up+"/0000000000100000", nil, second)
	on(s2, 201, "MOVE", up+"/.file", map[string]string{"Destination": s2.URL + files + "/nodes.bin", "OC-Total-Length": "105000"}, nil)
	got := on(s2, 200, "GET", files+"/nodes.bin", nil, nil)
	if string(got.Body) != first+second {
		t.Fatalf("the file is not its chunks in order (%d bytes)", len(got.Body))
	}
	if k := keys(); len(k) != 0 {
		t.Fatalf("objects left after the MOVE: %v", k)
	}
	for _, dir := range []string{s.Data, s2.Data} {
		if left, err := os.ReadDir(filepath.Join(dir, "chunks")); !errors.Is(err, fs.ErrNotExist) || len(left) != 0 {
			t.Fatalf("the data directory has chunks/ (%v, %v) with the bytes in a bucket", left, err)
		}
	}
}
