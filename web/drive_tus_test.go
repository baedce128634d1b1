package web_test

import (
	"atrium/storage/sqldb"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
)

// tusClient speaks tus 1.0.0 to the drive for one user.
type tusClient struct {
	t   testing.TB
	s   *webtest.Server
	tok string
}

func tusMeta(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+" "+base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return strings.Join(parts, ",")
}

func (c tusClient) do(method, path string, hdr map[string]string, body []byte) *webtest.Response {
	c.t.Helper()
	h := map[string]string{"Tus-Resumable": "1.0.0"}
	for k, v := range hdr {
		h[k] = v
	}
	r := webtest.Request{Method: method, Path: path, Token: c.tok, Header: h}
	if body != nil {
		r.Body = body
		if _, ok := h["Content-Type"]; !ok {
			h["Content-Type"] = "application/offset+octet-stream"
		}
	}
	return c.s.Do(r)
}

// create starts an upload of length bytes (-1: deferred) and returns its path.
func (c tusClient) create(meta string, length int64) string {
	c.t.Helper()
	hdr := map[string]string{"Upload-Metadata": meta}
	if length < 0 {
		hdr["Upload-Defer-Length"] = "1"
	} else {
		hdr["Upload-Length"] = strconv.FormatInt(length, 10)
	}
	res := c.do("POST", "/api/v1/drive/tus/", hdr, nil)
	if res.StatusCode != 201 {
		c.t.Fatalf("create: %d %s", res.StatusCode, res.Body)
	}
	loc := res.Header.Get("Location")
	if !strings.HasPrefix(loc, c.s.URL+"/api/v1/drive/tus/") {
		c.t.Fatalf("Location %q", loc)
	}
	return strings.TrimPrefix(loc, c.s.URL)
}

func (c tusClient) patch(path string, offset int64, body []byte, extra ...string) *webtest.Response {
	c.t.Helper()
	hdr := map[string]string{"Upload-Offset": strconv.FormatInt(offset, 10), "Content-Type": "application/offset+octet-stream"}
	if body == nil {
		body = []byte{}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		hdr[extra[i]] = extra[i+1]
	}
	return c.do("PATCH", path, hdr, body)
}

func (c tusClient) offset(path string) int64 {
	c.t.Helper()
	res := c.do("HEAD", path, nil, nil)
	if res.StatusCode != 200 {
		c.t.Fatalf("HEAD %s: %d", path, res.StatusCode)
	}
	n, err := strconv.ParseInt(res.Header.Get("Upload-Offset"), 10, 64)
	if err != nil {
		c.t.Fatalf("Upload-Offset %q", res.Header.Get("Upload-Offset"))
	}
	return n
}

// upload sends content in one creation and one PATCH and returns the last response.
func (c tusClient) upload(name, parent string, content []byte) *webtest.Response {
	c.t.Helper()
	meta := tusMeta("filename", name)
	if parent != "" {
		meta += "," + tusMeta("parent_id", parent)
	}
	return c.patch(c.create(meta, int64(len(content))), 0, content)
}

func newTus(t *testing.T) (*webtest.Server, driveClient, tusClient) {
	s, c := newDrive(t)
	return s, c, tusClient{t: t, s: s, tok: c.tok}
}

// tusEvents returns the types of the outbox events about fileID.
func tusEvents(t *testing.T, s *webtest.Server, fileID string) []string {
	t.Helper()
	evs, _, err := sqldb.Outbox{DB: s.Main.DB}.Events(context.Background(), 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Data["file_id"] == fileID {
			out = append(out, e.Type)
		}
	}
	return out
}

