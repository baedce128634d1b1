package web_test

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"atrium/webtest"
)

// A PUT with OC-Checksum (ownCloud and Nextcloud clients, rclone's owncloud
// vendor) is verified: content that changed on the way is refused with 400
// and nothing is stored, neither a new file nor a new version; an algorithm
// we do not compute is not verified; a malformed header is a 400 naming it.
func TestWebDAVPutChecksum(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Sum Org", "ann@example.test", "admin")
	ann.want(201, "PUT", "/kept.txt", nil, "first")
	body := "the content as sent"
	hexOf := func(b []byte) string { return hex.EncodeToString(b) }
	s1, m5, s256 := sha1.Sum([]byte(body)), md5.Sum([]byte(body)), sha256.Sum256([]byte(body))
	other := sha1.Sum([]byte("something else"))
	cases := []struct {
		name, header string
		path         string
		status       int
		problem      string
	}{
		{"SHA1 matches", "SHA1:" + hexOf(s1[:]), "/a.txt", 201, ""},
		{"MD5 matches, upper-case hex", "MD5:" + strings.ToUpper(hexOf(m5[:])), "/b.txt", 201, ""},
		{"SHA256 matches", "sha256:" + hexOf(s256[:]), "/c.txt", 201, ""},
		{"SHA1 differs: new file", "SHA1:" + hexOf(other[:]), "/d.txt", 400, "bad_request"},
		{"SHA1 differs: new version", "SHA1:" + hexOf(other[:]), "/kept.txt", 400, "bad_request"},
		{"ADLER32 is not verified", "ADLER32:0a1b2c3d", "/e.txt", 201, ""},
		{"no algorithm", hexOf(s1[:]), "/f.txt", 400, "validation_failed"},
		{"short digest", "SHA1:abc", "/g.txt", 400, "validation_failed"},
	}
	for _, c := range cases {
		res := s.Do(davReq(ann, "PUT", c.path, map[string]string{"OC-Checksum": c.header}, body))
		webtest.Check(t, res, webtest.Scenario{Name: c.name, Status: c.status, Problem: c.problem})
		if c.status == 400 && c.path != "/kept.txt" {
			ann.want(404, "GET", c.path, nil, nil)
		}
	}
	if g := ann.want(200, "GET", "/kept.txt", nil, nil); string(g.Body) != "first" {
		t.Fatalf("kept.txt holds %q", g.Body)
	}
	if g := ann.want(200, "GET", "/a.txt", nil, nil); string(g.Body) != body {
		t.Fatalf("a.txt holds %q", g.Body)
	}
	kept := ""
	for _, it := range ann.rest.list("/api/v1/drive/browse").Items {
		if it.Name == "kept.txt" {
			kept = it.ID
		}
	}
	var versions []struct{}
	ann.rest.ok(200, "GET", "/api/v1/drive/"+kept+"/versions", nil, &versions)
	if len(versions) != 1 {
		t.Fatalf("kept.txt has %d versions, want 1", len(versions))
	}
}
