package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// newStore opens a store in a fresh temp dir.
func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// randomReader yields n deterministic pseudo-random bytes.
func randomReader(seed uint64, n int64) io.Reader {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	return io.LimitReader(rand.NewChaCha8(key), n)
}

func randomBytes(t testing.TB, seed uint64, n int64) []byte {
	t.Helper()
	b, err := io.ReadAll(randomReader(seed, n))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// files lists the regular files under dir, relative to it.
func files(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertObjects checks that the store holds exactly the objects want (hashes)
// and that its temp dir is empty.
func assertObjects(t testing.TB, s *Store, want ...string) {
	t.Helper()
	if tmp := files(t, s.TempDir()); len(tmp) != 0 {
		t.Errorf("temp dir not empty: %v", tmp)
	}
	got := files(t, s.objects)
	var wantPaths []string
	for _, h := range want {
		wantPaths = append(wantPaths, filepath.Join(h[:2], h[2:4], h))
	}
	if strings.Join(got, ",") != strings.Join(wantPaths, ",") {
		t.Errorf("objects = %v, want %v", got, wantPaths)
	}
}

func TestPutOpenRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"small", []byte("hello, atrium")},
		{"exactly one chunk", randomBytes(t, 1, copyBufferSize)},
		{"one chunk plus one", randomBytes(t, 2, copyBufferSize+1)},
		{"several chunks", randomBytes(t, 3, 3*copyBufferSize+12345)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			// OneByteReader for the small ones exercises the chunk filling.
			var r io.Reader = bytes.NewReader(c.data)
			if len(c.data) < 100 {
				r = iotest.OneByteReader(r)
			}
			obj, err := s.Put(context.Background(), r, 0)
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			if want := (Object{Hash: sha(c.data), Size: int64(len(c.data))}); obj != want {
				t.Fatalf("Put = %+v, want %+v", obj, want)
			}
			f, err := s.Open(obj.Hash)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.data) {
				t.Fatalf("read back %d bytes, differing from the %d put", len(got), len(c.data))
			}
			size, err := s.Stat(obj.Hash)
			if err != nil || size != obj.Size {
				t.Errorf("Stat = %d, %v; want %d", size, err, obj.Size)
			}
			if !s.Exists(obj.Hash) {
				t.Error("Exists = false")
			}
			p, err := s.Path(obj.Hash)
			if want := filepath.Join(s.dir, "objects", obj.Hash[:2], obj.Hash[2:4], obj.Hash); err != nil || p != want {
				t.Errorf("Path = %q, %v; want %q", p, err, want)
			}
			assertObjects(t, s, obj.Hash)
		})
	}
}

func TestOpenCreatesLayout(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "blobs")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"objects", "tmp"} {
		fi, err := os.Stat(filepath.Join(dir, d))
		if err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", d, err)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
			t.Errorf("%s mode = %v, want 0700", d, fi.Mode().Perm())
		}
	}
	if s.TempDir() != filepath.Join(dir, "tmp") {
		t.Errorf("TempDir = %q", s.TempDir())
	}
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

func TestPutDedup(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	data := randomBytes(t, 7, 2*copyBufferSize)
	a, err := s.Put(context.Background(), bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path(a.Hash)
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Put(context.Background(), bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("second Put = %+v, want %+v", b, a)
	}
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("second Put replaced the existing object instead of keeping it")
	}
	assertObjects(t, s, a.Hash)
}

func TestPutRepairsDamagedObject(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	data := randomBytes(t, 8, 5000)
	obj, err := s.Put(context.Background(), bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path(obj.Hash)
	if err := os.Truncate(p, 100); err != nil { // a disk fault
		t.Fatal(err)
	}
	if _, err := s.Put(context.Background(), bytes.NewReader(data), 0); err != nil {
		t.Fatal(err)
	}
	if size, err := s.Stat(obj.Hash); err != nil || size != obj.Size {
		t.Fatalf("Stat after repair = %d, %v; want %d", size, err, obj.Size)
	}
	assertObjects(t, s, obj.Hash)
}

func TestPutConcurrent(t *testing.T) {
	t.Parallel()
	const n = 20
	cases := []struct {
		name string
		seed func(i int) uint64
	}{
		{"same content", func(int) uint64 { return 42 }},
		{"different content", func(i int) uint64 { return uint64(100 + i) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			var wg sync.WaitGroup
			objs := make([]Object, n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					objs[i], errs[i] = s.Put(context.Background(), randomReader(c.seed(i), 3*copyBufferSize/2), 0)
				})
			}
			wg.Wait()
			want := map[string]bool{}
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("Put %d: %v", i, errs[i])
				}
				data := randomBytes(t, c.seed(i), 3*copyBufferSize/2)
				if objs[i].Hash != sha(data) || objs[i].Size != int64(len(data)) {
					t.Fatalf("Put %d = %+v, want hash %s", i, objs[i], sha(data))
				}
				want[objs[i].Hash] = true
			}
			var hashes []string
			for h := range want {
				hashes = append(hashes, h)
			}
			slices.Sort(hashes) // the order WalkDir lists their paths in
			assertObjects(t, s, hashes...)
			for _, h := range hashes {
				f, err := s.Open(h)
				if err != nil {
					t.Fatal(err)
				}
				hs := sha256.New()
				io.Copy(hs, f)
				f.Close()
				if got := hex.EncodeToString(hs.Sum(nil)); got != h {
					t.Errorf("object %s holds content hashing to %s", h, got)
				}
			}
		})
	}
}

