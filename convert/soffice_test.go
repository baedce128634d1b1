package convert

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"atrium/app/drive"
)

// fakeSoffice writes an executable soffice script into a new directory and
// puts that directory first on PATH (so the test is not parallel).
func fakeSoffice(t *testing.T, body string) string {
	t.Helper()
	dir := filepath.Dir(writeSoffice(t, body))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// writeSoffice writes an executable soffice script into a new directory and
// returns its path.
func writeSoffice(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	path := filepath.Join(t.TempDir(), "soffice")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// convertScript behaves like soffice --convert-to: it writes <outdir>/<base>.<ext>.
const convertScript = `out=""; ext=""; in=""
echo "$@" > "$ARGS_FILE"
while [ $# -gt 0 ]; do
  case "$1" in
    --outdir) out="$2"; shift;;
    --convert-to) ext="$2"; shift;;
    *) in="$1";;
  esac
  shift
done
base=$(basename "$in"); base="${base%.*}"
printf 'converted:' > "$out/$base.$ext"
cat "$in" >> "$out/$base.$ext"
`

func TestSofficeConverts(t *testing.T) {
	fakeSoffice(t, convertScript)
	args := filepath.Join(t.TempDir(), "args")
	t.Setenv("ARGS_FILE", args)
	tmp := t.TempDir()
	c := New("", time.Minute, tmp)
	var got string
	var size int64
	err := c.Convert(context.Background(), "Quarterly report.docx", strings.NewReader("DOCX BYTES"), "odt", func(r io.Reader, n int64) error {
		b, err := io.ReadAll(r)
		got, size = string(b), n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != "converted:DOCX BYTES" || size != int64(len(got)) {
		t.Fatalf("result %q (%d bytes)", got, size)
	}
	a, _ := os.ReadFile(args)
	for _, want := range []string{"--headless", "--convert-to odt", "-env:UserInstallation=file://" + tmp + "/atrium-convert-", "/profile", "source.docx"} {
		if !strings.Contains(string(a), want) {
			t.Errorf("arguments %q lack %q", a, want)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary directory left behind: %v", left)
	}
	// The callback's error comes back as is.
	boom := errors.New("boom")
	if err := c.Convert(context.Background(), "a.docx", strings.NewReader("x"), "odt", func(io.Reader, int64) error { return boom }); err != boom {
		t.Fatalf("callback error: %v", err)
	}
}

// A failed conversion is an error and calls nothing. The converter is given
// the script's path, so the test runs beside others; its cases run one after
// another, as a script written while another case forks could not be run
// (ETXTBSY).
func TestSofficeFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		want    error
	}{
		{"exits with an error", "echo 'Error: source file could not be loaded' >&2\nexit 1\n", time.Minute, drive.ErrConvertFailed},
		{"writes nothing", "exit 0\n", time.Minute, drive.ErrConvertFailed},
		// The child would keep the pipes open: the whole group is killed.
		{"runs out of time", "sleep 30 &\nsleep 30\n", 300 * time.Millisecond, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(writeSoffice(t, tt.script), tt.timeout, t.TempDir())
			start := time.Now()
			called := false
			err := c.Convert(context.Background(), "a.xlsx", strings.NewReader("x"), "ods", func(io.Reader, int64) error { called = true; return nil })
			if !errors.Is(err, tt.want) || called {
				t.Fatalf("error %v (callback %v), want %v", err, called, tt.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}

func TestSofficeMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	c := New("", time.Minute, "")
	if c.Available() {
		t.Fatal("available without soffice")
	}
	err := c.Convert(context.Background(), "a.docx", strings.NewReader("x"), "odt", func(io.Reader, int64) error { return nil })
	if !errors.Is(err, drive.ErrNoConverter) {
		t.Fatalf("error %v", err)
	}
	c = New("/nonexistent/soffice", time.Minute, "")
	if err := c.Convert(context.Background(), "a.docx", strings.NewReader("x"), "odt", nil); !errors.Is(err, drive.ErrNoConverter) {
		t.Fatalf("configured path: %v", err)
	}
}
