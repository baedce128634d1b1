package web_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/calendar"
	"atrium/storage/sqldb"
	"atrium/webtest"
	"atrium/wire"
)

// calEnv is a server with two users of one organisation and an outsider.
type calEnv struct {
	s                   *webtest.Server
	alice, bob, outside webtest.Creds
	cal                 string // alice's default calendar
}

func newCalEnv(t *testing.T) *calEnv {
	t.Helper()
	s := webtest.New(t)
	e := &calEnv{s: s}
	e.alice = s.Bootstrap("Acme", "alice@acme.test", "admin")
	e.bob = s.Bootstrap("Acme", "bob@acme.test", "member")
	e.outside = s.Bootstrap("Other", "olga@other.test", "admin")
	e.cal = e.defaultCal(t, e.alice.Token)
	return e
}

func (e *calEnv) defaultCal(t testing.TB, token string) string {
	t.Helper()
	res := e.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/calendar/calendars", Token: token})
	var cals []struct {
		ID        string `json:"id"`
		IsDefault bool   `json:"is_default"`
	}
	res.Decode(t, &cals)
	if res.StatusCode != 200 || len(cals) == 0 || !cals[0].IsDefault {
		t.Fatalf("calendars: %d %s", res.StatusCode, res.Body)
	}
	return cals[0].ID
}

type calSummary struct {
	UID            string    `json:"uid"`
	CalendarID     string    `json:"calendar_id"`
	Title          string    `json:"title"`
	Start          time.Time `json:"start"`
	End            time.Time `json:"end"`
	AllDay         bool      `json:"all_day"`
	IsRecurring    bool      `json:"is_recurring"`
	OccurrenceDate string    `json:"occurrence_date"`
}

func (e *calEnv) create(t *testing.T, token, cal string, body map[string]any) calSummary {
	t.Helper()
	res := e.s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/calendar/calendars/" + cal + "/events", Token: token, Body: body})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create event: %d %s", res.StatusCode, res.Body)
	}
	var s calSummary
	res.Decode(t, &s)
	return s
}

func (e *calEnv) list(t *testing.T, token, cal, start, end string) []calSummary {
	t.Helper()
	path := "/api/v1/calendar/events?"
	if cal != "" {
		path = "/api/v1/calendar/calendars/" + cal + "/events?"
	}
	res := e.s.Do(webtest.Request{Method: http.MethodGet, Path: path + url.Values{"start": {start}, "end": {end}}.Encode(), Token: token})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("list: %d %s", res.StatusCode, res.Body)
	}
	var out []calSummary
	res.Decode(t, &out)
	return out
}

func calMultipart(t testing.TB, field, filename string, data []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, err := w.CreateFormFile(field, filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

func (e *calEnv) importICS(t *testing.T, token, cal string, data []byte) (*webtest.Response, map[string]any) {
	t.Helper()
	body, ct := calMultipart(t, "file", "cal.ics", data)
	res := e.s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/calendar/calendars/" + cal + "/import", Token: token,
		Body: body, Header: map[string]string{"Content-Type": ct}})
	return res, res.JSON()
}

func (e *calEnv) events(t *testing.T, typ string) []app.Event {
	t.Helper()
	evs, _, err := sqldb.Outbox{DB: e.s.Main.DB}.Events(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var out []app.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func evPath(cal, uid string) string { return "/api/v1/calendar/calendars/" + cal + "/events/" + uid }

// TestCalendarDSTExpansion: a daily 09:00 New York series keeps 09:00 local
// across the March DST change, and its UTC hour moves.
func TestCalendarDSTExpansion(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ev := e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Standup", "start": "2026-03-05T09:00:00", "end": "2026-03-05T09:15:00",
		"timezone": "America/New_York", "rrule": "FREQ=DAILY"})
	occ := e.list(t, e.alice.Token, e.cal, "2026-03-05T00:00:00Z", "2026-03-15T00:00:00Z")
	if len(occ) != 10 {
		t.Fatalf("got %d occurrences, want 10", len(occ))
	}
	for _, o := range occ {
		if o.Start.Hour() != 9 || o.End.Sub(o.Start) != 15*time.Minute || o.UID != ev.UID || !o.IsRecurring {
			t.Errorf("occurrence %s: %s–%s", o.OccurrenceDate, o.Start, o.End)
		}
		if o.OccurrenceDate != o.Start.Format("2006-01-02") {
			t.Errorf("occurrence_date %s for %s", o.OccurrenceDate, o.Start)
		}
	}
	if h := occ[0].Start.UTC().Hour(); h != 14 {
		t.Errorf("before DST: %d UTC, want 14", h)
	}
	if h := occ[9].Start.UTC().Hour(); h != 13 {
		t.Errorf("after DST (Mar 8): %d UTC, want 13", h)
	}
	// The unbounded rule is cut at the range: a one-day range holds one occurrence.
	if got := e.list(t, e.alice.Token, "", "2030-06-01T00:00:00Z", "2030-06-02T00:00:00Z"); len(got) != 1 || got[0].OccurrenceDate != "2030-06-01" {
		t.Fatalf("far range: %+v", got)
	}
	// In November the clock goes back; 09:00 stays.
	nov := e.list(t, e.alice.Token, e.cal, "2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z")
	for _, o := range nov {
		if o.Start.Hour() != 9 {
			t.Errorf("November occurrence at %s", o.Start)
		}
	}
}

