package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
)

// rawDo sends a request exactly as written (no client-side path cleaning or
// escaping) and returns the status and body.
func rawDo(t *testing.T, s *webtest.Server, method, target string, header map[string]string, body string) (int, string) {
	t.Helper()
	c := rawConn(t, s.Listener.Addr().String(), "")
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, s.Listener.Addr())
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	rb, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(rb)
}

// filesUnder lists the regular files below dir (relative paths), sorted.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// Path traversal through every door: dot segments, encoded slashes and dots,
// NUL, backslashes and Unicode lookalikes of "/" never reach a file outside the
// drive's own store, never read one (no /etc/passwd, no database, no key), never
// 5xx, and never create a file outside the data directory.
func TestPathTraversal(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	data := filepath.Join(parent, "data")
	s := webtest.Start(t, data)
	ann := s.Bootstrap("Traversal Org", "ann@example.test", "admin")
	auth := map[string]string{"Authorization": "Bearer " + ann.Token}
	basic := map[string]string{"Authorization": basicHeader(ann.Email, ann.AppPassword)}
	c := driveClient{t: t, s: s, tok: ann.Token}
	docs := c.folder("Docs", "")
	up := c.folder("Up", "")
	c.ok(201, "PUT", "/api/v1/webdav/Docs/inside.txt", "inside", nil)

	// What must never appear in an answer: a system file, the database, a key.
	secrets := []string{"root:x:0:0", "SQLite format 3", "presign_key"}
	type req struct {
		method, target string
		header         map[string]string
		body           string
	}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	dest := "http://" + s.Listener.Addr().String()
	cases := []req{
		// REST
		{"GET", "/api/v1/drive/..%2f..%2fatrium.db", auth, ""},
		{"GET", "/api/v1/drive/../../../etc/passwd", auth, ""},
		{"GET", "/api/v1/drive/%2e%2e/download", auth, ""},
		{"GET", "/api/v1/docs/../../../../etc/passwd", nil, ""},
		{"GET", "/api/v1/docs/..%2f..%2f..%2fgo.mod", nil, ""},
		{"GET", "/problems/..%2f..%2fetc%2fpasswd", nil, ""},
		// presigned blobs
		{"GET", "/blob/objects/../../atrium.db", nil, ""},
		{"GET", "/blob/objects/..%2f..%2fatrium.db", nil, ""},
		{"PUT", "/blob/uploads/..%2f..%2f..%2fescape", nil, "x"},
		// WebDAV
		{"GET", "/api/v1/webdav/../../../../etc/passwd", basic, ""},
		{"GET", "/api/v1/webdav/..%2f..%2f..%2f..%2fetc%2fpasswd", basic, ""},
		{"GET", "/api/v1/webdav/%2e%2e/%2e%2e/atrium.db", basic, ""},
		{"GET", "/webdav/Docs/..%5c..%5c..%5cetc%5cpasswd", basic, ""},
		{"PROPFIND", "/api/v1/webdav/Docs/../../", with(basic, "Depth", "1"), ""},
		{"PUT", "/api/v1/webdav/..%2f..%2fescape-put.txt", basic, "x"},
		{"PUT", "/api/v1/webdav/Docs/a%00b.txt", basic, "x"},
		{"PUT", "/api/v1/webdav/Docs/../../../escape-dots.txt", basic, "x"},
		{"MKCOL", "/api/v1/webdav/%2e%2e", basic, ""},
		{"MOVE", "/api/v1/webdav/Docs/inside.txt", with(basic, "Destination", dest+"/api/v1/webdav/../../../tmp/escape-move.txt"), ""},
		{"COPY", "/api/v1/webdav/Docs/inside.txt", with(basic, "Destination", dest+"/api/v1/webdav/%2e%2e/%2e%2e/escape-copy.txt"), ""},
		{"COPY", "/api/v1/webdav/Docs/inside.txt", with(basic, "Destination", "file:///etc/passwd"), ""},
		// CardDAV and CalDAV
		{"GET", "/dav/addressbooks/../../../etc/passwd", basic, ""},
		{"PROPFIND", "/dav/calendars/%2e%2e/%2e%2e/", with(basic, "Depth", "1"), ""},
		{"PUT", "/dav/addressbooks/" + ann.Email + "/..%2f..%2fescape.vcf", basic, "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:x\r\nEND:VCARD\r\n"},
		// TUS
		{"HEAD", "/api/v1/drive/tus/..%2f..%2fatrium.db", with(auth, "Tus-Resumable", "1.0.0"), ""},
		{"PATCH", "/api/v1/drive/tus/../../escape", with(auth, "Tus-Resumable", "1.0.0", "Upload-Offset", "0", "Content-Type", "application/offset+octet-stream"), "x"},
		{"POST", "/api/v1/drive/tus/", with(auth, "Tus-Resumable", "1.0.0", "Upload-Length", "1", "Upload-Metadata", "filename Li4vLi4vZXRjL3Bhc3N3ZA=="), ""},
		// shared links and WOPI
		{"GET", "/s/..%2f..%2fetc%2fpasswd", nil, ""},
		{"GET", "/wopi/files/..%2f..%2fatrium.db/contents?access_token=x", nil, ""},
		{"GET", "/wopi/files/../../../etc/passwd", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			st, body := rawDo(t, s, tc.method, tc.target, tc.header, tc.body)
			// 502: RFC 4918's answer to a Destination on another server.
			if st >= 500 && !(st == http.StatusBadGateway && tc.header["Destination"] != "") {
				t.Fatalf("%d %s", st, body)
			}
			for _, sec := range secrets {
				if strings.Contains(body, sec) {
					t.Fatalf("%d: the answer holds %q", st, sec)
				}
			}
			if st < 400 {
				t.Fatalf("not refused: %d %.200s", st, body)
			}
		})
	}

	// Names: what would be a separator or a dot segment on disk is refused;
	// lookalikes and backslashes are plain characters of a name that stays
	// where it was put.
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"..", false}, {".", false}, {"../escape", false}, {"a/b", false}, {"a\x00b", false}, {"a\nb", false},
		{"..\\..\\escape", true}, {"..／escape", true}, {"..∕escape", true}, {"%2e%2e%2fescape", true},
	} {
		res := c.do("POST", "/api/v1/drive/folders", map[string]any{"name": tc.name, "parent_id": docs.ID})
		if tc.ok != (res.StatusCode == 201) || (!tc.ok && res.StatusCode != 422) {
			t.Errorf("folder %q: %d %s", tc.name, res.StatusCode, res.Body)
		}
		res = c.do("POST", "/api/v1/drive/upload", map[string]any{"name": tc.name, "size": 1, "parent_id": up.ID})
		if tc.ok != (res.StatusCode == 201) || (!tc.ok && res.StatusCode != 422) {
			t.Errorf("upload %q: %d %s", tc.name, res.StatusCode, res.Body)
		}
	}
	c.ok(422, "PATCH", "/api/v1/drive/"+docs.ID+"/rename", map[string]any{"name": "../../escape"}, nil)
	inDocs := map[string]bool{}
	for _, f := range c.list("/api/v1/drive/browse?folder_id=" + docs.ID + "&per_page=100").Items {
		inDocs[f.Name] = true
	}
	for _, n := range []string{"..\\..\\escape", "..／escape", "..∕escape", "%2e%2e%2fescape", "inside.txt"} {
		if !inDocs[n] {
			t.Errorf("%q is not in Docs: %v", n, inDocs)
		}
	}
	for _, f := range c.list("/api/v1/drive/browse?per_page=100").Items {
		if strings.Contains(f.Name, "escape") {
			t.Errorf("%q landed in the root folder", f.Name)
		}
	}

	// Nothing was written outside the data directory, and in it only what the
	// server keeps (database, blobs, index, uploads) — no file named after an
	// attempt.
	for _, f := range filesUnder(t, parent) {
		if !strings.HasPrefix(f, "data"+string(filepath.Separator)) {
			t.Errorf("a file outside the data directory: %s", f)
		}
		if strings.Contains(f, "escape") || strings.Contains(f, "passwd") {
			t.Errorf("a file named after an attempt: %s", f)
		}
	}
	if _, err := os.Stat("/tmp/escape-move.txt"); err == nil {
		t.Error("/tmp/escape-move.txt exists")
	}
}
