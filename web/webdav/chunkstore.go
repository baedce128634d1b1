package webdav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// ChunkStore keeps the chunked uploads in progress: a folder for each of a
// user's transfers, holding chunks by name. The door decides what names a
// chunk may have, their order, quota and size; the store keeps bytes. On the
// local disk it is a directory of the data directory (DirChunks); with the
// bytes in a bucket it is the bucket, so that any node takes a transfer's
// next chunk and its MOVE.
type ChunkStore interface {
	// MakeFolder creates the folder of transfer; false when it exists.
	MakeFolder(ctx context.Context, user, transfer string) (bool, error)
	// Touch marks the folder of transfer as in use now (a folder untouched
	// for the upload lifetime is swept); false when it does not exist.
	Touch(ctx context.Context, user, transfer string) (bool, error)
	// RemoveFolder removes the folder and its chunks; false when it did not
	// exist.
	RemoveFolder(ctx context.Context, user, transfer string) (bool, error)
	// List returns the chunks of the folder, in no order; an error wrapping
	// os.ErrNotExist when the folder does not exist.
	List(ctx context.Context, user, transfer string) ([]StoredChunk, error)
	// Put stores r as the chunk name, replacing any chunk of that name,
	// whole or not at all: ErrChunkTooLarge when r holds more than limit
	// bytes, io.ErrUnexpectedEOF when size >= 0 and r ends before it. size
	// is -1 when unknown.
	Put(ctx context.Context, user, transfer, name string, r io.Reader, size, limit int64) error
	// RemoveChunk removes one chunk; false when it did not exist.
	RemoveChunk(ctx context.Context, user, transfer, name string) (bool, error)
	// Open reads a chunk.
	Open(ctx context.Context, user, transfer, name string) (io.ReadCloser, error)
	// Sweep removes the folders last touched before before, and returns how
	// many.
	Sweep(ctx context.Context, before time.Time) (int, error)
}

// StoredChunk is a chunk as a ChunkStore lists it.
type StoredChunk struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// ErrChunkTooLarge is a ChunkStore's refusal of a chunk over its limit.
var ErrChunkTooLarge = errors.New("chunk over its limit")

// DirChunks is a ChunkStore in a local directory: dir/<user>/<transfer>/<name>.
type DirChunks struct{ dir string }

// NewDirChunks returns the chunk store in dir, which it creates.
func NewDirChunks(dir string) (DirChunks, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return DirChunks{}, fmt.Errorf("chunk directory: %w", err)
	}
	return DirChunks{dir}, nil
}

func (d DirChunks) folder(user, transfer string) string { return filepath.Join(d.dir, user, transfer) }

func (d DirChunks) MakeFolder(_ context.Context, user, transfer string) (bool, error) {
	if err := os.MkdirAll(filepath.Join(d.dir, user), 0o700); err != nil {
		return false, fmt.Errorf("upload folder: %w", err)
	}
	err := os.Mkdir(d.folder(user, transfer), 0o700)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("upload folder: %w", err)
	}
	return true, nil
}

func (d DirChunks) Touch(_ context.Context, user, transfer string) (bool, error) {
	now := time.Now()
	err := os.Chtimes(d.folder(user, transfer), now, now)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (d DirChunks) RemoveFolder(_ context.Context, user, transfer string) (bool, error) {
	dir := d.folder(user, transfer)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("remove upload: %w", err)
	}
	return true, nil
}

func (d DirChunks) List(_ context.Context, user, transfer string) ([]StoredChunk, error) {
	ents, err := os.ReadDir(d.folder(user, transfer))
	if err != nil {
		return nil, err
	}
	var out []StoredChunk
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name()[0] == '.' { // .part-*: a chunk being written
			continue
		}
		info, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, StoredChunk{Name: e.Name(), Size: info.Size(), ModTime: info.ModTime()})
	}
	return out, nil
}

// Put writes the chunk to a temporary file, makes it durable and renames it,
// so that a listing shows only whole chunks.
func (d DirChunks) Put(_ context.Context, user, transfer, name string, r io.Reader, size, limit int64) error {
	dir := d.folder(user, transfer)
	tmp, err := os.CreateTemp(dir, ".part-*")
	if err != nil {
		return fmt.Errorf("chunk: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(r, limit+1))
	switch {
	case err != nil:
	case n > limit:
		err = ErrChunkTooLarge
	case size >= 0 && n != size:
		err = io.ErrUnexpectedEOF
	default:
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("chunk: %w", err)
	}
	return nil
}

func (d DirChunks) RemoveChunk(_ context.Context, user, transfer, name string) (bool, error) {
	err := os.Remove(filepath.Join(d.folder(user, transfer), name))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove chunk: %w", err)
	}
	return true, nil
}

func (d DirChunks) Open(_ context.Context, user, transfer, name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(d.folder(user, transfer), name))
}

func (d DirChunks) Sweep(_ context.Context, before time.Time) (int, error) {
	users, err := os.ReadDir(d.dir)
	if err != nil {
		return 0, fmt.Errorf("sweep chunked uploads: %w", err)
	}
	removed := 0
	var firstErr error
	for _, u := range users {
		ups, _ := os.ReadDir(filepath.Join(d.dir, u.Name()))
		for _, up := range ups {
			info, err := up.Info()
			if err != nil || !info.ModTime().Before(before) {
				continue
			}
			if err := os.RemoveAll(filepath.Join(d.dir, u.Name(), up.Name())); err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("expire chunked upload %s: %w", up.Name(), err)
				}
				continue
			}
			removed++
		}
	}
	return removed, firstErr
}