func TestTusProtocol(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	docs := c.folder("Docs", "")
	content := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB

	res := s.Do(webtest.Request{Method: "OPTIONS", Path: "/api/v1/drive/tus/"})
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Tus-Version": "1.0.0", "Tus-Resumable": "1.0.0"}})
	for _, ext := range []string{"creation", "creation-defer-length", "termination", "expiration"} {
		if !strings.Contains(","+res.Header.Get("Tus-Extension")+",", ","+ext+",") {
			t.Errorf("Tus-Extension %q lacks %s", res.Header.Get("Tus-Extension"), ext)
		}
	}
	if res.Header.Get("Tus-Max-Size") == "" {
		t.Error("no Tus-Max-Size")
	}

	// Creation: Location, expiry 24 h ahead.
	res = tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": strconv.Itoa(len(content)),
		"Upload-Metadata": tusMeta("filename", "report.txt", "filetype", "text/plain", "parent_id", docs.ID)}, nil)
	if res.StatusCode != 201 {
		t.Fatalf("create: %d %s", res.StatusCode, res.Body)
	}
	up := strings.TrimPrefix(res.Header.Get("Location"), s.URL)
	exp, err := time.Parse(time.RFC1123, res.Header.Get("Upload-Expires"))
	if err != nil || exp.Sub(time.Now()) < 23*time.Hour || exp.Sub(time.Now()) > 25*time.Hour {
		t.Fatalf("Upload-Expires %q: %v", res.Header.Get("Upload-Expires"), err)
	}
	res = tc.do("HEAD", up, nil, nil)
	webtest.Check(t, res, webtest.Scenario{Status: 200, Headers: map[string]string{"Upload-Offset": "0",
		"Upload-Length": strconv.Itoa(len(content)), "Cache-Control": "no-store"}})
	if !strings.Contains(res.Header.Get("Upload-Metadata"), "filename "+base64.StdEncoding.EncodeToString([]byte("report.txt"))) {
		t.Errorf("Upload-Metadata %q", res.Header.Get("Upload-Metadata"))
	}

	other := s.Bootstrap("Drive Org", "bob@example.test", "member")
	readOnly := s.Token("ann@example.test", "drive:read")
	half := int64(len(content) / 2)
	s.Run(t, []webtest.Scenario{
		{Name: "wrong offset", Request: webtest.Request{Method: "PATCH", Path: up, Token: c.tok, Body: content[:10],
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "5", "Content-Type": "application/offset+octet-stream"}},
			Status: 409, Problem: "conflict", Contains: []string{"HEAD"}},
		{Name: "no Tus-Resumable", Request: webtest.Request{Method: "PATCH", Path: up, Token: c.tok, Body: content[:10],
			Header: map[string]string{"Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}},
			Status: 412, Problem: "precondition_failed"},
		{Name: "wrong content type", Request: webtest.Request{Method: "PATCH", Path: up, Token: c.tok, Body: content[:10],
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0"}},
			Status: 415, Problem: "unsupported_media_type"},
		{Name: "no credential", Request: webtest.Request{Method: "HEAD", Path: up}, Status: 401},
		{Name: "no credential create", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/",
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "1"}}, Status: 401, Problem: "unauthorized"},
		{Name: "another user's HEAD", Request: webtest.Request{Method: "HEAD", Path: up, Token: other.Token}, Status: 404},
		{Name: "another user's PATCH", Request: webtest.Request{Method: "PATCH", Path: up, Token: other.Token, Body: content[:10],
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}},
			Status: 404, Problem: "not_found"},
		{Name: "another user's DELETE", Request: webtest.Request{Method: "DELETE", Path: up, Token: other.Token,
			Header: map[string]string{"Tus-Resumable": "1.0.0"}}, Status: 404, Problem: "not_found"},
		{Name: "read scope cannot create", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: readOnly,
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "1", "Upload-Metadata": tusMeta("filename", "x")}},
			Status: 403, Problem: "insufficient_scope"},
		{Name: "read scope cannot patch", Request: webtest.Request{Method: "PATCH", Path: up, Token: readOnly, Body: content[:10],
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}},
			Status: 403, Problem: "insufficient_scope"},
		{Name: "read scope reads the offset", Request: webtest.Request{Method: "HEAD", Path: up, Token: readOnly}, Status: 200,
			Headers: map[string]string{"Upload-Offset": "0"}},
		{Name: "unknown upload", Request: webtest.Request{Method: "HEAD", Path: "/api/v1/drive/tus/nope", Token: c.tok}, Status: 404},
		{Name: "no file name", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: c.tok,
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "1", "Upload-Metadata": tusMeta("filetype", "text/plain")}},
			Status: 422, Problem: "validation_failed", Contains: []string{"filename"}},
		{Name: "bad file name", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: c.tok,
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "1", "Upload-Metadata": tusMeta("filename", "a/b")}},
			Status: 422, Problem: "validation_failed"},
		{Name: "unknown folder", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: c.tok,
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "1", "Upload-Metadata": tusMeta("filename", "x", "parent_id", "nope")}},
			Status: 404, Problem: "not_found"},
		{Name: "too large", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: c.tok,
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": strconv.FormatInt(20<<30, 10), "Upload-Metadata": tusMeta("filename", "x")}},
			Status: 413, Problem: "payload_too_large"},
	})

	// Two PATCHes; the offset advances; the second completes the file.
	res = tc.patch(up, 0, content[:half])
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Upload-Offset": strconv.FormatInt(half, 10)}})
	if res.Header.Get("Upload-Expires") == "" || res.Header.Get("Atrium-Upload-Status") != "" {
		t.Errorf("partial PATCH headers %v", res.Header)
	}
	if got := tc.offset(up); got != half {
		t.Fatalf("offset %d, want %d", got, half)
	}
	if l := c.list("/api/v1/drive/browse/" + docs.ID); l.Total != 0 {
		t.Fatalf("partial upload visible: %+v", l.Items)
	}
	res = tc.patch(up, half, content[half:])
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Upload-Offset": strconv.Itoa(len(content)),
		"Atrium-Upload-Status": "done"}})
	id := res.Header.Get("Atrium-File-Id")
	var f driveFile
	c.ok(200, "GET", "/api/v1/drive/"+id+"/detail", nil, &f)
	if f.Name != "report.txt" || f.ContentHash != sha(content) || f.SizeBytes != int64(len(content)) || f.MimeType != "text/plain" ||
		f.ParentID == nil || *f.ParentID != docs.ID || f.Status != "active" || f.Version != 1 {
		t.Fatalf("file %+v", f)
	}
	if got := c.download(id); !bytes.Equal(got, content) {
		t.Fatal("downloaded content differs")
	}
	if ev := tusEvents(t, s, id); len(ev) != 1 || ev[0] != "drive.file.created" {
		t.Fatalf("events %v", ev)
	}
	// A finished upload still answers HEAD, and takes no more bytes.
	webtest.Check(t, tc.do("HEAD", up, nil, nil), webtest.Scenario{Status: 200, Headers: map[string]string{
		"Upload-Offset": strconv.Itoa(len(content)), "Atrium-Upload-Status": "done", "Atrium-File-Id": id}})

	// Creation with upload, an empty file, and termination.
	res = tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": "5", "Upload-Metadata": tusMeta("filename", "hi.txt"),
		"Content-Type": "application/offset+octet-stream"}, []byte("hello"))
	webtest.Check(t, res, webtest.Scenario{Status: 201, Headers: map[string]string{"Upload-Offset": "5", "Atrium-Upload-Status": "done"}})
	if got := c.download(res.Header.Get("Atrium-File-Id")); string(got) != "hello" {
		t.Fatalf("creation-with-upload content %q", got)
	}
	res = tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": "0", "Upload-Metadata": tusMeta("filename", "empty.bin")}, nil)
	webtest.Check(t, res, webtest.Scenario{Status: 201, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	c.ok(200, "GET", "/api/v1/drive/"+res.Header.Get("Atrium-File-Id")+"/detail", nil, &f)
	if f.SizeBytes != 0 || f.ContentHash != sha(nil) {
		t.Fatalf("empty file %+v", f)
	}
	// tus-js-client sends an empty file's no bytes with its creation too
	// (uploadDataDuringCreation, as the web app does for small files).
	res = tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": "0", "Upload-Metadata": tusMeta("filename", "empty2.bin"),
		"Content-Type": "application/offset+octet-stream"}, []byte{})
	webtest.Check(t, res, webtest.Scenario{Status: 201, Headers: map[string]string{"Upload-Offset": "0", "Atrium-Upload-Status": "done"}})
	c.ok(200, "GET", "/api/v1/drive/"+res.Header.Get("Atrium-File-Id")+"/detail", nil, &f)
	if f.Name != "empty2.bin" || f.SizeBytes != 0 || f.ContentHash != sha(nil) {
		t.Fatalf("empty file sent with its creation %+v", f)
	}
	gone := tc.create(tusMeta("filename", "gone.bin"), 10)
	tc.patch(gone, 0, []byte("12345"))
	webtest.Check(t, tc.do("DELETE", gone, nil, nil), webtest.Scenario{Status: 204})
	webtest.Check(t, tc.do("HEAD", gone, nil, nil), webtest.Scenario{Status: 404})
	webtest.Check(t, tc.patch(gone, 5, []byte("67890")), webtest.Scenario{Status: 404, Problem: "not_found"})
	if left, _ := os.ReadDir(filepath.Join(s.Data, "tus")); len(left) != 0 {
		t.Errorf("data files left: %v", left)
	}
}

