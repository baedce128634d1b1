package tus

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"atrium/diskio"
)

// Parts keeps the bytes of uploads in progress, between the PATCH that
// brought them and the finish that makes them a blob of the store. Two
// implementations: a local directory, one data file per upload (dirParts, the
// default: the blob store on the local disk, one node), and a bucket of the
// object store, one object per PATCH (package s3blob, through the wire: any
// node takes any PATCH, no state on a node's disk).
//
// The door computes nothing twice: Append feeds the bytes to the SHA-256
// whose state the upload's row keeps, and the offset is recorded (with the
// part's name) only after Append returned, the bytes durable.
type Parts interface {
	// Create readies the storage of the new upload id, before its first
	// PATCH (a store that needs nothing does nothing).
	Create(ctx context.Context, id string) error
	// Append stores the bytes src yields, until EOF or limit bytes, as the
	// bytes of upload id from offset (parts: those recorded so far), writing
	// them to h as well. The bytes are durable when it returns with no error.
	// It returns how many were stored, whether src had more than limit, and
	// the name of the part that holds them, which the caller records with the
	// new offset ("" when the store needs no name: one file per upload). On
	// error nothing is to be recorded; what was written is left to Remove or
	// RemoveStrays.
	Append(ctx context.Context, id string, offset int64, parts []string, h hash.Hash, src io.Reader, limit int64) (part string, n int64, over bool, err error)
	// Read returns the size bytes of upload id (a small content, read into
	// memory); bytes no longer kept are an error wrapping fs.ErrNotExist.
	Read(ctx context.Context, id string, parts []string, size int64) ([]byte, error)
	// Store makes the size bytes of upload id the blob hash (the hex SHA-256
	// its row recorded) and returns once the blob is durable in the blob
	// store; it succeeds too when an earlier attempt stored the blob (a crash
	// before the commit). Bytes that do not hash to hash are refused and the
	// upload's bytes stay. The bytes may be gone after it (a file moved into
	// the store).
	Store(ctx context.Context, id string, parts []string, hash string, size int64) error
	// Discard frees part of upload id, which Append stored and the caller
	// could not record; a missing one is not an error.
	Discard(ctx context.Context, id, part string) error
	// Remove frees every byte kept for upload id, also parts never recorded;
	// none is not an error.
	Remove(ctx context.Context, id string) error
	// RemoveStrays frees the bytes of uploads that no longer exist (known
	// reports which of the ids given exist), whatever their age, and returns
	// for how many uploads: bytes are only ever stored after their upload's
	// row, and an upload id never comes back, so bytes whose row is gone
	// (looked up after they were listed) are left over.
	RemoveStrays(ctx context.Context, known func(ctx context.Context, ids []string) (map[string]bool, error)) (int, error)
}

// dirParts keeps each upload's bytes in the file dir/<id>, appended to by
// every PATCH and fsynced before the offset is recorded; finish moves the
// file into the blob store under the hash computed while it was written
// (Blobs.Adopt: a rename on the local disk), without a second read.
type dirParts struct {
	dir   string
	blobs Blobs
}

var _ Parts = dirParts{}

func (d dirParts) path(id string) string { return filepath.Join(d.dir, id) }

