package calendar

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestOccurrencesAcrossDST(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	start := time.Date(2026, 3, 6, 9, 0, 0, 0, ny)
	c := Component{Start: start, End: start.Add(30 * time.Minute), RRule: "FREQ=DAILY", Timezone: "America/New_York"}
	got, err := c.Occurrences(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d occurrences", len(got))
	}
	for _, o := range got {
		if o.In(ny).Hour() != 9 {
			t.Errorf("%s is not 09:00 in New York", o)
		}
	}
	if got[1].Sub(got[0]) != 24*time.Hour || got[2].Sub(got[1]) != 23*time.Hour { // 8 March is 23 hours long
		t.Errorf("gaps %s %s", got[1].Sub(got[0]), got[2].Sub(got[1]))
	}
}

// TestFastForward: starting the walk near the window gives the same
// occurrences as walking from DTSTART, for rules it applies to.
func TestFastForward(t *testing.T) {
	t.Parallel()
	paris := mustLoad(t, "Europe/Paris")
	rules := []string{"FREQ=DAILY", "FREQ=DAILY;INTERVAL=3", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SU;WKST=SU",
		"FREQ=WEEKLY", "FREQ=DAILY;BYMONTH=3,10", "FREQ=WEEKLY;UNTIL=20281231T000000Z", "FREQ=DAILY;COUNT=400", "FREQ=MONTHLY;BYMONTHDAY=31",
		"FREQ=HOURLY;INTERVAL=5", "FREQ=HOURLY;BYHOUR=2,3,9", "FREQ=MINUTELY;INTERVAL=45;BYHOUR=9,10", "FREQ=SECONDLY;INTERVAL=7;BYHOUR=3;BYMINUTE=0",
		"FREQ=MINUTELY;INTERVAL=90;BYDAY=SA", "FREQ=MONTHLY", "FREQ=MONTHLY;INTERVAL=5", "FREQ=MONTHLY;BYDAY=-1FR", "FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=2",
		"FREQ=YEARLY", "FREQ=YEARLY;INTERVAL=2;BYMONTH=2,8;BYDAY=1SU", "FREQ=YEARLY;BYDAY=20MO", "FREQ=YEARLY;BYMONTHDAY=29;BYMONTH=2",
		"FREQ=YEARLY;BYMONTHDAY=-1", "FREQ=MONTHLY;COUNT=30", "FREQ=HOURLY;INTERVAL=7;COUNT=5000", "FREQ=WEEKLY;COUNT=100;BYDAY=SU,SA"}
	for _, loc := range []*time.Location{time.UTC, paris} {
		for _, h := range []int{0, 2, 9} {
			start := time.Date(2024, 1, 31, h, 30, 0, 0, loc)
			for _, rule := range rules {
				c := Component{Start: start, End: start.Add(time.Hour), RRule: rule}
				s, _ := c.set(nil, nil, time.Time{})
				all := s.Between(start, time.Date(2029, 3, 1, 0, 0, 0, 0, time.UTC), true)                                                                     // walked once from DTSTART
				for from := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC); from.Year() < 2029; from = from.AddDate(0, 0, 37).Add(7*time.Hour + 13*time.Minute) { // odd times, across DST changes
					to := from.AddDate(0, 1, 3)
					fast, err := c.Occurrences(from, to, nil)
					if err != nil {
						t.Fatal(err)
					}
					var slow []time.Time
					for _, o := range all {
						if o.Before(to) && overlaps(o, o.Add(time.Hour), from, to) {
							slow = append(slow, o)
						}
					}
					if len(fast) != len(slow) {
						t.Fatalf("%s from %s in %s at %d:30: %d occurrences, want %d", rule, from, loc, h, len(fast), len(slow))
					}
					for i := range fast {
						if !fast[i].Equal(slow[i]) {
							t.Fatalf("%s from %s: %s, want %s", rule, from, fast[i], slow[i])
						}
					}
				}
			}
		}
	}
}

func TestBoundsAndSplitRules(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		rule string
		last time.Time // zero: unbounded
	}{
		{"FREQ=DAILY;COUNT=3", time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC)},
		{"FREQ=WEEKLY;UNTIL=20260115T090000Z", time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)},
		{"FREQ=DAILY", time.Time{}},
	}
	for _, tt := range tests {
		c := Component{Start: start, End: start.Add(time.Hour), RRule: tt.rule}
		_, last, err := c.bounds()
		if err != nil {
			t.Fatal(err)
		}
		if tt.last.IsZero() != (last == nil) || last != nil && !last.Equal(tt.last) {
			t.Errorf("%s: last %v, want %v", tt.rule, last, tt.last)
		}
	}
	if got := ruleUntil("FREQ=DAILY;COUNT=10;BYHOUR=9", time.Date(2026, 1, 4, 8, 59, 59, 0, time.UTC), false); got != "FREQ=DAILY;BYHOUR=9;UNTIL=20260104T085959Z" {
		t.Errorf("ruleUntil %s", got)
	}
	if got := ruleCount("FREQ=DAILY;UNTIL=20260101T000000Z", 4); got != "FREQ=DAILY;COUNT=4" {
		t.Errorf("ruleCount %s", got)
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	at := func(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }
	got := merge([]Interval{{at(9), at(10)}, {at(14), at(15)}, {at(9), at(11)}, {at(11), at(12)}, {at(10), at(10)}})
	want := []Interval{{at(9), at(12)}, {at(14), at(15)}}
	if len(got) != len(want) || !got[0].Start.Equal(want[0].Start) || !got[0].End.Equal(want[0].End) || !got[1].Start.Equal(want[1].Start) {
		t.Fatalf("merge %v", got)
	}
}

