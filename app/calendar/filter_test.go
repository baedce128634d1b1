package calendar

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Objects after RFC 4791 Appendix B: events and tasks of a calendar, each the
// text of one resource.
var filterObjects = map[string]string{
	"abcd1.ics": `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example Corp.//CalDAV Client//EN
BEGIN:VEVENT
UID:74855313FA803DA593CD579A@example.com
DTSTAMP:20060206T001102Z
DTSTART:20060102T100000Z
DURATION:PT1H
SUMMARY:Event #1
Description:Go Steelers!
END:VEVENT
END:VCALENDAR`,
	"abcd3.ics": `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example Corp.//CalDAV Client//EN
BEGIN:VEVENT
ATTENDEE;PARTSTAT=ACCEPTED;ROLE=CHAIR:mailto:cyrus@example.com
ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:lisa@example.com
DTSTAMP:20060206T001220Z
DTSTART:20060104T140000Z
DURATION:PT1H
SUMMARY:Event #3
UID:DC6C50A017428C5216A2F1CD@example.com
END:VEVENT
END:VCALENDAR`,
	"abcd5.ics": `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example Corp.//CalDAV Client//EN
BEGIN:VTODO
DTSTAMP:20060205T235300Z
DUE:20060106T120000Z
LAST-MODIFIED:20060205T235308Z
SEQUENCE:1
STATUS:NEEDS-ACTION
SUMMARY:Task #2
UID:E10BA47467C5C69BB74E8720@example.com
BEGIN:VALARM
ACTION:AUDIO
TRIGGER:20060106T100000Z
END:VALARM
END:VTODO
END:VCALENDAR`,
	"abcd6.ics": `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example Corp.//CalDAV Client//EN
BEGIN:VTODO
COMPLETED:20051223T122322Z
DTSTAMP:20060205T235400Z
DUE:20051225T000000Z
LAST-MODIFIED:20060205T235308Z
SEQUENCE:1
STATUS:COMPLETED
SUMMARY:Task #3
UID:E10BA47467C5C69BB74E8722@example.com
END:VTODO
END:VCALENDAR`,
	"abcd7.ics": `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example Corp.//CalDAV Client//EN
BEGIN:VTODO
DTSTAMP:20060205T235600Z
DUE:20060101T120000Z
LAST-MODIFIED:20060205T235308Z
SEQUENCE:1
STATUS:CANCELLED
SUMMARY:Task #4
UID:E10BA47467C5C69BB74E8725@example.com
END:VTODO
END:VCALENDAR`,
	"abcd8.ics": `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example Corp.//CalDAV Client//EN
BEGIN:VTODO
DTSTART:20060205T000000Z
DTSTAMP:20060205T235600Z
SUMMARY:Task #5 with a start only
UID:task-start-only@example.com
END:VTODO
END:VCALENDAR`,
}

