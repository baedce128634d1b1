package extract

import (
	"unicode"
	"unicode/utf8"
)

// textWriter collects normalised text up to a byte limit.
//
// Invalid UTF-8 becomes U+FFFD, control characters other than newline
// become spaces, and runs of whitespace collapse to one newline (when the run
// holds a line break) or one space. Leading and trailing whitespace is
// dropped. Once the next rune does not fit, the writer is full and every
// write returns errFull.
type textWriter struct {
	buf     []byte
	max     int
	pending byte // separator owed before the next rune: 0, ' ' or '\n'
	full    bool
}

// newTextWriter returns a writer of at most max bytes for the text of a
// content of size bytes (-1: unknown), which sizes its first buffer.
func newTextWriter(max int, size int64) *textWriter {
	return &textWriter{buf: make([]byte, 0, bufFor(size, min(max, 64<<10))), max: max}
}

// bufFor is the size of a buffer for a content of size bytes (-1: unknown):
// limit, or just over size when that is less, so that the text of a small
// file does not cost the buffers of a large one. Buffers still grow, or are
// read through again, when a content turns out larger than it said.
func bufFor(size int64, limit int) int {
	if size < 0 || size >= int64(limit) {
		return limit
	}
	return max(int(size)+8, 64)
}

// String returns the text collected so far.
func (w *textWriter) String() string { return string(w.buf) }

// Len returns the number of bytes collected so far.
func (w *textWriter) Len() int { return len(w.buf) }

// space records a word break.
func (w *textWriter) space() { w.sep(' ') }

// newline records a line break.
func (w *textWriter) newline() { w.sep('\n') }

func (w *textWriter) sep(c byte) {
	if len(w.buf) == 0 || w.pending == '\n' {
		return
	}
	w.pending = c
}

// WriteString adds s, which may hold invalid UTF-8.
func (w *textWriter) WriteString(s string) error {
	if w.full {
		return errFull
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if !w.ascii(c) {
				return errFull
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if !w.writeRune(r) {
			return errFull
		}
	}
	return nil
}

// Write adds p, which may hold invalid UTF-8. It implements io.Writer.
func (w *textWriter) Write(p []byte) (int, error) {
	if w.full {
		return 0, errFull
	}
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			i++
			if !w.ascii(c) {
				return i - 1, errFull
			}
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		i += n
		if !w.writeRune(r) {
			return i - n, errFull
		}
	}
	return len(p), nil
}

// ascii adds one ASCII byte and reports whether it fitted.
func (w *textWriter) ascii(c byte) bool {
	switch {
	case c == '\n':
		w.sep('\n')
		return true
	case c <= ' ' || c == 0x7f:
		w.sep(' ')
		return true
	}
	return w.emit(rune(c), 1)
}

// writeRune adds r and reports whether it fitted.
func (w *textWriter) writeRune(r rune) bool {
	if r < utf8.RuneSelf {
		return w.ascii(byte(r))
	}
	switch {
	case r == '\u2028' || r == '\u2029':
		w.sep('\n')
		return true
	case unicode.IsSpace(r) || unicode.IsControl(r):
		w.sep(' ')
		return true
	}
	// utf8.DecodeRune reports invalid input as U+FFFD, which is what it
	// becomes; RuneLen only fails for invalid runes, which it cannot return.
	return w.emit(r, utf8.RuneLen(r))
}

// emit appends r (n bytes long) after any pending separator.
func (w *textWriter) emit(r rune, n int) bool {
	if w.full {
		return false
	}
	if w.pending != 0 {
		n++
	}
	if len(w.buf)+n > w.max {
		w.full = true
		return false
	}
	if w.pending != 0 {
		w.buf = append(w.buf, w.pending)
		w.pending = 0
	}
	w.buf = utf8.AppendRune(w.buf, r)
	return true
}
