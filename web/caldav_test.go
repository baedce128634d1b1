package web_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"

	"atrium/webtest"
)

// ics joins iCalendar content lines with CRLF.
func ics(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

// vevent is a VCALENDAR holding one VEVENT with the given properties, written in
// the order Atrium's encoder writes them (sorted by name), so that the stored
// text is what was sent.
func vevent(props ...string) string {
	lines := append([]string{"BEGIN:VCALENDAR", "PRODID:-//Atrium tests//EN", "VERSION:2.0", "BEGIN:VEVENT"}, props...)
	return ics(append(lines, "END:VEVENT", "END:VCALENDAR")...)
}

// richEvent carries what Atrium's model does not hold: an alarm, X- properties
// and attendee parameters.
var richEvent = ics(
	"BEGIN:VCALENDAR",
	"PRODID:-//Atrium tests//EN",
	"VERSION:2.0",
	"X-WR-CALNAME:Client calendar",
	"BEGIN:VEVENT",
	"ATTENDEE;CN=Bob;PARTSTAT=TENTATIVE;X-NUM-GUESTS=1:mailto:bob@acme.test",
	"DTEND:20310310T100000Z",
	"DTSTAMP:20310101T000000Z",
	"DTSTART:20310310T090000Z",
	"SUMMARY:Single",
	"UID:single-1",
	"X-ATRIUM-TEST:kept verbatim",
	"BEGIN:VALARM",
	"ACTION:DISPLAY",
	"DESCRIPTION:Reminder",
	"TRIGGER:-PT15M",
	"END:VALARM",
	"END:VEVENT",
	"END:VCALENDAR")

// hrefs returns the <d:href>s of a multistatus, in order.
func hrefs(body []byte) []string {
	var out []string
	for _, part := range strings.Split(string(body), "<d:href>")[1:] {
		out = append(out, part[:strings.Index(part, "</d:href>")])
	}
	return out
}

func TestCalDAV(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	s := e.s
	home := "/dav/calendars/" + e.alice.UserID + "/"
	calPath := home + e.cal + "/"
	// dav sends a request as alice with her app password.
	dav := func(method, path string, header map[string]string, body string) *webtest.Response {
		t.Helper()
		r := webtest.Request{Method: method, Path: path, BasicID: e.alice.Email, BasicPW: e.alice.AppPassword, Header: header}
		if body != "" {
			r.Body = body
		}
		return s.Do(r)
	}
	xmlBody := map[string]string{"Content-Type": "application/xml; charset=utf-8", "Depth": "1"}
	icsBody := map[string]string{"Content-Type": "text/calendar; charset=utf-8"}

	// Discovery (RFC 6764): the well-known address redirects to /dav/, whose
	// principal names the calendar home.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("PROPFIND", s.URL+"/.well-known/caldav", nil)
	wk, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	wk.Body.Close()
	if wk.StatusCode != http.StatusMovedPermanently || wk.Header.Get("Location") != "/dav/" {
		t.Fatalf("well-known: %d %q", wk.StatusCode, wk.Header.Get("Location"))
	}
	webtest.Check(t, dav("PROPFIND", "/dav/principals/"+e.alice.UserID+"/", map[string]string{"Depth": "0"},
		`<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:calendar-home-set/><c:calendar-user-address-set/></d:prop></d:propfind>`),
		webtest.Scenario{Status: 207, Contains: []string{"<cal:calendar-home-set><d:href>" + home + "</d:href>",
			"<cal:calendar-user-address-set><d:href>mailto:alice@acme.test</d:href>"}})
	webtest.Check(t, dav("PROPFIND", home, map[string]string{"Depth": "1"}, ""), webtest.Scenario{Status: 207,
		Contains: []string{"<d:href>" + calPath + "</d:href>", "<cal:calendar/>", `<cal:comp name="VEVENT"/>`, "<cs:getctag>0</cs:getctag>",
			"<d:sync-token>urn:atrium:sync:" + e.cal + ":0</d:sync-token>", "<cal:calendar-query/>", "<d:displayname>Calendar</d:displayname>"}})

	// Initial sync of the empty calendar gives a token.
	syncReport := func(token string) *webtest.Response {
		return dav("REPORT", calPath, xmlBody, `<d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:sync-token>`+token+
			`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`)
	}
	sync0 := syncReport("")
	webtest.Check(t, sync0, webtest.Scenario{Status: 207, Contains: []string{"<d:sync-token>urn:atrium:sync:" + e.cal + ":0</d:sync-token>"}, NotContains: []string{"<d:response>"}})

	// PUT keeps the text: in the encoder's order it is stored byte for byte and
	// the ETag is returned; GET gives it back with the same ETag.
	put := dav(http.MethodPut, calPath+"single-1.ics", map[string]string{"Content-Type": "text/calendar", "If-None-Match": "*"}, richEvent)
	if put.StatusCode != http.StatusCreated || put.Header.Get("ETag") == "" || put.Header.Get("Location") != calPath+"single-1.ics" {
		t.Fatalf("PUT: %d %v %s", put.StatusCode, put.Header, put.Body)
	}
	etag := put.Header.Get("ETag")
	got := dav(http.MethodGet, calPath+"single-1.ics", nil, "")
	if got.StatusCode != 200 || string(got.Body) != richEvent || got.Header.Get("ETag") != etag || !strings.HasPrefix(got.Header.Get("Content-Type"), "text/calendar") {
		t.Fatalf("GET differs from PUT: %d %q\n%s", got.StatusCode, got.Header.Get("ETag"), got.Body)
	}
	// The same event is in REST, with the same ETag.
	rest := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/calendar/calendars/" + e.cal + "/events/single-1", Token: e.alice.Token})
	webtest.Check(t, rest, webtest.Scenario{Status: 200, Contains: []string{`"title":"Single"`, `"email":"bob@acme.test"`},
		Headers: map[string]string{"ETag": etag}})

	// A text in another order (LF line ends, properties unsorted) keeps every
	// line, but is stored re-encoded: no ETag on the PUT, the client fetches it.
	messy := strings.Join([]string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Messy client//EN", "BEGIN:VEVENT", "UID:overlap-1",
		"SUMMARY:Overlapping the range start", "X-MESSY-CLIENT;X-PARAM=one:value", "DTSTART:20310309T230000Z", "DTEND:20310310T010000Z",
		"DTSTAMP:20310101T000000Z", "END:VEVENT", "END:VCALENDAR", ""}, "\n")
	put2 := dav(http.MethodPut, calPath+"overlap-1.ics", icsBody, messy)
	if put2.StatusCode != http.StatusCreated || put2.Header.Get("ETag") != "" {
		t.Fatalf("PUT of a re-encoded text: %d ETag %q %s", put2.StatusCode, put2.Header.Get("ETag"), put2.Body)
	}
	got2 := dav(http.MethodGet, calPath+"overlap-1.ics", nil, "")
	for _, line := range strings.Split(strings.TrimSpace(messy), "\n") {
		if !strings.Contains(string(got2.Body), line+"\r\n") {
			t.Errorf("line %q lost:\n%s", line, got2.Body)
		}
	}

	// The other events of the time-range query: a weekly series whose first
	// occurrence is weeks before the range, one after it and one ending before it.
	for name, body := range map[string]string{
		"weekly-1.ics":  vevent("DTEND:20310203T130000Z", "DTSTAMP:20310101T000000Z", "DTSTART:20310203T120000Z", "RRULE:FREQ=WEEKLY", "SUMMARY:Weekly", "UID:weekly-1"),
		"later-1.ics":   vevent("DTEND:20310312T100000Z", "DTSTAMP:20310101T000000Z", "DTSTART:20310312T090000Z", "SUMMARY:Later", "UID:later-1"),
		"earlier-1.ics": vevent("DTEND:20310309T220000Z", "DTSTAMP:20310101T000000Z", "DTSTART:20310309T200000Z", "SUMMARY:Earlier", "UID:earlier-1"),
	} {
		if res := dav(http.MethodPut, calPath+name, icsBody, body); res.StatusCode != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", name, res.StatusCode, res.Body)
		}
	}

	// calendar-query with a time-range expands recurrences and finds events
	// overlapping the range's start.
	query := func(filter string) *webtest.Response {
		return dav("REPORT", calPath, xmlBody, `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>`+
			`<c:filter><c:comp-filter name="VCALENDAR">`+filter+`</c:comp-filter></c:filter></c:calendar-query>`)
	}
	inRange := query(`<c:comp-filter name="VEVENT"><c:time-range start="20310310T000000Z" end="20310311T000000Z"/></c:comp-filter>`)
	if inRange.StatusCode != 207 {
		t.Fatalf("calendar-query: %d %s", inRange.StatusCode, inRange.Body)
	}
	found := hrefs(inRange.Body)
	slices.Sort(found)
	if want := []string{calPath + "overlap-1.ics", calPath + "single-1.ics", calPath + "weekly-1.ics"}; !slices.Equal(found, want) {
		t.Errorf("time-range query found %v, want %v", found, want)
	}
	if !strings.Contains(string(inRange.Body), "X-ATRIUM-TEST:kept verbatim") || !strings.Contains(string(inRange.Body), "BEGIN:VALARM") {
		t.Errorf("calendar-data is not the stored text: %s", inRange.Body)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "query without a time-range returns every event", Request: webtest.Request{Method: "REPORT", Path: calPath, Token: e.alice.Token,
			Body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter></c:filter></c:calendar-query>`},
			Status: 207, Contains: []string{"earlier-1.ics", "later-1.ics", "overlap-1.ics", "single-1.ics", "weekly-1.ics"}},
		{Name: "query for tasks finds none", Request: webtest.Request{Method: "REPORT", Path: calPath, Token: e.alice.Token,
			Body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter></c:filter></c:calendar-query>`},
			Status: 207, NotContains: []string{"<d:response>"}},
		{Name: "query with an unreadable time-range", Request: webtest.Request{Method: "REPORT", Path: calPath, Token: e.alice.Token,
			Body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="yesterday"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`},
			Status: 403, Contains: []string{"<cal:valid-filter/>"}},
	})

	// calendar-multiget returns the stored texts; unknown and foreign hrefs are 404.
	mg := dav("REPORT", calPath, xmlBody, `<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>`+
		`<d:href>`+calPath+`single-1.ics</d:href><d:href>`+calPath+`nope.ics</d:href><d:href>/dav/calendars/`+e.bob.UserID+`/x/y.ics</d:href></c:calendar-multiget>`)
	webtest.Check(t, mg, webtest.Scenario{Status: 207, Contains: []string{"X-NUM-GUESTS=1", "TRIGGER:-PT15M", "<d:getetag>" + strings.ReplaceAll(etag, `"`, "&#34;") + "</d:getetag>",
		"<d:href>" + calPath + "nope.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status>", "/x/y.ics</d:href><d:status>HTTP/1.1 404 Not Found"}})

	// Preconditions: a stale If-Match is 412 for PUT and DELETE, If-None-Match *
	// over an existing object is 412; the matching ETag wins.
	changed := strings.Replace(richEvent, "SUMMARY:Single", "SUMMARY:Single (moved)", 1)
	s.Run(t, []webtest.Scenario{
		{Name: "PUT with a stale If-Match", Request: webtest.Request{Method: http.MethodPut, Path: calPath + "single-1.ics", Token: e.alice.Token,
			Header: map[string]string{"Content-Type": "text/calendar", "If-Match": `"stale"`}, Body: changed}, Status: 412, Problem: "precondition_failed"},
		{Name: "PUT If-None-Match * over an existing object", Request: webtest.Request{Method: http.MethodPut, Path: calPath + "single-1.ics", Token: e.alice.Token,
			Header: map[string]string{"Content-Type": "text/calendar", "If-None-Match": "*"}, Body: changed}, Status: 412},
		{Name: "DELETE with a stale If-Match", Request: webtest.Request{Method: http.MethodDelete, Path: calPath + "single-1.ics", Token: e.alice.Token,
			Header: map[string]string{"If-Match": `"stale"`}}, Status: 412},
		{Name: "GET If-None-Match the ETag", Request: webtest.Request{Method: http.MethodGet, Path: calPath + "single-1.ics", Token: e.alice.Token,
			Header: map[string]string{"If-None-Match": etag}}, Status: 304},
		{Name: "PUT with the current ETag", Request: webtest.Request{Method: http.MethodPut, Path: calPath + "single-1.ics", Token: e.alice.Token,
			Header: map[string]string{"Content-Type": "text/calendar", "If-Match": etag}, Body: changed}, Status: 204},
		{Name: "PUT of a journal is refused, naming it", Request: webtest.Request{Method: http.MethodPut, Path: calPath + "journal.ics", Token: e.alice.Token, Header: icsBody,
			Body: ics("BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//x//EN", "BEGIN:VJOURNAL", "UID:j1", "SUMMARY:Diary", "END:VJOURNAL", "END:VCALENDAR")}, Status: 400,
			Contains: []string{"VJOURNAL"}},
		{Name: "PUT of something else than iCalendar", Request: webtest.Request{Method: http.MethodPut, Path: calPath + "bad.ics", Token: e.alice.Token,
			Header: map[string]string{"Content-Type": "text/vcard"}, Body: richEvent}, Status: 400},
	})

	// Incremental sync: the edit via CalDAV, an event created and one deleted via
	// REST; the deletion is a 404 member.
	created := e.create(t, e.alice.Token, e.cal, map[string]any{"title": "From REST", "start": "2031-03-10T15:00:00Z", "end": "2031-03-10T16:00:00Z"})
	if res := s.Do(webtest.Request{Method: http.MethodDelete, Path: "/api/v1/calendar/calendars/" + e.cal + "/events/earlier-1", Token: e.alice.Token}); res.StatusCode != 204 {
		t.Fatalf("REST delete: %d %s", res.StatusCode, res.Body)
	}
	sync1 := syncReport("urn:atrium:sync:" + e.cal + ":5")
	webtest.Check(t, sync1, webtest.Scenario{Status: 207,
		Contains: []string{calPath + "single-1.ics</d:href>", calPath + created.UID + ".ics</d:href>", calPath + "earlier-1.ics</d:href><d:status>HTTP/1.1 404 Not Found",
			"<d:sync-token>urn:atrium:sync:" + e.cal + ":8</d:sync-token>"},
		NotContains: []string{"weekly-1.ics", "later-1.ics", "overlap-1.ics"}})
	webtest.Check(t, syncReport("urn:atrium:sync:"+e.cal+":8"), webtest.Scenario{Status: 207, NotContains: []string{"<d:response>"}})
	full := dav("REPORT", calPath, xmlBody, `<d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:sync-token/><d:prop><d:getetag/><c:calendar-data/></d:prop></d:sync-collection>`)
	webtest.Check(t, full, webtest.Scenario{Status: 207, Contains: []string{"SUMMARY:From REST", "SUMMARY:Single (moved)"}, NotContains: []string{"earlier-1.ics"}})
	if n := strings.Count(string(full.Body), "<d:response>"); n != 5 {
		t.Errorf("initial sync with data lists %d objects, want 5", n)
	}

	// A client's delete shows in REST.
	if res := dav(http.MethodDelete, calPath+"later-1.ics", nil, ""); res.StatusCode != 204 {
		t.Fatalf("DAV delete: %d %s", res.StatusCode, res.Body)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/calendar/calendars/" + e.cal + "/events/later-1", Token: e.alice.Token}),
		webtest.Scenario{Status: 404})

	bobCal := e.defaultCal(t, e.bob.Token)
	s.Run(t, []webtest.Scenario{
		{Name: "DAV without a credential asks for Basic", Request: webtest.Request{Method: "PROPFIND", Path: calPath}, Status: 401, Problem: "unauthorized",
			Headers: map[string]string{"WWW-Authenticate": `Basic realm="atrium", charset="UTF-8"`}},
		{Name: "a wrong app password", Request: webtest.Request{Method: "PROPFIND", Path: calPath, BasicID: e.alice.Email, BasicPW: "wrong"}, Status: 401},
		{Name: "bearer works on CalDAV", Request: webtest.Request{Method: "PROPFIND", Path: calPath, Token: e.alice.Token, Header: map[string]string{"Depth": "0"}},
			Status: 207, Contains: []string{"<cs:getctag>"}},
		{Name: "another user's home", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/calendars/" + e.bob.UserID + "/", Token: e.alice.Token}, Status: 404},
		{Name: "another user's calendar", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/calendars/" + e.bob.UserID + "/" + bobCal + "/", Token: e.alice.Token}, Status: 404},
		{Name: "another user's calendar under one's own home", Request: webtest.Request{Method: "REPORT", Path: "/dav/calendars/" + e.alice.UserID + "/" + bobCal + "/", Token: e.alice.Token,
			Body: `<d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:prop><d:getetag/></d:prop></d:sync-collection>`}, Status: 404},
		{Name: "another user's object", Request: webtest.Request{Method: "GET", Path: calPath + "single-1.ics", Token: e.bob.Token}, Status: 404},
		{Name: "another user cannot write into the calendar", Request: webtest.Request{Method: "PUT", Path: "/dav/calendars/" + e.bob.UserID + "/" + e.cal + "/x.ics",
			Token: e.bob.Token, Header: icsBody, Body: richEvent}, Status: 404},
		{Name: "a read-only token cannot PUT", Request: webtest.Request{Method: "PUT", Path: calPath + "ro.ics", Token: s.Token("alice@acme.test", "calendar:read"),
			Header: icsBody, Body: richEvent}, Status: 403},
		{Name: "a sync token of another calendar", Request: webtest.Request{Method: "REPORT", Path: calPath, Token: e.alice.Token,
			Body: `<d:sync-collection xmlns:d="DAV:"><d:sync-token>urn:atrium:sync:` + bobCal + `:1</d:sync-token></d:sync-collection>`}, Status: 403, Contains: []string{"valid-sync-token"}},
		{Name: "a sync token from the future", Request: webtest.Request{Method: "REPORT", Path: calPath, Token: e.alice.Token,
			Body: `<d:sync-collection xmlns:d="DAV:"><d:sync-token>urn:atrium:sync:` + e.cal + `:999</d:sync-token></d:sync-collection>`}, Status: 403, Contains: []string{"valid-sync-token"}},
		{Name: "OPTIONS names calendar-access", Request: webtest.Request{Method: "OPTIONS", Path: calPath, Token: e.alice.Token}, Status: 200,
			Headers: map[string]string{"DAV": "1, 3, extended-mkcol, calendar-access"}},
		{Name: "OPTIONS on /dav/ names both doors", Request: webtest.Request{Method: "OPTIONS", Path: "/dav/", Token: e.alice.Token}, Status: 200,
			Headers: map[string]string{"DAV": "1, 3, extended-mkcol, addressbook, calendar-access"}},
		{Name: "PROPFIND Depth 1 lists the objects", Request: webtest.Request{Method: "PROPFIND", Path: calPath, Token: e.alice.Token, Header: map[string]string{"Depth": "1"},
			Body: `<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:getcontenttype/></d:prop></d:propfind>`}, Status: 207,
			Contains: []string{calPath + "single-1.ics</d:href>", calPath + "weekly-1.ics</d:href>", "text/calendar"}, NotContains: []string{"later-1.ics", "earlier-1.ics"}},
		{Name: "PROPFIND of an object", Request: webtest.Request{Method: "PROPFIND", Path: calPath + "weekly-1.ics", Token: e.alice.Token,
			Body: `<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:calendar-data/></d:prop></d:propfind>`}, Status: 207,
			Contains: []string{"RRULE:FREQ=WEEKLY"}},
		{Name: "GET of the calendar exports it", Request: webtest.Request{Method: "GET", Path: calPath, Token: e.alice.Token}, Status: 200,
			Contains: []string{"BEGIN:VCALENDAR", "SUMMARY:Weekly", "SUMMARY:From REST"}},
		{Name: "an unknown REPORT", Request: webtest.Request{Method: "REPORT", Path: calPath, Token: e.alice.Token,
			Body: `<c:free-busy-query xmlns:c="urn:ietf:params:xml:ns:caldav"/>`}, Status: 403, Contains: []string{"supported-report"}},
	})

	// MKCALENDAR makes a calendar at the path, visible via REST; again is 405.
	mk := `<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/"><d:set><d:prop>` +
		`<d:displayname>Work</d:displayname><c:calendar-description>Office hours</c:calendar-description><a:calendar-color>#3366ffff</a:calendar-color>` +
		`<c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>`
	s.Run(t, []webtest.Scenario{
		{Name: "MKCALENDAR", Request: webtest.Request{Method: "MKCALENDAR", Path: home + "work/", Token: e.alice.Token, Body: mk}, Status: 201,
			Headers: map[string]string{"Location": home + "work/"}},
		{Name: "the new calendar is in REST", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars", Token: e.alice.Token}, Status: 200,
			Contains: []string{`"id":"work","name":"Work","description":"Office hours","color":"#3366ffff"`}},
		{Name: "MKCALENDAR over an existing calendar", Request: webtest.Request{Method: "MKCALENDAR", Path: home + "work/", Token: e.alice.Token, Body: mk}, Status: 405},
		{Name: "MKCALENDAR for tasks only", Request: webtest.Request{Method: "MKCALENDAR", Path: home + "tasks/", Token: e.alice.Token,
			Body: `<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><c:supported-calendar-component-set><c:comp name="VTODO"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>`},
			Status: 201},
		{Name: "MKCALENDAR for journals", Request: webtest.Request{Method: "MKCALENDAR", Path: home + "journal/", Token: e.alice.Token,
			Body: `<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><c:supported-calendar-component-set><c:comp name="VJOURNAL"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>`},
			Status: 403, Contains: []string{"supported-calendar-component", "VJOURNAL"}},
		{Name: "the tasks calendar says what it holds", Request: webtest.Request{Method: "PROPFIND", Path: home + "tasks/", Token: e.alice.Token, Header: map[string]string{"Depth": "0"},
			Body: `<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:supported-calendar-component-set/></d:prop></d:propfind>`}, Status: 207,
			Contains: []string{`<cal:comp name="VTODO"/>`}, NotContains: []string{`<cal:comp name="VEVENT"/>`}},
		{Name: "no event in the tasks calendar", Request: webtest.Request{Method: http.MethodPut, Path: home + "tasks/e.ics", Token: e.alice.Token, Header: icsBody, Body: richEvent},
			Status: 403, Contains: []string{"supported-calendar-component"}},
		{Name: "extended MKCOL of a calendar", Request: webtest.Request{Method: "MKCOL", Path: home + "family/", Token: e.alice.Token,
			Body: `<d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:resourcetype><d:collection/><c:calendar/></d:resourcetype></d:prop></d:set></d:mkcol>`}, Status: 201},
		{Name: "plain MKCOL", Request: webtest.Request{Method: "MKCOL", Path: home + "plain/", Token: e.alice.Token}, Status: 403, Contains: []string{"valid-resourcetype"}},
		{Name: "MKCALENDAR with a bad name", Request: webtest.Request{Method: "MKCALENDAR", Path: home + "a%20b/", Token: e.alice.Token}, Status: 400},
		{Name: "PROPPATCH renames", Request: webtest.Request{Method: "PROPPATCH", Path: home + "work/", Token: e.alice.Token,
			Body: `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>Office</d:displayname></d:prop></d:set></d:propertyupdate>`}, Status: 207, Contains: []string{"200 OK"}},
		{Name: "PROPPATCH of an unknown property changes nothing", Request: webtest.Request{Method: "PROPPATCH", Path: home + "work/", Token: e.alice.Token,
			Body: `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><d:displayname>Nope</d:displayname><x:order>1</x:order></d:prop></d:set></d:propertyupdate>`},
			Status: 207, Contains: []string{"403 Forbidden", "424 Failed Dependency"}},
		{Name: "renamed once", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars", Token: e.alice.Token}, Status: 200,
			Contains: []string{`"id":"work","name":"Office"`}, NotContains: []string{"Nope"}},
		{Name: "the home lists the new calendars", Request: webtest.Request{Method: "PROPFIND", Path: home, Token: e.alice.Token, Header: map[string]string{"Depth": "1"}}, Status: 207,
			Contains: []string{home + "work/</d:href>", home + "family/</d:href>", "<d:displayname>Office</d:displayname>", `<calendar-color xmlns="http://apple.com/ns/ical/">#3366ffff</calendar-color>`}},
		{Name: "the default calendar cannot be deleted", Request: webtest.Request{Method: "DELETE", Path: calPath, Token: e.alice.Token}, Status: 409},
		{Name: "DELETE a calendar", Request: webtest.Request{Method: "DELETE", Path: home + "family/", Token: e.alice.Token}, Status: 204},
	})
}

// TestCalDAVClientRoundTrip drives the door with go-webdav's CalDAV client.
func TestCalDAVClientRoundTrip(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ctx := context.Background()
	hc := webdav.HTTPClientWithBasicAuth(e.s.Client(), e.alice.Email, e.alice.AppPassword)
	cl, err := caldav.NewClient(hc, e.s.URL+"/dav/")
	if err != nil {
		t.Fatal(err)
	}
	principal, err := cl.FindCurrentUserPrincipal(ctx)
	if err != nil || principal != "/dav/principals/"+e.alice.UserID+"/" {
		t.Fatalf("principal %q: %v", principal, err)
	}
	home, err := cl.FindCalendarHomeSet(ctx, principal)
	if err != nil || home != "/dav/calendars/"+e.alice.UserID+"/" {
		t.Fatalf("home %q: %v", home, err)
	}
	cals, err := cl.FindCalendars(ctx, home)
	if err != nil || len(cals) != 1 || cals[0].Name != "Calendar" || !slices.Equal(cals[0].SupportedComponentSet, []string{"VEVENT", "VTODO"}) || cals[0].MaxResourceSize == 0 {
		t.Fatalf("calendars %+v: %v", cals, err)
	}
	calPath := cals[0].Path
	if calPath != home+e.cal+"/" {
		t.Fatalf("calendar path %q", calPath)
	}

	// A daily series from the client, with an alarm and an X- property.
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropProductID, "-//go-webdav client//EN")
	cal.Props.SetText(ical.PropVersion, "2.0")
	ev := ical.NewEvent()
	ev.Props.SetText(ical.PropUID, "client-daily")
	ev.Props.SetText(ical.PropSummary, "Stand-up")
	ev.Props.SetDateTime(ical.PropDateTimeStamp, time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	ev.Props.SetDateTime(ical.PropDateTimeStart, time.Date(2031, 5, 1, 9, 0, 0, 0, time.UTC))
	ev.Props.SetDateTime(ical.PropDateTimeEnd, time.Date(2031, 5, 1, 9, 15, 0, 0, time.UTC))
	rrule := ical.NewProp(ical.PropRecurrenceRule)
	rrule.Value = "FREQ=DAILY;COUNT=30"
	ev.Props.Set(rrule)
	ev.Props.SetText("X-CLIENT-COLOUR", "teal")
	alarm := ical.NewComponent(ical.CompAlarm)
	alarm.Props.SetText(ical.PropAction, "DISPLAY")
	alarm.Props.SetText(ical.PropTrigger, "-PT5M")
	alarm.Props.SetText(ical.PropDescription, "Stand-up soon")
	ev.Children = append(ev.Children, alarm)
	cal.Children = append(cal.Children, ev.Component)
	obj, err := cl.PutCalendarObject(ctx, calPath+"client-daily.ics", cal)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Path != calPath+"client-daily.ics" || obj.ETag == "" {
		t.Fatalf("put: %+v", obj)
	}

	// The occurrence on 20 May is found by a query for that day only.
	objs, err := cl.QueryCalendar(ctx, calPath, &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: "VCALENDAR", AllProps: true, AllComps: true},
		CompFilter: caldav.CompFilter{Name: "VCALENDAR", Comps: []caldav.CompFilter{{Name: "VEVENT",
			Start: time.Date(2031, 5, 20, 0, 0, 0, 0, time.UTC), End: time.Date(2031, 5, 21, 0, 0, 0, 0, time.UTC)}}},
	})
	if err != nil || len(objs) != 1 || objs[0].Path != calPath+"client-daily.ics" {
		t.Fatalf("query %+v: %v", objs, err)
	}
	evs := objs[0].Data.Events()
	if len(evs) != 1 || evs[0].Props.Get("X-CLIENT-COLOUR").Value != "teal" || len(evs[0].Children) != 1 || evs[0].Children[0].Name != ical.CompAlarm {
		t.Fatalf("queried event lost what the client wrote: %+v", objs[0].Data)
	}
	// A day after the series ends finds nothing.
	none, err := cl.QueryCalendar(ctx, calPath, &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: "VCALENDAR"},
		CompFilter: caldav.CompFilter{Name: "VCALENDAR", Comps: []caldav.CompFilter{{Name: "VEVENT",
			Start: time.Date(2031, 6, 5, 0, 0, 0, 0, time.UTC), End: time.Date(2031, 6, 6, 0, 0, 0, 0, time.UTC)}}},
	})
	if err != nil || len(none) != 0 {
		t.Fatalf("query after the series: %+v %v", none, err)
	}

	// An event made via REST is read back by multiget, with the REST ETag.
	made := e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Review", "start": "2031-05-02T14:00:00Z", "end": "2031-05-02T15:00:00Z"})
	restEv := e.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/calendar/calendars/" + e.cal + "/events/" + made.UID, Token: e.alice.Token})
	mg, err := cl.MultiGetCalendar(ctx, calPath, &caldav.CalendarMultiGet{Paths: []string{calPath + made.UID + ".ics", calPath + "client-daily.ics"},
		CompRequest: caldav.CalendarCompRequest{Name: "VCALENDAR", AllProps: true, AllComps: true}})
	if err != nil || len(mg) != 2 {
		t.Fatalf("multiget %+v: %v", mg, err)
	}
	if mg[0].Path != calPath+made.UID+".ics" || `"`+mg[0].ETag+`"` != restEv.Header.Get("ETag") {
		t.Errorf("multiget %s etag %q, REST %q", mg[0].Path, mg[0].ETag, restEv.Header.Get("ETag"))
	}
	if summary, _ := mg[0].Data.Events()[0].Props.Text(ical.PropSummary); summary != "Review" {
		t.Errorf("multiget summary %q", summary)
	}
	// The client's series is in REST, expanded.
	occ := e.list(t, e.alice.Token, e.cal, "2031-05-01T00:00:00Z", "2031-05-04T00:00:00Z")
	var standups int
	for _, o := range occ {
		if o.UID == "client-daily" && o.IsRecurring {
			standups++
		}
	}
	if standups != 3 {
		t.Errorf("REST lists %d stand-ups in 3 days, want 3: %+v", standups, occ)
	}
}
