package web_test

import (
	"net/http"
	"testing"

	"atrium/webtest"
)

// TestCalendarRESTManage: calendars are created (201, Idempotency-Key),
// changed and deleted over REST; the default one cannot be deleted; an event
// written over REST answers with everything that was sent.
func TestCalendarRESTManage(t *testing.T) {
	t.Parallel()
	e := newCalEnv(t)
	s := e.s
	tok := e.alice.Token
	createReq := webtest.Request{Method: http.MethodPost, Path: "/api/v1/calendar/calendars", Token: tok,
		Header: map[string]string{"Idempotency-Key": "cal-1"}, Body: map[string]any{"name": "Trips", "color": "#3366ff", "timezone": "Asia/Tokyo"}}
	res := s.Do(createReq)
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"name":"Trips"`, `"color":"#3366ff"`, `"timezone":"Asia/Tokyo"`, `"is_default":false`}})
	id, _ := res.JSON()["id"].(string)
	again := s.Do(createReq)
	webtest.Check(t, again, webtest.Scenario{Status: 201, Contains: []string{`"id":"` + id + `"`}, Headers: map[string]string{"X-Idempotency-Replayed": "true"}})
	cal := "/api/v1/calendar/calendars/" + id
	s.Run(t, []webtest.Scenario{
		{Name: "bad colour", Request: webtest.Request{Method: http.MethodPost, Path: "/api/v1/calendar/calendars", Token: tok, Body: map[string]any{"name": "X", "color": "red"}},
			Status: 422, Problem: "validation_failed", Contains: []string{"body.color"}},
		{Name: "patch", Request: webtest.Request{Method: http.MethodPatch, Path: cal, Token: tok, Body: map[string]any{"name": "Travel"}},
			Status: 200, Contains: []string{`"name":"Travel"`, `"timezone":"Asia/Tokyo"`}},
		{Name: "patch with a bad zone", Request: webtest.Request{Method: http.MethodPatch, Path: cal, Token: tok, Body: map[string]any{"timezone": "Mars/Base"}},
			Status: 422, Problem: "validation_failed", Contains: []string{"body.timezone"}},
		{Name: "bob cannot patch it", Request: webtest.Request{Method: http.MethodPatch, Path: cal, Token: e.bob.Token, Body: map[string]any{"name": "Mine"}},
			Status: 404, Problem: "not_found"},
		{Name: "the default calendar stays", Request: webtest.Request{Method: http.MethodDelete, Path: "/api/v1/calendar/calendars/" + e.cal, Token: tok},
			Status: 409, Problem: "conflict"},
		{Name: "create an event with every field", Request: webtest.Request{Method: http.MethodPost, Path: cal + "/events", Token: tok, Body: map[string]any{
			"title": "Standup", "start": "2026-03-02T09:00:00", "end": "2026-03-02T09:15:00", "timezone": "Europe/Paris", "location": "Room 1",
			"description": "Daily sync", "rrule": "FREQ=DAILY;COUNT=5", "exdates": []string{"2026-03-03T09:00:00"},
			"attendees": []map[string]any{{"email": "bob@acme.test", "name": "Bob"}}}},
			Status: 201, Contains: []string{`"title":"Standup"`, `"start":"2026-03-02T09:00:00+01:00"`, `"end":"2026-03-02T09:15:00+01:00"`, `"all_day":false`,
				`"timezone":"Europe/Paris"`, `"location":"Room 1"`, `"description":"Daily sync"`, `"rrule":"FREQ=DAILY;COUNT=5"`,
				`"exdates":["2026-03-03T09:00:00+01:00"]`, `"email":"bob@acme.test"`}},
		{Name: "delete", Request: webtest.Request{Method: http.MethodDelete, Path: cal, Token: tok}, Status: 204},
		{Name: "gone", Request: webtest.Request{Method: http.MethodGet, Path: cal + "/events?start=2026-03-01T00:00:00Z&end=2026-03-09T00:00:00Z", Token: tok}, Status: 404},
	})
}