func TestTusDeferredLength(t *testing.T) {
	t.Parallel()
	_, c, tc := newTus(t)
	up := tc.create(tusMeta("filename", "stream.log"), -1)
	webtest.Check(t, tc.do("HEAD", up, nil, nil), webtest.Scenario{Status: 200, Headers: map[string]string{"Upload-Defer-Length": "1", "Upload-Offset": "0"}})
	webtest.Check(t, tc.patch(up, 0, []byte("first,")), webtest.Scenario{Status: 204, Headers: map[string]string{"Upload-Offset": "6"}})
	webtest.Check(t, tc.patch(up, 6, []byte("second"), "Upload-Length", "3"), webtest.Scenario{Status: 400, Problem: "bad_request"})
	res := tc.patch(up, 6, []byte("second"), "Upload-Length", "12")
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Upload-Offset": "12", "Atrium-Upload-Status": "done"}})
	var f driveFile
	c.ok(200, "GET", "/api/v1/drive/"+res.Header.Get("Atrium-File-Id")+"/detail", nil, &f)
	if f.ContentHash != sha([]byte("first,second")) || f.SizeBytes != 12 || f.MimeGroup != "text" {
		t.Fatalf("file %+v", f)
	}
	// The length is declared once.
	webtest.Check(t, tc.patch(tc.create(tusMeta("filename", "x.bin"), 4), 0, []byte("ab"), "Upload-Length", "4"),
		webtest.Scenario{Status: 400, Problem: "bad_request"})
}