// Create makes the upload's empty data file.
func (d dirParts) Create(_ context.Context, id string) error {
	f, err := os.OpenFile(d.path(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return fmt.Errorf("create upload data file: %w", err)
	}
	return nil
}

// Append appends to the data file at offset (appendAt) and fsyncs it.
func (d dirParts) Append(_ context.Context, id string, offset int64, _ []string, h hash.Hash, src io.Reader, limit int64) (string, int64, bool, error) {
	flag := os.O_WRONLY
	if offset == 0 {
		// The server may have stopped between the upload's row and its data
		// file, or the upload is small (NewUpload made no file): nothing was
		// written yet, so a missing file is an empty one.
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(d.path(id), flag, 0o600)
	if err != nil {
		return "", 0, false, fmt.Errorf("open upload data file: %w", err)
	}
	n, over, werr := appendAt(f, offset, h, src, limit)
	if n > 0 && werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", 0, false, fmt.Errorf("write upload %s: %w", id, werr)
	}
	return "", n, over, nil
}

// Read reads the data file.
func (d dirParts) Read(_ context.Context, id string, _ []string, size int64) ([]byte, error) {
	data, err := os.ReadFile(d.path(id))
	if err != nil {
		return nil, fmt.Errorf("read upload data file: %w", err)
	}
	if int64(len(data)) < size {
		return nil, fmt.Errorf("upload data file %s holds %d bytes, not %d", id, len(data), size)
	}
	return data[:size], nil
}

// Store moves the data file into the blob store. When the process stopped
// after an earlier attempt moved it and before the commit, the file is gone
// and the blob is there.
func (d dirParts) Store(_ context.Context, id string, _ []string, hash string, size int64) error {
	if err := d.blobs.Adopt(d.path(id), hash, size); err != nil {
		if n, serr := d.blobs.Stat(hash); !errors.Is(err, fs.ErrNotExist) || serr != nil || n != size {
			return err
		}
	}
	return nil
}

// Discard has nothing to free: bytes past the recorded offset are
// overwritten by the next Append.
func (d dirParts) Discard(context.Context, string, string) error { return nil }

// Remove removes the data file.
func (d dirParts) Remove(_ context.Context, id string) error {
	if !validID.MatchString(id) {
		return nil
	}
	if err := os.Remove(d.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveStrays removes the data files of uploads that no longer exist.
func (d dirParts) RemoveStrays(ctx context.Context, known func(context.Context, []string) (map[string]bool, error)) (int, error) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return 0, fmt.Errorf("list upload data files: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.Type().IsRegular() && validID.MatchString(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	ok, err := known(ctx, ids)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if ok[id] {
			continue
		}
		if err := d.Remove(ctx, id); err != nil {
			return n, fmt.Errorf("free the bytes of gone upload %s: %w", id, err)
		}
		n++
	}
	return n, nil
}

// buffers recycle the copy buffers of appendAt.
var buffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// appendAt drops whatever follows offset in f (bytes written before a crash
// but never recorded), then copies src to f and h until EOF or limit bytes;
// over reports that src had more than limit. Reading the next MiB overlaps
// with hashing and writing the previous one (in parallel too), and writeback
// of written bytes starts at once, so the fsync after the PATCH finds little
// left to do.
func appendAt(f *os.File, offset int64, h hash.Hash, src io.Reader, limit int64) (n int64, over bool, err error) {
	if err := f.Truncate(offset); err != nil {
		return 0, false, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, false, err
	}
	var bufs [2]*[]byte
	for i := range bufs {
		bufs[i] = buffers.Get().(*[]byte)
		defer buffers.Put(bufs[i])
	}
	var pending chan error // the stage in flight, nil when none
	wait := func() error {
		if pending == nil {
			return nil
		}
		err := <-pending
		pending = nil
		return err
	}
	defer wait()
	for i := 0; ; i++ {
		buf := *bufs[i%2]
		m, rerr := io.ReadFull(src, buf)
		if m > 0 && int64(m) > limit-n {
			m, over = int(max(0, limit-n)), true
		}
		if err := wait(); err != nil {
			return n, false, err
		}
		if m > 0 {
			pending = make(chan error, 1)
			go func(b []byte, at int64) {
				hashed := make(chan struct{})
				go func() { h.Write(b); close(hashed) }()
				_, err := f.Write(b)
				if err == nil {
					diskio.StartWriteback(f, at, int64(len(b)))
				}
				<-hashed
				pending <- err
			}(buf[:m], offset+n)
			n += int64(m)
		}
		if over || rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			return n, over, wait()
		}
		if rerr != nil {
			if err := wait(); err != nil {
				return n, false, err
			}
			return n, false, rerr
		}
	}
}
