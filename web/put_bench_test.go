package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"atrium/cmd/atrium/wire"
)

// BenchmarkWebDAVPutSmall is the server's side of bench/smallfiles (issue 21):
// 1 KiB WebDAV PUTs of new files into one folder, four at a time, through the
// handler that `atrium serve` listens with (authentication by app password,
// path resolution, the write transaction with its group commit and fsync, the
// access log), with the search indexer taking the new files in as it does in
// serve. No network: the requests go straight to the handler.
//
//	go test -run '^$' -bench BenchmarkWebDAVPutSmall -benchtime 5000x ./web/
//
// Beside ns/op (wall time per PUT with four in flight, mostly the disk's
// flushes) it reports cpu-us/op, the process's user and system CPU per PUT:
// the figure that bounds how many small files two cores take per second. The
// indexer's share varies with how its batches and Bleve's merges fall; the
// sub-benchmark "requests" leaves it out, for a steadier figure of the rest.
func BenchmarkWebDAVPutSmall(b *testing.B) {
	b.Run("indexed", func(b *testing.B) { putSmall(b, true) })
	b.Run("requests", func(b *testing.B) { putSmall(b, false) })
}

func putSmall(b *testing.B, search bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := wire.LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Data = b.TempDir()
	m, err := wire.Open(ctx, cfg, wire.NewLogger(cfg, io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	if search {
		m.StartSearch(ctx)
	}
	creds, err := m.Bootstrap(ctx, "Bench Org", "bench@example.test", "admin")
	if err != nil {
		b.Fatal(err)
	}
	h := m.Server.Handler()
	base := "http://" + cfg.Listen + "/api/v1/webdav/"
	send := func(method, path string, body []byte) int {
		req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.RemoteAddr = "127.0.0.1:40000"
		req.SetBasicAuth(creds.Email, creds.AppPassword)
		w := newBenchWriter()
		h.ServeHTTP(w, req)
		return w.status
	}
	if st := send("MKCOL", "small/", nil); st != http.StatusCreated {
		b.Fatalf("MKCOL: %d", st)
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	if st := send(http.MethodPut, "small/warm.txt", body); st != http.StatusCreated {
		b.Fatalf("PUT: %d", st)
	}
	var next atomic.Int64
	b.SetParallelism(2) // four goroutines on two cores, as bench/smallfiles's four clients
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			if st := send(http.MethodPut, fmt.Sprintf("small/file-%06d.txt", n), body); st != http.StatusCreated {
				b.Errorf("PUT file-%06d: %d", n, st)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