func TestTusQuota(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	ctx := context.Background()
	if _, err := s.Main.DB.Exec(ctx, `UPDATE plans SET quota_bytes = 100 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged() // credentials carry the quota
	tc.tok = s.Token("ann@example.test") // a fresh token sees the new quota
	c.tok = tc.tok
	// At creation, when the length is known.
	webtest.Check(t, tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": "101", "Upload-Metadata": tusMeta("filename", "big.bin")}, nil),
		webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	db := openRO(t, s)
	defer db.Close()
	var rows int
	if err := db.QueryRow(`SELECT COUNT(*) FROM drive_tus_uploads`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("a refused creation left %d uploads (%v)", rows, err)
	}
	// As bytes arrive: the quota filled up after creation.
	up := tc.create(tusMeta("filename", "late.bin"), 60)
	c.upload("filler.bin", "", "application/octet-stream", make([]byte, 50))
	webtest.Check(t, tc.patch(up, 0, make([]byte, 60)), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	if got := tc.offset(up); got != 0 {
		t.Fatalf("offset after refusal %d", got)
	}
	// Deferred length: bytes beyond the quota are refused; those within are kept.
	def := tc.create(tusMeta("filename", "stream.bin"), -1)
	webtest.Check(t, tc.patch(def, 0, make([]byte, 30)), webtest.Scenario{Status: 204})
	webtest.Check(t, tc.patch(def, 30, make([]byte, 40)), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	if got := tc.offset(def); got != 50 {
		t.Fatalf("offset after the quota %d, want 50", got)
	}
	webtest.Check(t, tc.patch(def, 50, nil, "Upload-Length", "60"), webtest.Scenario{Status: 507, Problem: "quota_exceeded"})
	res := tc.patch(def, 50, nil, "Upload-Length", "50")
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	// The upload the quota refused stays resumable: with room again it completes.
	if _, err := s.Main.DB.Exec(ctx, `UPDATE plans SET quota_bytes = 1000 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged()
	tc.tok = s.Token("ann@example.test")
	webtest.Check(t, tc.patch(up, 0, make([]byte, 60)), webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
}

func TestTusConflictResolve(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	old := []byte("the original")
	orig := c.upload("dup.txt", "", "text/plain", old)
	mine := []byte("the uploaded one")

	conflict := func(content []byte) string {
		t.Helper()
		up := tc.create(tusMeta("filename", "DUP.txt"), int64(len(content)))
		res := tc.patch(up, 0, content)
		webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "conflict", "Atrium-File-Id": ""}})
		webtest.Check(t, tc.do("HEAD", up, nil, nil), webtest.Scenario{Status: 200, Headers: map[string]string{"Atrium-Upload-Status": "conflict"}})
		return strings.TrimPrefix(up, "/api/v1/drive/tus/")
	}
	resolve := func(id, strategy string) (string, driveFile) {
		t.Helper()
		var r struct {
			Strategy string    `json:"strategy"`
			File     driveFile `json:"file"`
		}
		c.ok(200, "POST", "/api/v1/drive/tus/"+id+"/resolve?strategy="+strategy, nil, &r)
		return r.Strategy, r.File
	}

	// skip: the upload goes, the existing file stays and is returned.
	id := conflict(mine)
	if l := c.list("/api/v1/drive/browse"); l.Total != 1 {
		t.Fatalf("conflicting upload visible: %v", names(l))
	}
	other := s.Bootstrap("Drive Org", "bob@example.test", "member")
	s.Run(t, []webtest.Scenario{
		{Name: "bad strategy", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/" + id + "/resolve?strategy=merge", Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "no strategy", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/" + id + "/resolve", Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "foreign", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/" + id + "/resolve?strategy=skip", Token: other.Token}, Status: 404, Problem: "not_found"},
		{Name: "read scope", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/" + id + "/resolve?strategy=skip", Token: s.Token("ann@example.test", "drive:read")}, Status: 403, Problem: "insufficient_scope"},
	})
	st, f := resolve(id, "skip")
	if st != "skip" || f.ID != orig.ID || f.Version != 1 || f.ContentHash != sha(old) {
		t.Fatalf("skip → %s %+v", st, f)
	}
	webtest.Check(t, c.do("POST", "/api/v1/drive/tus/"+id+"/resolve?strategy=skip", nil), webtest.Scenario{Status: 409, Problem: "conflict"})

	// rename: a new file "dup (1).txt".
	st, f = resolve(conflict(mine), "rename")
	if st != "rename" || f.Name != "DUP (1).txt" || f.ID == orig.ID || f.ContentHash != sha(mine) || f.Status != "active" {
		t.Fatalf("rename → %s %+v", st, f)
	}
	if ev := tusEvents(t, s, f.ID); len(ev) != 1 || ev[0] != "drive.file.created" {
		t.Fatalf("rename events %v", ev)
	}

	// overwrite: a new version of the existing file. Its blob is referenced while
	// the upload waits, even by content the collector is about to delete.
	recycled := []byte("bytes of a deleted file")
	del := c.upload("deleted.txt", "", "text/plain", recycled)
	c.ok(204, "DELETE", "/api/v1/drive/"+del.ID, nil, nil)
	id = conflict(recycled)
	s.Clock.Advance(2 * time.Hour)
	if _, err := s.Main.Drive.Maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, f = resolve(id, "overwrite")
	if st != "overwrite" || f.ID != orig.ID || f.Version != 2 || f.ContentHash != sha(recycled) {
		t.Fatalf("overwrite → %s %+v", st, f)
	}
	if got := c.download(orig.ID); !bytes.Equal(got, recycled) {
		t.Fatalf("overwritten content %q", got)
	}

	// Not in conflict: an upload in progress, and a done one.
	up := tc.create(tusMeta("filename", "fresh.txt"), 4)
	webtest.Check(t, c.do("POST", "/api/v1/drive/tus/"+strings.TrimPrefix(up, "/api/v1/drive/tus/")+"/resolve?strategy=rename", nil),
		webtest.Scenario{Status: 409, Problem: "conflict"})
	res := tc.patch(up, 0, []byte("abcd"))
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	webtest.Check(t, c.do("POST", "/api/v1/drive/tus/"+strings.TrimPrefix(up, "/api/v1/drive/tus/")+"/resolve?strategy=rename", nil),
		webtest.Scenario{Status: 409, Problem: "conflict"})

	// The conflicting item went meanwhile: the upload takes its own name.
	id = conflict([]byte("late"))
	c.ok(204, "DELETE", "/api/v1/drive/"+orig.ID, nil, nil)
	if _, f = resolve(id, "skip"); f.Name != "DUP.txt" || f.ContentHash != sha([]byte("late")) {
		t.Fatalf("resolve after the conflict went: %+v", f)
	}
}

func TestTusExpiry(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	up := tc.create(tusMeta("filename", "abandoned.bin"), 100)
	tc.patch(up, 0, make([]byte, 40))
	waiting := tc.create(tusMeta("filename", "waiting.bin"), 10)
	s.Clock.Advance(20 * time.Hour)
	tc.patch(waiting, 0, make([]byte, 5)) // activity moves the expiry
	c.upload("clash.txt", "", "text/plain", []byte("x"))
	conflicted := tc.upload("clash.txt", "", []byte("conflicting bytes"))
	webtest.Check(t, conflicted, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "conflict"}})

	s.Clock.Advance(5 * time.Hour)
	n, err := s.Main.Tus.Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want 1", n, err)
	}
	webtest.Check(t, tc.do("HEAD", up, nil, nil), webtest.Scenario{Status: 404})
	if got := tc.offset(waiting); got != 5 {
		t.Fatalf("active upload offset %d", got)
	}
	if _, err := os.Stat(filepath.Join(s.Data, "tus", strings.TrimPrefix(up, "/api/v1/drive/tus/"))); !os.IsNotExist(err) {
		t.Fatalf("expired upload's bytes kept: %v", err)
	}
	// Past 24 h the conflict goes too, and its blob after the collector's grace.
	s.Clock.Advance(20 * time.Hour)
	if n, err := s.Main.Tus.Sweep(context.Background()); err != nil || n != 2 {
		t.Fatalf("second sweep: %d %v, want 2", n, err)
	}
	s.Clock.Advance(2 * time.Hour)
	done, err := s.Main.Drive.Maintain(context.Background())
	if err != nil || done["blobs_deleted"] != 1 {
		t.Fatalf("maintenance %v %v: want the conflict's blob deleted", done, err)
	}
	if left, _ := os.ReadDir(filepath.Join(s.Data, "tus")); len(left) != 0 {
		t.Errorf("data files left: %v", left)
	}
}

