package web_test

import (
	"testing"

	"atrium/webtest"
)

// TestUnknownQueryParameters: a parameter an operation does not take is a 422
// naming it and what the operation takes, never silently ignored; values Go
// could not parse are explained in the caller's terms.
func TestUnknownQueryParameters(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	tok := s.Bootstrap("Query Org", "q@query.test", "admin").Token
	s.Run(t, []webtest.Scenario{
		{Name: "from and to for start and end", Request: webtest.Request{Method: "GET",
			Path: "/api/v1/calendar/events?start=2026-01-01T00:00:00Z&end=2026-02-01T00:00:00Z&from=2026-01-01&to=2026-02-01", Token: tok},
			Status: 422, Problem: "validation_failed",
			Contains: []string{`"location":"query.from"`, `"location":"query.to"`, "is not a parameter of this operation; it takes calendar_ids, end, start", `"value":"2026-01-01"`}},
		{Name: "an operation without parameters", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars?limit=5", Token: tok},
			Status: 422, Problem: "validation_failed", Contains: []string{`"location":"query.limit"`, "which takes none"}},
		{Name: "known parameters pass", Request: webtest.Request{Method: "GET",
			Path: "/api/v1/calendar/events?start=2026-01-01T00:00:00Z&end=2026-02-01T00:00:00Z", Token: tok}, Status: 200},
		{Name: "a date without time", Request: webtest.Request{Method: "GET",
			Path: "/api/v1/calendar/events?start=2026-01-01&end=2026-02-01T00:00:00Z", Token: tok},
			Status: 422, Problem: "validation_failed",
			Contains:    []string{"query.start must be a date and time in RFC 3339 form with a time zone, for example 2026-11-24T09:00:00Z"},
			NotContains: []string{"2006-01-02T15:04:05"}},
		{Name: "not a number", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/browse?page=two", Token: tok},
			Status: 422, Problem: "validation_failed", Contains: []string{"must be a whole number"}},
		{Name: "unauthenticated first", Request: webtest.Request{Method: "GET", Path: "/api/v1/calendar/calendars?x=1"},
			Status: 401, Problem: "unauthorized"},
	})
}
