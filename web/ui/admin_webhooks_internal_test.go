package ui

import (
	"testing"
	"time"

	"atrium/app/webhooks"
)

// The chart lays out the last seven UTC days of the counts it is given: a day
// outside them is left out, the bars share one scale, the summary reads each day.
func TestBuildChart(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 12, 15, 4, 0, 0, time.UTC)
	if got, want := chartSince(now), time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("chartSince = %v, want %v", got, want)
	}
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	c := buildChart([]webhooks.DayAttempts{
		{Day: day(5), Succeeded: 99}, // before the window
		{Day: day(6), Succeeded: 300, Failed: 100},
		{Day: day(12), Failed: 2},
		{Day: day(13), Failed: 7}, // after it (a clock ahead)
	}, now)
	if len(c.Bars) != chartDays || c.Total != 402 || c.Max != 400 {
		t.Fatalf("bars %d, total %d, max %d; want %d, 402, 400", len(c.Bars), c.Total, c.Max, chartDays)
	}
	first, last := c.Bars[0], c.Bars[chartDays-1]
	if first.Date != "2026-03-06" || first.Succeeded != 300 || first.Failed != 100 || last.Date != "2026-03-12" || last.Failed != 2 {
		t.Fatalf("first bar %+v, last %+v", first, last)
	}
	if first.OkH+first.BadH != chartBase-chartTop || first.BadY != chartTop {
		t.Errorf("the largest day does not fill the chart: %+v", first)
	}
	for _, b := range c.Bars[1 : chartDays-1] {
		if b.Succeeded+b.Failed != 0 || b.OkH+b.BadH != 0 {
			t.Errorf("an empty day has a bar: %+v", b)
		}
	}
	const want = "Delivery attempts per day, last 7 days (UTC). Fri 6: 300 succeeded, 100 failed; Sat 7: 0 succeeded, 0 failed; " +
		"Sun 8: 0 succeeded, 0 failed; Mon 9: 0 succeeded, 0 failed; Tue 10: 0 succeeded, 0 failed; Wed 11: 0 succeeded, 0 failed; " +
		"Thu 12: 0 succeeded, 2 failed."
	if c.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", c.Summary, want)
	}
}
