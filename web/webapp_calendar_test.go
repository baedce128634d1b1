package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"atrium/app/identity"
	"atrium/web/ui"
	"atrium/webtest"
)

// TestWebAppCalendarPage: the calendar page answers signed in with the names
// the browser tests rely on, sends a signed-out visitor through sign-in and
// back, and escapes the person's name.
func TestWebAppCalendarPage(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	c := s.Bootstrap("Org", "boss@example.test", "admin")
	const xss = `<img src=x onerror=alert(1)>`
	u, err := s.Main.Identity.EnsureUser(t.Context(), c.OrganizationID, identity.EnsureUserInput{Email: "cal@example.test", LastName: xss, Role: "member"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Main.Identity.SetAccountPassword(t.Context(), u.ID, testPassword); err != nil {
		t.Fatal(err)
	}

	out := newBrowser(t, s)
	p := out.get("/calendar")
	if p.StatusCode != http.StatusSeeOther || p.Header.Get("Location") != "/signin?next=%2Fcalendar" {
		t.Fatalf("signed out: %d %q, want 303 to /signin?next=%%2Fcalendar", p.StatusCode, p.Header.Get("Location"))
	}
	if p := out.signIn("cal@example.test", testPassword); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.StatusCode)
	}

	in := newBrowser(t, s)
	in.mustSignIn("cal@example.test", testPassword)
	p = in.get("/calendar")
	if p.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %d %s", p.StatusCode, p.Body)
	}
	if got := p.Header.Get("Content-Security-Policy"); got != ui.ContentSecurityPolicy {
		t.Errorf("CSP %q", got)
	}
	for _, want := range []string{
		`<a href="/calendar" aria-current="page">Calendar</a>`,
		`<h1>Calendar</h1>`,
		`<meta name="csrf-token" content="` + in.csrf + `">`,
		`<script src="/assets/calendar.js" defer></script>`,
		`id="cal-today">Today</button>`,
		`<span aria-hidden="true">‹ </span>Previous</button>`,
		`id="cal-next">Next<span aria-hidden="true"> ›</span></button>`,
		`id="cal-new">New event</button>`,
		`<label for="ev-title">Title</label>`,
		`<label for="ev-start">Start</label>`,
		`<label for="ev-end">End</label>`,
		`id="ev-save">Save</button>`,
		`<dialog id="ev-dialog" class="cal-dialog" aria-labelledby="ev-h">`,
		`&lt;img src=x onerror=alert(1)&gt;`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(p.Body, "<img src=x") {
		t.Error("the person's name is not escaped")
	}
	if strings.Contains(p.Body, "<script>") || strings.Contains(p.Body, " style=") || strings.Contains(p.Body, "<style") {
		t.Error("inline script or style")
	}
	// Every other page links the calendar.
	if p := in.get("/settings"); !strings.Contains(p.Body, `<a href="/calendar">Calendar</a>`) {
		t.Error("the navigation lacks the calendar")
	}
	// The page's script is served, and puts user text in the page as text only.
	js := in.get("/assets/calendar.js")
	if js.StatusCode != http.StatusOK || !strings.Contains(js.Header.Get("Content-Type"), "javascript") {
		t.Fatalf("calendar.js: %d %s", js.StatusCode, js.Header.Get("Content-Type"))
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute(\"style\""} {
		if strings.Contains(js.Body, bad) {
			t.Errorf("calendar.js uses %s", bad)
		}
	}
}

// TestWebAppCalendarAPIWithSession: what the calendar page does, the REST API
// lets the session do with the page's anti-forgery token, and nothing without
// it: create an event in the browser's time zone, list the week, delete one
// occurrence of a weekly series.
func TestWebAppCalendarAPIWithSession(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "calapi@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("calapi@example.test", testPassword)
	b.get("/calendar")
	page := map[string]string{"X-CSRF-Token": b.csrf, "Origin": s.URL, "Content-Type": "application/json"}

	call := func(method, path, body string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var sb strings.Builder
		_, _ = io.Copy(&sb, res.Body)
		return res.StatusCode, sb.String()
	}
	code, body := call("GET", "/api/v1/calendar/calendars", "", nil)
	var cals []struct {
		ID        string `json:"id"`
		IsDefault bool   `json:"is_default"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &cals) != nil || len(cals) != 1 {
		t.Fatalf("calendars: %d %s", code, body)
	}
	events := "/api/v1/calendar/calendars/" + cals[0].ID + "/events"
	ev := `{"title":"Standup","start":"2026-03-02T09:00:00-05:00","end":"2026-03-02T09:15:00-05:00","timezone":"America/New_York","rrule":"FREQ=WEEKLY;BYDAY=MO;COUNT=4"}`
	if code, body := call("POST", events, ev, map[string]string{"Content-Type": "application/json", "Origin": s.URL}); code != http.StatusForbidden {
		t.Fatalf("without the token: %d %s", code, body)
	}
	code, body = call("POST", events, ev, page)
	var made struct{ UID string }
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &made) != nil || made.UID == "" {
		t.Fatalf("create: %d %s", code, body)
	}
	month := "/api/v1/calendar/events?" + url.Values{"start": {"2026-02-23T00:00:00-05:00"}, "end": {"2026-04-06T00:00:00-04:00"}}.Encode()
	count := func() []string {
		code, body := call("GET", month, "", nil)
		var list []struct {
			OccurrenceDate string `json:"occurrence_date"`
			Start          time.Time
		}
		if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
			t.Fatalf("list: %d %s", code, body)
		}
		var out []string
		for _, e := range list {
			out = append(out, e.OccurrenceDate+"@"+e.Start.Format("15:04Z07:00"))
		}
		return out
	}
	// Across the DST change (8 March) the occurrences keep 09:00 New York time.
	if got := strings.Join(count(), " "); got != "2026-03-02@09:00-05:00 2026-03-09@09:00-04:00 2026-03-16@09:00-04:00 2026-03-23@09:00-04:00" {
		t.Fatalf("occurrences: %s", got)
	}
	if code, body := call("DELETE", events+"/"+made.UID+"/occurrences/2026-03-09?delete_scope=this", "", page); code != http.StatusNoContent {
		t.Fatalf("delete one occurrence: %d %s", code, body)
	}
	if got := strings.Join(count(), " "); got != "2026-03-02@09:00-05:00 2026-03-16@09:00-04:00 2026-03-23@09:00-04:00" {
		t.Fatalf("after deleting one: %s", got)
	}
}