func TestSplitLenient(t *testing.T) {
	t.Parallel()
	in := "\ufeffBEGIN:VCALENDAR\nVERSION:2.0\r\nBEGIN:VEVENT\nUID:a\nSUMMARY:fol\r\n ded\n\nEND:VEVENT\r\nEND:VCALENDAR\nBEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:b\nEND:VEVENT\nEND:VCALENDAR\n"
	var got []chunk
	if err := split(strings.NewReader(in), func(c chunk) error { got = append(got, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].uid != "a" || got[0].lines[2] != "SUMMARY:folded" || got[1].uid != "b" {
		t.Fatalf("chunks %+v", got)
	}
	if err := split(strings.NewReader("BEGIN:VCARD\nEND:VCARD\n"), func(chunk) error { return nil }); err != errNotICalendar {
		t.Fatalf("vCard: %v", err)
	}
}

func TestResolveTZ(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"Europe/Paris": "Europe/Paris", "/mozilla.org/20050126_1/Europe/Paris": "Europe/Paris",
		"W. Europe Standard Time": "Europe/Berlin", "/freeassociation.sourceforge.net/Tzfile/America/Argentina/Buenos_Aires": "America/Argentina/Buenos_Aires"} {
		if l, ok := resolveTZ(in); !ok || l.String() != want {
			t.Errorf("%s → %v %v", in, l, ok)
		}
	}
	if _, ok := resolveTZ("Nowhere Standard Time"); ok {
		t.Error("unknown zone resolved")
	}
}

func TestVTimezone(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := writeComponent(&b, vtimezone("America/New_York", mustLoad(t, "America/New_York"), 2026)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BEGIN:DAYLIGHT\r\nDTSTART:20260308T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\nTZNAME:EDT\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400",
		"BEGIN:STANDARD\r\nDTSTART:20261101T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\nTZNAME:EST\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("VTIMEZONE lacks %q:\n%s", want, b.String())
		}
	}
}

// TestLearnedZonesStayInTheirResource: a VTIMEZONE that defines an unknown
// TZID changes only the resource that carries it.
func TestLearnedZonesStayInTheirResource(t *testing.T) {
	t.Parallel()
	a := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VTIMEZONE\r\nTZID:Custom Zone\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0530\r\nTZOFFSETTO:+0530\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" +
		"BEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Custom Zone:20260301T100000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	b := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Custom Zone:20260301T100000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	starts := map[string]time.Time{}
	for name, ics := range map[string]string{"a": a, "b": b} {
		vc, err := decode(ics)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := parseObject(vc, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		starts[name] = ps.master.start
	}
	if got := starts["a"].UTC().Format("15:04"); got != "04:30" { // Asia/Kolkata has +05:30 all year
		t.Errorf("a starts %s UTC, want 04:30", got)
	}
	if got := starts["b"].UTC().Format("15:04"); got != "10:00" {
		t.Errorf("b starts %s UTC, want 10:00 (unknown zone read as the calendar's)", got)
	}
}

// TestFastForwardShortWindows: short windows around DST changes, where wall
// clock and elapsed time part, give what walking from DTSTART gives.
func TestFastForwardShortWindows(t *testing.T) {
	t.Parallel()
	paris := mustLoad(t, "Europe/Paris")
	rules := []string{"FREQ=HOURLY", "FREQ=MINUTELY;INTERVAL=20", "FREQ=MINUTELY;INTERVAL=25", "FREQ=SECONDLY;INTERVAL=600", "FREQ=HOURLY;INTERVAL=5;BYMINUTE=0,30", "FREQ=DAILY;BYHOUR=1,2,3",
		"FREQ=MONTHLY;BYDAY=SU;BYHOUR=1,2,3;BYMINUTE=0,30", "FREQ=YEARLY;BYMONTH=3,10;BYDAY=-1SU;BYHOUR=0,1,2,3,4;BYMINUTE=15,45", "FREQ=MONTHLY;INTERVAL=7;BYMONTHDAY=-1,30,31;BYHOUR=0,1,2,3"}
	start := time.Date(2024, 1, 31, 2, 30, 0, 0, paris)
	for _, rule := range rules {
		c := Component{Start: start, End: start.Add(20 * time.Minute), RRule: rule}
		s, _ := c.set(nil, nil, time.Time{})
		all := s.Between(start, time.Date(2024, 11, 1, 0, 0, 0, 0, time.UTC), true)
		for _, day := range []time.Time{time.Date(2024, 3, 30, 22, 0, 0, 0, time.UTC), time.Date(2024, 10, 26, 22, 0, 0, 0, time.UTC)} {
			for from := day; from.Before(day.Add(6 * time.Hour)); from = from.Add(7 * time.Minute) {
				to := from.Add(50 * time.Minute)
				fast, err := c.Occurrences(from, to, nil)
				if err != nil {
					t.Fatal(err)
				}
				var slow []time.Time
				for _, o := range all {
					if o.Before(to) && overlaps(o, o.Add(20*time.Minute), from, to) && !slices.ContainsFunc(slow, o.Equal) {
						slow = append(slow, o)
					}
				}
				slices.SortFunc(slow, time.Time.Compare)
				if len(fast) != len(slow) {
					t.Fatalf("%s from %s: %v, want %v", rule, from, fast, slow)
				}
				for i := range fast {
					if !fast[i].Equal(slow[i]) {
						t.Fatalf("%s from %s: %v, want %v", rule, from, fast, slow)
					}
				}
			}
		}
	}
}
