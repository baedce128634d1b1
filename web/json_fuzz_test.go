package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"atrium/webtest"
)

// FuzzJSONBodies sends arbitrary bodies to the JSON write operations of every
// module through the real server: whatever the body, the answer is a 2xx with a
// JSON body or a 4xx problem+json — never a 5xx, never a panic.
//
//	go test -run '^$' -fuzz FuzzJSONBodies -fuzztime 3m ./web/
func FuzzJSONBodies(f *testing.F) {
	s := webtest.New(f)
	ann := s.Bootstrap("Fuzz Org", "ann@example.test", "admin")
	tok := ann.Token
	must := func(method, path string, body any, into any) {
		res := s.Do(webtest.Request{Method: method, Path: path, Token: tok, Body: body})
		if res.StatusCode >= 300 {
			f.Fatalf("%s %s: %d %s", method, path, res.StatusCode, res.Body)
		}
		if into != nil {
			res.Decode(f, into)
		}
	}
	var books []struct {
		ID string `json:"id"`
	}
	must("GET", "/api/v1/contacts/books", nil, &books)
	var contact, folder struct {
		ID string `json:"id"`
	}
	must("POST", "/api/v1/contacts/books/"+books[0].ID, map[string]any{"display_name": "Ada Lovelace"}, &contact)
	must("POST", "/api/v1/drive/folders", map[string]any{"name": "fuzz"}, &folder)
	var cals []struct {
		ID string `json:"id"`
	}
	must("GET", "/api/v1/calendar/calendars", nil, &cals)
	cal := cals[0]
	var event struct {
		UID string `json:"uid"`
	}
	must("POST", "/api/v1/calendar/calendars/"+cal.ID+"/events", map[string]any{"title": "Standup",
		"start": "2026-11-23T09:00:00Z", "end": "2026-11-23T09:15:00Z", "rrule": "FREQ=DAILY;COUNT=5"}, &event)

	ops := []struct{ method, path, seed string }{
		{"POST", "/api/v1/contacts/books/" + books[0].ID, `{"display_name":"Grace","emails":[{"value":"g@x.test","type":"work"}],"birthday":"1906-12-09"}`},
		{"PUT", "/api/v1/contacts/books/" + books[0].ID + "/" + contact.ID, `{"first_name":"Ada","phones":[{"value":"+1 555","type":"cell"}]}`},
		{"POST", "/api/v1/contacts/books", `{"name":"Team","description":"x"}`},
		{"PATCH", "/api/v1/contacts/books/" + books[0].ID, `{"name":"Renamed"}`},
		{"POST", "/api/v1/calendar/calendars/" + cal.ID + "/events", `{"title":"x","start":"2026-11-23T10:00:00Z","end":"2026-11-23T11:00:00Z","rrule":"FREQ=WEEKLY;BYDAY=MO,WE","timezone":"Europe/Paris"}`},
		{"PUT", "/api/v1/calendar/calendars/" + cal.ID + "/events/" + event.UID, `{"title":"y","start":"2026-11-23T09:00:00Z","end":"2026-11-23T09:30:00Z"}`},
		{"PUT", "/api/v1/calendar/calendars/" + cal.ID + "/events/" + event.UID + "/occurrences/2026-11-24", `{"scope":"this","title":"moved"}`},
		{"POST", "/api/v1/calendar/freebusy", `{"start":"2026-11-23T00:00:00Z","end":"2026-11-30T00:00:00Z","emails":["ann@example.test"]}`},
		{"POST", "/api/v1/drive/folders", `{"name":"a","parent_id":"` + folder.ID + `"}`},
		{"POST", "/api/v1/drive/upload", `{"name":"a.txt","size":3,"mime_type":"text/plain","folder_id":"` + folder.ID + `"}`},
		{"PATCH", "/api/v1/drive/" + folder.ID + "/rename", `{"name":"b"}`},
		{"PATCH", "/api/v1/drive/" + folder.ID + "/metadata", `{"tags":["x"],"description":"d"}`},
		{"POST", "/api/v1/drive/" + folder.ID + "/shares", `{"type":"link","permission":"view","expires_at":"2030-01-01T00:00:00Z"}`},
		{"POST", "/api/v1/drive/sync/commit", `{"device_id":"d1","changes":[{"op":"create_folder","name":"z"}]}`},
		{"POST", "/api/v1/partner/orgs", `{"name":"Child","plan_slug":"business","admin_email":"c@child.test","seats":5}`},
		{"POST", "/api/v1/webhooks/subscriptions", `{"url":"https://example.test/hook","events":["contact.created"]}`},
		{"POST", "/api/v1/developer/service-principals", `{"name":"ci","scopes":["contacts:read"]}`},
	}
	for i, op := range ops {
		f.Add(uint8(i), []byte(op.seed))
		f.Add(uint8(i), []byte(`{}`))
	}
	f.Add(uint8(0), []byte(`{"display_name":"\u0000","emails":[null]}`))
	f.Add(uint8(4), []byte(`{"start":"9999-99-99","rrule":"FREQ=SECONDLY"}`))
	f.Add(uint8(1), []byte(`[`))

	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		op := ops[int(which)%len(ops)]
		// Not s.Do: the server belongs to f, and f's helpers may not run here.
		req, err := http.NewRequest(op.method, s.URL+op.path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		hres, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := io.ReadAll(hres.Body)
		hres.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		res := &webtest.Response{Response: hres, Body: rb}
		switch {
		case res.StatusCode >= 500:
			t.Fatalf("%s %s %q: %d %s", op.method, op.path, body, res.StatusCode, res.Body)
		case res.StatusCode >= 400:
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
				t.Fatalf("%s %s %q: %d with Content-Type %q", op.method, op.path, body, res.StatusCode, ct)
			}
			var p struct {
				Code string `json:"code"`
			}
			if err := json.Unmarshal(res.Body, &p); err != nil || p.Code == "" {
				t.Fatalf("%s %s %q: %d, not a problem: %s", op.method, op.path, body, res.StatusCode, res.Body)
			}
		case res.StatusCode != http.StatusNoContent && len(res.Body) > 0 && !json.Valid(res.Body):
			t.Fatalf("%s %s %q: %d with a body that is not JSON: %.200s", op.method, op.path, body, res.StatusCode, res.Body)
		}
	})
}

