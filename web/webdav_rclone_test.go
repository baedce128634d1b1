package web_test

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
)

// rcloneProps is the PROPFIND body of rclone's webdav backend with the
// owncloud and nextcloud vendors (backend/webdav/webdav.go, owncloudProps).
const rcloneProps = `<?xml version="1.0"?>
<d:propfind  xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
 <d:prop>
  <d:displayname />
  <d:getlastmodified />
  <d:getcontentlength />
  <d:resourcetype />
  <oc:checksums />
  <oc:permissions />
 </d:prop>
</d:propfind>
`

// rclonePropset is rclone's SetModTime body with a checksum (owncloudPropsetWithChecksum).
const rclonePropset = `<?xml version="1.0" encoding="utf-8" ?>
<D:propertyupdate xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns">
 <D:set>
  <D:prop>
   <lastmodified xmlns="DAV:">%d</lastmodified>
   <oc:checksums>
	<oc:checksum>%s</oc:checksum>
   </oc:checksums>
  </D:prop>
 </D:set>
</D:propertyupdate>
`

func ocChecksums(content string) string {
	s1, m5 := sha1.Sum([]byte(content)), md5.Sum([]byte(content))
	return `<checksums xmlns="http://owncloud.org/ns"><checksum>SHA1:` + hex.EncodeToString(s1[:]) + " MD5:" + hex.EncodeToString(m5[:]) + `</checksum></checksums>`
}

func httpDate(unix int64) string { return time.Unix(unix, 0).UTC().Format(http.TimeFormat) }

// TestWebDAVOwncloudMtime: rclone's owncloud/nextcloud vendors keep a file's
// modification time with X-OC-Mtime on PUT and PROPPATCH of DAV:lastmodified;
// other clients with PROPPATCH of DAV:getlastmodified. The time is served as
// getlastmodified and Last-Modified; the REST updated_at stays the server's.
func TestWebDAVOwncloudMtime(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	const old = int64(1500000000) // 2017-07-14T02:40:00Z

	put := ann.want(201, "PUT", "/photo.jpg", map[string]string{"X-OC-Mtime": fmt.Sprint(old)}, "jpeg bytes")
	if got := put.Header.Get("X-OC-MTime"); got != "accepted" {
		t.Fatalf("X-OC-MTime %q, want accepted", got)
	}
	pf := ann.want(207, "PROPFIND", "/", map[string]string{"Depth": "1"}, rcloneProps)
	webtest.Check(t, pf, webtest.Scenario{Status: 207, Contains: []string{
		"<D:href>/api/v1/webdav/photo.jpg</D:href>", "<D:getlastmodified>" + httpDate(old) + "</D:getlastmodified>"}})
	if g := ann.want(200, "GET", "/photo.jpg", nil, nil); g.Header.Get("Last-Modified") != httpDate(old) {
		t.Errorf("Last-Modified %q, want %q", g.Header.Get("Last-Modified"), httpDate(old))
	}
	// REST updated_at is the server's time of the write.
	var listing struct {
		Items []struct {
			UpdatedAt time.Time `json:"updated_at"`
		} `json:"items"`
	}
	ann.rest.ok(200, "GET", "/api/v1/drive/browse", nil, &listing)
	if len(listing.Items) != 1 || time.Since(listing.Items[0].UpdatedAt) > time.Hour {
		t.Errorf("REST updated_at took the client's modification time: %+v", listing.Items)
	}

	// rclone's SetModTime: DAV:lastmodified in Unix seconds with a checksum.
	const older = int64(1400000000)
	pp := ann.want(207, "PROPPATCH", "/photo.jpg", nil, fmt.Sprintf(rclonePropset, older, "SHA1:0000000000000000000000000000000000000000"))
	webtest.Check(t, pp, webtest.Scenario{Status: 207, Contains: []string{"HTTP/1.1 200 OK"}, NotContains: []string{"HTTP/1.1 4", "HTTP/1.1 5"}})
	webtest.Check(t, ann.do("PROPFIND", "/photo.jpg", map[string]string{"Depth": "0"}, rcloneProps), webtest.Scenario{Status: 207,
		Contains:    []string{"<D:getlastmodified>" + httpDate(older) + "</D:getlastmodified>", ocChecksums("jpeg bytes")},
		NotContains: []string{"0000000000"}})

	// Other clients: DAV:getlastmodified as an HTTP date.
	ann.want(207, "PROPPATCH", "/photo.jpg", nil, `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>`+
		`<D:getlastmodified>Sun, 06 Nov 1994 08:49:37 GMT</D:getlastmodified></D:prop></D:set></D:propertyupdate>`)
	webtest.Check(t, ann.do("PROPFIND", "/photo.jpg", map[string]string{"Depth": "0"}, rcloneProps),
		webtest.Scenario{Status: 207, Contains: []string{"<D:getlastmodified>Sun, 06 Nov 1994 08:49:37 GMT</D:getlastmodified>"}})

	// A copy keeps the time; a rename too.
	ann.want(201, "COPY", "/photo.jpg", map[string]string{"Destination": "/api/v1/webdav/copy.jpg"}, nil)
	ann.want(201, "MOVE", "/copy.jpg", map[string]string{"Destination": "/api/v1/webdav/renamed.jpg"}, nil)
	webtest.Check(t, ann.do("PROPFIND", "/renamed.jpg", map[string]string{"Depth": "0"}, rcloneProps),
		webtest.Scenario{Status: 207, Contains: []string{"Sun, 06 Nov 1994 08:49:37 GMT"}})

	// New content without a time is modified now.
	ann.want(204, "PUT", "/photo.jpg", nil, "new jpeg bytes")
	if g := ann.want(200, "GET", "/photo.jpg", nil, nil); g.Header.Get("Last-Modified") == "Sun, 06 Nov 1994 08:49:37 GMT" {
		t.Errorf("a new version kept the old modification time")
	}

	s.Run(t, []webtest.Scenario{
		{Name: "X-OC-Mtime not a number", Request: davReq(ann, "PUT", "/bad.txt", map[string]string{"X-OC-Mtime": "yesterday"}, "x"),
			Status: 400, Problem: "validation_failed", Contains: []string{"X-OC-Mtime"}},
		{Name: "X-OC-Mtime out of range", Request: davReq(ann, "PUT", "/bad.txt", map[string]string{"X-OC-Mtime": "999999999999"}, "x"),
			Status: 400, Problem: "validation_failed"},
		{Name: "nothing stored", Request: davReq(ann, "GET", "/bad.txt", nil, nil), Status: 404},
		{Name: "PROPPATCH bad date", Request: davReq(ann, "PROPPATCH", "/photo.jpg", nil, `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>`+
			`<D:lastmodified>soon</D:lastmodified></D:prop></D:set></D:propertyupdate>`), Status: 207, Contains: []string{"409 Conflict"}},
	})
}

