package wire

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// The server's log is written in batches. An access log line per request,
// each its own write to stderr under the handler's lock, cost a fifth of the
// throughput of a small REST request; gathered in memory, the lines go out
// in one write per logBufBytes or logBufDelay, whichever comes first. A
// warning or an error is written out at once, with the lines before it, and
// so is everything when the server stops (the flush NewServeLogger returns).
// A crash loses at most logBufDelay of information lines.
const (
	logBufBytes = 32 << 10
	logBufDelay = 200 * time.Millisecond
)

// NewServeLogger is NewLogger writing to w in batches, and the function that
// writes out what is gathered (call it when the server stops).
func NewServeLogger(cfg Config, w io.Writer) (*slog.Logger, func()) {
	b := &logBuffer{w: w}
	h := NewLogger(cfg, b).Handler()
	_, text := h.(*slog.TextHandler)
	return slog.New(flushOnWarn{h, b, text}), b.Flush
}

// logBuffer gathers log lines for w.
type logBuffer struct {
	w     io.Writer
	mu    sync.Mutex
	buf   []byte
	timer *time.Timer // pending flush; nil when buf is empty
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) >= logBufBytes {
		b.flushLocked()
	} else if b.timer == nil {
		b.timer = time.AfterFunc(logBufDelay, b.Flush)
	}
	return len(p), nil
}

// Flush writes out what is gathered.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBuffer) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.buf) == 0 {
		return
	}
	_, _ = b.w.Write(b.buf) // a log that cannot be written has nowhere to say so
	if cap(b.buf) > 4*logBufBytes {
		b.buf = nil // a burst of large lines does not keep its memory
	} else {
		b.buf = b.buf[:0]
	}
}

// flushOnWarn writes the log out after each record of level warn or above.
type flushOnWarn struct {
	slog.Handler
	out *logBuffer
	// text: the handler is NewLogger's slog.TextHandler, with no attributes or
	// groups added, so lines formatted as it does may go straight to out.
	text bool
}

// WriteTextLine writes a line already in slog.TextHandler's format (the
// access log's, at level info), and reports false when the handler writes
// another format.
func (h flushOnWarn) WriteTextLine(line []byte) bool {
	if !h.text {
		return false
	}
	_, _ = h.out.Write(line)
	return true
}

func (h flushOnWarn) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.out.Flush()
	}
	return err
}

func (h flushOnWarn) WithAttrs(as []slog.Attr) slog.Handler {
	return flushOnWarn{h.Handler.WithAttrs(as), h.out, false}
}

func (h flushOnWarn) WithGroup(name string) slog.Handler {
	return flushOnWarn{h.Handler.WithGroup(name), h.out, false}
}