// FuzzTusHeaders drives the resumable upload door (tusd's handler behind our
// store) with arbitrary Upload-Length, Upload-Metadata, Upload-Offset and
// bodies: a create and a PATCH never answer 5xx, and an upload never holds more
// bytes than its declared length.
//
//	go test -run '^$' -fuzz FuzzTusHeaders -fuzztime 3m ./web/
func FuzzTusHeaders(f *testing.F) {
	s := webtest.New(f)
	tok := s.Bootstrap("Fuzz Org", "ann@example.test", "admin").Token
	f.Add("11", "filename aGVsbG8udHh0", "0", []byte("hello world"))
	f.Add("5", "filename YS50eHQ=,filetype dGV4dC9wbGFpbg==", "0", []byte("toolong"))
	f.Add("-1", "", "0", []byte{})
	f.Add("99999999999999999999", "filename eA==", "3", []byte("abc"))
	f.Add("3", "filename Li4vZXRjL3Bhc3N3ZA==", "-5", []byte("abc"))
	f.Add("0", "filename ZW1wdHk=", "0", []byte{})
	f.Add("4", "filename eC50eHQ=,parent_id bm9wZQ==", "1", []byte("abcd"))
	f.Fuzz(func(t *testing.T, length, meta, offset string, body []byte) {
		do := func(method, url string, h map[string]string, body []byte) (*http.Response, []byte) {
			req, err := http.NewRequest(method, url, bytes.NewReader(body))
			if err != nil {
				t.Skip() // not a request a client could send
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Tus-Resumable", "1.0.0")
			for k, v := range h {
				if !validHeaderValue(v) {
					t.Skip()
				}
				req.Header.Set(k, v)
			}
			res, err := s.Client().Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, url, err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode >= 500 {
				t.Fatalf("%s %q %q %q: %d %s", method, length, meta, offset, res.StatusCode, b)
			}
			return res, b
		}
		res, _ := do("POST", s.URL+"/api/v1/drive/tus/", map[string]string{"Upload-Length": length, "Upload-Metadata": meta}, nil)
		loc := res.Header.Get("Location")
		if res.StatusCode != http.StatusCreated || loc == "" {
			return
		}
		res, _ = do("PATCH", loc, map[string]string{"Upload-Offset": offset, "Content-Type": "application/offset+octet-stream"}, body)
		res, _ = do("HEAD", loc, nil, nil)
		if res.StatusCode == http.StatusOK {
			if res.Header.Get("Upload-Offset") > "" && res.Header.Get("Upload-Length") > "" {
				var off, n int64
				if _, err := fmt.Sscan(res.Header.Get("Upload-Offset"), &off); err == nil {
					if _, err := fmt.Sscan(res.Header.Get("Upload-Length"), &n); err == nil && off > n {
						t.Fatalf("offset %d beyond length %d", off, n)
					}
				}
			}
		}
		do("DELETE", loc, nil, nil)
	})
}

// validHeaderValue reports whether net/http would send v as a header value.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