// TestWebDAVOwncloudChecksums: oc:checksums carries the SHA-1 and MD5 of the
// content, computed when it is written by every door that stores whole
// bodies, and by the resumable upload for a small content (its bytes are in
// hand when it completes); contents stored without them get them from
// maintenance, and a listing never reads blobs.
func TestWebDAVOwncloudChecksums(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	ann.want(201, "MKCOL", "/Docs", nil, nil)
	ann.want(201, "PUT", "/Docs/a.txt", nil, "alpha")
	docs := ann.rest.list("/api/v1/drive/browse").Items[0].ID
	ann.rest.upload("b.txt", docs, "text/plain", []byte("bravo"))
	ann.want(201, "PUT", "/Docs/empty.txt", nil, "")
	// A resumable upload's small content, completed by a PATCH and sent
	// whole with its creation: its bytes are all in hand at the end.
	tus := tusClient{t: t, s: s, tok: ann.rest.tok}
	if res := tus.upload("c.txt", docs, []byte("charlie")); res.StatusCode != 204 {
		t.Fatalf("tus PATCH: %d %s", res.StatusCode, res.Body)
	}
	if res := tus.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": "5", "Content-Type": "application/offset+octet-stream",
		"Upload-Metadata": tusMeta("filename", "d.txt") + "," + tusMeta("parent_id", docs)}, []byte("delta")); res.StatusCode != 201 {
		t.Fatalf("tus creation with its bytes: %d %s", res.StatusCode, res.Body)
	}

	l := ann.want(207, "PROPFIND", "/Docs/", map[string]string{"Depth": "1"}, rcloneProps)
	for _, c := range []string{"alpha", "bravo", "", "charlie", "delta"} {
		if !strings.Contains(string(l.Body), ocChecksums(c)) {
			t.Errorf("listing lacks the checksums of %q: %s", c, l.Body)
		}
	}
	// allprop does not carry them (on request only).
	if a := ann.want(207, "PROPFIND", "/Docs/a.txt", map[string]string{"Depth": "0"}, propfindAll); strings.Contains(string(a.Body), "checksum") {
		t.Errorf("allprop has checksums: %s", a.Body)
	}

	// Contents stored before digests were kept: no checksums (404 in the
	// listing) until maintenance fills them. A small content's are kept in
	// its row when it is written, others' in drive_digests.
	for _, q := range []string{`DELETE FROM drive_digests`, `UPDATE drive_small_blobs SET sha1 = NULL, md5 = NULL`} {
		if _, err := s.Main.DB.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	webtest.Check(t, ann.do("PROPFIND", "/Docs/a.txt", map[string]string{"Depth": "0"}, rcloneProps), webtest.Scenario{Status: 207,
		Contains: []string{`<checksums xmlns="http://owncloud.org/ns"/>`, "404 Not Found"}, NotContains: []string{"SHA1:"}})
	done, err := s.Main.Drive.Maintain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if done["digests_filled"] != 5 {
		t.Errorf("digests filled %d, want 5 (%v)", done["digests_filled"], done)
	}
	webtest.Check(t, ann.do("PROPFIND", "/Docs/a.txt", map[string]string{"Depth": "0"}, rcloneProps),
		webtest.Scenario{Status: 207, Contains: []string{ocChecksums("alpha")}})
}

