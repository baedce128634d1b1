package web

import (
	"crypto/subtle"
	"maps"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"atrium/app"
)

type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	// series holds each method, route and status's two series, found once:
	// asking the vectors for them on every request (hashing and checking the
	// labels, a lock each) cost more than counting. Copied on write: a new
	// combination is rare, a request's lookup takes no lock.
	series   atomic.Pointer[map[seriesKey]requestSeries]
	seriesMu sync.Mutex // held while series is copied
}

type seriesKey struct {
	method, route string
	status        int
}

type requestSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// maxSeriesCached bounds series; past it a request asks the vectors.
const maxSeriesCached = 4096

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

// writes exports the writer's figures. From them an operator reads how many
// writes share a commit, what a commit costs (mostly the disk's flush), and
// how busy the one writer is: the rates of the three times summed near 1
// second per second mean writes queue behind it.
func (m *metrics) writes(stats func() app.WriteStats) {
	counter := func(name, help string, v func(app.WriteStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(stats()) })
	}
	for _, c := range []prometheus.Collector{
		counter("atrium_db_write_transactions_total", "Write transactions the database's writer ran.",
			func(s app.WriteStats) float64 { return float64(s.Transactions) }),
		counter("atrium_db_commits_total", "Commits of the database's writer; write transactions that arrive together share one (group commit).",
			func(s app.WriteStats) float64 { return float64(s.Commits) }),
		counter("atrium_db_write_wait_seconds_total", "Time write transactions waited for the writer, summed over them.",
			func(s app.WriteStats) float64 { return s.Wait.Seconds() }),
		counter("atrium_db_write_statements_seconds_total", "Time the writer spent running write transactions' statements.",
			func(s app.WriteStats) float64 { return s.Statements.Seconds() }),
		counter("atrium_db_commit_seconds_total", "Time the writer spent committing: writing the log and waiting for the disk to flush it.",
			func(s app.WriteStats) float64 { return s.Commit.Seconds() }),
	} {
		_ = m.reg.Register(c) // a second server on the same registry (tests) finds them registered
	}
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	method = methodLabel(method)
	k := seriesKey{method, route, status}
	rs, ok := m.seriesFor(k)
	if !ok {
		rs = requestSeries{m.requests.WithLabelValues(method, route, strconv.Itoa(status)), m.duration.WithLabelValues(method, route)}
		m.cacheSeries(k, rs)
	}
	rs.requests.Inc()
	rs.duration.Observe(d.Seconds())
}

func (m *metrics) seriesFor(k seriesKey) (requestSeries, bool) {
	if c := m.series.Load(); c != nil {
		rs, ok := (*c)[k]
		return rs, ok
	}
	return requestSeries{}, false
}

func (m *metrics) cacheSeries(k seriesKey, rs requestSeries) {
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	var next map[seriesKey]requestSeries
	if c := m.series.Load(); c != nil {
		if _, ok := (*c)[k]; ok || len(*c) >= maxSeriesCached {
			return
		}
		next = maps.Clone(*c)
	} else {
		next = map[seriesKey]requestSeries{}
	}
	next[k] = rs
	m.series.Store(&next)
}

// methodLabel is a request's method as the metrics name it: one of the methods
// Atrium serves, or "other", so that methods a client makes up do not each
// start series of their own.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions,
		"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT", "MKCALENDAR":
		return method
	}
	return "other"
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// MetricsAccess says who may read /metrics on the public listener.
type MetricsAccess struct {
	// Token, when set, is the bearer token a request must carry.
	Token string
	// Elsewhere: the metrics are served on a listener of their own (see
	// MetricsHandler); without a Token the public listener does not serve them.
	Elsewhere bool
}

// MetricsHandler serves the metrics with no check, for a listener of their own
// on an address the operator keeps private.
func (s *Server) MetricsHandler() http.Handler { return s.metrics.handler() }

// metricsGate lets a request read /metrics: with a token configured, one that
// bears it; else, unless they are served elsewhere, a local client — a
// loopback connection carrying no forwarding header (a reverse proxy on the
// same host sends X-Forwarded-For, and what it forwards is not local).
func (s *Server) metricsGate(c *gin.Context) {
	acc := s.cfg.Metrics
	var p *Problem
	switch {
	case acc.Token != "":
		scheme, cred, _ := strings.Cut(c.GetHeader("Authorization"), " ")
		if !strings.EqualFold(scheme, "bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(acc.Token)) != 1 {
			c.Header("WWW-Authenticate", `Bearer realm="metrics"`)
			p = s.problems.make(http.StatusUnauthorized, app.EUnauthorized, "The metrics need Authorization: Bearer <the [metrics] token of the configuration>.")
		}
	case acc.Elsewhere:
		p = s.problems.make(http.StatusNotFound, app.ENotFound, "The metrics are served on the [metrics] listen address, not here.")
	case !localClient(c.Request):
		p = s.problems.make(http.StatusForbidden, app.EForbidden,
			"The metrics are served to local clients only; set [metrics] token or [metrics] listen in the configuration to scrape them from elsewhere.")
	}
	if p != nil {
		p.write(c.Writer, requestIDFrom(c.Request.Context()))
		c.Abort()
		return
	}
	c.Next()
}

// localClient: a loopback connection that forwards no one else's request.
func localClient(r *http.Request) bool {
	a := remoteIP(r.RemoteAddr)
	if !a.IsValid() || !a.IsLoopback() {
		return false
	}
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip", "X-Forwarded-Host"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	return true
}
