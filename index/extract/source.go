package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// memSpool is the most content held in memory when spooling a reader that
// has no random access; larger content goes to a temporary file.
const memSpool = 4 << 20

// source is content with random access.
type source struct {
	ra    io.ReaderAt
	size  int64
	close func()
}

// openSource gives random access to r. It uses r itself when it is an
// io.ReaderAt of known size, and otherwise spools it. tooBig reports
// content larger than limit, which is not read further. On success the
// caller must call src.close.
func openSource(ctx context.Context, r io.Reader, size, limit int64) (src *source, tooBig bool, err error) {
	if size > limit {
		return nil, true, nil
	}
	if ra, ok := r.(io.ReaderAt); ok && size >= 0 {
		return &source{ra: ra, size: size, close: func() {}}, false, nil
	}
	cr := &ctxReader{ctx: ctx, r: r}
	head := make([]byte, memSpool)
	n, err := io.ReadFull(cr, head)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if int64(n) > limit {
			return nil, true, nil
		}
		return &source{ra: bytes.NewReader(head[:n]), size: int64(n), close: func() {}}, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read content: %w", err)
	}
	f, err := os.CreateTemp("", "atrium-extract-*")
	if err != nil {
		return nil, false, fmt.Errorf("spool content: %w", err)
	}
	cleanup := func() {
		f.Close()
		os.Remove(f.Name())
	}
	if _, err := f.Write(head); err != nil {
		cleanup()
		return nil, false, fmt.Errorf("spool content: %w", err)
	}
	rest := limit - int64(len(head)) + 1
	m, err := io.Copy(f, io.LimitReader(cr, rest))
	if err != nil {
		cleanup()
		return nil, false, fmt.Errorf("spool content: %w", err)
	}
	if m == rest {
		cleanup()
		return nil, true, nil
	}
	return &source{ra: f, size: int64(len(head)) + m, close: cleanup}, false, nil
}

// ctxReader fails reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ctxReaderAt fails reads once ctx is done, so that a parser stuck re-reading
// its input gives up when the caller does.
type ctxReaderAt struct {
	ctx context.Context
	ra  io.ReaderAt
}

func (c *ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.ra.ReadAt(p, off)
}

// capReader reads from r until a shared budget is spent, then fails with
// errCapped. A budget of n bytes lets exactly n bytes through.
type capReader struct {
	r      io.Reader
	budget *int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if *c.budget <= 0 {
		return 0, errCapped
	}
	if int64(len(p)) > *c.budget {
		p = p[:*c.budget]
	}
	n, err := c.r.Read(p)
	*c.budget -= int64(n)
	return n, err
}

// multiCap reads from r within every one of several budgets.
func multiCap(r io.Reader, budgets ...*int64) io.Reader {
	for _, b := range budgets {
		r = &capReader{r: r, budget: b}
	}
	return r
}
