package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"atrium/app"
)

// Every request but the probes and /metrics leaves one access log line with
// its method, path, status, size, duration, request id and, when signed in,
// organisation and user; the probes are counted in the metrics only.
//
// With a handler that takes whole text lines (the server's own), the line is
// formatted by the access log and handed over, and no slog record is made.
func TestAccessLogLine(t *testing.T) {
	t.Parallel()
	t.Run("slog record", func(t *testing.T) {
		var logs bytes.Buffer
		testAccessLogLine(t, slog.NewTextHandler(&logs, nil), &logs)
	})
	t.Run("text line", func(t *testing.T) {
		var lines, records bytes.Buffer
		testAccessLogLine(t, lineHandler{slog.NewTextHandler(&records, nil), &lines}, &lines)
		if records.Len() != 0 {
			t.Fatalf("slog records were written: %s", records.String())
		}
	})
}

// lineHandler is a log handler that takes whole text lines into lines.
type lineHandler struct {
	slog.Handler
	lines *bytes.Buffer
}

func (h lineHandler) WriteTextLine(line []byte) bool {
	h.lines.Write(line)
	return true
}

func testAccessLogLine(t *testing.T, h slog.Handler, logs *bytes.Buffer) {
	s := &Server{log: slog.New(h), metrics: newMetrics(prometheus.NewRegistry())}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(s.requestID, s.accessLog)
	e.GET("/api/v1/things/:id", func(c *gin.Context) {
		c.Request = c.Request.WithContext(app.WithPrincipal(c.Request.Context(), &app.Principal{OrgID: "org-1", UserID: "user-1"}))
		c.String(http.StatusCreated, "hello")
	})
	e.GET("/anonymous", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	e.GET("/s/:token/f/:folder_id", func(c *gin.Context) { c.Status(http.StatusOK) })

	e.GET("/healthz", func(c *gin.Context) { c.Status(http.StatusOK) })

	for _, tc := range []struct {
		path string
		want []string // in the line; none: no line
	}{
		{"/api/v1/things/7", []string{"level=INFO", "msg=request", "method=GET", "path=/api/v1/things/7", "status=201", "bytes=5",
			"duration_ms=", "org=org-1", "user=user-1"}},
		{"/anonymous", []string{"msg=request", "path=/anonymous", "status=204", "bytes=0 "}},
		// A token in the path is a secret: its place is logged, not its value.
		{"/s/sEcReTtOkEn123/f/folder-9", []string{"path=/s/REDACTED/f/folder-9", "status=200"}},
		{"/healthz", nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			logs.Reset()
			w := httptest.NewRecorder()
			e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.path, nil))
			line := strings.TrimSpace(logs.String())
			if tc.want == nil {
				if line != "" {
					t.Fatalf("a line for %s: %s", tc.path, line)
				}
				return
			}
			if strings.Count(line, "\n") != 0 {
				t.Fatalf("more than one line: %s", line)
			}
			for _, want := range append(tc.want, "request_id="+w.Header().Get("X-Request-Id")) {
				if !strings.Contains(line, want) {
					t.Errorf("line %q lacks %q", line, want)
				}
			}
			if strings.Contains(line, "sEcReT") {
				t.Errorf("the line holds the token: %s", line)
			}
			if tc.path == "/anonymous" && strings.Contains(line, "org=") {
				t.Errorf("an anonymous request names an organisation: %s", line)
			}
		})
	}
}
