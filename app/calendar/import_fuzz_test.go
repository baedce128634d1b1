package calendar

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
)

// FuzzImportParse runs the lenient import path short of the store: split a file
// of at most MaxImportBytes into its components, rebuild each event as import
// does, decode it and read its events. It checks that none of it panics (a hang
// shows as the fuzzer stalling).
func FuzzImportParse(f *testing.F) {
	f.Add([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nBEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:STANDARD\r\n" +
		"DTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\n" +
		"END:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:a@example.org\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Europe/Paris:20260105T090000\r\n" +
		"DURATION:PT1H\r\nRRULE:FREQ=WEEKLY;COUNT=5\r\nEXDATE;TZID=Europe/Paris:20260112T090000\r\nSUMMARY:Stand-up\\, daily\r\n" +
		"END:VEVENT\r\nBEGIN:VEVENT\r\nUID:a@example.org\r\nRECURRENCE-ID;TZID=Europe/Paris:20260119T090000\r\n" +
		"DTSTART;TZID=Europe/Paris:20260119T100000\r\nDTEND;TZID=Europe/Paris:20260119T110000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
	f.Add([]byte("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20260301\nSUMMARY:no uid, no end,\n  folded\nEND:VEVENT\nEND:VCALENDAR\n" +
		"BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:t\nEND:VTODO\n"))
	f.Add([]byte("\ufeffBEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20260301T100000Z\r\nDTEND:20260301T090000Z\r\nRDATE;VALUE=PERIOD:20260302T100000Z/PT1H\r\nEND:VEVENT\r\n"))
	f.Add([]byte("not a calendar"))
	if seed, err := os.ReadFile(filepath.Join("testdata", "series-with-override.ics")); err == nil {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > MaxImportBytes {
			return
		}
		var cals []string
		_ = split(bytes.NewReader(data), func(c chunk) error {
			if c.name == ical.CompEvent {
				cals = append(cals, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:"+ProdID+"\r\n"+strings.Join(c.lines, "\r\n")+"\r\nEND:VCALENDAR\r\n")
			}
			return nil
		})
		for _, s := range cals {
			vc, err := decode(s)
			if err != nil {
				continue
			}
			learned, _ := learnTimezones(vc, 2026)
			for _, ev := range events(vc) {
				_, _ = parseVEvent(ev, time.UTC, learned)
			}
			ensureTimezones(vc, 2026)
			_, _ = encodeString(vc)
		}
	})
}
