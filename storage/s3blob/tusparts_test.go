package s3blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"testing"
	"testing/iotest"
)

// The parts of an upload, appended in several calls under the limit, read
// back as one content whose hash the appends computed; Store makes them the
// blob only when they hash to the hash given, and finds a blob stored
// already without reading them; a part gone reads as fs.ErrNotExist.
func TestTusParts(t *testing.T) {
	t.Parallel()
	s := openS3(t)
	p := s.TusParts()
	ctx := context.Background()
	content := bytes.Repeat([]byte("parts of a resumable upload\n"), 40000)
	const id = "01a2-upload"
	h := sha256.New()
	var parts []string
	var off int64
	for _, end := range []int{1, 1 << 20, len(content)} {
		part, n, over, err := p.Append(ctx, id, off, parts, h, iotest.HalfReader(bytes.NewReader(content[off:end])), 1<<40)
		if err != nil || over || n != int64(end)-off || part == "" {
			t.Fatalf("append to %d: %q %d %v %v", end, part, n, over, err)
		}
		parts, off = append(parts, part), int64(end)
	}
	want := sum(content)
	if string(h.Sum(nil)) != string(sha256Of(content)) {
		t.Fatal("the appends' hash is not the content's")
	}
	// Over the limit: the limit's bytes are stored, the rest reported.
	part, n, over, err := p.Append(ctx, "01a2-over", 0, nil, sha256.New(), bytes.NewReader([]byte("0123456789")), 4)
	if err != nil || !over || n != 4 || part == "" {
		t.Fatalf("append over the limit: %q %d %v %v", part, n, over, err)
	}
	if got, err := p.Read(ctx, "01a2-over", []string{part}, 4); err != nil || string(got) != "0123" {
		t.Fatalf("read over: %q %v", got, err)
	}
	// Nothing to store: no part.
	if part, n, _, err := p.Append(ctx, id, off, parts, sha256.New(), bytes.NewReader(nil), 10); err != nil || part != "" || n != 0 {
		t.Fatalf("empty append: %q %d %v", part, n, err)
	}

	if got, err := p.Read(ctx, id, parts, int64(len(content))); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("read: %d bytes, %v", len(got), err)
	}
	if _, err := p.Read(ctx, id, []string{parts[1], parts[0]}, int64(len(content))); err == nil {
		t.Fatal("parts out of order were read")
	}
	// A wrong hash is refused, and nothing is stored under it.
	wrong := sum([]byte("something else"))
	if err := p.Store(ctx, id, parts, wrong, int64(len(content))); err == nil {
		t.Fatal("parts stored under a hash they do not have")
	}
	if s.Exists(ctx, wrong) || s.Exists(ctx, want) {
		t.Fatal("a refused store left a blob")
	}
	if err := p.Store(ctx, id, parts, want, int64(len(content))); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Stat(ctx, want); err != nil || n != int64(len(content)) {
		t.Fatalf("blob: %d %v", n, err)
	}
	// A part gone: reading fails as not there; storing finds the blob.
	if err := p.Discard(ctx, id, parts[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(ctx, id, parts, int64(len(content))); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read with a part gone: %v", err)
	}
	if err := p.Store(ctx, id, parts, want, int64(len(content))); err != nil {
		t.Fatalf("store again with the blob held: %v", err)
	}
	if err := p.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(ctx, id, parts[:1], 1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read after remove: %v", err)
	}
	// Bad names never reach the bucket.
	if _, _, _, err := p.Append(ctx, "a/b", 0, nil, sha256.New(), bytes.NewReader([]byte("x")), 1); err == nil {
		t.Fatal("an upload id with a slash was taken")
	}
	if err := p.Discard(ctx, id, "../blobs/x"); err == nil {
		t.Fatal("a part name outside the parts was taken")
	}
}

func sha256Of(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}