func TestCalendarEndpointErrors(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ev := e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Planning", "start": "2026-05-04T10:00:00Z", "end": "2026-05-04T11:00:00Z"})
	readOnly := e.s.Token("alice@acme.test", "calendar:read")
	contactsOnly := e.s.Token("alice@acme.test", "contacts:read")
	bobCal := e.defaultCal(t, e.bob.Token)
	base := "/api/v1/calendar/calendars/" + e.cal
	rng := "?start=2026-05-01T00:00:00Z&end=2026-06-01T00:00:00Z"
	e.s.Run(t, []webtest.Scenario{
		{Name: "no credential", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars"}, Status: 401, Problem: "unauthorized"},
		{Name: "wrong scope", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars", Token: contactsOnly}, Status: 403, Problem: "insufficient_scope"},
		{Name: "read token cannot write", Request: webtest.Request{Method: "POST", Path: base + "/events", Token: readOnly,
			Body: map[string]any{"title": "x", "start": "2026-05-04T10:00:00Z", "end": "2026-05-04T11:00:00Z"}}, Status: 403, Problem: "insufficient_scope"},
		{Name: "read token reads", Request: webtest.Request{Method: "GET", Path: base + "/events" + rng, Token: readOnly}, Status: 200, Contains: []string{ev.UID}},
		{Name: "another user's calendar", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars/" + bobCal + "/events" + rng, Token: e.alice.Token}, Status: 404, Problem: "not_found"},
		{Name: "another user's calendar in filter", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/events" + rng + "&calendar_ids=" + bobCal, Token: e.alice.Token}, Status: 404, Problem: "not_found"},
		{Name: "another user's event", Request: webtest.Request{Method: "GET", Path: evPath(e.cal, ev.UID), Token: e.bob.Token}, Status: 404, Problem: "not_found"},
		{Name: "outsider", Request: webtest.Request{Method: "DELETE", Path: evPath(e.cal, ev.UID), Token: e.outside.Token}, Status: 404, Problem: "not_found"},
		{Name: "unknown event", Request: webtest.Request{Method: "GET", Path: evPath(e.cal, "nope"), Token: e.alice.Token}, Status: 404, Problem: "not_found"},
		{Name: "range missing start", Request: webtest.Request{Method: "GET", Path: base + "/events?end=2026-06-01T00:00:00Z", Token: e.alice.Token}, Status: 422, Problem: "validation_failed"},
		{Name: "range missing both", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/events", Token: e.alice.Token}, Status: 422, Problem: "validation_failed"},
		{Name: "range end before start", Request: webtest.Request{Method: "GET", Path: base + "/events?start=2026-06-01T00:00:00Z&end=2026-05-01T00:00:00Z", Token: e.alice.Token}, Status: 422, Problem: "validation_failed", Contains: []string{"query.end"}},
		{Name: "range empty", Request: webtest.Request{Method: "GET", Path: base + "/events?start=2026-06-01T00:00:00Z&end=2026-06-01T00:00:00Z", Token: e.alice.Token}, Status: 422, Problem: "validation_failed"},
		{Name: "range over 366 days", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/events?start=2026-01-01T00:00:00Z&end=2027-01-03T00:00:00Z", Token: e.alice.Token}, Status: 422, Problem: "validation_failed", Contains: []string{"366"}},
		{Name: "range of 366 days", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/events?start=2026-01-01T00:00:00Z&end=2027-01-02T00:00:00Z", Token: e.alice.Token}, Status: 200},
		{Name: "range not a date", Request: webtest.Request{Method: "GET", Path: base + "/events?start=yesterday&end=2026-06-01T00:00:00Z", Token: e.alice.Token}, Status: 422, Problem: "validation_failed"},
		{Name: "create without title", Request: webtest.Request{Method: "POST", Path: base + "/events", Token: e.alice.Token,
			Body: map[string]any{"start": "2026-05-04T10:00:00Z", "end": "2026-05-04T11:00:00Z"}}, Status: 422, Problem: "validation_failed"},
		{Name: "create end before start", Request: webtest.Request{Method: "POST", Path: base + "/events", Token: e.alice.Token,
			Body: map[string]any{"title": "x", "start": "2026-05-04T10:00:00Z", "end": "2026-05-04T09:00:00Z"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.end"}},
		{Name: "create bad start", Request: webtest.Request{Method: "POST", Path: base + "/events", Token: e.alice.Token,
			Body: map[string]any{"title": "x", "start": "next tuesday", "end": "2026-05-04T09:00:00Z"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.start"}},
		{Name: "create bad time zone", Request: webtest.Request{Method: "POST", Path: base + "/events", Token: e.alice.Token,
			Body: map[string]any{"title": "x", "start": "2026-05-04T10:00:00", "end": "2026-05-04T11:00:00", "timezone": "Mars/Olympus"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.timezone"}},
		{Name: "create bad rrule", Request: webtest.Request{Method: "POST", Path: base + "/events", Token: e.alice.Token,
			Body: map[string]any{"title": "x", "start": "2026-05-04T10:00:00Z", "end": "2026-05-04T11:00:00Z", "rrule": "FREQ=SOMETIMES"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.rrule"}},
		{Name: "create bad attendee", Request: webtest.Request{Method: "POST", Path: base + "/events", Token: e.alice.Token,
			Body: map[string]any{"title": "x", "start": "2026-05-04T10:00:00Z", "end": "2026-05-04T11:00:00Z", "attendees": []map[string]string{{"email": "not-an-address"}}}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.attendees[0].email"}},
		{Name: "create in unknown calendar", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars/nope/events", Token: e.alice.Token,
			Body: map[string]any{"title": "x", "start": "2026-05-04T10:00:00Z", "end": "2026-05-04T11:00:00Z"}}, Status: 404, Problem: "not_found"},
		{Name: "update stale If-Match", Request: webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID), Token: e.alice.Token,
			Header: map[string]string{"If-Match": `"stale"`}, Body: map[string]any{"title": "y"}}, Status: 412, Problem: "precondition_failed"},
		{Name: "delete stale If-Match", Request: webtest.Request{Method: "DELETE", Path: evPath(e.cal, ev.UID), Token: e.alice.Token,
			Header: map[string]string{"If-Match": `"stale"`}}, Status: 412, Problem: "precondition_failed"},
		{Name: "update empty title", Request: webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID), Token: e.alice.Token, Body: map[string]any{"title": ""}}, Status: 422, Problem: "validation_failed"},
		{Name: "occurrence bad date", Request: webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID) + "/occurrences/May-4", Token: e.alice.Token, Body: map[string]any{"title": "y"}}, Status: 422, Problem: "validation_failed"},
		{Name: "occurrence bad scope", Request: webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID) + "/occurrences/2026-05-04", Token: e.alice.Token, Body: map[string]any{"scope": "some"}}, Status: 422, Problem: "validation_failed"},
		{Name: "occurrence on no date", Request: webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID) + "/occurrences/2026-05-05", Token: e.alice.Token, Body: map[string]any{"title": "y"}}, Status: 404, Problem: "not_found"},
		{Name: "delete occurrence bad scope", Request: webtest.Request{Method: "DELETE", Path: evPath(e.cal, ev.UID) + "/occurrences/2026-05-04?delete_scope=some", Token: e.alice.Token}, Status: 422, Problem: "validation_failed"},
		{Name: "export unknown calendar", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars/nope/export.ics", Token: e.alice.Token}, Status: 404, Problem: "not_found"},
		{Name: "export another user's event", Request: webtest.Request{Method: "GET", Path: evPath(e.cal, ev.UID) + "/event.ics", Token: e.bob.Token}, Status: 404, Problem: "not_found"},
		{Name: "freebusy without attendees", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/freebusy", Token: e.alice.Token,
			Body: map[string]any{"attendees": []string{}, "start": "2026-05-01T00:00:00Z", "end": "2026-05-02T00:00:00Z"}}, Status: 422, Problem: "validation_failed"},
		{Name: "freebusy range reversed", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/freebusy", Token: e.alice.Token,
			Body: map[string]any{"attendees": []string{"bob@acme.test"}, "start": "2026-05-02T00:00:00Z", "end": "2026-05-01T00:00:00Z"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.end"}},
		{Name: "freebusy range too long", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/freebusy", Token: e.alice.Token,
			Body: map[string]any{"attendees": []string{"bob@acme.test"}, "start": "2026-01-01T00:00:00Z", "end": "2027-06-01T00:00:00Z"}}, Status: 422, Problem: "validation_failed"},
		{Name: "create calendar bad zone", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars", Token: e.alice.Token,
			Body: map[string]any{"name": "Work", "timezone": "Nowhere"}}, Status: 422, Problem: "validation_failed"},
	})
	// Nothing changed by the refused requests.
	res := e.s.Do(webtest.Request{Method: "GET", Path: evPath(e.cal, ev.UID), Token: e.alice.Token})
	if res.StatusCode != 200 || !strings.Contains(string(res.Body), `"title":"Planning"`) || res.Header.Get("ETag") == "" {
		t.Fatalf("event after refused writes: %d %s", res.StatusCode, res.Body)
	}
	if got := e.list(t, e.alice.Token, e.cal, "2026-05-01T00:00:00Z", "2026-06-01T00:00:00Z"); len(got) != 1 {
		t.Fatalf("events after refused writes: %+v", got)
	}
}

func TestCalendarCRUDAndEvents(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	res := e.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars", Token: e.alice.Token,
		Body: map[string]any{"name": "Work", "timezone": "Europe/Paris", "color": "#3366ff"}})
	if res.StatusCode != 201 {
		t.Fatalf("create calendar: %d %s", res.StatusCode, res.Body)
	}
	work := res.JSON()["id"].(string)
	// A local time is read in the calendar's zone.
	ev := e.create(t, e.alice.Token, work, map[string]any{"title": "Review", "start": "2026-07-01T14:00:00", "end": "2026-07-01T15:00:00",
		"location": "Room 1", "attendees": []map[string]string{{"email": "bob@acme.test", "name": "Bob"}}})
	if ev.Start.Format(time.RFC3339) != "2026-07-01T14:00:00+02:00" || ev.IsRecurring {
		t.Fatalf("created %+v", ev)
	}
	res = e.s.Do(webtest.Request{Method: "GET", Path: evPath(work, ev.UID), Token: e.alice.Token})
	etag := res.Header.Get("ETag")
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"timezone":"Europe/Paris"`, `"email":"bob@acme.test"`, `"status":"needs-action"`, `"organizer":"alice@acme.test"`}})
	// Partial update with If-Match: the title changes, the rest stays.
	res = e.s.Do(webtest.Request{Method: "PUT", Path: evPath(work, ev.UID), Token: e.alice.Token, Header: map[string]string{"If-Match": etag},
		Body: map[string]any{"title": "Design review", "start": "2026-07-01T16:00:00+02:00"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"title":"Design review"`, `"start":"2026-07-01T16:00:00+02:00"`, `"end":"2026-07-01T17:00:00+02:00"`, `"location":"Room 1"`}})
	if res.Header.Get("ETag") == etag || res.Header.Get("ETag") == "" {
		t.Errorf("ETag after update: %q (was %q)", res.Header.Get("ETag"), etag)
	}
	// All-day event: dates in, dates out.
	ad := e.create(t, e.alice.Token, work, map[string]any{"title": "Holiday", "start": "2026-07-14", "end": "2026-07-14", "all_day": true})
	if !ad.AllDay || ad.End.Sub(ad.Start) != 24*time.Hour {
		t.Fatalf("all-day %+v", ad)
	}
	all := e.list(t, e.alice.Token, "", "2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z")
	if len(all) != 2 || all[0].Title != "Design review" || all[1].Title != "Holiday" {
		t.Fatalf("list all: %+v", all)
	}
	// The calendar_ids filter takes a comma-separated list.
	for _, q := range []struct {
		ids  string
		want int
	}{{work, 2}, {e.cal, 0}, {work + "," + e.cal, 2}} {
		res := e.s.Do(webtest.Request{Method: "GET", Path: "/api/v1/calendar/events?start=2026-07-01T00:00:00Z&end=2026-08-01T00:00:00Z&calendar_ids=" + q.ids, Token: e.alice.Token})
		var got []calSummary
		res.Decode(t, &got)
		if res.StatusCode != 200 || len(got) != q.want {
			t.Errorf("calendar_ids=%s: %d %s", q.ids, res.StatusCode, res.Body)
		}
	}
	// Events: created and updated, with the spec's fields.
	created := e.events(t, calendar.EventCreated)
	updated := e.events(t, calendar.EventUpdated)
	if len(created) != 2 || len(updated) != 1 {
		t.Fatalf("events: %d created, %d updated", len(created), len(updated))
	}
	d := updated[0].Data
	if d["event_id"] != ev.UID || d["calendar_id"] != work || d["title"] != "Design review" || d["start"] != "2026-07-01T16:00:00+02:00" || d["end"] != "2026-07-01T17:00:00+02:00" {
		t.Errorf("updated payload %v", d)
	}
	if _, ok := d["occurrence_date"]; ok {
		t.Errorf("series update carries occurrence_date: %v", d)
	}
	// Delete.
	e.s.Run(t, []webtest.Scenario{
		{Name: "delete", Request: webtest.Request{Method: "DELETE", Path: evPath(work, ev.UID), Token: e.alice.Token}, Status: 204},
		{Name: "gone", Request: webtest.Request{Method: "GET", Path: evPath(work, ev.UID), Token: e.alice.Token}, Status: 404, Problem: "not_found"},
		{Name: "delete again", Request: webtest.Request{Method: "DELETE", Path: evPath(work, ev.UID), Token: e.alice.Token}, Status: 404, Problem: "not_found"},
	})
}

// TestCalendarRangeOverlap: a range query returns every event that overlaps the
// window, however long it is and however long before the window it starts
// (short events are found by both ends of their range, long ones by start).
func TestCalendarRangeOverlap(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	for _, ev := range []struct{ title, start, end string }{
		{"six days, ends in the window", "2026-06-26T10:00:00Z", "2026-07-02T10:00:00Z"},
		{"a week exactly, ends in the window", "2026-06-24T12:00:00Z", "2026-07-01T12:00:00Z"},
		{"eight days, ends in the window", "2026-06-23T12:00:00Z", "2026-07-01T12:00:00Z"},
		{"a quarter, around the window", "2026-05-01T00:00:00Z", "2026-08-31T00:00:00Z"},
		{"a week, ends as the window starts", "2026-06-24T00:00:00Z", "2026-07-01T00:00:00Z"},
		{"a month, ends before the window", "2026-05-01T00:00:00Z", "2026-06-01T00:00:00Z"},
		{"an hour inside", "2026-07-10T09:00:00Z", "2026-07-10T10:00:00Z"},
		{"an hour after", "2026-08-01T00:00:00Z", "2026-08-01T01:00:00Z"},
	} {
		e.create(t, e.alice.Token, e.cal, map[string]any{"title": ev.title, "start": ev.start, "end": ev.end})
	}
	got := e.list(t, e.alice.Token, "", "2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z")
	var titles []string
	for _, s := range got {
		titles = append(titles, s.Title)
	}
	want := []string{"a quarter, around the window", "eight days, ends in the window", "a week exactly, ends in the window",
		"six days, ends in the window", "an hour inside"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("window July 2026:\n got %q\nwant %q", titles, want)
	}
}

func (e *calEnv) detail(t *testing.T, cal, uid string) map[string]any {
	t.Helper()
	res := e.s.Do(webtest.Request{Method: "GET", Path: evPath(cal, uid), Token: e.alice.Token})
	if res.StatusCode != 200 {
		t.Fatalf("get %s: %d %s", uid, res.StatusCode, res.Body)
	}
	return res.JSON()
}

func (e *calEnv) export(t *testing.T, cal, uid string) string {
	t.Helper()
	path := "/api/v1/calendar/calendars/" + cal + "/export.ics"
	if uid != "" {
		path = evPath(cal, uid) + "/event.ics"
	}
	res := e.s.Do(webtest.Request{Method: "GET", Path: path, Token: e.alice.Token})
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/calendar") {
		t.Fatalf("export: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), res.Body)
	}
	return string(res.Body)
}

func dates(ss []calSummary) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.OccurrenceDate+" "+s.Start.Format("15:04")+" "+s.Title)
	}
	return out
}

// TestCalendarOccurrenceThis: an override moves one occurrence, emits an update
// with occurrence_date, survives export → re-import unchanged.
func TestCalendarOccurrenceThis(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ev := e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Weekly", "start": "2026-03-02T10:00:00", "end": "2026-03-02T11:00:00",
		"timezone": "Europe/Berlin", "rrule": "FREQ=WEEKLY;COUNT=6"})
	res := e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID) + "/occurrences/2026-03-16", Token: e.alice.Token,
		Body: map[string]any{"start": "2026-03-17T15:00:00+01:00", "end": "2026-03-17T16:30:00+01:00", "title": "Weekly (moved)"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"occurrence_date":"2026-03-16"`, `"title":"Weekly (moved)"`, `"start":"2026-03-17T15:00:00+01:00"`}})
	got := dates(e.list(t, e.alice.Token, e.cal, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"))
	want := []string{"2026-03-02 10:00 Weekly", "2026-03-09 10:00 Weekly", "2026-03-16 15:00 Weekly (moved)", "2026-03-23 10:00 Weekly", "2026-03-30 10:00 Weekly", "2026-04-06 10:00 Weekly"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("after override:\n got %v\nwant %v", got, want)
	}
	upd := e.events(t, calendar.EventUpdated)
	if len(upd) != 1 || upd[0].Data["occurrence_date"] != "2026-03-16" || upd[0].Data["title"] != "Weekly (moved)" || upd[0].Data["start"] != "2026-03-17T15:00:00+01:00" {
		t.Fatalf("update events %v", upd)
	}
	// Editing the same occurrence again edits its override.
	res = e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID) + "/occurrences/2026-03-16", Token: e.alice.Token, Body: map[string]any{"location": "Annex"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"location":"Annex"`, `"title":"Weekly (moved)"`}})
	d := e.detail(t, e.cal, ev.UID)
	if ov := d["overrides"].([]any); len(ov) != 1 {
		t.Fatalf("overrides %v", d["overrides"])
	}
	// Export, re-import: the same file, the same occurrences.
	ics := e.export(t, e.cal, ev.UID)
	for _, want := range []string{"RECURRENCE-ID;TZID=Europe/Berlin:20260316T100000", "BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "RRULE:FREQ=WEEKLY;COUNT=6"} {
		if !strings.Contains(ics, want) {
			t.Errorf("export lacks %q:\n%s", want, ics)
		}
	}
	r, body := e.importICS(t, e.alice.Token, e.cal, []byte(ics))
	if r.StatusCode != 201 || body["updated"] != 1.0 || body["imported"] != 0.0 || body["skipped"] != 0.0 {
		t.Fatalf("re-import: %d %s", r.StatusCode, r.Body)
	}
	if again := e.export(t, e.cal, ev.UID); again != ics {
		t.Errorf("re-import changed the event:\n%s\n---\n%s", ics, again)
	}
	if got2 := dates(e.list(t, e.alice.Token, e.cal, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z")); strings.Join(got2, "|") != strings.Join(want, "|") {
		t.Fatalf("after re-import %v", got2)
	}
	// Into another user's calendar: a new event with the same series.
	bobCal := e.defaultCal(t, e.bob.Token)
	body2, ct := calMultipart(t, "file", "w.ics", []byte(ics))
	r = e.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars/" + bobCal + "/import", Token: e.bob.Token, Body: body2, Header: map[string]string{"Content-Type": ct}})
	webtest.Check(t, r, webtest.Scenario{Status: 201, Contains: []string{`"imported":1`}})
	if got3 := dates(e.list(t, e.bob.Token, bobCal, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z")); strings.Join(got3, "|") != strings.Join(want, "|") {
		t.Fatalf("bob's copy %v", got3)
	}
	// Deleting the overridden occurrence drops the override and excludes it.
	r = e.s.Do(webtest.Request{Method: "DELETE", Path: evPath(e.cal, ev.UID) + "/occurrences/2026-03-16", Token: e.alice.Token})
	webtest.Check(t, r, webtest.Scenario{Status: 204})
	got = dates(e.list(t, e.alice.Token, e.cal, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"))
	if len(got) != 5 || strings.Contains(strings.Join(got, "|"), "2026-03-16") {
		t.Fatalf("after delete this: %v", got)
	}
	if !strings.Contains(e.export(t, e.cal, ev.UID), "EXDATE;TZID=Europe/Berlin:20260316T100000") {
		t.Errorf("no EXDATE")
	}
}

// TestCalendarThisAndFollowing splits a series at its first and at a middle
// occurrence.
func TestCalendarThisAndFollowing(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	mk := func() calSummary {
		return e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Sync", "start": "2026-04-06T09:00:00", "end": "2026-04-06T09:30:00",
			"timezone": "America/New_York", "rrule": "FREQ=DAILY;COUNT=10"})
	}
	rng := func() []calSummary {
		return e.list(t, e.alice.Token, e.cal, "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z")
	}

	// At the first occurrence: the whole series changes, no new series.
	a := mk()
	res := e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, a.UID) + "/occurrences/2026-04-06", Token: e.alice.Token,
		Body: map[string]any{"scope": "this_and_following", "title": "Sync v2", "start": "2026-04-06T10:00:00-04:00", "end": "2026-04-06T10:30:00-04:00"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"uid":"` + a.UID + `"`, `"title":"Sync v2"`}})
	occ := rng()
	if len(occ) != 10 {
		t.Fatalf("first split: %d occurrences", len(occ))
	}
	for _, o := range occ {
		if o.UID != a.UID || o.Title != "Sync v2" || o.Start.Hour() != 10 {
			t.Fatalf("first split: %v", dates(occ))
		}
	}
	e.s.Do(webtest.Request{Method: "DELETE", Path: evPath(e.cal, a.UID), Token: e.alice.Token})

	// At a middle occurrence, with an override after the split and one before.
	b := mk()
	for _, d := range []string{"2026-04-07", "2026-04-13"} {
		r := e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, b.UID) + "/occurrences/" + d, Token: e.alice.Token, Body: map[string]any{"location": "Override " + d}})
		webtest.Check(t, r, webtest.Scenario{Status: 200})
	}
	res = e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, b.UID) + "/occurrences/2026-04-10", Token: e.alice.Token,
		Body: map[string]any{"scope": "this_and_following", "title": "Sync (new)"}})
	var second calSummary
	res.Decode(t, &second)
	if res.StatusCode != 200 || second.UID == b.UID || second.Title != "Sync (new)" || second.Start.Format("2006-01-02T15:04") != "2026-04-10T09:00" {
		t.Fatalf("middle split: %d %s", res.StatusCode, res.Body)
	}
	occ = rng()
	if len(occ) != 10 {
		t.Fatalf("middle split: %d occurrences %v", len(occ), dates(occ))
	}
	for _, o := range occ {
		before := o.Start.Before(time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC))
		if before && (o.UID != b.UID || o.Title != "Sync") || !before && (o.UID != second.UID || o.Title != "Sync (new)") {
			t.Errorf("occurrence %s %s %s", o.OccurrenceDate, o.UID, o.Title)
		}
	}
	old := e.export(t, e.cal, b.UID)
	if !strings.Contains(old, "UNTIL=20260410T") || strings.Contains(old, "COUNT=") || strings.Contains(old, "20260413") {
		t.Errorf("old series:\n%s", old)
	}
	nw := e.export(t, e.cal, second.UID)
	if !strings.Contains(nw, "COUNT=6") || !strings.Contains(nw, "RECURRENCE-ID;TZID=America/New_York:20260413T090000") || !strings.Contains(nw, "RELATED-TO;RELTYPE=SIBLING:"+b.UID) {
		t.Errorf("new series:\n%s", nw)
	}
	if len(e.events(t, calendar.EventCreated)) != 3 {
		t.Errorf("created events: %d", len(e.events(t, calendar.EventCreated)))
	}
	// Delete this_and_following at a middle occurrence, then all.
	r := e.s.Do(webtest.Request{Method: "DELETE", Path: evPath(e.cal, second.UID) + "/occurrences/2026-04-12?delete_scope=this_and_following", Token: e.alice.Token})
	webtest.Check(t, r, webtest.Scenario{Status: 204})
	if occ = rng(); len(occ) != 6 {
		t.Fatalf("after delete this_and_following: %v", dates(occ))
	}
	r = e.s.Do(webtest.Request{Method: "DELETE", Path: evPath(e.cal, b.UID) + "/occurrences/2026-04-08?delete_scope=all", Token: e.alice.Token})
	webtest.Check(t, r, webtest.Scenario{Status: 204})
	if occ = rng(); len(occ) != 2 || occ[0].UID != second.UID {
		t.Fatalf("after delete all: %v", dates(occ))
	}
	// scope all from a later occurrence moves the whole series by the same amount.
	r = e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, second.UID) + "/occurrences/2026-04-11", Token: e.alice.Token,
		Body: map[string]any{"scope": "all", "start": "2026-04-11T11:00:00-04:00"}})
	webtest.Check(t, r, webtest.Scenario{Status: 200})
	for _, o := range rng() {
		if o.Start.Hour() != 11 || o.End.Sub(o.Start) != 30*time.Minute {
			t.Errorf("moved series: %s %s", o.Start, o.End)
		}
	}
}

func TestCalendarFreeBusy(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	bobCal := e.defaultCal(t, e.bob.Token)
	res := e.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars", Token: e.bob.Token, Body: map[string]any{"name": "Side"}})
	side := res.JSON()["id"].(string)
	e.create(t, e.bob.Token, bobCal, map[string]any{"title": "Secret board meeting", "start": "2026-06-01T09:00:00Z", "end": "2026-06-01T10:00:00Z"})
	e.create(t, e.bob.Token, side, map[string]any{"title": "Overlap", "start": "2026-06-01T09:30:00Z", "end": "2026-06-01T11:00:00Z"})
	e.create(t, e.bob.Token, bobCal, map[string]any{"title": "Daily", "start": "2026-05-30T14:00:00Z", "end": "2026-05-30T15:00:00Z", "rrule": "FREQ=DAILY"})
	outsiderCal := e.defaultCal(t, e.outside.Token)
	e.create(t, e.outside.Token, outsiderCal, map[string]any{"title": "Other org", "start": "2026-06-01T09:00:00Z", "end": "2026-06-01T10:00:00Z"})
	res = e.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/freebusy", Token: e.alice.Token, Body: map[string]any{
		"attendees": []string{"BOB@acme.test", "olga@other.test", "nobody@acme.test", "alice@acme.test"},
		"start":     "2026-06-01T00:00:00Z", "end": "2026-06-03T00:00:00Z"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200, NotContains: []string{"Secret", "Overlap", "Daily", "olga", "nobody", "Other org"}})
	var fb struct {
		Attendees []struct {
			Email  string `json:"email"`
			UserID string `json:"user_id"`
			Busy   []struct {
				Start time.Time `json:"start"`
				End   time.Time `json:"end"`
			} `json:"busy"`
		} `json:"attendees"`
	}
	res.Decode(t, &fb)
	if len(fb.Attendees) != 2 || fb.Attendees[0].Email != "bob@acme.test" || fb.Attendees[0].UserID != e.bob.UserID || fb.Attendees[1].Email != "alice@acme.test" {
		t.Fatalf("attendees %s", res.Body)
	}
	var got []string
	for _, b := range fb.Attendees[0].Busy {
		got = append(got, b.Start.UTC().Format("02 15:04")+"-"+b.End.UTC().Format("02 15:04"))
	}
	want := "01 09:00-01 11:00|01 14:00-01 15:00|02 14:00-02 15:00"
	if strings.Join(got, "|") != want {
		t.Fatalf("bob busy %v, want %s", got, want)
	}
	if len(fb.Attendees[1].Busy) != 0 {
		t.Errorf("alice busy %v", fb.Attendees[1].Busy)
	}
}

func TestCalendarImport(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	long := strings.Repeat("very long description ", 40)
	// LF line endings mixed with CRLF, an unfolded 800-character line, a Windows
	// TZID, a TZID without VTIMEZONE, no DTSTAMP, a VTODO, a broken event, and a
	// recurring event with an override listed before its master.
	sloppy := "BEGIN:VCALENDAR\nVERSION:2.0\r\nPRODID:-//Sloppy//EN\n" +
		"BEGIN:VEVENT\nUID:win-1\nSUMMARY:Windows zone\nDTSTART;TZID=Eastern Standard Time:20260302T090000\nDTEND;TZID=Eastern Standard Time:20260302T100000\nDESCRIPTION:" + long + "\nEND:VEVENT\n" +
		"BEGIN:VEVENT\r\nUID:series-1\r\nDTSTAMP:20260101T000000Z\r\nRECURRENCE-ID;TZID=Europe/Paris:20260304T080000\r\nSUMMARY:Moved\r\nDTSTART;TZID=Europe/Paris:20260304T120000\r\nDTEND;TZID=Europe/Paris:20260304T130000\r\nEND:VEVENT\r\n" +
		"BEGIN:VTODO\nUID:todo-1\nSUMMARY:Task\nEND:VTODO\n" +
		"BEGIN:VEVENT\nUID:broken-1\nSUMMARY:No start\nEND:VEVENT\n" +
		"BEGIN:VEVENT\nUID:series-1\nDTSTAMP:20260101T000000Z\nSUMMARY:Daily\nDTSTART;TZID=Europe/Paris:20260302T080000\nDTEND;TZID=Europe/Paris:20260302T083000\nRRULE:FREQ=DAILY;COUNT=5\nEXDATE;TZID=Europe/Paris:20260303T080000,20260305T080000\nBEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT10M\nDESCRIPTION:Reminder\nEND:VALARM\nX-CUSTOM-THING:kept\nEND:VEVENT\n" +
		"END:VCALENDAR\n"
	res, body := e.importICS(t, e.alice.Token, e.cal, []byte(sloppy))
	if res.StatusCode != 201 {
		t.Fatalf("import: %d %s", res.StatusCode, res.Body)
	}
	if body["imported"] != 2.0 || body["updated"] != 0.0 || body["skipped"] != 2.0 {
		t.Fatalf("counts: %s", res.Body)
	}
	for _, want := range []string{`"uid":"todo-1"`, `"uid":"broken-1"`, "DTSTART", `Eastern Standard Time`, "America/New_York", "DTSTAMP"} {
		if !strings.Contains(string(res.Body), want) {
			t.Errorf("report lacks %q: %s", want, res.Body)
		}
	}
	got := dates(e.list(t, e.alice.Token, e.cal, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"))
	want := []string{"2026-03-02 08:00 Daily", " 09:00 Windows zone", "2026-03-04 12:00 Moved", "2026-03-06 08:00 Daily"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("imported:\n got %v\nwant %v", got, want)
	}
	ics := e.export(t, e.cal, "series-1")
	for _, want := range []string{"BEGIN:VALARM", "TRIGGER:-PT10M", "X-CUSTOM-THING:kept", "BEGIN:VTIMEZONE"} {
		if !strings.Contains(ics, want) {
			t.Errorf("stored event lacks %q", want)
		}
	}
	for _, line := range strings.Split(e.export(t, e.cal, "win-1"), "\r\n") {
		if len(line) > 75 {
			t.Errorf("export line of %d octets", len(line))
		}
	}
	// The same UID again updates; a new one is added.
	again := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:win-1\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Renamed\r\nDTSTART:20260302T140000Z\r\nDTEND:20260302T150000Z\r\nEND:VEVENT\r\n" +
		"BEGIN:VEVENT\r\nUID:new-1\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:New\r\nDTSTART;VALUE=DATE:20260310\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	res, body = e.importICS(t, e.alice.Token, e.cal, []byte(again))
	if res.StatusCode != 201 || body["imported"] != 1.0 || body["updated"] != 1.0 {
		t.Fatalf("second import: %d %s", res.StatusCode, res.Body)
	}
	if d := e.detail(t, e.cal, "win-1"); d["title"] != "Renamed" {
		t.Errorf("not updated: %v", d)
	}

	big := make([]byte, 11<<20)
	copy(big, "BEGIN:VCALENDAR\r\n")
	for i := 17; i < len(big); i++ {
		big[i] = 'x'
	}
	noFile, ct := calMultipart(t, "other", "a.ics", []byte(again))
	bigBody, bigCT := calMultipart(t, "file", "big.ics", big)
	notICS, notCT := calMultipart(t, "file", "a.ics", []byte("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada\r\nEND:VCARD\r\n"))
	empty, emptyCT := calMultipart(t, "file", "a.ics", []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n"))
	imp := "/api/v1/calendar/calendars/" + e.cal + "/import"
	e.s.Run(t, []webtest.Scenario{
		{Name: "not iCalendar", Request: webtest.Request{Method: "POST", Path: imp, Token: e.alice.Token, Body: notICS, Header: map[string]string{"Content-Type": notCT}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.file"}},
		{Name: "no events", Request: webtest.Request{Method: "POST", Path: imp, Token: e.alice.Token, Body: empty, Header: map[string]string{"Content-Type": emptyCT}}, Status: 422, Problem: "validation_failed"},
		{Name: "no file field", Request: webtest.Request{Method: "POST", Path: imp, Token: e.alice.Token, Body: noFile, Header: map[string]string{"Content-Type": ct}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.file"}},
		{Name: "not multipart", Request: webtest.Request{Method: "POST", Path: imp, Token: e.alice.Token, Body: again, Header: map[string]string{"Content-Type": "text/calendar"}}, Status: 422, Problem: "validation_failed"},
		{Name: "too large", Request: webtest.Request{Method: "POST", Path: imp, Token: e.alice.Token, Body: bigBody, Header: map[string]string{"Content-Type": bigCT}}, Status: 413, Problem: "payload_too_large"},
		{Name: "read-only token", Request: webtest.Request{Method: "POST", Path: imp, Token: e.s.Token("alice@acme.test", "calendar:read"), Body: empty, Header: map[string]string{"Content-Type": emptyCT}}, Status: 403, Problem: "insufficient_scope"},
		{Name: "another user's calendar", Request: webtest.Request{Method: "POST", Path: imp, Token: e.bob.Token, Body: empty, Header: map[string]string{"Content-Type": emptyCT}}, Status: 404, Problem: "not_found"},
	})
	// The whole calendar exports as one file with a VTIMEZONE per zone.
	all := e.export(t, e.cal, "")
	if strings.Count(all, "BEGIN:VEVENT") != 4 || !strings.Contains(all, "TZID:Europe/Paris") || !strings.HasSuffix(all, "END:VCALENDAR\r\n") {
		t.Errorf("calendar export:\n%s", all)
	}
}

// TestCalendarObjects exercises the service methods a CalDAV door uses: data a
// client wrote survives REST edits verbatim; ETags and the change feed.
func TestCalendarObjects(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ctx := context.Background()
	p, err := e.s.Main.Identity.Authenticate(ctx, e.alice.Token)
	if err != nil {
		t.Fatal(err)
	}
	svc := e.s.Main.Calendar
	client := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Client//EN\r\nBEGIN:VEVENT\r\nUID:dav-1\r\nDTSTAMP:20260101T000000Z\r\n" +
		"SUMMARY:From client\r\nDTSTART;TZID=Europe/Rome:20260901T100000\r\nDTEND;TZID=Europe/Rome:20260901T110000\r\n" +
		"ATTENDEE;CN=Bob;PARTSTAT=ACCEPTED;X-NUM-GUESTS=2:mailto:bob@acme.test\r\nX-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC\r\n" +
		"BEGIN:VALARM\r\nACTION:AUDIO\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	o, created, err := svc.PutObject(ctx, p, e.cal, "client-name.ics", strings.NewReader(client), calendar.Conditions{IfNoneMatch: "*"})
	if err != nil || !created || o.ETag == "" {
		t.Fatalf("put: %v %v %+v", err, created, o)
	}
	if _, _, err := svc.PutObject(ctx, p, e.cal, "client-name.ics", strings.NewReader(client), calendar.Conditions{IfNoneMatch: "*"}); app.ErrorCode(err) != app.EPreconditionFailed {
		t.Fatalf("If-None-Match on existing: %v", err)
	}
	_, seq0, err := svc.Changes(ctx, p, e.cal, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A REST edit keeps what the model does not hold.
	res := e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, "dav-1"), Token: e.alice.Token,
		Body: map[string]any{"title": "Edited", "attendees": []map[string]string{{"email": "bob@acme.test", "name": "Bob"}, {"email": "carol@acme.test"}}}})
	webtest.Check(t, res, webtest.Scenario{Status: 200})
	got, err := svc.GetObject(ctx, p, e.cal, "client-name.ics")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SUMMARY:Edited", "X-NUM-GUESTS=2", "PARTSTAT=ACCEPTED", "X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC", "BEGIN:VALARM", "TRIGGER:-PT5M", "mailto:carol@acme.test", "SEQUENCE:1"} {
		if !strings.Contains(got.ICS, want) {
			t.Errorf("after REST edit the object lacks %q:\n%s", want, got.ICS)
		}
	}
	if got.ETag == o.ETag || res.Header.Get("ETag") != got.ETag {
		t.Errorf("etags: put %s, rest %s, get %s", o.ETag, res.Header.Get("ETag"), got.ETag)
	}
	if _, _, err := svc.PutObject(ctx, p, e.cal, "client-name.ics", strings.NewReader(client), calendar.Conditions{IfMatch: o.ETag}); app.ErrorCode(err) != app.EPreconditionFailed {
		t.Fatalf("stale If-Match: %v", err)
	}
	// Range query for a calendar-query time-range.
	if objs, err := svc.ObjectsInRange(ctx, p, e.cal, time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)); err != nil || len(objs) != 1 {
		t.Fatalf("in range: %v %v", objs, err)
	}
	if objs, err := svc.ObjectsInRange(ctx, p, e.cal, time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 9, 3, 0, 0, 0, 0, time.UTC)); err != nil || len(objs) != 0 {
		t.Fatalf("out of range: %v %v", objs, err)
	}
	// Changes after seq0: the edit; after a delete, a tombstone.
	ch, seq1, err := svc.Changes(ctx, p, e.cal, seq0)
	if err != nil || len(ch) != 1 || ch[0].Name != "client-name.ics" || ch[0].Deleted || seq1 <= seq0 {
		t.Fatalf("changes: %+v %d %v", ch, seq1, err)
	}
	if err := svc.DeleteObject(ctx, p, e.cal, "client-name.ics", got.ETag); err != nil {
		t.Fatal(err)
	}
	ch, _, err = svc.Changes(ctx, p, e.cal, seq1)
	if err != nil || len(ch) != 1 || !ch[0].Deleted || ch[0].UID != "dav-1" {
		t.Fatalf("tombstone: %+v %v", ch, err)
	}
	// Bob cannot reach Alice's objects.
	pb, _ := e.s.Main.Identity.Authenticate(ctx, e.bob.Token)
	if _, err := svc.GetObject(ctx, pb, e.cal, "client-name.ics"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("bob: %v", err)
	}
	// A second UID in one resource is refused.
	two := strings.Replace(client, "END:VCALENDAR", "BEGIN:VEVENT\r\nUID:other\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260901T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR", 1)
	if _, _, err := svc.PutObject(ctx, p, e.cal, "two.ics", strings.NewReader(two), calendar.Conditions{}); app.ErrorCode(err) != app.EValidation {
		t.Fatalf("two UIDs: %v", err)
	}
}

// TestCalendarDemo: the demo seeds recurring and single events once.
func TestCalendarDemo(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	var creds []wire.DemoCredential
	for i := 0; i < 2; i++ {
		var err error
		if creds, err = wire.SeedDemo(ctx, s.Main); err != nil {
			t.Fatal(err)
		}
	}
	e := &calEnv{s: s}
	for _, c := range creds {
		if c.Email != "alice@acme.example" {
			continue
		}
		now := time.Now().UTC()
		evs := e.list(t, c.Token, "", now.AddDate(0, 0, -7).Format(time.RFC3339), now.AddDate(0, 0, 14).Format(time.RFC3339))
		recurring, single := 0, 0
		seen := map[string]bool{}
		for _, ev := range evs {
			k := ev.UID + ev.OccurrenceDate
			if seen[k] {
				t.Fatalf("duplicate occurrence %s", k)
			}
			seen[k] = true
			if ev.IsRecurring {
				recurring++
			} else {
				single++
			}
		}
		if recurring < 10 || single < 2 {
			t.Fatalf("demo events: %d recurring, %d single: %v", recurring, single, dates(evs))
		}
		return
	}
	t.Fatal("no demo user alice")
}

// calBigICS is an export of a large hosted calendar: n events over a year,
// every tenth recurring, with attendees and some alarms.
func calBigICS(n int) []byte {
	var b bytes.Buffer
	b.WriteString("BEGIN:VCALENDAR\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\nVERSION:2.0\r\nCALSCALE:GREGORIAN\r\nMETHOD:PUBLISH\r\n")
	b.WriteString("BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n")
	base := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		st := base.Add(time.Duration(i%8760) * time.Hour)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nDTSTART;TZID=Europe/Paris:%s\r\nDTEND;TZID=Europe/Paris:%s\r\nDTSTAMP:20260101T000000Z\r\nUID:%08d-big@google.com\r\n",
			st.Format("20060102T150405"), st.Add(45*time.Minute).Format("20060102T150405"), i)
		if i%10 == 0 {
			b.WriteString("RRULE:FREQ=WEEKLY;BYDAY=MO,WE\r\n")
		}
		fmt.Fprintf(&b, "LAST-MODIFIED:20260101T000000Z\r\nLOCATION:Room %d\r\nSEQUENCE:0\r\nSTATUS:CONFIRMED\r\nSUMMARY:Meeting %d\r\n", i%20, i)
		fmt.Fprintf(&b, "ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Person %d:mailto:p%d@example.test\r\n", i%50, i%50)
		if i%4 == 0 {
			b.WriteString("BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Reminder\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n")
		}
		b.WriteString("END:VEVENT\r\n")
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// BenchmarkCalendarImportHTTP: a 16,000-event, ~6 MB file imported in one
// multipart request; reports the file size and the peak Go heap of the
// process (server and client) during the request.
func BenchmarkCalendarImportHTTP(b *testing.B) {
	data := calBigICS(16000)
	body, ct := calMultipart(b, "file", "big.ics", data)
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(len(data))/(1<<20), "file-MiB")
	var peak uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := webtest.New(b)
		alice := s.Bootstrap("Acme", "alice@acme.test", "admin")
		e := &calEnv{s: s}
		cal := e.defaultCal(b, alice.Token)
		runtime.GC()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		b.StartTimer()
		res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars/" + cal + "/import", Token: alice.Token,
			Body: body, Header: map[string]string{"Content-Type": ct}})
		b.StopTimer()
		close(stop)
		<-done
		if res.StatusCode != 201 || !bytes.Contains(res.Body, []byte(`"imported":16000`)) {
			b.Fatalf("import: %d %.300s", res.StatusCode, res.Body)
		}
		s.Stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// TestCalendarImportOutlookZone: a TZID that names no zone is read through its
// VTIMEZONE's offsets, DST included.
func TestCalendarImportOutlookZone(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ics := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:Microsoft Exchange Server 2010\r\n" +
		"BEGIN:VTIMEZONE\r\nTZID:(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:16010101T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10\r\nEND:STANDARD\r\n" +
		"BEGIN:DAYLIGHT\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n" +
		"BEGIN:VEVENT\r\nUID:040000008200E00074C5B7101A82E008\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Outlook weekly\r\n" +
		"DTSTART;TZID=\"(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna\":20260302T100000\r\n" +
		"DTEND;TZID=\"(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna\":20260302T110000\r\n" +
		"RRULE:FREQ=WEEKLY;COUNT=6\r\nX-MICROSOFT-CDO-BUSYSTATUS:BUSY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	res, body := e.importICS(t, e.alice.Token, e.cal, []byte(ics))
	if res.StatusCode != 201 || body["imported"] != 1.0 || !strings.Contains(string(res.Body), "same offsets") {
		t.Fatalf("import: %d %s", res.StatusCode, res.Body)
	}
	got := e.list(t, e.alice.Token, e.cal, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z")
	if len(got) != 6 {
		t.Fatalf("%d occurrences", len(got))
	}
	if got[0].Start.UTC().Hour() != 9 || got[5].Start.UTC().Hour() != 8 { // CET, then CEST from 29 March
		t.Fatalf("occurrences %s … %s", got[0].Start, got[5].Start)
	}
	if ex := e.export(t, e.cal, "040000008200E00074C5B7101A82E008"); !strings.Contains(ex, "X-MICROSOFT-CDO-BUSYSTATUS:BUSY") || !strings.Contains(ex, "Amsterdam") {
		t.Errorf("export:\n%s", ex)
	}
}

// TestCalendarMoveSeries: moving a series keeps its exceptions attached.
func TestCalendarMoveSeries(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ev := e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Weekly", "start": "2026-03-02T09:00:00", "end": "2026-03-02T10:00:00",
		"timezone": "Europe/Paris", "rrule": "FREQ=WEEKLY;COUNT=5", "exdates": []string{"2026-03-09"}})
	r := e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID) + "/occurrences/2026-03-16", Token: e.alice.Token, Body: map[string]any{"title": "Special"}})
	webtest.Check(t, r, webtest.Scenario{Status: 200})
	// One day later and one hour later, across the DST change of 29 March.
	r = e.s.Do(webtest.Request{Method: "PUT", Path: evPath(e.cal, ev.UID), Token: e.alice.Token, Body: map[string]any{"start": "2026-03-03T10:00:00+01:00"}})
	webtest.Check(t, r, webtest.Scenario{Status: 200})
	got := dates(e.list(t, e.alice.Token, e.cal, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"))
	want := []string{"2026-03-03 10:00 Weekly", "2026-03-17 10:00 Special", "2026-03-24 10:00 Weekly", "2026-03-31 10:00 Weekly"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("moved series:\n got %v\nwant %v", got, want)
	}
}

// TestCalendarAllDayFloating: all-day dates are days of the calendar's zone.
func TestCalendarAllDayFloating(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	res := e.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars", Token: e.alice.Token, Body: map[string]any{"name": "NY", "timezone": "America/New_York"}})
	ny := res.JSON()["id"].(string)
	ev := e.create(t, e.alice.Token, ny, map[string]any{"title": "Holiday", "start": "2026-07-14", "end": "2026-07-15", "all_day": true, "rrule": "FREQ=YEARLY"})
	if ev.Start.Format(time.RFC3339) != "2026-07-14T00:00:00-04:00" || ev.End.Format(time.RFC3339) != "2026-07-15T00:00:00-04:00" {
		t.Fatalf("created %s – %s", ev.Start, ev.End)
	}
	for _, c := range []struct {
		from, to string
		want     int
	}{
		{"2026-07-14T04:00:00Z", "2026-07-15T04:00:00Z", 1}, // 14 July in New York
		{"2026-07-15T04:00:00Z", "2026-07-16T04:00:00Z", 0}, // 15 July in New York, which is 14 July until 04:00Z
		{"2026-07-14T00:00:00Z", "2026-07-14T03:59:00Z", 0}, // still 13 July in New York
		{"2027-07-14T12:00:00Z", "2027-07-14T13:00:00Z", 1},
	} {
		got := e.list(t, e.alice.Token, ny, c.from, c.to)
		if len(got) != c.want {
			t.Errorf("%s – %s: %v", c.from, c.to, dates(got))
		}
	}
	if got := e.list(t, e.alice.Token, ny, "2027-07-01T00:00:00Z", "2027-08-01T00:00:00Z"); len(got) != 1 || got[0].OccurrenceDate != "2027-07-14" || got[0].Start.Format(time.RFC3339) != "2027-07-14T00:00:00-04:00" {
		t.Errorf("2027: %+v", got)
	}
}

// TestCalendarManage: the service methods a CalDAV door uses for collections.
func TestCalendarManage(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	ctx := context.Background()
	p, _ := e.s.Main.Identity.Authenticate(ctx, e.alice.Token)
	pb, _ := e.s.Main.Identity.Authenticate(ctx, e.bob.Token)
	svc := e.s.Main.Calendar
	c, err := svc.CreateCalendar(ctx, p, calendar.CalendarInput{Name: "Trips"})
	if err != nil || c.Timezone != "UTC" || c.IsDefault {
		t.Fatalf("create: %+v %v", c, err)
	}
	if c, err = svc.UpdateCalendar(ctx, p, c.ID, calendar.CalendarInput{Name: "Travel", Color: "#ff0000", Timezone: "Asia/Tokyo"}); err != nil || c.Name != "Travel" || c.Timezone != "Asia/Tokyo" {
		t.Fatalf("update: %+v %v", c, err)
	}
	if _, err := svc.UpdateCalendar(ctx, p, c.ID, calendar.CalendarInput{Color: "red"}); app.ErrorCode(err) != app.EValidation {
		t.Fatalf("bad colour: %v", err)
	}
	if _, err := svc.UpdateCalendar(ctx, pb, c.ID, calendar.CalendarInput{Name: "Mine"}); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("bob updates alice's calendar: %v", err)
	}
	ev := e.create(t, e.alice.Token, c.ID, map[string]any{"title": "Flight", "start": "2026-08-01T10:00:00", "end": "2026-08-01T22:00:00"})
	if ev.Start.Format(time.RFC3339) != "2026-08-01T10:00:00+09:00" {
		t.Errorf("local time in the calendar's new zone: %s", ev.Start)
	}
	if err := svc.DeleteCalendar(ctx, p, e.cal); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("delete default: %v", err)
	}
	if err := svc.DeleteCalendar(ctx, pb, c.ID); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("bob deletes alice's calendar: %v", err)
	}
	if err := svc.DeleteCalendar(ctx, p, c.ID); err != nil {
		t.Fatal(err)
	}
	e.s.Run(t, []webtest.Scenario{
		{Name: "events gone with the calendar", Request: webtest.Request{Method: "GET", Path: evPath(c.ID, ev.UID), Token: e.alice.Token}, Status: 404, Problem: "not_found"},
		{Name: "calendar list", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars", Token: e.alice.Token}, Status: 200, NotContains: []string{"Travel"}},
	})
}

// TestCalendarExportFileName: the export names its file after the calendar,
// in ASCII for old clients and in UTF-8 (RFC 6266) for the rest; quotes,
// slashes and control characters never reach the header as they are.
func TestCalendarExportFileName(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	for _, tt := range []struct{ name, want string }{
		{"Work", `attachment; filename="Work.ics"; filename*=UTF-8''Work.ics`},
		{"Été 2026", `attachment; filename="_t_ 2026.ics"; filename*=UTF-8''%C3%89t%C3%A9%202026.ics`},
		{`Q3 "plans"/a\b`, `attachment; filename="Q3 _plans__a_b.ics"; filename*=UTF-8''Q3%20%22plans%22_a_b.ics`},
	} {
		res := e.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/calendar/calendars", Token: e.alice.Token, Body: map[string]any{"name": tt.name}})
		if res.StatusCode != 201 {
			t.Fatalf("create %q: %d %s", tt.name, res.StatusCode, res.Body)
		}
		exp := e.s.Do(webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars/" + res.JSON()["id"].(string) + "/export.ics", Token: e.alice.Token})
		if exp.StatusCode != 200 {
			t.Fatalf("export %q: %d", tt.name, exp.StatusCode)
		}
		if cd := exp.Header.Get("Content-Disposition"); cd != tt.want {
			t.Errorf("%q: Content-Disposition %s, want %s", tt.name, cd, tt.want)
		}
	}
}