func TestTusResumeAfterRestart(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	content := make([]byte, 3<<20+123)
	for i := range content {
		content[i] = byte(i * 7 % 251)
	}
	up := tc.create(tusMeta("filename", "big.bin"), int64(len(content)))
	webtest.Check(t, tc.patch(up, 0, content[:1<<20]), webtest.Scenario{Status: 204})
	dir := s.Data
	s.Stop()

	s2 := webtest.Start(t, dir)
	tc2 := tusClient{t: t, s: s2, tok: c.tok}
	off := tc2.offset(up)
	if off != 1<<20 {
		t.Fatalf("offset after restart %d", off)
	}
	webtest.Check(t, tc2.patch(up, off, content[off:2<<20]), webtest.Scenario{Status: 204})
	res := tc2.patch(up, 2<<20, content[2<<20:])
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	c2 := driveClient{t: t, s: s2, tok: c.tok}
	var f driveFile
	c2.ok(200, "GET", "/api/v1/drive/"+res.Header.Get("Atrium-File-Id")+"/detail", nil, &f)
	if f.ContentHash != sha(content) || f.SizeBytes != int64(len(content)) {
		t.Fatalf("file %+v, want %s", f, sha(content))
	}
	if got := c2.download(f.ID); !bytes.Equal(got, content) {
		t.Fatal(fmt.Sprintf("content differs (%d bytes)", len(got)))
	}
}