func TestFilter(t *testing.T) {
	t.Parallel()
	utc := func(s string) time.Time { t, _ := time.Parse("20060102T150405Z", s); return t }
	vcal := func(comps ...CompFilter) CompFilter { return CompFilter{Name: "VCALENDAR", Comps: comps} }
	text := func(s string) *TextMatch { return &TextMatch{Text: s} }
	// The events' time-ranges come from the recurrence expansion; here, from
	// their DTSTART and DURATION, as the expansion would find them.
	eventStarts := map[string]time.Time{"abcd1.ics": utc("20060102T100000Z"), "abcd3.ics": utc("20060104T140000Z")}
	cases := []struct {
		name   string
		filter CompFilter
		want   []string
	}{
		{"every object", vcal(), []string{"abcd1.ics", "abcd3.ics", "abcd5.ics", "abcd6.ics", "abcd7.ics", "abcd8.ics"}},
		// §7.8.8: events only.
		{"events only", vcal(CompFilter{Name: "VEVENT"}), []string{"abcd1.ics", "abcd3.ics"}},
		{"tasks only", vcal(CompFilter{Name: "VTODO"}), []string{"abcd5.ics", "abcd6.ics", "abcd7.ics", "abcd8.ics"}},
		{"no events", vcal(CompFilter{Name: "VEVENT", IsNotDefined: true}), []string{"abcd5.ics", "abcd6.ics", "abcd7.ics", "abcd8.ics"}},
		// §7.8.6: an event by UID.
		{"event by UID", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "UID", TextMatch: &TextMatch{Text: "DC6C50A017428C5216A2F1CD@example.com", Collation: CollationOctet}}}}),
			[]string{"abcd3.ics"}},
		{"a UID that matches nothing", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "UID", TextMatch: &TextMatch{Text: "no-such-uid", Collation: CollationOctet}}}}), nil},
		{"i;octet is case-sensitive", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "SUMMARY", TextMatch: &TextMatch{Text: "event #1", Collation: CollationOctet}}}}), nil},
		{"i;ascii-casemap is not", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "SUMMARY", TextMatch: text("event #1")}}}), []string{"abcd1.ics"}},
		{"a property name in any case", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "description", TextMatch: text("steelers")}}}), []string{"abcd1.ics"}},
		// §7.8.7: events by PARTSTAT of an attendee.
		{"by PARTSTAT", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "ATTENDEE", TextMatch: text("mailto:lisa@example.com"),
			Params: []ParamFilter{{Name: "PARTSTAT", TextMatch: text("NEEDS-ACTION")}}}}}), []string{"abcd3.ics"}},
		{"a PARTSTAT nobody has", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "ATTENDEE", TextMatch: text("mailto:lisa@example.com"),
			Params: []ParamFilter{{Name: "PARTSTAT", TextMatch: text("ACCEPTED")}}}}}), nil},
		{"a parameter not defined", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "ATTENDEE", Params: []ParamFilter{{Name: "ROLE", IsNotDefined: true}}}}}), []string{"abcd3.ics"}},
		{"a property not defined", vcal(CompFilter{Name: "VEVENT", Props: []PropFilter{{Name: "ATTENDEE", IsNotDefined: true}}}), []string{"abcd1.ics"}},
		// §7.8.9: every pending task (not completed, not cancelled); a
		// prop-filter with a text-match needs the property (Task #5 has no
		// STATUS).
		{"pending tasks", vcal(CompFilter{Name: "VTODO", Props: []PropFilter{{Name: "COMPLETED", IsNotDefined: true},
			{Name: "STATUS", TextMatch: &TextMatch{Text: "CANCELLED", Negate: true}}}}), []string{"abcd5.ics"}},
		// §7.8.5: tasks by alarm time: a VALARM has no time-range of its own
		// here, so a VALARM comp-filter without one finds the task that has an alarm.
		{"tasks with an alarm", vcal(CompFilter{Name: "VTODO", Comps: []CompFilter{{Name: "VALARM"}}}), []string{"abcd5.ics"}},
		// §9.9: a VTODO's time-range.
		{"tasks due in a range (DUE only)", vcal(CompFilter{Name: "VTODO", TimeRange: &TimeRange{Start: utc("20060106T000000Z"), End: utc("20060107T000000Z")}}),
			[]string{"abcd5.ics"}},
		{"a task's DUE decides, not its COMPLETED", vcal(CompFilter{Name: "VTODO", TimeRange: &TimeRange{Start: utc("20051220T000000Z"), End: utc("20051224T000000Z")}}), nil},
		{"a task due at the range's end", vcal(CompFilter{Name: "VTODO", TimeRange: &TimeRange{Start: utc("20051224T000000Z"), End: utc("20051225T000000Z")}}),
			[]string{"abcd6.ics"}},
		{"a start-only task from its start on", vcal(CompFilter{Name: "VTODO", TimeRange: &TimeRange{Start: utc("20060201T000000Z")}}), []string{"abcd8.ics"}},
		{"a start-only task not before it", vcal(CompFilter{Name: "VTODO", TimeRange: &TimeRange{End: utc("20060201T000000Z")}}), []string{"abcd5.ics", "abcd6.ics", "abcd7.ics"}},
		// A VEVENT time-range, answered by the expansion.
		{"events in a range", vcal(CompFilter{Name: "VEVENT", TimeRange: &TimeRange{Start: utc("20060103T000000Z"), End: utc("20060105T000000Z")}}), []string{"abcd3.ics"}},
		{"a property in a time-range", vcal(CompFilter{Name: "VTODO", Props: []PropFilter{{Name: "DUE", TimeRange: &TimeRange{Start: utc("20060101T000000Z"), End: utc("20060102T000000Z")}}}}),
			[]string{"abcd7.ics"}},
		{"a nested is-not-defined", vcal(CompFilter{Name: "VTODO", Comps: []CompFilter{{Name: "VALARM", IsNotDefined: true}}}), []string{"abcd6.ics", "abcd7.ics", "abcd8.ics"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for name, text := range filterObjects {
				vc, err := decode(strings.ReplaceAll(text, "\n", "\r\n") + "\r\n")
				if err != nil {
					t.Fatal(err)
				}
				start, isEvent := eventStarts[name]
				env := filterEnv{loc: time.UTC, eventInRange: func(r TimeRange) bool {
					return isEvent && instantIn(start, TimeRange{Start: r.Start.Add(-time.Hour), End: r.End})
				}}
				if env.matchCalendar(vc, tc.filter) {
					got = append(got, name)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("matched %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTextMatchCollations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    TextMatch
		in   string
		want bool
	}{
		{TextMatch{Text: "ABC"}, "xxabcxx", true},
		{TextMatch{Text: "ABC", Collation: CollationASCIICasemap}, "xxabcxx", true},
		{TextMatch{Text: "ABC", Collation: CollationOctet}, "xxabcxx", false},
		{TextMatch{Text: "ABC", Collation: CollationOctet}, "xxABCxx", true},
		{TextMatch{Text: "ABC", Negate: true}, "xxabcxx", false},
		{TextMatch{Text: "ABC", Negate: true}, "nothing", true},
		{TextMatch{Text: "É"}, "é", false}, // ASCII letters only are folded
		{TextMatch{Text: ""}, "anything", true},
	} {
		if got := tc.m.Matches(tc.in); got != tc.want {
			t.Errorf("%+v on %q: %v, want %v", tc.m, tc.in, got, tc.want)
		}
	}
}
