package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
)

var syncTokenRe = regexp.MustCompile(`<d:sync-token>([^<]+)</d:sync-token>`)

// CardDAV and CalDAV forget deletions older than the sync log's age: a client
// whose sync token predates them is refused with DAV:valid-sync-token (RFC 6578
// §3.2) and syncs again from the start; newer tokens keep working.
func TestDAVTombstonesPruned(t *testing.T) {
	t.Parallel()
	const maxAge = 90 * 24 * time.Hour
	s := webtest.New(t)
	cr := s.Bootstrap("Tomb Org", "ann@example.test", "admin")
	first := func(path string) string {
		var list []struct{ ID string }
		res := s.Do(webtest.Request{Method: http.MethodGet, Path: path, Token: cr.Token})
		res.Decode(t, &list)
		if res.StatusCode != 200 || len(list) == 0 {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, res.Body)
		}
		return list[0].ID
	}
	card := func(uid string) string {
		return "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:" + uid + "\r\nFN:" + uid + "\r\nN:" + uid + ";;;;\r\nEND:VCARD\r\n"
	}
	event := func(uid string) string {
		return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:" + uid +
			"\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260301T100000Z\r\nDTEND:20260301T110000Z\r\nSUMMARY:" + uid + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	}
	modules := []struct {
		name, coll, ext, mime string
		body                  func(uid string) string
		prune                 func(context.Context, time.Duration) (int, error)
	}{
		{"carddav", "/dav/addressbooks/" + cr.UserID + "/" + first("/api/v1/contacts/books") + "/", ".vcf", "text/vcard", card, s.Main.Contacts.PruneTombstones},
		{"caldav", "/dav/calendars/" + cr.UserID + "/" + first("/api/v1/calendar/calendars") + "/", ".ics", "text/calendar", event, s.Main.Calendar.PruneTombstones},
	}
	for _, m := range modules {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			put := func(name string) {
				res := s.Do(webtest.Request{Method: http.MethodPut, Path: m.coll + name + m.ext, Token: cr.Token,
					Header: map[string]string{"Content-Type": m.mime}, Body: m.body(name)})
				if res.StatusCode != 201 {
					t.Fatalf("PUT %s: %d %s", name, res.StatusCode, res.Body)
				}
			}
			del := func(name string) {
				if res := s.Do(webtest.Request{Method: http.MethodDelete, Path: m.coll + name + m.ext, Token: cr.Token}); res.StatusCode != 204 {
					t.Fatalf("DELETE %s: %d %s", name, res.StatusCode, res.Body)
				}
			}
			// sync runs a sync-collection from token and returns the status, the body and the new token.
			sync := func(token string) (int, string, string) {
				res := s.Do(webtest.Request{Method: "REPORT", Path: m.coll, Token: cr.Token, Header: map[string]string{"Content-Type": "application/xml"},
					Body: `<d:sync-collection xmlns:d="DAV:"><d:sync-token>` + token + `</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`})
				next := ""
				if mm := syncTokenRe.FindStringSubmatch(string(res.Body)); mm != nil {
					next = mm[1]
				}
				return res.StatusCode, string(res.Body), next
			}
			put("gone")
			put("stays")
			_, _, old := sync("")
			del("gone")
			if st, body, _ := sync(old); st != 207 || !strings.Contains(body, "gone"+m.ext) {
				t.Fatalf("the deletion before pruning: %d %s", st, body)
			}

			s.Clock.Advance(maxAge + time.Hour)
			if n, err := m.prune(ctx, maxAge); err != nil || n != 1 {
				t.Fatalf("prune: %d %v", n, err)
			}
			if st, body, _ := sync(old); st != http.StatusForbidden || !strings.Contains(body, "valid-sync-token") {
				t.Fatalf("a token older than the pruned deletions: %d %s", st, body)
			}
			// Starting over works, and so does a token from after the pruning.
			st, body, fresh := sync("")
			if st != 207 || strings.Contains(body, "gone"+m.ext) || !strings.Contains(body, "stays"+m.ext) {
				t.Fatalf("initial sync after pruning: %d %s", st, body)
			}
			del("stays")
			if n, err := m.prune(ctx, maxAge); err != nil || n != 0 {
				t.Fatalf("a recent deletion was pruned: %d %v", n, err)
			}
			if st, body, _ := sync(fresh); st != 207 || !strings.Contains(body, "stays"+m.ext) {
				t.Fatalf("a token from after the pruning: %d %s", st, body)
			}
		})
	}
}
