// Package blob is Atrium's content-addressed file store and the presigned URLs
// that let clients upload and download its bytes directly.
//
// A Store keeps every object on local disk under the SHA-256 of its content, at
// dir/objects/<hh>/<hh>/<64-hex-sha256>. Objects are written through a temp file
// in dir/tmp that is fsynced, renamed into place and made durable by fsyncing the
// directory, so an object path only ever holds a complete, durable object; bytes
// are streamed, never held whole in memory.
//
// A Signer makes and checks short-lived HMAC-signed URLs (in the manner of S3
// presigned URLs), and NewHandler serves them: GET/HEAD of objects and PUT of
// uploads, whose meaning the caller supplies as a PutFunc.
package blob

import (
	"atrium/app"
	"atrium/diskio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

var (
	// ErrNotFound is wrapped by the errors of operations on an object the store
	// does not hold.
	ErrNotFound = fmt.Errorf("object not found (%w)", fs.ErrNotExist)
	// ErrInvalidHash is wrapped when a hash is not 64 lowercase hex digits.
	ErrInvalidHash = errors.New("invalid object hash")
	// ErrTooLarge is wrapped by Put when the stream is longer than its limit.
	ErrTooLarge = errors.New("object too large")
	// ErrUnavailable is a store that cannot be reached (a refused or broken
	// connection, or its 5xx answers, after the client's retries): an
	// *app.Error with code unavailable, so that every door answers 503 with
	// Retry-After, and the write that needed it changed nothing.
	ErrUnavailable error = &app.Error{Code: app.EUnavailable, RetryAfter: 15,
		Message: "The file store cannot be reached right now; nothing was changed. Try again shortly."}
)

// Object names a stored object.
type Object struct {
	// Hash is the SHA-256 of the content, 64 lowercase hex digits.
	Hash string
	// Size is the length of the content in bytes.
	Size int64
}

// Store is a content-addressed object store on local disk. It is safe for
// concurrent use, also by several Stores on the same directory in one process.
type Store struct {
	dir     string
	objects string
	tmp     string
	// fanout holds the fan-out directories ("hhhh" of objects/hh/hh) known
	// to exist durably; top the first-level ones ("hh" of objects/hh).
	fanout, top sync.Map
}

// copyBufferSize is the size of the chunks Put reads and writes.
const copyBufferSize = 1 << 20

// buffers recycles Put's copy buffers so that concurrent uploads do not each
// allocate a fresh MiB.
var buffers = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}

// Open opens (creating when absent) the store rooted at dir: it creates
// dir/objects and dir/tmp with mode 0700 and removes whatever a previous process
// left in dir/tmp (the temp files of Puts interrupted by a crash). dir/tmp is
// therefore scratch space only: nothing in it survives a restart.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("blob open: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob open: %w", err)
	}
	s := &Store{dir: abs, objects: filepath.Join(abs, "objects"), tmp: filepath.Join(abs, "tmp")}
	for _, d := range []string{s.objects, s.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("blob open: %w", err)
		}
	}
	if err := SyncDir(abs); err != nil {
		return nil, fmt.Errorf("blob open: %w", err)
	}
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		return nil, fmt.Errorf("blob open: %w", err)
	}
	// Leftovers of a stopped process go; a temp file written lately may be a
	// running server's upload in progress (another command opened the store).
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) < staleTemp {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.tmp, e.Name())); err != nil {
			return nil, fmt.Errorf("blob open: remove leftover temp file: %w", err)
		}
	}
	return s, nil
}

// staleTemp is how long a temp file must have been untouched for Open to take it
// for a leftover.
const staleTemp = time.Hour

// Walk calls fn with every object's hash and modification time, until fn
// returns an error (which Walk returns) or ctx ends.
func (s *Store) Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error {
	return filepath.WalkDir(s.objects, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return fmt.Errorf("blob walk: %w", err)
		}
		if d.IsDir() || ValidHash(d.Name()) != nil {
			return ctx.Err()
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		return fn(d.Name(), fi.ModTime())
	})
}

// TempDir returns the store's scratch directory, on the same file system as the
// objects, for adapters that need temp files they may rename cheaply. Open
// removes what was left there more than an hour ago.
func (s *Store) TempDir() string { return s.tmp }

