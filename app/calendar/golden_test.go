package calendar

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func strp(s string) *string { return &s }

// TestGoldenSeriesWithOverride: the iCalendar Atrium writes for a recurring
// event with attendees, an EXDATE and one moved occurrence.
func TestGoldenSeriesWithOverride(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	paris := mustLoad(t, "Europe/Paris")
	in := EventInput{Title: strp("Team sync"), Start: strp("2026-03-02T10:00:00"), End: strp("2026-03-02T11:00:00"),
		Timezone: strp("Europe/Paris"), Location: strp("Room 4, 2nd floor"), Description: strp("Agenda:\n1. Status; 2. Risks"),
		RRule: strp("FREQ=WEEKLY;BYDAY=MO;COUNT=8"), ExDates: &[]string{"2026-03-16"},
		Attendees: &[]Attendee{{Email: "bob@acme.test", Name: "Bob Nguyen"}}}
	f, err := resolve(in, nil, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	comp := newEvent("golden-1", now)
	f.apply(comp, now, "alice@acme.test", true)
	vc := newVCalendar()
	vc.Children = append(vc.Children, comp)
	ps, err := parseObject(vc, paris)
	if err != nil {
		t.Fatal(err)
	}
	ov := newOverride(ps.master, time.Date(2026, 3, 23, 10, 0, 0, 0, paris))
	cur, _ := parseVEvent(ov, paris, nil)
	of, err := resolve(EventInput{Start: strp("2026-03-24T15:00:00+01:00"), Title: strp("Team sync (moved)")}, &cur, paris)
	if err != nil {
		t.Fatal(err)
	}
	of.apply(ov, now, "alice@acme.test", false)
	vc.Children = append(vc.Children, ov)
	ensureTimezones(vc, 2026)
	got, err := encodeString(vc)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "series-with-override.ics", got)
	for _, line := range strings.Split(got, "\r\n") {
		if len(line) > 75 {
			t.Errorf("line of %d octets: %s", len(line), line)
		}
	}
	// Reading it back gives the same series.
	back, err := decode(got)
	if err != nil {
		t.Fatal(err)
	}
	ps2, err := parseObject(back, time.UTC)
	if err != nil || ps2.master.rrule != "FREQ=WEEKLY;BYDAY=MO;COUNT=8" || len(ps2.overrides) != 1 || len(ps2.master.exdates) != 1 ||
		ps2.master.description != "Agenda:\n1. Status; 2. Risks" || ps2.master.location != "Room 4, 2nd floor" {
		t.Fatalf("read back: %v %+v", err, ps2.master)
	}
}