func TestPutLimit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		size    int64
		limit   int64
		tooBig  bool
		oneByte bool
	}{
		{"no limit", 3 * copyBufferSize, 0, false, false},
		{"negative is no limit", 1000, -1, false, false},
		{"at limit", 10, 10, false, false},
		{"one over", 11, 10, true, false},
		{"one over, byte by byte", 11, 10, true, true},
		{"over within first chunk", copyBufferSize / 2, 1000, true, false},
		{"over after several chunks", 3*copyBufferSize + 1, 3 * copyBufferSize, true, false},
		{"at limit over several chunks", 3 * copyBufferSize, 3 * copyBufferSize, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			r := randomReader(uint64(c.size), c.size)
			if c.oneByte {
				r = iotest.OneByteReader(r)
			}
			obj, err := s.Put(context.Background(), r, c.limit)
			if c.tooBig {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("Put = %+v, %v; want ErrTooLarge", obj, err)
				}
				assertObjects(t, s)
				return
			}
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			if obj.Size != c.size {
				t.Fatalf("Size = %d, want %d", obj.Size, c.size)
			}
			assertObjects(t, s, obj.Hash)
		})
	}
}

// cancellingReader yields chunks of data and cancels its context after some reads.
type cancellingReader struct {
	r      io.Reader
	reads  int
	after  int
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	c.reads++
	if c.reads == c.after {
		c.cancel()
	}
	return c.r.Read(p[:min(len(p), 64<<10)])
}

func TestPutContextCancelled(t *testing.T) {
	t.Parallel()
	t.Run("mid-stream", func(t *testing.T) {
		s := newStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &cancellingReader{r: randomReader(1, 8*copyBufferSize), after: 40, cancel: cancel}
		if _, err := s.Put(ctx, r, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put = %v, want context.Canceled", err)
		}
		if r.reads > 41 {
			t.Errorf("Put went on reading after the cancellation: %d reads", r.reads)
		}
		assertObjects(t, s)
	})
	t.Run("on the last read", func(t *testing.T) {
		s := newStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &cancellingReader{r: strings.NewReader("short"), after: 1, cancel: cancel}
		if _, err := s.Put(ctx, r, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put = %v, want context.Canceled", err)
		}
		assertObjects(t, s)
	})
	t.Run("before the start", func(t *testing.T) {
		s := newStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.Put(ctx, strings.NewReader("x"), 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put = %v, want context.Canceled", err)
		}
		assertObjects(t, s)
	})
}

var errBoom = errors.New("connection reset")

// failingReader yields n bytes in small chunks, then fails.
type failingReader struct {
	r io.Reader
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p[:min(len(p), 4096)])
	if err == io.EOF {
		return n, errBoom
	}
	return n, err
}

func TestPutReaderFails(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		r    io.Reader
	}{
		{"at once", iotest.ErrReader(errBoom)},
		{"half-way, slowly", &failingReader{r: randomReader(3, 3*copyBufferSize/2)}},
		{"with the last data", iotest.DataErrReader(&failingReader{r: randomReader(4, 1000)})},
		{"after a timeout", iotest.TimeoutReader(randomReader(5, 2*copyBufferSize))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			obj, err := s.Put(context.Background(), c.r, 0)
			if err == nil {
				t.Fatalf("Put = %+v, want an error", obj)
			}
			if c.name != "after a timeout" && !errors.Is(err, errBoom) {
				t.Errorf("Put error %v does not wrap the reader's", err)
			}
			assertObjects(t, s)
		})
	}
}