// Put streams r into the store and returns the object it holds. The bytes go to
// a temp file while their SHA-256 is computed, in 1 MiB chunks; the file is
// fsynced, renamed to its object path and the directory fsynced before Put
// returns, so a returned Object is durable. When the store already holds the
// content, the existing object is kept and the copy discarded.
//
// limit, when positive, is the most bytes r may yield: a longer stream fails with
// an error wrapping ErrTooLarge. ctx is checked between reads; Put cannot
// interrupt a Read that blocks, so r should be unblocked by the cancellation
// itself (as an HTTP request body is when its client goes away). On any error the
// temp file is removed and no object is created.
func (s *Store) Put(ctx context.Context, r io.Reader, limit int64) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, fmt.Errorf("blob put: %w", err)
	}
	f, err := os.CreateTemp(s.tmp, "put-*")
	if err != nil {
		return Object{}, fmt.Errorf("blob put: create temp file: %w", err)
	}
	tmp := f.Name()
	// Until the rename the temp file is ours to remove; after it the name may be
	// reused by another Put's CreateTemp, so it must not be touched.
	renamed, closed := false, false
	defer func() {
		if !closed {
			f.Close()
		}
		if !renamed {
			os.Remove(tmp)
		}
	}()

	h := sha256.New()
	b1, b2 := buffers.Get().(*[]byte), buffers.Get().(*[]byte)
	size, err := copyChunks(ctx, f, h, r, [2][]byte{*b1, *b2}, limit)
	buffers.Put(b1)
	buffers.Put(b2)
	if err != nil {
		return Object{}, fmt.Errorf("blob put: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Object{}, fmt.Errorf("blob put: %w", err)
	}
	if err := f.Sync(); err != nil {
		return Object{}, fmt.Errorf("blob put: sync temp file: %w", err)
	}
	closed = true
	if err := f.Close(); err != nil {
		return Object{}, fmt.Errorf("blob put: close temp file: %w", err)
	}

	obj := Object{Hash: hex.EncodeToString(h.Sum(nil)), Size: size}
	final := s.path(obj.Hash)
	dir := filepath.Dir(final)
	if fi, err := os.Lstat(final); err == nil && fi.Mode().IsRegular() && fi.Size() == size {
		// Already stored. Sync the directory anyway: the object may have just
		// been renamed into place by a concurrent Put that has not yet made the
		// rename durable, and our caller is about to rely on it.
		if err := SyncDir(dir); err != nil {
			return Object{}, fmt.Errorf("blob put: sync object dir: %w", err)
		}
		return obj, nil
	}
	// Absent (or, should a disk fault have damaged it, of the wrong size: the
	// rename below replaces it with the good copy).
	syncFanout, err := s.ensureFanout(obj.Hash)
	if err != nil {
		return Object{}, fmt.Errorf("blob put: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return Object{}, fmt.Errorf("blob put: rename into place: %w", err)
	}
	renamed = true
	if err := SyncDir(dir); err != nil {
		// The object is visible but perhaps not durable: report failure so the
		// caller does not record it; an unreferenced object is harmless.
		return Object{}, fmt.Errorf("blob put: sync object dir: %w", err)
	}
	if err := syncFanout(); err != nil {
		return Object{}, fmt.Errorf("blob put: %w", err)
	}
	return obj, nil
}

// Adopt moves the finished file at path into the store as the object hash of
// size bytes, for adapters that computed the SHA-256 while writing the file
// (resumable uploads): no byte is read again. hash is trusted. The file is
// fsynced, renamed into place (copied when path is on another file system) and
// the directory fsynced, so the returned Object is durable; when the store
// already holds the content, the file is removed and the object kept. path is
// gone on success; on failure it is left for the caller.
func (s *Store) Adopt(path, hash string, size int64) (Object, error) {
	if err := ValidHash(hash); err != nil {
		return Object{}, fmt.Errorf("blob adopt: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return Object{}, fmt.Errorf("blob adopt: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || fi.Size() != size) {
		err = fmt.Errorf("%s holds %d bytes, not %d", path, fi.Size(), size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Object{}, fmt.Errorf("blob adopt: %w", err)
	}
	obj := Object{Hash: hash, Size: size}
	final := s.path(hash)
	dir := filepath.Dir(final)
	if fi, err := os.Lstat(final); err == nil && fi.Mode().IsRegular() && fi.Size() == size {
		if err := SyncDir(dir); err != nil {
			return Object{}, fmt.Errorf("blob adopt: sync object dir: %w", err)
		}
		if err := os.Remove(path); err != nil {
			return Object{}, fmt.Errorf("blob adopt: remove duplicate: %w", err)
		}
		return obj, nil
	}
	syncFanout, err := s.ensureFanout(hash)
	if err != nil {
		return Object{}, fmt.Errorf("blob adopt: %w", err)
	}
	if err := os.Rename(path, final); err != nil {
		if !errors.Is(err, syscall.EXDEV) {
			return Object{}, fmt.Errorf("blob adopt: rename into place: %w", err)
		}
		return s.adoptCopy(path, obj)
	}
	if err := SyncDir(dir); err != nil {
		return Object{}, fmt.Errorf("blob adopt: sync object dir: %w", err)
	}
	if err := syncFanout(); err != nil {
		return Object{}, fmt.Errorf("blob adopt: %w", err)
	}
	return obj, nil
}

// adoptCopy adopts a file of another file system by copying it through Put,
// which also checks the hash.
func (s *Store) adoptCopy(path string, want Object) (Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return Object{}, fmt.Errorf("blob adopt: %w", err)
	}
	got, err := s.Put(context.Background(), f, 0)
	f.Close()
	if err != nil {
		return Object{}, fmt.Errorf("blob adopt: copy: %w", err)
	}
	if got != want {
		return Object{}, fmt.Errorf("blob adopt: %s holds %s (%d bytes), not %s (%d bytes)", path, got.Hash, got.Size, want.Hash, want.Size)
	}
	if err := os.Remove(path); err != nil {
		return Object{}, fmt.Errorf("blob adopt: remove copied file: %w", err)
	}
	return got, nil
}

// copyChunks copies r to both f and h in chunks of len(bufs[i]), filling a
// buffer before each write to keep write calls few, checking ctx before every
// read and limit after it. The two buffers take turns: while one is hashed and
// written (asking the kernel to start writing it back at once), the next is
// read. It returns the number of bytes copied.
func copyChunks(ctx context.Context, f *os.File, h io.Writer, r io.Reader, bufs [2][]byte, limit int64) (int64, error) {
	var total int64
	var pending chan error // the chunk being hashed and written, nil when none
	wait := func() error {
		if pending == nil {
			return nil
		}
		err := <-pending
		pending = nil
		if err != nil {
			return fmt.Errorf("write temp file: %w", err)
		}
		return nil
	}
	defer wait()
	for i := 0; ; i++ {
		buf := bufs[i%2]
		n := 0
		var rerr error
		for n < len(buf) && rerr == nil {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			var m int
			m, rerr = r.Read(buf[n:])
			if m < 0 || m > len(buf)-n {
				return total, errors.New("read: invalid count from reader")
			}
			n += m
			if limit > 0 && total+int64(n) > limit {
				return total, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
			}
		}
		if err := wait(); err != nil {
			return total, err
		}
		if n > 0 {
			done := make(chan error, 1)
			pending = done
			go func(b []byte, at int64) {
				hashed := make(chan struct{})
				go func() { h.Write(b); close(hashed) }() // hash.Hash never returns an error
				_, err := f.Write(b)
				if err == nil {
					diskio.StartWriteback(f, at, int64(len(b)))
				}
				<-hashed
				done <- err
			}(buf[:n], total)
			total += int64(n)
		}
		switch {
		case rerr == io.EOF:
			return total, wait()
		case rerr != nil:
			if err := wait(); err != nil {
				return total, err
			}
			return total, fmt.Errorf("read: %w", rerr)
		}
	}
}

// ensureFanout creates the two fan-out directories of hash when missing and
// returns the function that makes them durable, to be called once the object
// is renamed into place and its directory synced: the first-level directory
// holds the new second-level one's entry, and the objects directory the new
// first-level one's. A first-level directory known durable (made and synced
// by this process, or found once and synced) spares the objects directory's
// sync: of the 65,536 second-level directories a new store fills in, only
// the first under each of the 256 first-level ones syncs the objects
// directory.
func (s *Store) ensureFanout(hash string) (syncNew func() error, err error) {
	done := func() error { return nil }
	if _, ok := s.fanout.Load(hash[:4]); ok {
		return done, nil
	}
	d1 := filepath.Join(s.objects, hash[:2])
	d2 := filepath.Join(d1, hash[2:4])
	if _, err := os.Stat(d2); err != nil {
		// Missing: made now. (One that exists was made by an earlier process,
		// synced then, or by a concurrent Put, which syncs it before it
		// returns; syncing again costs little.)
		for _, d := range []string{d1, d2} {
			if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, fmt.Errorf("create fan-out dir: %w", err)
			}
		}
	}
	return s.syncFanout(hash, d1), nil
}

// syncFanout returns the function that syncs the fan-out directory d1 and,
// unless d1 is known durable, the objects directory, then remembers hash's
// fan-out as durable.
func (s *Store) syncFanout(hash, d1 string) func() error {
	return func() error {
		dirs := []string{d1}
		if _, ok := s.top.Load(hash[:2]); !ok {
			dirs = append(dirs, s.objects)
		}
		for _, d := range dirs {
			if err := SyncDir(d); err != nil {
				return fmt.Errorf("sync fan-out dir: %w", err)
			}
		}
		s.top.Store(hash[:2], struct{}{})
		s.fanout.Store(hash[:4], struct{}{})
		return nil
	}
}

// Open opens the object hash for reading. The caller closes the file.
func (s *Store) Open(hash string) (*os.File, error) {
	return openObject("blob open", hash, s.path)
}

// openObject opens the file path(hash) of a valid hash; a missing file is
// ErrNotFound. op names the operation in errors.
func openObject(op, hash string, path func(string) string) (*os.File, error) {
	if err := ValidHash(hash); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	f, err := os.Open(path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s %s: %w", op, hash, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return f, nil
}

// Stat returns the size of the object hash.
func (s *Store) Stat(hash string) (int64, error) {
	if err := ValidHash(hash); err != nil {
		return 0, fmt.Errorf("blob stat: %w", err)
	}
	fi, err := os.Stat(s.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("blob stat %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("blob stat: %w", err)
	}
	return fi.Size(), nil
}

// Exists reports whether the store holds the object hash; an invalid hash is
// never held.
func (s *Store) Exists(hash string) bool {
	_, err := s.Stat(hash)
	return err == nil
}

// Delete removes the object hash; a missing object is not an error. Objects are
// shared by every reference to the same content, so only a collector that knows
// no reference remains (and that no Put of the same content is in flight) should
// delete.
func (s *Store) Delete(hash string) error {
	if err := ValidHash(hash); err != nil {
		return fmt.Errorf("blob delete: %w", err)
	}
	if err := os.Remove(s.path(hash)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob delete: %w", err)
	}
	return nil
}

// Path returns the file path of the object hash, whether or not it exists.
func (s *Store) Path(hash string) (string, error) {
	if err := ValidHash(hash); err != nil {
		return "", fmt.Errorf("blob path: %w", err)
	}
	return s.path(hash), nil
}

func (s *Store) path(hash string) string {
	return filepath.Join(s.objects, hash[:2], hash[2:4], hash)
}

// ValidHash returns nil when hash is 64 lowercase hex digits, else an error
// wrapping ErrInvalidHash.
func ValidHash(hash string) error {
	if len(hash) != 2*sha256.Size {
		return fmt.Errorf("%w: want %d hex digits, got %d characters", ErrInvalidHash, 2*sha256.Size, len(hash))
	}
	for i := 0; i < len(hash); i++ {
		if c := hash[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("%w: not lowercase hex", ErrInvalidHash)
		}
	}
	return nil
}

// SyncDir fsyncs a directory so that entries created or renamed in it are
// durable. Windows cannot fsync directories (nor needs to).
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
