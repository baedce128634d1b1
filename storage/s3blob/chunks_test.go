package s3blob_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"atrium/storage/s3blob"
)

// The bucket's chunked uploads: a folder is made once, a chunk is kept whole
// or not at all (too large, or a body shorter than its length: nothing
// stored), a body of unknown length is taken within the limit, a listing
// shows the chunks but not the folder's mark, a removed folder is gone, and
// a sweep removes the transfers last touched before its time and keeps the
// others.
func TestChunksInTheBucket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, cfg := openTestStore(t, nil)
	c := s.Chunks()
	if _, err := c.List(ctx, "u1", "t1"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("list of a folder never made: %v", err)
	}
	if ok, err := c.Touch(ctx, "u1", "t1"); ok || err != nil {
		t.Fatalf("touch of a folder never made: %v %v", ok, err)
	}
	if made, err := c.MakeFolder(ctx, "u1", "t1"); !made || err != nil {
		t.Fatalf("make: %v %v", made, err)
	}
	if made, err := c.MakeFolder(ctx, "u1", "t1"); made || err != nil {
		t.Fatalf("make again: %v %v", made, err)
	}
	if err := c.Put(ctx, "u1", "t1", "0", strings.NewReader("hello"), 5, 10); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		body        string
		size, limit int64
		want        error
	}{
		"over the limit":          {"0123456789ab", 12, 10, s3blob.ErrChunkTooLarge},
		"over the limit, unsized": {"0123456789ab", -1, 10, s3blob.ErrChunkTooLarge},
		"shorter than its length": {"abc", 6, 10, io.ErrUnexpectedEOF},
	} {
		if err := c.Put(ctx, "u1", "t1", "9", strings.NewReader(tc.body), tc.size, tc.limit); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if err := c.Put(ctx, "u1", "t1", "5", strings.NewReader("world!"), -1, 10); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "u1", "t1", "../x", strings.NewReader("x"), 1, 10); err == nil {
		t.Fatal("a chunk name with a slash was taken")
	}
	list, err := c.List(ctx, "u1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, ch := range list {
		got[ch.Name] = ch.Size
	}
	if len(got) != 2 || got["0"] != 5 || got["5"] != 6 {
		t.Fatalf("chunks %v, want 0 (5 bytes) and 5 (6 bytes) and nothing of the refused ones", got)
	}
	r, err := c.Open(ctx, "u1", "t1", "5")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "world!" {
		t.Fatalf("chunk 5: %q", b)
	}
	if ok, err := c.RemoveChunk(ctx, "u1", "t1", "5"); !ok || err != nil {
		t.Fatalf("remove chunk: %v %v", ok, err)
	}
	if ok, err := c.RemoveChunk(ctx, "u1", "t1", "5"); ok || err != nil {
		t.Fatalf("remove chunk again: %v %v", ok, err)
	}
	if ok, err := c.RemoveFolder(ctx, "u1", "t1"); !ok || err != nil {
		t.Fatalf("remove folder: %v %v", ok, err)
	}
	if ok, err := c.RemoveFolder(ctx, "u1", "t1"); ok || err != nil {
		t.Fatalf("remove folder again: %v %v", ok, err)
	}
	if keys, err := s3blob.TestKeys(ctx, cfg, "chunks/"); err != nil || len(keys) != 0 {
		t.Fatalf("objects left: %v %v", keys, err)
	}

	// The sweep: by the folder's mark, rewritten by Touch.
	for _, tr := range []string{"old", "new"} {
		if _, err := c.MakeFolder(ctx, "u2", tr); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, "u2", tr, "0", strings.NewReader("x"), 1, 10); err != nil {
			t.Fatal(err)
		}
	}
	// The store's clock is the machine's, in whole seconds.
	cut := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(cut) + 100*time.Millisecond)
	if ok, err := c.Touch(ctx, "u2", "new"); !ok || err != nil {
		t.Fatalf("touch: %v %v", ok, err)
	}
	if n, err := c.Sweep(ctx, cut); n != 1 || err != nil {
		t.Fatalf("sweep removed %d (%v), want 1", n, err)
	}
	if _, err := c.List(ctx, "u2", "old"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old transfer after the sweep: %v", err)
	}
	if list, err := c.List(ctx, "u2", "new"); err != nil || len(list) != 1 {
		t.Fatalf("the transfer in use after the sweep: %v %v", list, err)
	}
}