// A kill between moving the finished bytes into the blob store and committing
// the upload leaves the row at its full length with no data file: the next
// request on the upload completes it from the stored blob (found by the
// crash suite, interop/suites/90-crash.sh).
func TestTusCompletesAfterCrashBetweenAdoptAndCommit(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	content := bytes.Repeat([]byte("crash between adopt and commit\n"), 40000)
	up := tc.create(tusMeta("filename", "adopted.bin"), int64(len(content)))
	webtest.Check(t, tc.patch(up, 0, content[:1<<20]), webtest.Scenario{Status: 204})
	// What finish leaves when the process dies right after Adopt: the hash
	// state and offset of the whole content recorded, the bytes in the store
	// (on the disk or in the bucket) and no data file.
	if _, err := s.Main.Blobs.Put(context.Background(), bytes.NewReader(content), 0); err != nil {
		t.Fatal(err)
	}
	dir := s.Data
	s.Stop()

	id := strings.TrimPrefix(up, "/api/v1/drive/tus/")
	h := sha256.New()
	h.Write(content)
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	db := webtest.OpenDatabase(t, dir)
	if _, err := db.Exec(context.Background(), `UPDATE drive_tus_uploads SET upload_offset = ?, hash_state = ? WHERE id = ?`, len(content), state, id); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// In a bucket, the parts stay until the commit: the blob is found stored
	// and they are not read again.
	if err := os.Remove(filepath.Join(dir, "tus", id)); err != nil && !(webtest.S3(dir) && os.IsNotExist(err)) {
		t.Fatal(err)
	}

	s2 := webtest.Start(t, dir)
	tc2 := tusClient{t: t, s: s2, tok: c.tok}
	res := tc2.do("HEAD", up, nil, nil)
	webtest.Check(t, res, webtest.Scenario{Status: 200, Headers: map[string]string{
		"Upload-Offset": strconv.Itoa(len(content)), "Atrium-Upload-Status": "done"}})
	c2 := driveClient{t: t, s: s2, tok: c.tok}
	var f driveFile
	c2.ok(200, "GET", "/api/v1/drive/"+res.Header.Get("Atrium-File-Id")+"/detail", nil, &f)
	if f.ContentHash != "sha256:"+sum || f.Name != "adopted.bin" {
		t.Fatalf("file %+v, want sha256:%s", f, sum)
	}
	if got := c2.download(f.ID); !bytes.Equal(got, content) {
		t.Fatalf("content differs (%d bytes)", len(got))
	}
}

