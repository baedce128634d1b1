package s3blob_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"atrium/storage/blob"
	"atrium/storage/s3blob"
)

// stores are the two implementations of blob.Objects and blob.Cold: the disk
// store always, the S3 store when the test environment names one (a bucket of
// its own per test).
type store struct {
	objects blob.Objects
	archive blob.Cold
	// scratch is a directory for files to adopt.
	scratch string
}

func stores(t *testing.T) map[string]func(t *testing.T) store {
	return map[string]func(t *testing.T) store{
		"disk": func(t *testing.T) store {
			dir := t.TempDir()
			s, err := blob.Open(filepath.Join(dir, "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := blob.OpenArchive(filepath.Join(dir, "archive"))
			if err != nil {
				t.Fatal(err)
			}
			return store{objects: blob.Local{Store: s}, archive: a, scratch: t.TempDir()}
		},
		"s3": func(t *testing.T) store {
			s := openS3(t)
			return store{objects: s, archive: s.Archive(), scratch: t.TempDir()}
		},
	}
}

// openS3 opens a fresh bucket of the test environment's store, skipping the
// test without one.
func openS3(t *testing.T) *s3blob.Store {
	s, _ := openTestStore(t, nil)
	return s
}

// openTestStore opens a fresh bucket of the test environment's store, with
// the settings edit changes (nil: none), and returns it with its settings;
// it skips the test without a store, and drops the bucket when it ends.
func openTestStore(t *testing.T, edit func(*s3blob.Config)) (*s3blob.Store, s3blob.Config) {
	t.Helper()
	cfg, ok := s3blob.TestConfig()
	if !ok {
		t.Skip(s3blob.TestEndpointEnv + " not set (scripts/s3-server.sh starts a store)")
	}
	ctx := context.Background()
	bucket, drop, err := s3blob.NewTestBucket(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("drop test bucket: %v", err)
		}
	})
	cfg.Bucket = bucket
	cfg.Scratch = t.TempDir()
	if edit != nil {
		edit(&cfg)
	}
	s, err := s3blob.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, cfg
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func readAll(t *testing.T, o blob.Objects, hash string) []byte {
	t.Helper()
	r, err := o.Open(context.Background(), hash)
	if err != nil {
		t.Fatalf("open %s: %v", hash, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", hash, err)
	}
	return b
}

func walk(t *testing.T, o blob.Objects) []string {
	t.Helper()
	var got []string
	err := o.Walk(context.Background(), func(hash string, mod time.Time) error {
		if d := time.Since(mod); d < -time.Minute || d > time.Minute {
			t.Errorf("walk: %s modified %v ago, want about now", hash, d)
		}
		got = append(got, hash)
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	sort.Strings(got)
	return got
}

func TestObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	content := []byte("the quick brown fox jumps over the lazy dog")
	hash := sum(content)
	missing := sum([]byte("never stored"))

	tests := []struct {
		name string
		run  func(t *testing.T, s store)
	}{
		{"put then open", func(t *testing.T, s store) {
			obj, err := s.objects.Put(ctx, bytes.NewReader(content), 0)
			if err != nil {
				t.Fatal(err)
			}
			if obj.Hash != hash || obj.Size != int64(len(content)) {
				t.Fatalf("put: %+v, want %s of %d bytes", obj, hash, len(content))
			}
			if got := readAll(t, s.objects, hash); !bytes.Equal(got, content) {
				t.Fatalf("read back %q", got)
			}
			if n, err := s.objects.Stat(ctx, hash); err != nil || n != int64(len(content)) {
				t.Fatalf("stat: %d, %v", n, err)
			}
			if !s.objects.Exists(ctx, hash) {
				t.Fatal("exists: false after put")
			}
		}},
		{"empty content", func(t *testing.T, s store) {
			obj, err := s.objects.Put(ctx, strings.NewReader(""), 10)
			if err != nil || obj.Size != 0 || obj.Hash != sum(nil) {
				t.Fatalf("put empty: %+v, %v", obj, err)
			}
			if got := readAll(t, s.objects, obj.Hash); len(got) != 0 {
				t.Fatalf("read back %q", got)
			}
		}},
		{"same content twice is one object", func(t *testing.T, s store) {
			for i := 0; i < 2; i++ {
				if _, err := s.objects.Put(ctx, bytes.NewReader(content), int64(len(content))); err != nil {
					t.Fatalf("put %d: %v", i, err)
				}
			}
			if got := walk(t, s.objects); len(got) != 1 || got[0] != hash {
				t.Fatalf("walk: %v, want [%s]", got, hash)
			}
		}},
		{"over the limit", func(t *testing.T, s store) {
			_, err := s.objects.Put(ctx, bytes.NewReader(content), int64(len(content))-1)
			if !errors.Is(err, blob.ErrTooLarge) {
				t.Fatalf("put over the limit: %v, want ErrTooLarge", err)
			}
			if got := walk(t, s.objects); len(got) != 0 {
				t.Fatalf("walk after a refused put: %v", got)
			}
		}},
		{"cancelled put", func(t *testing.T, s store) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := s.objects.Put(cctx, bytes.NewReader(content), 0); !errors.Is(err, context.Canceled) {
				t.Fatalf("put with a cancelled context: %v", err)
			}
		}},
		{"not found", func(t *testing.T, s store) {
			if _, err := s.objects.Open(ctx, missing); !errors.Is(err, blob.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("open missing: %v, want ErrNotFound", err)
			}
			if _, err := s.objects.Stat(ctx, missing); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("stat missing: %v, want ErrNotFound", err)
			}
			if s.objects.Exists(ctx, missing) {
				t.Fatal("exists: true for a missing object")
			}
			if _, err := s.objects.Open(ctx, "../etc/passwd"); !errors.Is(err, blob.ErrInvalidHash) {
				t.Fatalf("open of an invalid hash: %v", err)
			}
			if err := s.objects.Delete(ctx, strings.ToUpper(hash)); !errors.Is(err, blob.ErrInvalidHash) {
				t.Fatalf("delete of an invalid hash: %v", err)
			}
		}},
		{"seek and range", func(t *testing.T, s store) {
			if _, err := s.objects.Put(ctx, bytes.NewReader(content), 0); err != nil {
				t.Fatal(err)
			}
			r, err := s.objects.Open(ctx, hash)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// As http.ServeContent does: the size, then a range.
			if n, err := r.Seek(0, io.SeekEnd); err != nil || n != int64(len(content)) {
				t.Fatalf("seek to end: %d, %v", n, err)
			}
			if _, err := r.Seek(4, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 5)
			if _, err := io.ReadFull(r, b); err != nil || string(b) != "quick" {
				t.Fatalf("range 4-8: %q, %v", b, err)
			}
			if _, err := r.Seek(-3, io.SeekEnd); err != nil {
				t.Fatal(err)
			}
			if rest, err := io.ReadAll(r); err != nil || string(rest) != "dog" {
				t.Fatalf("last 3 bytes: %q, %v", rest, err)
			}
			if _, err := r.Seek(10, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			if rest, err := io.ReadAll(r); err != nil || string(rest) != string(content[10:]) {
				t.Fatalf("from 10: %q, %v", rest, err)
			}
		}},
		{"delete", func(t *testing.T, s store) {
			if _, err := s.objects.Put(ctx, bytes.NewReader(content), 0); err != nil {
				t.Fatal(err)
			}
			if err := s.objects.Delete(ctx, hash); err != nil {
				t.Fatal(err)
			}
			if s.objects.Exists(ctx, hash) {
				t.Fatal("exists after delete")
			}
			if _, err := s.objects.Open(ctx, hash); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("open after delete: %v", err)
			}
			if err := s.objects.Delete(ctx, hash); err != nil {
				t.Fatalf("delete of a missing object: %v", err)
			}
		}},
		{"walk", func(t *testing.T, s store) {
			var want []string
			for _, c := range []string{"one", "two", "three"} {
				obj, err := s.objects.Put(ctx, strings.NewReader(c), 0)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, obj.Hash)
			}
			sort.Strings(want)
			if got := walk(t, s.objects); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("walk: %v, want %v", got, want)
			}
			stop := errors.New("stop")
			n := 0
			err := s.objects.Walk(ctx, func(string, time.Time) error { n++; return stop })
			if !errors.Is(err, stop) || n != 1 {
				t.Fatalf("walk stopped by fn: %v after %d calls", err, n)
			}
		}},
		{"adopt", func(t *testing.T, s store) {
			path := filepath.Join(s.scratch, "upload")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := s.objects.Adopt(ctx, path, hash, int64(len(content))+1); err == nil {
				t.Fatal("adopt with the wrong size succeeded")
			}
			obj, err := s.objects.Adopt(ctx, path, hash, int64(len(content)))
			if err != nil || obj.Hash != hash {
				t.Fatalf("adopt: %+v, %v", obj, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("adopted file still there: %v", err)
			}
			if got := readAll(t, s.objects, hash); !bytes.Equal(got, content) {
				t.Fatalf("read back %q", got)
			}
			// Content held already: the file only goes.
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := s.objects.Adopt(ctx, path, hash, int64(len(content))); err != nil {
				t.Fatalf("adopt of held content: %v", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("duplicate file still there: %v", err)
			}
			if _, err := s.objects.Adopt(ctx, path, hash, int64(len(content))); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("adopt of a missing file: %v, want fs.ErrNotExist", err)
			}
		}},
		{"archive round trip", func(t *testing.T, s store) {
			if s.archive.Exists(hash) {
				t.Fatal("archive holds a copy before put")
			}
			if _, err := s.archive.Open(hash); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("archive open of a missing copy: %v", err)
			}
			if err := s.archive.Put(hash, bytes.NewReader(content[1:])); err == nil {
				t.Fatal("archive put of content of another hash succeeded")
			}
			if s.archive.Exists(hash) {
				t.Fatal("archive holds a copy after a refused put")
			}
			if err := s.archive.Put(hash, bytes.NewReader(content)); err != nil {
				t.Fatal(err)
			}
			if !s.archive.Exists(hash) {
				t.Fatal("archive: no copy after put")
			}
			r, err := s.archive.Open(hash)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("archive read back %q, %v", got, err)
			}
			if got := walk(t, s.objects); len(got) != 0 {
				t.Fatalf("archive copies show in the objects' walk: %v", got)
			}
			if err := s.archive.Delete(hash); err != nil {
				t.Fatal(err)
			}
			if s.archive.Exists(hash) {
				t.Fatal("archive holds a copy after delete")
			}
			if err := s.archive.Delete(hash); err != nil {
				t.Fatalf("archive delete of a missing copy: %v", err)
			}
		}},
		{"large object", func(t *testing.T, s store) {
			// Past minio-go's 16 MiB part size: a multipart upload.
			big := make([]byte, 17<<20+12345)
			if _, err := rand.Read(big); err != nil {
				t.Fatal(err)
			}
			obj, err := s.objects.Put(ctx, bytes.NewReader(big), int64(len(big)))
			if err != nil || obj.Hash != sum(big) || obj.Size != int64(len(big)) {
				t.Fatalf("put large: %+v, %v", obj, err)
			}
			r, err := s.objects.Open(ctx, obj.Hash)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Seek(16<<20, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			tail, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(tail, big[16<<20:]) {
				t.Fatalf("tail from 16 MiB: %d bytes, %v", len(tail), err)
			}
		}},
	}
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.run(t, open(t))
				})
			}
		})
	}
}