// TestWebDAVSharedFolderReal: the virtual Shared with me folder has a real
// date and never hides a real item of that name.
func TestWebDAVSharedFolderReal(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	bob := newDavUser(t, s, "Dav Org", "bob@example.test", "member")
	rep := bob.rest.folder("Reports", "")
	share(t, s, bob, rep.ID, ann.creds.UserID, "view")

	root := ann.want(207, "PROPFIND", "/", map[string]string{"Depth": "1"}, propfindAll)
	body := string(root.Body)
	i := strings.Index(body, "<D:href>/api/v1/webdav/Shared%20with%20me/</D:href>")
	if i < 0 {
		t.Fatalf("no shared folder: %s", body)
	}
	entry := body[i : i+strings.Index(body[i:], "</D:response>")]
	year := fmt.Sprint(time.Now().UTC().Year())
	if !strings.Contains(entry, "<D:getlastmodified>") || !strings.Contains(entry, year+" ") || strings.Contains(entry, "1970") {
		t.Errorf("shared folder's date: %s", entry)
	}

	// A real folder of that name made over REST is shown; the virtual one
	// takes the next free name.
	real := ann.rest.folder("Shared with me", "")
	ann.rest.upload("mine.txt", real.ID, "text/plain", []byte("my own"))
	root = ann.want(207, "PROPFIND", "/", map[string]string{"Depth": "1"}, nil)
	for _, want := range []string{"/api/v1/webdav/Shared%20with%20me/", "/api/v1/webdav/Shared%20with%20me%20%281%29/"} {
		if !strings.Contains(string(root.Body), "<D:href>"+want+"</D:href>") {
			t.Errorf("root lacks %s: %s", want, root.Body)
		}
	}
	if g := ann.want(200, "GET", "/Shared%20with%20me/mine.txt", nil, nil); string(g.Body) != "my own" {
		t.Errorf("real file %q", g.Body)
	}
	ann.want(201, "PUT", "/Shared%20with%20me/more.txt", nil, "writable")
	webtest.Check(t, ann.do("PROPFIND", "/Shared%20with%20me%20%281%29/", map[string]string{"Depth": "1"}, nil),
		webtest.Scenario{Status: 207, Contains: []string{"/api/v1/webdav/Shared%20with%20me%20%281%29/Reports/"}})
	webtest.Check(t, ann.do("PUT", "/Shared%20with%20me%20%281%29/x.txt", nil, "x"), webtest.Scenario{Status: 403, Problem: "read_only"})
}

// TestWebDAVLimits: a token without a user is refused like elsewhere; a
// PROPFIND names a bounded number of properties.
func TestWebDAVLimits(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Dav Org", "ann@example.test", "admin")
	var sp struct{ ID string }
	ann.rest.ok(201, "POST", "/api/v1/developer/service-principals", map[string]any{"name": "robot", "scopes": []string{"drive:read"}}, &sp)
	var spTok struct{ Token string }
	ann.rest.ok(201, "POST", "/api/v1/developer/service-principals/"+sp.ID+"/tokens", map[string]any{}, &spTok)

	props := func(n int) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:x="urn:x"><D:prop>`)
		for i := range n {
			fmt.Fprintf(&b, "<x:p%d/>", i)
		}
		b.WriteString("</D:prop></D:propfind>")
		return b.String()
	}
	sp0 := func(path string) webtest.Request {
		return webtest.Request{Method: "PROPFIND", Path: path, Token: spTok.Token, Header: map[string]string{"Depth": "1"}}
	}
	s.Run(t, []webtest.Scenario{
		{Name: "unbound root", Request: sp0("/webdav/"), Status: 403, Problem: "no_bound_user"},
		{Name: "unbound root, long prefix", Request: sp0("/api/v1/webdav/"), Status: 403, Problem: "no_bound_user"},
		{Name: "unbound shared folder", Request: sp0("/webdav/Shared%20with%20me/"), Status: 403, Problem: "no_bound_user"},
		{Name: "256 properties", Request: davReq(ann, "PROPFIND", "/", map[string]string{"Depth": "0"}, props(256)), Status: 207},
		{Name: "257 properties", Request: davReq(ann, "PROPFIND", "/", map[string]string{"Depth": "0"}, props(257)), Status: 400,
			Problem: "bad_request", Contains: []string{"at most 256 properties"}},
		{Name: "30000 properties", Request: davReq(ann, "PROPFIND", "/", map[string]string{"Depth": "1"}, props(30000)), Status: 400, Problem: "bad_request"},
	})
}