// TestCrashBetweenWriteAndRename simulates a process that died after writing
// part of an upload to its temp file: the object must not be visible, and the
// next Open must clear the temp dir while keeping committed objects.
func TestCrashBetweenWriteAndRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := s.Put(context.Background(), strings.NewReader("committed before the crash"), 0)
	if err != nil {
		t.Fatal(err)
	}
	full := randomBytes(t, 9, 2*copyBufferSize)
	// What a crashed Put leaves: a temp file holding a prefix of the stream.
	if err := os.WriteFile(filepath.Join(s.TempDir(), "put-123456"), full[:copyBufferSize], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.TempDir(), "other-adapter", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{sha(full), sha(full[:copyBufferSize])} {
		if s.Exists(h) {
			t.Fatalf("partial upload visible as %s before restart", h)
		}
	}
	old := time.Now().Add(-2 * staleTemp)
	for _, n := range []string{"put-123456", "other-adapter"} {
		if err := os.Chtimes(filepath.Join(s.TempDir(), n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// A temp file written just now may be a running server's upload (another
	// command opened the store beside it): it stays.
	if err := os.WriteFile(filepath.Join(s.TempDir(), "put-live"), []byte("in progress"), 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir) // the restart
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(s.TempDir()); len(entries) != 1 || entries[0].Name() != "put-live" {
		t.Errorf("temp dir after restart holds %v, want only put-live", entries)
	}
	if err := os.Remove(filepath.Join(s.TempDir(), "put-live")); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{sha(full), sha(full[:copyBufferSize])} {
		if s.Exists(h) {
			t.Errorf("partial upload visible as %s after restart", h)
		}
	}
	assertObjects(t, s, kept.Hash)
	// The store works after the restart.
	obj, err := s.Put(context.Background(), bytes.NewReader(full), 0)
	if err != nil || obj.Hash != sha(full) {
		t.Fatalf("Put after restart = %+v, %v", obj, err)
	}
}

func TestInvalidHash(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	good := sha([]byte("x"))
	cases := []string{
		"",
		"abc",
		strings.ToUpper(good),
		good[:63],
		good + "0",
		good[:62] + "g0",
		"../../../../../../../../../../../../../../../../../../etc/passwd",
		good[:60] + "/../",
	}
	for _, h := range cases {
		t.Run(fmt.Sprintf("%q", h), func(t *testing.T) {
			if _, err := s.Open(h); !errors.Is(err, ErrInvalidHash) {
				t.Errorf("Open: %v", err)
			}
			if _, err := s.Stat(h); !errors.Is(err, ErrInvalidHash) {
				t.Errorf("Stat: %v", err)
			}
			if err := s.Delete(h); !errors.Is(err, ErrInvalidHash) {
				t.Errorf("Delete: %v", err)
			}
			if _, err := s.Path(h); !errors.Is(err, ErrInvalidHash) {
				t.Errorf("Path: %v", err)
			}
			if s.Exists(h) {
				t.Error("Exists = true")
			}
		})
	}
}

func TestNotFoundAndDelete(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	missing := sha([]byte("never stored"))
	if _, err := s.Open(missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open missing: %v", err)
	}
	if _, err := s.Stat(missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stat missing: %v", err)
	}
	if s.Exists(missing) {
		t.Error("Exists missing = true")
	}
	if err := s.Delete(missing); err != nil {
		t.Errorf("Delete missing: %v", err)
	}

	obj, err := s.Put(context.Background(), strings.NewReader("to delete"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(obj.Hash); err != nil {
		t.Fatal(err)
	}
	if s.Exists(obj.Hash) {
		t.Error("Exists after Delete = true")
	}
	if _, err := s.Open(obj.Hash); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after Delete: %v", err)
	}
	// Put again after a delete recreates it.
	if _, err := s.Put(context.Background(), strings.NewReader("to delete"), 0); err != nil || !s.Exists(obj.Hash) {
		t.Errorf("Put after Delete: %v", err)
	}
}

// memSampler is a reader over r that records the peak HeapAlloc every 16 MiB.
type memSampler struct {
	r     io.Reader
	since int64
	peak  uint64
}

func (m *memSampler) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.since += int64(n)
	if m.since >= 16<<20 || err != nil {
		m.since = 0
		m.sample()
	}
	return n, err
}

func (m *memSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.peak = max(m.peak, ms.HeapAlloc)
}

// A 256 MiB Put grows the heap by less than 16 MiB. Not parallel: the heap is
// the process's, which parallel tests would grow too.
func TestPutLargeStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB")
	}
	const size = 256 << 20
	s := newStore(t)
	want := sha256.New()
	io.Copy(want, randomReader(11, size))

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	m := &memSampler{r: randomReader(11, size)}
	obj, err := s.Put(context.Background(), m, 0)
	if err != nil {
		t.Fatal(err)
	}
	m.sample()
	if obj.Size != size || obj.Hash != hex.EncodeToString(want.Sum(nil)) {
		t.Fatalf("Put = %+v", obj)
	}
	growth := int64(m.peak) - int64(base.HeapAlloc)
	t.Logf("heap growth during a 256 MiB Put: %.2f MiB", float64(growth)/(1<<20))
	if growth > 16<<20 {
		t.Errorf("heap grew by %d bytes during the Put, want under 16 MiB", growth)
	}
	assertObjects(t, s, obj.Hash)
}

func BenchmarkPut(b *testing.B) {
	const size = 64 << 20
	s := newStore(b)
	b.SetBytes(size)
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		seed++
		obj, err := s.Put(context.Background(), randomReader(seed, size), 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Delete(obj.Hash); err != nil { // keep the disk use flat
			b.Fatal(err)
		}
	}
}

// BenchmarkPutSmall stores 1 KiB objects, 4 at a time, as many small files
// uploaded at once do: each is fsynced with its directory, and most land in a
// new fan-out directory.
func BenchmarkPutSmall(b *testing.B) {
	const size = 1 << 10
	s := newStore(b)
	b.SetBytes(size)
	b.SetParallelism(2) // 4 writers on 2 cores
	var seed atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Put(context.Background(), randomReader(seed.Add(1), size), 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func TestAdopt(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	scratch := t.TempDir() // beside the store, as a resumable upload's data file
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(scratch, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data := randomBytes(t, 11, copyBufferSize+17)
	h := sha(data)

	// A wrong size or an invalid hash is refused and the file left alone.
	p := write("a", data)
	if _, err := s.Adopt(p, h, int64(len(data))-1); err == nil {
		t.Fatal("Adopt accepted a wrong size")
	}
	if _, err := s.Adopt(p, "nothex", int64(len(data))); !errors.Is(err, ErrInvalidHash) {
		t.Fatalf("Adopt with an invalid hash: %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("refused file removed: %v", err)
	}
	assertObjects(t, s)

	// Adopted: the object holds the bytes, the file moved.
	obj, err := s.Adopt(p, h, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if obj != (Object{Hash: h, Size: int64(len(data))}) {
		t.Fatalf("Adopt = %+v", obj)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("adopted file still at its path: %v", err)
	}
	f, err := s.Open(h)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, data) {
		t.Fatal("adopted object differs")
	}

	// The same content again: the existing object is kept, the file removed.
	op, _ := s.Path(h)
	before, _ := os.Stat(op)
	p2 := write("b", data)
	if _, err := s.Adopt(p2, h, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(op)
	if !os.SameFile(before, after) {
		t.Error("Adopt replaced an existing object")
	}
	if _, err := os.Stat(p2); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("duplicate file kept: %v", err)
	}
	// Empty content works too; Put of the same bytes deduplicates against it.
	empty := sha(nil)
	if _, err := s.Adopt(write("c", nil), empty, 0); err != nil {
		t.Fatal(err)
	}
	if o, err := s.Put(context.Background(), bytes.NewReader(nil), 0); err != nil || o.Hash != empty {
		t.Fatalf("Put after Adopt: %+v %v", o, err)
	}
	assertObjects(t, s, sortedHashes(h, empty)...)
}

func sortedHashes(h ...string) []string {
	slices.Sort(h)
	return h
}

func TestWalk(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range []string{"one", "two", "three"} {
		o, err := s.Put(context.Background(), strings.NewReader(c), 0)
		if err != nil {
			t.Fatal(err)
		}
		want[o.Hash] = true
	}
	got := map[string]bool{}
	err = s.Walk(context.Background(), func(h string, mod time.Time) error {
		if time.Since(mod) > time.Minute {
			t.Errorf("%s: modification time %v", h, mod)
		}
		got[h] = true
		return nil
	})
	if err != nil || len(got) != len(want) {
		t.Fatalf("walk: %v, %v, want %v", got, err, want)
	}
	for h := range want {
		if !got[h] {
			t.Errorf("%s not walked", h)
		}
	}
}
