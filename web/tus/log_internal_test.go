package tus

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
)

// countingHandler counts the WithAttrs calls that reach the server's handler.
type countingHandler struct {
	slog.Handler
	withAttrs *int
}

func (h countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	*h.withAttrs++
	return countingHandler{h.Handler.WithAttrs(as), h.withAttrs}
}

func (h countingHandler) WithGroup(name string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(name), h.withAttrs}
}

// TestTusdLogger: tusd's per-request loggers cost the server's handler
// nothing until they log, and a warning carries what they were given: the
// request's attributes, in their group, and its own.
func TestTusdLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	n := 0
	l := newTusdLogger(slog.New(countingHandler{slog.NewJSONHandler(&buf, nil), &n}))
	req := l.With("method", "PATCH", "path", "/files/x").WithGroup("upload").With("id", "x")
	req.Info("ChunkWriteStart", "offset", 0)
	if n != 0 || buf.Len() != 0 {
		t.Fatalf("an info line: %d WithAttrs calls, output %q; want none", n, buf.String())
	}
	req.Warn("UploadInterrupted", "offset", 512)
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %q", err, buf.String())
	}
	up, _ := got["upload"].(map[string]any)
	if got["msg"] != "tusd: UploadInterrupted" || got["method"] != "PATCH" || got["path"] != "/files/x" ||
		up["id"] != "x" || up["offset"] != float64(512) {
		t.Errorf("the warning: %v", got)
	}
}
