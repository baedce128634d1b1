package web_test

import (
	"net/url"
	"strings"
	"testing"

	"atrium/webtest"
)

// Names are kept in Unicode NFC at every door: "Café" composed (NFC) and
// decomposed (NFD, what macOS sends) are one name, stored composed, and a path
// in either form finds the item. Bidirectional control characters, which can
// make a name display as another, are refused with a 422 naming the character.
func TestDriveNamesNFC(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	tc := tusClient{t: t, s: s, tok: c.tok}
	ann := s.Bootstrap("Drive Org", "ann@example.test", "admin") // fresh app password
	const (
		cafeNFC   = "Caf\u00e9"
		cafeNFD   = "Cafe\u0301"
		resumeNFC = "r\u00e9sum\u00e9.txt"
		resumeNFD = "re\u0301sume\u0301.txt"
	)
	dav := func(method string, segs []string, body string) *webtest.Response {
		esc := make([]string, len(segs))
		for i, s := range segs {
			esc[i] = url.PathEscape(s)
		}
		r := webtest.Request{Method: method, Path: "/webdav/" + strings.Join(esc, "/"), BasicID: ann.Email, BasicPW: ann.AppPassword}
		if body != "" {
			r.Body, r.Header = body, map[string]string{"Content-Type": "text/plain"}
		}
		return s.Do(r)
	}

	// REST: the folder is created from its NFD name and stored in NFC; the NFC
	// name is then taken.
	folder := c.folder(cafeNFD, "")
	if folder.Name != cafeNFC {
		t.Fatalf("folder name %q, want NFC %q", folder.Name, cafeNFC)
	}
	webtest.Check(t, c.do("POST", "/api/v1/drive/folders", map[string]any{"name": cafeNFC}), webtest.Scenario{Status: 409, Problem: "conflict"})

	// WebDAV: a PUT through the NFD path lands in the folder, named in NFC; a GET
	// in either form finds it; a PUT in the other form replaces it.
	webtest.Check(t, dav("PUT", []string{cafeNFD, resumeNFD}, "one"), webtest.Scenario{Status: 201})
	for _, segs := range [][]string{{cafeNFC, resumeNFC}, {cafeNFD, resumeNFD}, {cafeNFC, resumeNFD}} {
		res := dav("GET", segs, "")
		if res.StatusCode != 200 || string(res.Body) != "one" {
			t.Fatalf("GET %q: %d %s", segs, res.StatusCode, res.Body)
		}
	}
	webtest.Check(t, dav("PUT", []string{cafeNFC, resumeNFC}, "two"), webtest.Scenario{Status: 204})

	// TUS: an NFD filename is stored in NFC, beside the same name from REST.
	webtest.Check(t, tc.upload("tus-"+resumeNFD, folder.ID, []byte("three")), webtest.Scenario{Status: 204})
	l := c.list("/api/v1/drive/browse/" + folder.ID)
	if len(l.Items) != 2 {
		t.Fatalf("items %s, want two", names(l))
	}
	for _, it := range l.Items {
		if it.Name != resumeNFC && it.Name != "tus-"+resumeNFC {
			t.Errorf("item name %q is not NFC", it.Name)
		}
	}
	// Renaming a sibling to the other form of a taken name is a conflict.
	other := c.folder("other", "")
	webtest.Check(t, c.do("PATCH", "/api/v1/drive/"+other.ID+"/rename", map[string]any{"name": cafeNFD}), webtest.Scenario{Status: 409, Problem: "conflict"})
}

func TestDriveNamesBidiControls(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	tc := tusClient{t: t, s: s, tok: c.tok}
	ann := s.Bootstrap("Drive Org", "ann@example.test", "admin")
	folder := c.folder("docs", "")
	for _, tt := range []struct {
		name, char string
	}{
		{"report\u202Efdp.exe", "U+202E"},
		{"a\u202Ab", "U+202A"},
		{"a\u2066b", "U+2066"},
		{"a\u2069b", "U+2069"},
		{"a\u200Eb", "U+200E"},
		{"a\u200Fb", "U+200F"},
		{"a\u061Cb", "U+061C"},
	} {
		t.Run(tt.char, func(t *testing.T) {
			want := webtest.Scenario{Status: 422, Problem: "validation_failed", Contains: []string{tt.char}}
			webtest.Check(t, c.do("POST", "/api/v1/drive/folders", map[string]any{"name": tt.name}), want)
			webtest.Check(t, c.do("POST", "/api/v1/drive/upload", map[string]any{"name": tt.name, "size": 1}), want)
			webtest.Check(t, c.do("PATCH", "/api/v1/drive/"+folder.ID+"/rename", map[string]any{"name": tt.name}), want)
			// The file mount answers its validation errors with 400, as before.
			davWant := webtest.Scenario{Status: 400, Problem: "validation_failed", Contains: []string{tt.char}}
			webtest.Check(t, s.Do(webtest.Request{Method: "PUT", Path: "/webdav/" + url.PathEscape(tt.name), BasicID: ann.Email, BasicPW: ann.AppPassword,
				Body: "x", Header: map[string]string{"Content-Type": "text/plain"}}), davWant)
			webtest.Check(t, s.Do(webtest.Request{Method: "MKCOL", Path: "/webdav/" + url.PathEscape(tt.name), BasicID: ann.Email, BasicPW: ann.AppPassword}), davWant)
			webtest.Check(t, tc.do("POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": "1", "Upload-Metadata": tusMeta("filename", tt.name)}, nil), want)
		})
	}
	if l := c.list("/api/v1/drive/browse/" + folder.ID); len(l.Items) != 0 {
		t.Fatalf("items created: %s", names(l))
	}
}
