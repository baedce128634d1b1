package dav

import (
	"encoding/xml"
	"testing"
	"time"
)

// TestQueryRange checks how a calendar-query filter becomes the range given to
// the service's expansion.
func TestQueryRange(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2031, 3, d, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		name       string
		filter     string
		start, end time.Time
		none, ok   bool
	}{
		{name: "no component filter: every object", filter: `<c:comp-filter name="VCALENDAR"/>`, ok: true},
		{name: "VEVENT without a range", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter>`, ok: true},
		{name: "VEVENT range", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310310T000000Z" end="20310311T000000Z"/></c:comp-filter></c:comp-filter>`,
			start: day(10), end: day(11), ok: true},
		{name: "open end", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310310T000000Z"/></c:comp-filter></c:comp-filter>`,
			start: day(10), ok: true},
		{name: "open start", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range end="20310311T000000Z"/></c:comp-filter></c:comp-filter>`,
			end: day(11), ok: true},
		{name: "prop-filters are not evaluated", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY"><c:text-match>x</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>`,
			ok: true},
		{name: "tasks: none", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter>`, none: true, ok: true},
		{name: "without tasks: every object", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"><c:is-not-defined/></c:comp-filter></c:comp-filter>`, ok: true},
		{name: "without events: none", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:is-not-defined/></c:comp-filter></c:comp-filter>`, none: true, ok: true},
		{name: "two disjoint ranges: none", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310310T000000Z" end="20310311T000000Z"/></c:comp-filter>` +
			`<c:comp-filter name="VEVENT"><c:time-range start="20310312T000000Z" end="20310313T000000Z"/></c:comp-filter></c:comp-filter>`, start: day(12), end: day(11), none: true, ok: true},
		{name: "range without bounds", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range/></c:comp-filter></c:comp-filter>`},
		{name: "end before start", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310311T000000Z" end="20310310T000000Z"/></c:comp-filter></c:comp-filter>`},
		{name: "unreadable bound", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="tomorrow"/></c:comp-filter></c:comp-filter>`},
		{name: "top level is not VCALENDAR", filter: `<c:comp-filter name="VEVENT"/>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var q calendarQueryBody
			body := `<c:calendar-query xmlns:c="urn:ietf:params:xml:ns:caldav"><c:filter>` + tc.filter + `</c:filter></c:calendar-query>`
			if err := xml.Unmarshal([]byte(body), &q); err != nil || q.Filter == nil {
				t.Fatalf("unmarshal: %v", err)
			}
			start, end, none, ok := queryRange(q.Filter.Comp)
			if ok != tc.ok || ok && (none != tc.none || !start.Equal(tc.start) || !end.Equal(tc.end)) {
				t.Errorf("queryRange = %v, %v, none %v, ok %v; want %v, %v, none %v, ok %v", start, end, none, ok, tc.start, tc.end, tc.none, tc.ok)
			}
		})
	}
}
