package calendar_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/calendar"
	"atrium/app/identity"
	"atrium/storage/sqldb"
)

// env is a calendar service on a real SQLite file with one user.
type env struct {
	svc *calendar.Service
	p   *app.Principal
	cal string
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	ctx := context.Background()
	db, err := sqldb.Open(ctx, filepath.Join(tb.TempDir(), "atrium.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	ids, err := identity.NewService(ctx, sqldb.IdentityStore{DB: db}, sqldb.Auditor{DB: db}, nil, "http://localhost")
	if err != nil {
		tb.Fatal(err)
	}
	if err := ids.SeedPlans(ctx); err != nil {
		tb.Fatal(err)
	}
	res, err := ids.Bootstrap(ctx, "Bench", "bench@example.test", app.RoleMember)
	if err != nil {
		tb.Fatal(err)
	}
	p := &app.Principal{OrgID: res.Org.ID, UserID: res.User.ID, Email: res.User.Email,
		Scopes: app.NewScopes(app.ScopeCalendarWrite), Features: []string{calendar.Feature}}
	svc := calendar.NewService(sqldb.CalendarStore{DB: db}, sqldb.Auditor{DB: db}, sqldb.Outbox{DB: db}, nil)
	cals, err := svc.Calendars(ctx, p)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{svc: svc, p: p, cal: cals[0].ID}
}

// genICS writes n events spread over 2026 like an export of a large hosted
// calendar: VTIMEZONEs, folded descriptions, attendees, alarms; every tenth
// event recurs (weekly or daily, some with COUNT, some unbounded, some with an
// override).
func genICS(n int, descLen int) []byte {
	var b bytes.Buffer
	b.WriteString("BEGIN:VCALENDAR\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\nVERSION:2.0\r\nCALSCALE:GREGORIAN\r\nMETHOD:PUBLISH\r\nX-WR-CALNAME:Big\r\nX-WR-TIMEZONE:Europe/Paris\r\n")
	b.WriteString("BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nX-LIC-LOCATION:Europe/Paris\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n")
	desc := strings.Repeat("Agenda item, notes and a link https://example.test/x ", descLen/54+1)[:descLen]
	base := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		start := base.Add(time.Duration(i%8760) * time.Hour / 1).Add(time.Duration(i/8760) * 17 * time.Minute)
		if start.Hour() < 7 || start.Hour() > 19 {
			start = start.Add(10 * time.Hour)
		}
		local := start.Format("20060102T150405")
		end := start.Add(45 * time.Minute).Format("20060102T150405")
		uid := fmt.Sprintf("%08d-bench@google.com", i)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nDTSTART;TZID=Europe/Paris:%s\r\nDTEND;TZID=Europe/Paris:%s\r\nDTSTAMP:20260101T000000Z\r\nUID:%s\r\n", local, end, uid)
		if i%10 == 0 {
			switch i % 40 {
			case 0:
				b.WriteString("RRULE:FREQ=WEEKLY;BYDAY=MO,WE\r\n")
			case 10:
				b.WriteString("RRULE:FREQ=DAILY;COUNT=30\r\n")
			case 20:
				b.WriteString("RRULE:FREQ=WEEKLY;UNTIL=20261231T000000Z\r\n")
			default:
				b.WriteString("RRULE:FREQ=MONTHLY;BYMONTHDAY=15\r\n")
			}
		}
		if desc != "" {
			fmt.Fprintf(&b, "CREATED:20250101T000000Z\r\nDESCRIPTION:%s\r\nTRANSP:OPAQUE\r\n", fold(desc))
		}
		fmt.Fprintf(&b, "LAST-MODIFIED:20260101T000000Z\r\nLOCATION:Room %d\r\nSEQUENCE:0\r\nSTATUS:CONFIRMED\r\nSUMMARY:Meeting %d\r\n", i%20, i)
		fmt.Fprintf(&b, "ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Person %d:mailto:p%d@example.test\r\n", i%50, i%50)
		if i%4 == 0 {
			b.WriteString("BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Reminder\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n")
		}
		b.WriteString("END:VEVENT\r\n")
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

func fold(s string) string {
	var b strings.Builder
	for len(s) > 60 {
		b.WriteString(s[:60] + "\r\n ")
		s = s[60:]
	}
	b.WriteString(s)
	return b.String()
}

func mustImport(tb testing.TB, e *env, data []byte) calendar.ImportResult {
	tb.Helper()
	res, err := e.svc.Import(context.Background(), e.p, e.cal, bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	if res.Skipped > 0 {
		tb.Fatalf("skipped %d: %v", res.Skipped, res.Errors)
	}
	return res
}

// BenchmarkRangeQueryMonth: a one-month range over 10,000 events (10% recurring).
func BenchmarkRangeQueryMonth(b *testing.B) {
	e := newEnv(b)
	mustImport(b, e, genICS(10000, 120))
	ctx := context.Background()
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	if _, err := e.svc.Events(ctx, e.p, nil, start, start.AddDate(0, 1, 0)); err != nil { // a running server has parsed its rules
		b.Fatal(err)
	}
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, err := e.svc.Events(ctx, e.p, nil, start, start.AddDate(0, 1, 0))
		if err != nil {
			b.Fatal(err)
		}
		n = len(evs)
	}
	b.ReportMetric(float64(n), "occurrences")
}

// BenchmarkExpandDailyWithOverrides: a daily series with 50 overrides expanded
// over one year.
func BenchmarkExpandDailyWithOverrides(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	var ics strings.Builder
	ics.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:daily\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Daily\r\nDTSTART;TZID=America/New_York:20260101T090000\r\nDTEND;TZID=America/New_York:20260101T091500\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n")
	for i := 0; i < 50; i++ {
		d := time.Date(2026, 1, 3+i*7, 9, 0, 0, 0, time.UTC).Format("20060102")
		fmt.Fprintf(&ics, "BEGIN:VEVENT\r\nUID:daily\r\nDTSTAMP:20260101T000000Z\r\nRECURRENCE-ID;TZID=America/New_York:%sT090000\r\nSUMMARY:Moved\r\nDTSTART;TZID=America/New_York:%sT140000\r\nDTEND;TZID=America/New_York:%sT150000\r\nEND:VEVENT\r\n", d, d, d)
	}
	ics.WriteString("END:VCALENDAR\r\n")
	mustImport(b, e, []byte(ics.String()))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, err := e.svc.Events(ctx, e.p, nil, start, start.AddDate(1, 0, 0))
		if err != nil {
			b.Fatal(err)
		}
		n = len(evs)
	}
	if n != 365 {
		b.Fatalf("%d occurrences, want 365", n)
	}
	b.ReportMetric(float64(n), "occurrences")
}

// BenchmarkImport5000: a 5,000-event .ics file into an empty calendar.
func BenchmarkImport5000(b *testing.B) {
	data := genICS(5000, 120)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b)
		b.StartTimer()
		if res := mustImport(b, e, data); res.Imported != 5000 {
			b.Fatalf("imported %d", res.Imported)
		}
	}
}

// BenchmarkImportLarge: a 16,000-event, ~6 MB export of a large hosted calendar
// in one import; reports the peak Go heap during the import.
func BenchmarkImportLarge(b *testing.B) {
	data := genICS(16000, 0)
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(len(data))/(1<<20), "file-MiB")
	var peak uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b)
		runtime.GC()
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for !stop.Load() {
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak {
					peak = ms.HeapAlloc
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		b.StartTimer()
		res := mustImport(b, e, data)
		b.StopTimer()
		stop.Store(true)
		<-done
		if res.Imported != 16000 {
			b.Fatalf("imported %d", res.Imported)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
