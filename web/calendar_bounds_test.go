package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"atrium/webtest"
)

// TestCalendarRecurrenceBounds: a rule with occurrences under a minute apart
// is refused at every door (REST, CalDAV PUT, import); one stored before that
// check (written here into the database) is expanded near the range only, a
// range holding too many of its occurrences is refused with 422 for the list,
// free/busy and a wide CalDAV time-range, and an open-ended CalDAV query
// still finds it.
func TestCalendarRecurrenceBounds(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	s := e.s
	calPath := "/dav/calendars/" + e.alice.UserID + "/" + e.cal + "/"
	davReq := func(method, body string, header map[string]string) webtest.Request {
		return webtest.Request{Method: method, Path: calPath, BasicID: e.alice.Email, BasicPW: e.alice.AppPassword, Header: header, Body: body}
	}
	query := func(timeRange string) webtest.Request {
		r := davReq("REPORT", `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop>`+
			`<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">`+timeRange+`</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`,
			map[string]string{"Content-Type": "application/xml; charset=utf-8", "Depth": "1"})
		return r
	}
	put := davReq("PUT", vevent("DTSTAMP:20260101T000000Z", "DTSTART:20260101T000000Z", "DTEND:20260101T000001Z", "RRULE:FREQ=SECONDLY", "SUMMARY:Tick", "UID:tick-dav"),
		map[string]string{"Content-Type": "text/calendar; charset=utf-8"})
	put.Path += "tick-dav.ics"
	create := func(rule string) webtest.Request {
		return webtest.Request{Method: http.MethodPost, Path: "/api/v1/calendar/calendars/" + e.cal + "/events", Token: e.alice.Token,
			Body: map[string]any{"title": "Tick", "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:01Z", "rrule": rule}}
	}

	s.Run(t, []webtest.Scenario{
		{Name: "REST refuses SECONDLY", Request: create("FREQ=SECONDLY"), Status: 422, Problem: "validation_failed",
			Contains: []string{`"location":"body.rrule"`, "FREQ=SECONDLY is not accepted", "at least a minute apart"}},
		{Name: "REST refuses several BYSECONDs", Request: create("FREQ=MINUTELY;BYSECOND=0,30"), Status: 422, Problem: "validation_failed",
			Contains: []string{"BYSECOND=0,30 is not accepted"}},
		{Name: "REST refuses a huge COUNT", Request: create("FREQ=DAILY;COUNT=1000000"), Status: 422, Problem: "validation_failed",
			Contains: []string{"COUNT=1000000 is not accepted"}},
		{Name: "REST refuses a day no month of the rule has", Request: create("FREQ=MINUTELY;BYMONTH=2,4;BYMONTHDAY=31,-31"), Status: 422, Problem: "validation_failed",
			Contains: []string{"BYMONTH=2,4 with BYMONTHDAY=31,-31 never happens"}},
		{Name: "REST takes 29 February", Request: create("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"), Status: 201},
		{Name: "REST takes MINUTELY", Request: create("FREQ=MINUTELY;INTERVAL=15;COUNT=4"), Status: 201},
		{Name: "CalDAV PUT refuses SECONDLY", Request: put, Status: 403, Contains: []string{"<cal:valid-calendar-data/>", "FREQ=SECONDLY is not accepted"}},
	})
	res, imp := e.importICS(t, e.alice.Token, e.cal, []byte(ics("BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//t//EN",
		"BEGIN:VEVENT", "UID:tick-imp", "DTSTAMP:20260101T000000Z", "DTSTART:20260101T000000Z", "DTEND:20260101T000001Z", "RRULE:FREQ=SECONDLY", "SUMMARY:Tick", "END:VEVENT",
		"BEGIN:VEVENT", "UID:fine-imp", "DTSTAMP:20260101T000000Z", "DTSTART:20260101T090000Z", "DTEND:20260101T100000Z", "RRULE:FREQ=WEEKLY", "SUMMARY:Fine", "END:VEVENT",
		"END:VCALENDAR")))
	if res.StatusCode != 201 || imp["imported"] != float64(1) || !strings.Contains(string(res.Body), `{"uid":"tick-imp","message":"RRULE FREQ=SECONDLY is not accepted`) {
		t.Fatalf("import: %d %s", res.StatusCode, res.Body)
	}

	// A SECONDLY event from 2000 stored before the check.
	ev := e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Legacy", "start": "2000-01-01T00:00:00Z", "end": "2000-01-01T00:00:01Z", "rrule": "FREQ=DAILY"})
	for _, q := range []string{`UPDATE calendar_components SET rrule = 'FREQ=SECONDLY' WHERE uid = ?`,
		`UPDATE calendar_objects SET ics = replace(ics, 'RRULE:FREQ=DAILY', 'RRULE:FREQ=SECONDLY') WHERE uid = ?`} {
		if _, err := s.Main.DB.Exec(context.Background(), q, ev.UID); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.list(t, e.alice.Token, e.cal, "2026-05-04T12:00:00Z", "2026-05-04T12:00:10Z"); len(got) != 10 || got[0].UID != ev.UID {
		t.Fatalf("10 seconds of a SECONDLY event: %d occurrences", len(got))
	}
	listPath := "/api/v1/calendar/calendars/" + e.cal + "/events?start=2026-01-01T00:00:00Z&end=2027-01-01T00:00:00Z"
	s.Run(t, []webtest.Scenario{
		{Name: "a year of it is refused", Request: webtest.Request{Method: "GET", Path: listPath, Token: e.alice.Token}, Status: 422, Problem: "validation_failed",
			Contains: []string{`"location":"query.end"`, "more than 20000 occurrences", "ask for a shorter range"}},
		{Name: "so is another user's free/busy over it", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/freebusy", Token: e.bob.Token,
			Body: map[string]any{"attendees": []string{"alice@acme.test"}, "start": "2026-01-01T00:00:00Z", "end": "2027-01-01T00:00:00Z"}},
			Status: 422, Problem: "validation_failed", Contains: []string{`"location":"body.end"`, "more than 20000 occurrences"}},
		{Name: "free/busy over a minute", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/freebusy", Token: e.bob.Token,
			Body: map[string]any{"attendees": []string{"alice@acme.test"}, "start": "2026-05-04T12:00:00Z", "end": "2026-05-04T12:01:00Z"}},
			Status: 200, Contains: []string{`"busy":[{"start":"2026-05-04T12:00:00Z","end":"2026-05-04T12:01:00Z"}]`}},
		{Name: "a CalDAV time-range over 366 days is refused", Request: query(`<c:time-range start="19000101T000000Z" end="21000101T000000Z"/>`),
			Status: 403, Contains: []string{"<cal:supported-filter/>", "at most 366 days"}},
		{Name: "an open-ended one finds the event", Request: query(`<c:time-range start="20260101T000000Z"/>`),
			Status: 207, Contains: []string{ev.UID + ".ics"}},
		{Name: "and a year-long one", Request: query(`<c:time-range start="20260101T000000Z" end="20270101T000000Z"/>`),
			Status: 207, Contains: []string{ev.UID + ".ics"}},
	})
}
