package wire

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the flush timer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The serve log gathers information lines and writes them out after a
// moment, at once with a warning, and all when flushed.
func TestServeLoggerBatches(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	var cfg Config
	cfg.Log.Level = "info"
	log, flush := NewServeLogger(cfg, &out)
	log.Info("request", "path", "/a")
	log.With("module", "drive").Info("request", "path", "/b")
	if got := out.String(); got != "" {
		t.Fatalf("information lines were written at once: %q", got)
	}
	log.Warn("disk nearly full")
	got := out.String()
	for _, want := range []string{"path=/a", "module=drive path=/b", "disk nearly full"} {
		if !strings.Contains(got, want) {
			t.Fatalf("after a warning the log holds %q, want %q in it", got, want)
		}
	}
	if strings.Index(got, "path=/a") > strings.Index(got, "disk nearly full") {
		t.Fatalf("lines out of order: %q", got)
	}
	log.Info("later")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "later") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "later") {
		t.Fatal("an information line was not written out after the delay")
	}
	log.Info("last")
	flush()
	if !strings.Contains(out.String(), "last") {
		t.Fatal("flush did not write out the last line")
	}
}

// The serve logger takes whole text lines (the access log's) in turn with its
// records when it writes the text format, and refuses them when it writes JSON
// or has attributes or groups added, whose lines would differ.
func TestServeLoggerTextLines(t *testing.T) {
	t.Parallel()
	type lineWriter interface{ WriteTextLine([]byte) bool }
	for _, tc := range []struct {
		name   string
		format string
		derive func(*slog.Logger) *slog.Logger
		takes  bool
	}{
		{"text", "text", func(l *slog.Logger) *slog.Logger { return l }, true},
		{"json", "json", func(l *slog.Logger) *slog.Logger { return l }, false},
		{"text with attributes", "text", func(l *slog.Logger) *slog.Logger { return l.With("module", "drive") }, false},
		{"text in a group", "text", func(l *slog.Logger) *slog.Logger { return l.WithGroup("g") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out syncBuffer
			var cfg Config
			cfg.Log.Level = "info"
			cfg.Log.Format = tc.format
			base, flush := NewServeLogger(cfg, &out)
			log := tc.derive(base)
			lw, ok := log.Handler().(lineWriter)
			if !ok {
				t.Fatal("the serve logger's handler takes no text lines")
			}
			log.Info("first")
			if got := lw.WriteTextLine([]byte("time=x level=INFO msg=request path=/a\n")); got != tc.takes {
				t.Fatalf("WriteTextLine = %v, want %v", got, tc.takes)
			}
			log.Info("last")
			flush()
			got := out.String()
			i, j, k := strings.Index(got, "first"), strings.Index(got, "msg=request path=/a\n"), strings.Index(got, "last")
			if i < 0 || k < 0 || (j >= 0) != tc.takes || tc.takes && !(i < j && j < k) {
				t.Fatalf("the log holds %q", got)
			}
		})
	}
}
