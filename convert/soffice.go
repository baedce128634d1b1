// Package convert converts office documents with LibreOffice: it implements
// drive.Converter by running `soffice --headless --convert-to` in a private
// temporary directory per conversion, bounded in time and in the number of
// conversions at once.
package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"atrium/app/drive"
)

// DefaultTimeout bounds one conversion.
const DefaultTimeout = 2 * time.Minute

// Soffice converts documents with LibreOffice's soffice.
type Soffice struct {
	// Path is the soffice binary; "" looks up soffice (then libreoffice) on
	// PATH at each conversion, so installing it later needs no restart.
	Path string
	// Timeout bounds one conversion (default 2 minutes); the process group is
	// killed when it runs out.
	Timeout time.Duration
	// TempDir holds the conversions' private directories ("" is the system's).
	TempDir string

	slots chan struct{}
}

var _ drive.Converter = (*Soffice)(nil)

// New returns a converter running at most max(1, CPUs/2) conversions at once.
func New(path string, timeout time.Duration, tempDir string) *Soffice {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Soffice{Path: path, Timeout: timeout, TempDir: tempDir, slots: make(chan struct{}, max(1, runtime.NumCPU()/2))}
}

// binary returns the soffice to run, drive.ErrNoConverter when there is none.
func (s *Soffice) binary() (string, error) {
	if s.Path != "" {
		p, err := exec.LookPath(s.Path)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v", drive.ErrNoConverter, s.Path, err)
		}
		return p, nil
	}
	for _, name := range []string{"soffice", "libreoffice"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: soffice is not on PATH", drive.ErrNoConverter)
}

// Available reports whether soffice can be found.
func (s *Soffice) Available() bool {
	_, err := s.binary()
	return err == nil
}

// Convert implements drive.Converter.
func (s *Soffice) Convert(ctx context.Context, name string, src io.Reader, ext string, fn func(r io.Reader, size int64) error) error {
	bin, err := s.binary()
	if err != nil {
		return err
	}
	if !safeExt(ext) {
		return fmt.Errorf("%w: bad target format %q", drive.ErrConvertFailed, ext)
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return ctx.Err()
	}
	dir, err := os.MkdirTemp(s.TempDir, "atrium-convert-*")
	if err != nil {
		return fmt.Errorf("convert: temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "source")
	if e := filepath.Ext(name); safeExt(strings.TrimPrefix(e, ".")) {
		in += strings.ToLower(e)
	}
	if err := writeFile(in, src); err != nil {
		return fmt.Errorf("convert: write source: %w", err)
	}
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o700); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--invisible", "--norestore", "--nologo", "--nodefault", "--nolockcheck",
		"-env:UserInstallation=file://"+filepath.ToSlash(filepath.Join(dir, "profile")),
		"--convert-to", ext, "--outdir", outDir, in)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &limited{w: &stderr, n: 4096}
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("convert: soffice stopped after %s: %w", s.Timeout, ctx.Err())
	}
	out := filepath.Join(outDir, strings.TrimSuffix(filepath.Base(in), filepath.Ext(in))+"."+ext)
	f, err := os.Open(out)
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if runErr != nil {
			return fmt.Errorf("%w: soffice: %v %s", drive.ErrConvertFailed, runErr, firstLine(msg))
		}
		return fmt.Errorf("%w: soffice wrote no %s file %s", drive.ErrConvertFailed, ext, firstLine(msg))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	if st.Size() == 0 {
		return fmt.Errorf("%w: soffice wrote an empty file", drive.ErrConvertFailed)
	}
	return fn(f, st.Size())
}

func safeExt(ext string) bool {
	if ext == "" || len(ext) > 10 {
		return false
	}
	for _, r := range ext {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func writeFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// limited keeps the first n bytes written.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

var errNoProcess = errors.New("no process")
