package web_test

import (
	"net/http"
	"strings"
	"testing"

	"atrium/webtest"
)

// Tasks: written by a CalDAV client and kept whole, listed, made, completed and
// deleted through the REST extension, found by calendar-query and
// sync-collection, and never among the events or in free/busy.
func TestCalendarTasks(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	s := e.s
	calPath := "/dav/calendars/" + e.alice.UserID + "/" + e.cal + "/"
	api := "/api/v1/calendar/calendars/" + e.cal
	ics := func(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }
	task := ics("BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//x//EN", "BEGIN:VTODO", "UID:dav-task-1", "DTSTAMP:20310101T000000Z",
		"DUE:20310310T120000Z", "SUMMARY:Buy milk", "STATUS:NEEDS-ACTION", "RELATED-TO:parent-task", "X-CLIENT:kept",
		"BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Milk", "TRIGGER:-PT1H", "END:VALARM", "END:VTODO", "END:VCALENDAR")
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodPut, Path: calPath + "dav-task-1.ics", Token: e.alice.Token,
		Header: map[string]string{"Content-Type": "text/calendar"}, Body: task}), webtest.Scenario{Status: 201})
	e.create(t, e.alice.Token, e.cal, map[string]any{"title": "Busy meeting", "start": "2031-03-10T11:00:00Z", "end": "2031-03-10T13:00:00Z"})

	var made struct {
		UID  string `json:"uid"`
		ETag string `json:"etag"`
	}
	res := s.Do(webtest.Request{Method: "POST", Path: api + "/tasks", Token: e.alice.Token, Body: map[string]any{"title": "Write report", "due": "2031-03-05"}})
	res.Decode(t, &made)
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"title":"Write report"`, `"all_day":true`, `"completed":false`}})

	s.Run(t, []webtest.Scenario{
		{Name: "the DAV task is kept whole", Request: webtest.Request{Method: "GET", Path: calPath + "dav-task-1.ics", Token: e.alice.Token}, Status: 200,
			Contains: []string{"RELATED-TO:parent-task", "X-CLIENT:kept", "BEGIN:VALARM", "TRIGGER:-PT1H"}},
		{Name: "tasks by due date", Request: webtest.Request{Method: "GET", Path: api + "/tasks", Token: e.alice.Token}, Status: 200,
			Contains: []string{`"title":"Write report"`, `"title":"Buy milk"`}},
		{Name: "not among the events", Request: webtest.Request{Method: "GET", Path: api + "/events?start=2031-03-01T00:00:00Z&end=2031-04-01T00:00:00Z", Token: e.alice.Token}, Status: 200,
			Contains: []string{"Busy meeting"}, NotContains: []string{"Buy milk", "Write report"}},
		{Name: "a task is no event", Request: webtest.Request{Method: "GET", Path: api + "/events/dav-task-1", Token: e.alice.Token}, Status: 404},
		{Name: "an event is no task", Request: webtest.Request{Method: "GET", Path: api + "/tasks/nope", Token: e.alice.Token}, Status: 404},
		{Name: "complete", Request: webtest.Request{Method: "PATCH", Path: api + "/tasks/dav-task-1", Token: e.alice.Token, Body: map[string]any{"completed": true}}, Status: 200,
			Contains: []string{`"completed":true`, `"status":"COMPLETED"`}},
		{Name: "completing kept the client's properties", Request: webtest.Request{Method: "GET", Path: calPath + "dav-task-1.ics", Token: e.alice.Token}, Status: 200,
			Contains: []string{"RELATED-TO:parent-task", "X-CLIENT:kept", "BEGIN:VALARM", "STATUS:COMPLETED", "COMPLETED:", "PERCENT-COMPLETE:100"}},
		{Name: "pending tasks by calendar-query", Request: webtest.Request{Method: "REPORT", Path: calPath, Token: e.alice.Token, Header: map[string]string{"Depth": "1"},
			Body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO">` +
				`<c:prop-filter name="COMPLETED"><c:is-not-defined/></c:prop-filter></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`},
			Status: 207, Contains: []string{made.UID + ".ics"}, NotContains: []string{"dav-task-1.ics"}},
		{Name: "undo", Request: webtest.Request{Method: "PATCH", Path: api + "/tasks/dav-task-1", Token: e.alice.Token, Body: map[string]any{"completed": false}}, Status: 200,
			Contains: []string{`"completed":false`, `"completed_at":null`}},
		{Name: "a stale ETag", Request: webtest.Request{Method: "PATCH", Path: api + "/tasks/" + made.UID, Token: e.alice.Token, Header: map[string]string{"If-Match": `"stale"`},
			Body: map[string]any{"title": "x"}}, Status: 412},
		{Name: "an empty title", Request: webtest.Request{Method: "PATCH", Path: api + "/tasks/" + made.UID, Token: e.alice.Token, Body: map[string]any{"title": " "}}, Status: 422,
			Contains: []string{"body.title"}},
		{Name: "a bad due date", Request: webtest.Request{Method: "POST", Path: api + "/tasks", Token: e.alice.Token, Body: map[string]any{"title": "x", "due": "soon"}}, Status: 422,
			Contains: []string{"body.due"}},
		{Name: "free/busy counts the event, not the tasks", Request: webtest.Request{Method: "POST", Path: "/api/v1/calendar/freebusy", Token: e.alice.Token,
			Body: map[string]any{"attendees": []string{"alice@acme.test"}, "start": "2031-03-05T00:00:00Z", "end": "2031-03-11T00:00:00Z"}}, Status: 200,
			Contains: []string{`"busy":[{"start":"2031-03-10T11:00:00Z","end":"2031-03-10T13:00:00Z"}]`}},
		{Name: "another user's tasks", Request: webtest.Request{Method: "GET", Path: api + "/tasks", Token: e.bob.Token}, Status: 404},
		{Name: "delete", Request: webtest.Request{Method: "DELETE", Path: api + "/tasks/" + made.UID, Token: e.alice.Token}, Status: 204},
		{Name: "deleted", Request: webtest.Request{Method: "GET", Path: api + "/tasks/" + made.UID, Token: e.alice.Token}, Status: 404},
	})
}
