package app

import (
	"errors"
	"testing"
	"time"
)

// FuzzCursorDecode checks that decoding an arbitrary string never panics and
// fails only with invalid_cursor or cursor_expired, and that a cursor whose
// bytes were changed never decodes to a position other than the one issued
// (the fuzzer picks the byte and the replacement). Arbitrary strings are only
// checked for the error class: a well-formed cursor among them may be genuine.
func FuzzCursorDecode(f *testing.F) {
	c := &Cursors{Key: []byte("fuzz-key-0123456789"), Clock: func() time.Time { return time.Unix(1_790_000_000, 0) }}
	valid := c.Encode("files", "2026-11-23T10:00:00Z|f_01JD")
	f.Add(valid, 0, byte('A'))
	f.Add(valid, len(valid)-1, byte('x'))
	f.Add(c.Encode("files", ""), 3, byte('.'))
	f.Add("", 0, byte(0))
	f.Add("not-a-cursor", 1, byte('.'))
	f.Add("e30.", 0, byte('e'))
	f.Fuzz(func(t *testing.T, s string, at int, b byte) {
		mutated := mutate(valid, at, b)
		for _, in := range []string{s, mutated} {
			after, err := c.Decode("files", in)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Code != EInvalidCursor && e.Code != ECursorExpired {
					t.Fatalf("Decode(%q): unexpected error %v", in, err)
				}
				continue
			}
			if in == mutated && after != "2026-11-23T10:00:00Z|f_01JD" {
				t.Fatalf("Decode(%q) accepted a forged cursor: %q", in, after)
			}
		}
	})
}

// mutate replaces one byte of s (position at modulo len(s)) with b.
func mutate(s string, at int, b byte) string {
	bs := []byte(s)
	bs[uint(at)%uint(len(bs))] = b
	return string(bs)
}