// A stop between the upload's row and its empty data file leaves an upload at
// offset 0 with no file: its first PATCH creates the file and goes on.
func TestTusResumesWithoutDataFileAtOffsetZero(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	// Larger than a small upload, which has no data file before its first PATCH.
	content := bytes.Repeat([]byte("created, then the server stopped before the data file\n"), 2000)
	up := tc.create(tusMeta("filename", "early.txt"), int64(len(content)))
	dir := s.Data
	s.Stop()
	id := strings.TrimPrefix(up, "/api/v1/drive/tus/")
	// In a bucket, an upload has no bytes anywhere before its first PATCH.
	if err := os.Remove(filepath.Join(dir, "tus", id)); err != nil && !(webtest.S3(dir) && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	s2 := webtest.Start(t, dir)
	tc2 := tusClient{t: t, s: s2, tok: c.tok}
	webtest.Check(t, tc2.do("HEAD", up, nil, nil), webtest.Scenario{Status: 200, Headers: map[string]string{"Upload-Offset": "0"}})
	res := tc2.patch(up, 0, content)
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Upload-Offset": strconv.Itoa(len(content))}})
	c2 := driveClient{t: t, s: s2, tok: c.tok}
	if got := c2.download(res.Header.Get("Atrium-File-Id")); !bytes.Equal(got, content) {
		t.Fatalf("content %q", got)
	}
}

// An upload's first request after its creation reads it as created, from
// memory (drive.Uploads.TusUpload), without a read of the database: it still
// answers as the database would, whoever asks and whatever came between.
func TestTusFirstRequestAfterCreation(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	other := s.Bootstrap("Drive Org", "bob@example.test", "member")
	content := []byte("0123456789")
	cases := []struct {
		name  string
		steps func(t *testing.T, up string)
	}{
		{"another user's HEAD first: not found, and the owner's PATCH then completes it", func(t *testing.T, up string) {
			webtest.Check(t, s.Do(webtest.Request{Method: "HEAD", Path: up, Token: other.Token, Header: map[string]string{"Tus-Resumable": "1.0.0"}}),
				webtest.Scenario{Status: 404})
			webtest.Check(t, tc.patch(up, 0, content), webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
		}},
		{"another user's PATCH first: not found, nothing stored", func(t *testing.T, up string) {
			webtest.Check(t, s.Do(webtest.Request{Method: "PATCH", Path: up, Token: other.Token, Body: content, Header: map[string]string{
				"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}}),
				webtest.Scenario{Status: 404, Problem: "not_found"})
			if got := tc.offset(up); got != 0 {
				t.Fatalf("offset %d after another user's PATCH", got)
			}
		}},
		{"a second PATCH of a completed upload: the offset has moved on", func(t *testing.T, up string) {
			webtest.Check(t, tc.patch(up, 0, content), webtest.Scenario{Status: 204})
			webtest.Check(t, tc.patch(up, 0, content), webtest.Scenario{Status: 409, Problem: "conflict"})
			webtest.Check(t, tc.do("HEAD", up, nil, nil), webtest.Scenario{Status: 200, Headers: map[string]string{
				"Upload-Offset": "10", "Atrium-Upload-Status": "done"}})
		}},
		{"terminated before its first PATCH: gone", func(t *testing.T, up string) {
			webtest.Check(t, tc.do("DELETE", up, nil, nil), webtest.Scenario{Status: 204})
			webtest.Check(t, tc.patch(up, 0, content), webtest.Scenario{Status: 404, Problem: "not_found"})
		}},
		{"a HEAD first, then the PATCH", func(t *testing.T, up string) {
			webtest.Check(t, tc.do("HEAD", up, nil, nil), webtest.Scenario{Status: 200, Headers: map[string]string{"Upload-Offset": "0"}})
			webtest.Check(t, tc.patch(up, 0, content), webtest.Scenario{Status: 204, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
		}},
	}
	for i, tcase := range cases {
		t.Run(tcase.name, func(t *testing.T) {
			tcase.steps(t, tc.create(tusMeta("filename", fmt.Sprintf("first-%d.txt", i)), int64(len(content))))
		})
	}
	// An empty upload completes at its creation: its first HEAD says so.
	res := tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": "0", "Upload-Metadata": tusMeta("filename", "first-empty.bin")}, nil)
	webtest.Check(t, res, webtest.Scenario{Status: 201, Headers: map[string]string{"Atrium-Upload-Status": "done"}})
	id := res.Header.Get("Atrium-File-Id")
	webtest.Check(t, tc.do("HEAD", strings.TrimPrefix(res.Header.Get("Location"), s.URL), nil, nil), webtest.Scenario{Status: 200,
		Headers: map[string]string{"Upload-Offset": "0", "Atrium-Upload-Status": "done", "Atrium-File-Id": id}})
	var f driveFile
	c.ok(200, "GET", "/api/v1/drive/"+id+"/detail", nil, &f)
	if f.SizeBytes != 0 || f.Status != "active" {
		t.Fatalf("empty file %+v", f)
	}
}

// A creation that carries a small upload's whole content (creation-with-upload,
// as the web app and tus-js-client's uploadDataDuringCreation send it) is
// created complete in one transaction: the file, or the conflict state, with
// the upload. A refused one leaves nothing; a creation with only the first
// part of the bytes, or none, stays a resumable upload.
func TestTusCreationWithWholeContent(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	taken := c.upload("taken.txt", "", "text/plain", []byte("the original"))
	db := openRO(t, s)
	defer db.Close()
	count := func(table string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	post := func(name, parent string, length int, body []byte) *webtest.Response {
		t.Helper()
		meta := tusMeta("filename", name)
		if parent != "" {
			meta += "," + tusMeta("parent_id", parent)
		}
		return tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": strconv.Itoa(length), "Upload-Metadata": meta,
			"Content-Type": "application/offset+octet-stream"}, body)
	}
	cases := []struct {
		name    string
		file    string
		parent  string
		length  int
		body    string
		status  int
		problem string
		headers map[string]string
		uploads int // uploads it leaves
		files   int // files it adds
	}{
		{name: "a free name", file: "new.txt", length: 5, body: "hello", status: 201,
			headers: map[string]string{"Upload-Offset": "5", "Atrium-Upload-Status": "done"}, uploads: 1, files: 1},
		{name: "a taken name", file: "TAKEN.txt", length: 7, body: "mine!!!", status: 201,
			headers: map[string]string{"Upload-Offset": "7", "Atrium-Upload-Status": "conflict", "Atrium-File-Id": ""}, uploads: 1},
		{name: "a missing folder", file: "lost.txt", parent: "no-such-folder", length: 4, body: "lost", status: 404, problem: "not_found"},
		{name: "over the quota", file: "big.bin", length: 9000, body: strings.Repeat("q", 9000), status: 507, problem: "quota_exceeded"},
		{name: "the first part only", file: "part.txt", length: 10, body: "first", status: 201,
			headers: map[string]string{"Upload-Offset": "5"}, uploads: 1},
	}
	if _, err := s.Main.DB.Exec(context.Background(), `UPDATE plans SET quota_bytes = 8192 WHERE slug = 'enterprise'`); err != nil {
		t.Fatal(err)
	}
	s.Main.Identity.CredentialsChanged()
	tc.tok = s.Token("ann@example.test")
	c.tok = tc.tok
	c.list("/api/v1/drive/browse") // the token's first use is recorded: a write of its own
	for _, k := range cases {
		uploads, files, w0 := count("drive_tus_uploads"), count("drive_files"), s.Main.DB.WriteStats()
		res := post(k.file, k.parent, k.length, []byte(k.body))
		// The file and the complete upload are one write.
		if w1 := s.Main.DB.WriteStats(); k.name == "a free name" && !s.Main.DB.IsPostgres() && w1.Transactions-w0.Transactions != 1 {
			t.Errorf("%s: %d write transactions, want 1", k.name, w1.Transactions-w0.Transactions)
		}
		webtest.Check(t, res, webtest.Scenario{Name: k.name, Status: k.status, Problem: k.problem, Headers: k.headers})
		if got := count("drive_tus_uploads") - uploads; got != k.uploads {
			t.Errorf("%s: %d uploads more, want %d", k.name, got, k.uploads)
		}
		if got := count("drive_files") - files; got != k.files {
			t.Errorf("%s: %d files more, want %d", k.name, got, k.files)
		}
		up := strings.TrimPrefix(res.Header.Get("Location"), s.URL)
		switch k.name {
		case "a free name":
			id := res.Header.Get("Atrium-File-Id")
			if got := c.download(id); string(got) != k.body {
				t.Errorf("content %q", got)
			}
			if ev := tusEvents(t, s, id); len(ev) != 1 || ev[0] != "drive.file.created" {
				t.Errorf("events %v", ev)
			}
			webtest.Check(t, tc.do("HEAD", up, nil, nil), webtest.Scenario{Status: 200, Headers: map[string]string{
				"Upload-Offset": "5", "Upload-Length": "5", "Atrium-Upload-Status": "done", "Atrium-File-Id": id}})
		case "a taken name":
			var r struct {
				File driveFile `json:"file"`
			}
			c.ok(200, "POST", "/api/v1/drive/tus/"+strings.TrimPrefix(up, "/api/v1/drive/tus/")+"/resolve?strategy=overwrite", nil, &r)
			if r.File.ID != taken.ID || r.File.Version != 2 || string(c.download(taken.ID)) != k.body {
				t.Errorf("overwrite after the conflict: %+v", r.File)
			}
		case "the first part only":
			res := tc.patch(up, 5, []byte("later"))
			webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Upload-Offset": "10", "Atrium-Upload-Status": "done"}})
			if got := c.download(res.Header.Get("Atrium-File-Id")); string(got) != "firstlater" {
				t.Errorf("content %q", got)
			}
		}
	}
	// A body that ends before its length creates nothing.
	uploads := count("drive_tus_uploads")
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/drive/tus/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 10\r\n"+
		"Upload-Metadata: %s\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: 10\r\n\r\nshort", tc.tok, tusMeta("filename", "cut.txt"))
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, _ := bufio.NewReader(conn).ReadString('\n'); !strings.Contains(line, " 400 ") {
		t.Errorf("a cut body: %q", line)
	}
	if got := count("drive_tus_uploads"); got != uploads {
		t.Errorf("a cut body left %d uploads more", got-uploads)
	}
	if left, _ := os.ReadDir(filepath.Join(s.Data, "tus")); len(left) != 0 {
		t.Errorf("data files left: %v", left)
	}
}
