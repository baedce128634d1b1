package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"atrium/wire"
)

// BenchmarkWebDAVPutSmall is the server's side of bench/smallfiles (issue 21):
// 1 KiB WebDAV PUTs of new files into one folder, four at a time, through the
// handler that `atrium serve` listens with (authentication by app password,
// path resolution, the write transaction with its group commit and fsync, the
// access log), with the search indexer taking the new files in as it does in
// serve (its batches wait while the PUTs stream in; the clock stops once it
// has taken in the last). No network: the requests go straight to the handler.
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
	m, creds := benchMain(b, search)
	h := m.Server.Handler()
	base := "http://" + m.Config.Listen + "/api/v1/webdav/"
	send := func(method, path string, body []byte) int {
		req := httptest.NewRequest(method, base+path, bytes.NewReader(body))
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
	runOps(b, m, search, func(n int64) error {
		if st := send(http.MethodPut, fmt.Sprintf("small/file-%06d.txt", n), body); st != http.StatusCreated {
			return fmt.Errorf("PUT file-%06d: %d", n, st)
		}
		return nil
	})
}

// BenchmarkPresignSmall is the server's side of bench/smalluploads' three-step
// upload, in process like BenchmarkWebDAVPutSmall: per op, one 1 KiB file
// announced (POST /api/v1/drive/upload), its bytes PUT to the presigned URL
// and confirmed, four at a time, with the search indexer running.
//
//	go test -run '^$' -bench BenchmarkPresignSmall -benchtime 3000x ./web/
func BenchmarkPresignSmall(b *testing.B) {
	m, creds := benchMain(b, true)
	h := m.Server.Handler()
	call := func(method, url string, body []byte, out any) int {
		req := httptest.NewRequest(method, url, bytes.NewReader(body))
		req.RemoteAddr = "127.0.0.1:40000"
		if strings.Contains(url, "/api/v1/") {
			req.Header.Set("Authorization", "Bearer "+creds.Token)
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/octet-stream")
		}
		w := newBenchWriter()
		h.ServeHTTP(w, req)
		if out != nil && w.status/100 == 2 {
			if err := json.Unmarshal(w.body.Bytes(), out); err != nil {
				b.Error(err) // RunParallel's goroutines may not call Fatal
				return 0
			}
		}
		return w.status
	}
	base := "http://" + m.Config.Listen
	var folder struct {
		ID string `json:"id"`
	}
	if st := call(http.MethodPost, base+"/api/v1/drive/folders", []byte(`{"name":"presign"}`), &folder); st != http.StatusCreated {
		b.Fatalf("create folder: %d", st)
	}
	content := bytes.Repeat([]byte{0xa5}, 1024)
	one := func(n int64) error {
		var t struct {
			UploadURL string `json:"upload_url"`
			File      struct {
				ID string `json:"id"`
			} `json:"file"`
		}
		ann := fmt.Appendf(nil, `{"name":"f%06d.bin","parent_id":%q,"size":1024,"mime_type":"application/octet-stream"}`, n, folder.ID)
		if st := call(http.MethodPost, base+"/api/v1/drive/upload", ann, &t); st/100 != 2 {
			return fmt.Errorf("announce: %d", st)
		}
		if st := call(http.MethodPut, t.UploadURL, content, nil); st/100 != 2 {
			return fmt.Errorf("PUT %s: %d", t.UploadURL, st)
		}
		if st := call(http.MethodPost, base+"/api/v1/drive/"+t.File.ID+"/confirm", nil, nil); st/100 != 2 {
			return fmt.Errorf("confirm: %d", st)
		}
		return nil
	}
	runOps(b, m, true, one)
}

// BenchmarkTusSmall is the server's side of bench/smalluploads' TUS run, in
// process like BenchmarkPresignSmall: per op, one 1 KiB file created (POST
// /api/v1/drive/tus/, as tus-js-client does with its defaults) and its bytes
// sent in one PATCH, four at a time, with the search indexer running.
//
//	go test -run '^$' -bench BenchmarkTusSmall -benchtime 3000x ./web/
func BenchmarkTusSmall(b *testing.B) { tusSmall(b, false) }

