package calendar

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"atrium/app"
)

// TestHostileRulesWorkNearTheRange: rules starting in 2000 listed over a short
// range today cost the occurrences near the range, not the 26 years since
// DTSTART (counted in steps: occurrences the rule produced).
func TestHostileRulesWorkNearTheRange(t *testing.T) {
	t.Parallel()
	paris := mustLoad(t, "Europe/Paris")
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	from := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		rule     string
		loc      *time.Location
		to       time.Duration
		want     int // occurrences
		maxSteps int
	}{
		{"FREQ=SECONDLY", time.UTC, 10 * time.Second, 10, 200}, // a minute of slack either side
		{"FREQ=SECONDLY", paris, 10 * time.Second, 10, 200},
		{"FREQ=SECONDLY;INTERVAL=3", time.UTC, time.Minute, 20, 200},
		{"FREQ=MINUTELY", time.UTC, time.Hour, 60, 200},
		{"FREQ=SECONDLY;COUNT=50000", time.UTC, time.Hour, 0, 0}, // ended in 2000: nothing to walk near 2026
		{"FREQ=MONTHLY;BYMONTHDAY=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;BYMINUTE=0,10,20,30,40,50", time.UTC, time.Hour, 6, 10},
		{"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR=12;BYMINUTE=0,1,2,3,4,5,6,7,8,9", time.UTC, time.Hour, 10, 10},
	}
	for _, tt := range tests {
		s := start.In(tt.loc)
		c := Component{UID: "x", Start: s, End: s.Add(time.Second), RRule: tt.rule}
		b := newBudget(context.Background())
		got, err := c.occurrences(b, from, from.Add(tt.to), nil, false)
		if err != nil {
			t.Fatalf("%s: %v", tt.rule, err)
		}
		if len(got) != tt.want || b.steps > tt.maxSteps {
			t.Errorf("%s in %s: %d occurrences in %d steps, want %d in at most %d", tt.rule, tt.loc, len(got), b.steps, tt.want, tt.maxSteps)
		}
	}
}

// TestBudgetStops: a range holding more occurrences than one request may
// return is refused, naming the range's end, after about that much work; a
// request whose context is done stops.
func TestBudgetStops(t *testing.T) {
	t.Parallel()
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	c := Component{UID: "dense", Start: start, End: start.Add(time.Second), RRule: "FREQ=SECONDLY"}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	b := newBudget(context.Background())
	b.value = "2027-01-01T00:00:00Z"
	_, err := c.occurrences(b, from, from.Add(MaxRange), nil, false)
	var ae *app.Error
	if !errors.As(err, &ae) || ae.Code != app.EValidation || len(ae.Fields) != 1 || ae.Fields[0].Location != "query.end" {
		t.Fatalf("err %v", err)
	}
	if b.steps > MaxOccurrences+1000 {
		t.Errorf("%d steps before the refusal", b.steps)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b = newBudget(ctx)
	b.maxOccurrences = 1 << 30
	_, err = c.occurrences(b, from, from.Add(MaxRange), nil, false)
	if !errors.Is(err, context.Canceled) || b.steps > 256 {
		t.Fatalf("cancelled: %v after %d steps", err, b.steps)
	}

	// Looking for the first occurrence (CalDAV calendar-query) costs one.
	b = newBudget(context.Background())
	got, err := c.occurrences(b, from, from.Add(100*MaxRange), nil, true)
	if err != nil || len(got) != 1 || b.steps > 100 {
		t.Fatalf("first: %v %v after %d steps", got, err, b.steps)
	}
}

// BenchmarkBoundedExpand expands rules whose DTSTART is in 2000 over a week
// in 2026 through the bounded expander: occurrences per second, steps (rule
// occurrences walked) per occurrence returned, and the peak heap of one
// expansion (b.ReportMetric).
func BenchmarkBoundedExpand(b *testing.B) {
	start := time.Date(2000, 1, 1, 9, 0, 0, 0, time.UTC)
	from := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	for _, bc := range []struct{ name, rule string }{
		{"minutely", "FREQ=MINUTELY;INTERVAL=5"},
		{"hourly", "FREQ=HOURLY"},
		{"daily-count", "FREQ=DAILY;COUNT=50000"},
		{"monthly-dense", "FREQ=MONTHLY;BYMONTHDAY=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31;BYHOUR=8,12,16;BYMINUTE=0,30"},
		{"legacy-secondly", "FREQ=SECONDLY;INTERVAL=60"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := Component{UID: "bench", Start: start, End: start.Add(30 * time.Minute), RRule: bc.rule}
			var occ, steps int
			var peak uint64
			var ms runtime.MemStats
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				bu := newBudget(context.Background())
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				got, err := c.occurrences(bu, from, from.AddDate(0, 0, 7), nil, false)
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > before && ms.HeapAlloc-before > peak {
					peak = ms.HeapAlloc - before
				}
				occ += len(got)
				steps += bu.steps
			}
			b.ReportMetric(float64(occ)/b.Elapsed().Seconds(), "occurrences/s")
			b.ReportMetric(float64(steps)/float64(max(occ, 1)), "steps/occurrence")
			b.ReportMetric(float64(occ)/float64(b.N), "occurrences/op")
			b.ReportMetric(float64(peak)/1024, "peak-heap-KiB")
		})
	}
}
