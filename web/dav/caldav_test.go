package dav

import (
	"encoding/xml"
	"errors"
	"testing"
)

// TestToFilter checks which calendar-query filters are refused, and with
// which precondition (RFC 4791 §7.8); what a valid one matches is the
// calendar service's (app/calendar's filter tests).
func TestToFilter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, filter, refused string
	}{
		{name: "no component filter", filter: `<c:comp-filter name="VCALENDAR"/>`},
		{name: "VEVENT range", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310310T000000Z" end="20310311T000000Z"/></c:comp-filter></c:comp-filter>`},
		{name: "open end", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310310T000000Z"/></c:comp-filter></c:comp-filter>`},
		{name: "text-match", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="UID"><c:text-match collation="i;octet" negate-condition="yes">x</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>`},
		{name: "param-filter", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="ATTENDEE"><c:param-filter name="PARTSTAT"><c:text-match>ACCEPTED</c:text-match></c:param-filter></c:prop-filter></c:comp-filter></c:comp-filter>`},
		{name: "range without bounds", refused: "valid-filter", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range/></c:comp-filter></c:comp-filter>`},
		{name: "end before start", refused: "valid-filter", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20310311T000000Z" end="20310310T000000Z"/></c:comp-filter></c:comp-filter>`},
		{name: "unreadable bound", refused: "valid-filter", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="tomorrow"/></c:comp-filter></c:comp-filter>`},
		{name: "top level is not VCALENDAR", refused: "valid-filter", filter: `<c:comp-filter name="VEVENT"/>`},
		{name: "a range on VCALENDAR", refused: "valid-filter", filter: `<c:comp-filter name="VCALENDAR"><c:time-range start="20310310T000000Z"/></c:comp-filter>`},
		{name: "unknown collation", refused: "supported-collation", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY"><c:text-match collation="i;klingon">x</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>`},
		{name: "negate-condition not yes or no", refused: "valid-filter", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY"><c:text-match negate-condition="maybe">x</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>`},
		{name: "prop-filter without a name", refused: "valid-filter", filter: `<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter/></c:comp-filter></c:comp-filter>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var q calendarQueryBody
			body := `<c:calendar-query xmlns:c="urn:ietf:params:xml:ns:caldav"><c:filter>` + tc.filter + `</c:filter></c:calendar-query>`
			if err := xml.Unmarshal([]byte(body), &q); err != nil || q.Filter == nil {
				t.Fatalf("unmarshal: %v", err)
			}
			_, err := toFilter(q.Filter.Comp)
			var fe filterError
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refused != "" && (!errors.As(err, &fe) || fe.condition != tc.refused):
				t.Errorf("got %v, want the precondition %s", err, tc.refused)
			}
		})
	}
}