// BenchmarkTusSmallWithCreation is BenchmarkTusSmall as the web app uploads a
// small file: its bytes with the POST that creates the upload
// (creation-with-upload), one request and one write.
//
//	go test -run '^$' -bench BenchmarkTusSmallWithCreation -benchtime 3000x ./web/
func BenchmarkTusSmallWithCreation(b *testing.B) { tusSmall(b, true) }

func tusSmall(b *testing.B, withCreation bool) {
	m, creds := benchMain(b, true)
	h := m.Server.Handler()
	base := "http://" + m.Config.Listen
	call := func(method, url string, hdr map[string]string, body []byte) *benchWriter {
		req := httptest.NewRequest(method, url, bytes.NewReader(body))
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Authorization", "Bearer "+creds.Token)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := newBenchWriter()
		h.ServeHTTP(w, req)
		return w
	}
	w := call(http.MethodPost, base+"/api/v1/drive/folders", map[string]string{"Content-Type": "application/json"}, []byte(`{"name":"tus"}`))
	var folder struct {
		ID string `json:"id"`
	}
	if w.status != http.StatusCreated || json.Unmarshal(w.body.Bytes(), &folder) != nil {
		b.Fatalf("create folder: %d %s", w.status, w.body.String())
	}
	content := bytes.Repeat([]byte{0xa5}, 1024)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	one := func(n int64) error {
		hdr := map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "1024",
			"Upload-Metadata": "filename " + b64(fmt.Sprintf("f%06d.bin", n)) + ",filetype " + b64("application/octet-stream") + ",parent_id " + b64(folder.ID)}
		if withCreation {
			hdr["Content-Type"] = "application/offset+octet-stream"
			w := call(http.MethodPost, base+"/api/v1/drive/tus/", hdr, content)
			if w.status != http.StatusCreated || w.h.Get("Atrium-Upload-Status") != "done" {
				return fmt.Errorf("create with the content: %d %s", w.status, w.body.String())
			}
			return nil
		}
		w := call(http.MethodPost, base+"/api/v1/drive/tus/", hdr, nil)
		loc := w.h.Get("Location")
		if w.status != http.StatusCreated || loc == "" {
			return fmt.Errorf("create: %d %s", w.status, w.body.String())
		}
		if !strings.HasPrefix(loc, "http") {
			loc = base + loc
		}
		w = call(http.MethodPatch, loc, map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}, content)
		if w.status != http.StatusNoContent {
			return fmt.Errorf("PATCH: %d %s", w.status, w.body.String())
		}
		return nil
	}
	runOps(b, m, true, one)
}

// runOps runs one(0) untimed, to warm the caches, then one(n) for n = 1 to
// b.N, four at a time on two cores (as the four clients of bench/smallfiles
// and bench/smalluploads), then, when search is set, has m's search indexer
// take in what the ops wrote (its background batches wait while writes
// stream in, so most of them come after the ops). It reports the process's
// CPU per op as cpu-us/op and how the ops used the one database writer:
// its transactions' statements (stmt-us/op) and commits (commit-us/op) per
// op, and the transactions a commit held (tx/commit).
func runOps(b *testing.B, m *wire.Main, search bool, one func(n int64) error) {
	b.Helper()
	if err := one(0); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.SetParallelism(2)
	b.ReportAllocs()
	cpu0, w0 := processCPU(), m.DB.WriteStats()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := one(next.Add(1)); err != nil {
				b.Error(err) // RunParallel's goroutines may not call Fatal
				return
			}
		}
	})
	w1 := m.DB.WriteStats()
	if search && m.Search != nil {
		if err := m.Search.Pending(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(float64((w1.Statements-w0.Statements).Microseconds())/float64(b.N), "stmt-us/op")
	b.ReportMetric(float64((w1.Commit-w0.Commit).Microseconds())/float64(b.N), "commit-us/op")
	if n := w1.Commits - w0.Commits; n > 0 {
		b.ReportMetric(float64(w1.Transactions-w0.Transactions)/float64(n), "tx/commit")
	}
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
