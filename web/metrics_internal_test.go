package web

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// Each request counts once in its method, route and status's series and once
// in its method and route's durations, whether its series were found before or
// not, also past the number kept at hand; a method Atrium does not serve
// counts as "other".
func TestRequestMetrics(t *testing.T) {
	t.Parallel()
	m := newMetrics(prometheus.NewRegistry())
	type obs struct {
		method, route string
		status, times int
	}
	for _, o := range []obs{
		{"GET", "/api/v1/me", 200, 3}, {"GET", "/api/v1/me", 401, 1}, {"PROPFIND", "/dav/*path", 207, 2},
		{"BREW", "unmatched", 404, 1}, {"FOOBAR", "unmatched", 404, 2}, {"GET", "unmatched", 404, 1},
	} {
		for range o.times {
			m.observe(o.method, o.route, o.status, time.Millisecond)
		}
	}
	for i := range maxSeriesCached + 10 {
		m.observe(http.MethodPut, "/r/"+strconv.Itoa(i), 201, time.Millisecond)
		m.observe(http.MethodPut, "/r/"+strconv.Itoa(i), 201, time.Millisecond)
	}
	for _, tc := range []struct {
		method, route, status string
		requests, durations   int
	}{
		{"GET", "/api/v1/me", "200", 3, 4},
		{"GET", "/api/v1/me", "401", 1, 4},
		{"PROPFIND", "/dav/*path", "207", 2, 2},
		{"other", "unmatched", "404", 3, 3},
		{"GET", "unmatched", "404", 1, 1},
		{"PUT", "/r/0", "201", 2, 2},
		{"PUT", "/r/" + strconv.Itoa(maxSeriesCached+9), "201", 2, 2},
	} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(tc.method, tc.route, tc.status)); got != float64(tc.requests) {
			t.Errorf("%s %s %s: %v requests, want %d", tc.method, tc.route, tc.status, got, tc.requests)
		}
		if got := histogramCount(t, m.duration.WithLabelValues(tc.method, tc.route).(prometheus.Metric)); got != uint64(tc.durations) {
			t.Errorf("%s %s: %d durations, want %d", tc.method, tc.route, got, tc.durations)
		}
	}
	for _, method := range []string{"BREW", "FOOBAR"} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(method, "unmatched", "404")); got != 0 {
			t.Errorf("%s has series of its own: %v", method, got)
		}
	}
}

func histogramCount(t *testing.T, h prometheus.Metric) uint64 {
	t.Helper()
	var d dto.Metric
	if err := h.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetHistogram().GetSampleCount()
}
