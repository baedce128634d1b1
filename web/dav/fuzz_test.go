package dav

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var davBodies = []string{
	`<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><d:displayname/><cs:getctag/><d:sync-token/></d:prop></d:propfind>`,
	`<d:sync-collection xmlns:d="DAV:"><d:sync-token>urn:atrium:sync:c1:42</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`,
	`<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop><d:href>/dav/calendars/u/c1/a.ics</d:href></c:calendar-multiget>`,
	`<card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><card:address-data/></d:prop><d:href>/dav/addressbooks/u/b/x.vcf</d:href></card:addressbook-multiget>`,
	`<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310301T000000Z" end="20310401T000000Z"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`,
	`<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`,
	"", "<", `<a xmlns:x=""><x:b/></a>`,
}

// FuzzReadBodies checks that reading an arbitrary PROPFIND or REPORT body of the
// CardDAV/CalDAV doors never panics.
func FuzzReadBodies(f *testing.F) {
	for _, b := range davBodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		_, _ = parsePropfind(httptest.NewRequest("PROPFIND", "/dav/", strings.NewReader(body)))
		if _, _, b, err := readReport(httptest.NewRequest("REPORT", "/dav/", strings.NewReader(body))); err == nil {
			_ = b.propRequest()
		}
	})
}

// Hostile XML bodies (XXE, entity expansion, deep nesting) are refused, or parsed
// without expanding entities and in bounded time.
func TestReadBodiesHostile(t *testing.T) {
	t.Parallel()
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">`
	prev := "lol"
	for i := 1; i <= 9; i++ {
		name := "lol" + string(rune('0'+i))
		laughs += `<!ENTITY ` + name + ` "` + strings.Repeat("&"+prev+";", 10) + `">`
		prev = name
	}
	laughs += `]><d:sync-collection xmlns:d="DAV:"><d:sync-token>&lol9;</d:sync-token></d:sync-collection>`
	cases := []struct {
		name, body string
		mayParse   bool
	}{
		{"XXE", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>` +
			`<d:sync-collection xmlns:d="DAV:"><d:sync-token>&e;</d:sync-token></d:sync-collection>`, false},
		{"billion laughs", laughs, false},
		{"10000 deep", `<d:sync-collection xmlns:d="DAV:">` + strings.Repeat("<d:prop>", 10000) + strings.Repeat("</d:prop>", 10000) + `</d:sync-collection>`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, perr := parsePropfind(httptest.NewRequest("PROPFIND", "/dav/", strings.NewReader(c.body)))
			_, _, b, rerr := readReport(httptest.NewRequest("REPORT", "/dav/", strings.NewReader(c.body)))
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
			if !c.mayParse && (perr == nil || rerr == nil) {
				t.Fatalf("accepted: propfind %v, report %v", perr, rerr)
			}
			if strings.Contains(b.SyncToken, "root:") || strings.Contains(b.SyncToken, "lollol") {
				t.Fatalf("entity expanded")
			}
		})
	}
}
