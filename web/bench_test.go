package web_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"atrium/storage/sqldb"
	"atrium/wire"
)

// Foundation target 1: the full middleware stack (request id, access log,
// metrics, PAT authentication, scope check, JSON response) against a bare gin
// handler that returns the same bytes, in the same process. Both benchmarks run a
// plain loop on one goroutine over a reused request and a reused response writer,
// so ns/op is the CPU cost of one request through each handler and nothing else.
//
//	go test -run '^$' -bench 'BenchmarkStackMe|BenchmarkBareGin' -benchtime 3s ./web/
//
// Throughput ratio = stack req/s ÷ bare req/s = bare ns/op ÷ stack ns/op
// (target ≥ 0.5). bench/foundation.sh runs both and prints the ratio.

// benchWriter is a reusable http.ResponseWriter: it keeps the status, a copy of
// the body and the header map, and is reset between requests without allocating.
type benchWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func newBenchWriter() *benchWriter { return &benchWriter{h: http.Header{}} }

func (w *benchWriter) Header() http.Header { return w.h }

func (w *benchWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

// SetReadDeadline and SetWriteDeadline accept deadlines as a served
// connection does (http.ResponseController finds them): tusd sets them on
// every request and, where they are not supported, logs a warning each time
// and the log is written out at once, which a served upload never costs.
func (w *benchWriter) SetReadDeadline(time.Time) error  { return nil }
func (w *benchWriter) SetWriteDeadline(time.Time) error { return nil }

func (w *benchWriter) reset() {
	clear(w.h)
	w.status = 0
	w.body.Reset()
}

// benchMain wires Atrium on a fresh data directory as `atrium serve` does
// (default configuration, the access log written to io.Discard), with the
// search indexer running when search is set, and bootstraps an admin of "Bench
// Org"; all of it is closed when the benchmark ends. With
// ATRIUM_BENCH_POSTGRES=1 the metadata is in a fresh PostgreSQL database of
// ATRIUM_TEST_DATABASE_URL's server instead of the embedded SQLite.
func benchMain(b *testing.B, search bool) (*wire.Main, wire.BootstrapOutput) {
	b.Helper()
	ctx := context.Background()
	cfg, err := wire.LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Data = b.TempDir()
	if os.Getenv("ATRIUM_BENCH_POSTGRES") == "1" {
		// The same benchmark on PostgreSQL: a fresh database of the test
		// server (ATRIUM_TEST_DATABASE_URL; scripts/pg-cluster.sh).
		url, drop, err := sqldb.NewTestPostgres(ctx, os.Getenv(sqldb.TestDatabaseEnv))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { drop() })
		cfg.Database.URL = url
	}
	log, flushLog := wire.NewServeLogger(cfg, io.Discard)
	m, err := wire.Open(ctx, cfg, log, wire.Serving())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close(); flushLog() })
	if search {
		m.StartSearch(ctx) // stopped by Close
	}
	creds, err := m.Bootstrap(ctx, "Bench Org", "bench@example.test", "admin")
	if err != nil {
		b.Fatal(err)
	}
	return m, creds
}

// stackMe wires Atrium as `atrium serve` does (benchMain) and returns the
// handler and a request for GET /api/v1/me with the admin's PAT.
func stackMe(b *testing.B) (http.Handler, *http.Request) {
	b.Helper()
	m, creds := benchMain(b, false)
	req, err := http.NewRequest(http.MethodGet, "http://"+m.Config.Listen+"/api/v1/me", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+creds.Token)
	return m.Server.Handler(), req
}

// meResponse captures the stack's answer to GET /api/v1/me once.
func meResponse(b *testing.B) (contentType string, body []byte) {
	b.Helper()
	h, req := stackMe(b)
	w := newBenchWriter()
	h.ServeHTTP(w, req)
	if w.status != http.StatusOK {
		b.Fatalf("GET /api/v1/me: status %d: %s", w.status, w.body.Bytes())
	}
	return w.h.Get("Content-Type"), bytes.Clone(w.body.Bytes())
}

// serveLoop sends req to h b.N times and checks every status.
func serveLoop(b *testing.B, h http.Handler, req *http.Request) {
	b.Helper()
	w := newBenchWriter()
	h.ServeHTTP(w, req) // warm caches and pools outside the timer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d: %s", w.status, w.body.Bytes())
		}
	}
}

// BenchmarkStackMe is GET /api/v1/me with a PAT through the fully wired handler.
func BenchmarkStackMe(b *testing.B) {
	h, req := stackMe(b)
	serveLoop(b, h, req)
}

// BenchmarkBareGin is a bare gin engine with one GET route answering the bytes
// and content type that BenchmarkStackMe's handler answers.
func BenchmarkBareGin(b *testing.B) {
	ct, body := meResponse(b)
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.GET("/api/v1/me", func(c *gin.Context) { c.Data(http.StatusOK, ct, body) })
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:8080/api/v1/me", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer atr_pat_unused")
	serveLoop(b, e, req)
}
