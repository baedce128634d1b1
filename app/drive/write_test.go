package drive

import "testing"

// A content is small up to Options.SmallBytes (64 KiB by default) and never
// when the option is negative.
func TestSmallContent(t *testing.T) {
	t.Parallel()
	def := NewService(nil, nil, nil, nil, nil, nil, nil, Options{})
	off := NewService(nil, nil, nil, nil, nil, nil, nil, Options{SmallBytes: -1})
	for _, c := range []struct {
		s     *Service
		size  int64
		small bool
	}{
		{def, 0, true}, {def, 1024, true}, {def, DefaultSmallBytes, true}, {def, DefaultSmallBytes + 1, false}, {def, -1, false},
		{off, 0, false}, {off, 1024, false},
	} {
		if got := c.s.SmallContent(c.size); got != c.small {
			t.Errorf("SmallBytes %d: SmallContent(%d) = %v, want %v", c.s.opts.SmallBytes, c.size, got, c.small)
		}
	}
}
