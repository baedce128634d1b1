package web

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atrium_http_requests_total", Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "atrium_http_request_duration_seconds", Help: "HTTP request duration by method and route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	// Process and Go runtime metrics; a second server on the same registry (tests)
	// finds them registered already.
	_ = reg.Register(collectors.NewGoCollector())
	_ = reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// searchDocuments exports the size of the drive's search index (an operator
// compares it with the number of files; it is absent while the index is
// rebuilt or busy).
func (m *metrics) searchDocuments(count func() (uint64, bool)) {
	_ = m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "atrium_search_documents", Help: "Items in the drive's search index (NaN while it is rebuilt or busy).",
	}, func() float64 {
		n, ok := count()
		if !ok {
			return math.NaN()
		}
		return float64(n)
	}))
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
