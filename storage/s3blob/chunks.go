package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"atrium/storage/blob"
)

// Chunks keeps the sync clients' chunked uploads in the bucket, so that any
// node takes a transfer's next chunk, its listing and its MOVE:
// chunks/<user>/<transfer>/<name> for each chunk (names are numbers), and
// chunks/<user>/<transfer>/folder, empty, for the folder itself: its
// modification time is when the transfer was last used (a chunk written or
// deleted, or the MOVE, rewrites it). Whole objects are written at once, so
// a listing sees only whole chunks. It has the methods of webdav.ChunkStore.
type Chunks struct{ s *Store }

// Chunks returns the bucket's store of chunked uploads.
func (s *Store) Chunks() Chunks { return Chunks{s} }

const (
	chunkPrefix = "chunks/"
	folderMark  = "folder"
)

// checkChunkName refuses names that would leave their place in the key.
func checkChunkName(kind, s string) error {
	if s == "" || s == "." || s == ".." || len(s) > 200 || strings.ContainsAny(s, "/\\") {
		return fmt.Errorf("s3 chunks: invalid %s %q", kind, s)
	}
	return nil
}

func (c Chunks) prefix(user, transfer string) (string, error) {
	if err := checkChunkName("user", user); err != nil {
		return "", err
	}
	if err := checkChunkName("transfer", transfer); err != nil {
		return "", err
	}
	return chunkPrefix + user + "/" + transfer + "/", nil
}

func (c Chunks) key(user, transfer, name string) (string, error) {
	p, err := c.prefix(user, transfer)
	if err != nil {
		return "", err
	}
	if err := checkChunkName("chunk", name); err != nil {
		return "", err
	}
	return p + name, nil
}

// folderExists reports whether the transfer's folder mark exists.
func (c Chunks) folderExists(ctx context.Context, prefix string) (bool, error) {
	_, err := c.s.client.StatObject(ctx, c.s.bucket, prefix+folderMark, minio.StatObjectOptions{})
	switch {
	case err == nil:
		return true, nil
	case notFound(err):
		return false, nil
	}
	return false, fmt.Errorf("s3 chunks: %w", fault(err))
}

// mark writes the folder mark, now.
func (c Chunks) mark(ctx context.Context, prefix string) error {
	_, err := c.s.client.PutObject(ctx, c.s.bucket, prefix+folderMark, strings.NewReader(""), 0, putOptions(0, "application/octet-stream"))
	if err != nil {
		return fmt.Errorf("s3 chunks: %w", err)
	}
	return nil
}

// MakeFolder creates the folder of transfer; false when it exists. Two
// nodes making it at once may both answer true: the folder is one either way.
func (c Chunks) MakeFolder(ctx context.Context, user, transfer string) (bool, error) {
	return c.markIf(ctx, user, transfer, false)
}

// Touch rewrites the folder mark; false when the folder does not exist.
func (c Chunks) Touch(ctx context.Context, user, transfer string) (bool, error) {
	return c.markIf(ctx, user, transfer, true)
}

// markIf writes the folder's mark, now, when the folder exists as exists
// says, and reports whether it did.
func (c Chunks) markIf(ctx context.Context, user, transfer string, exists bool) (bool, error) {
	p, err := c.prefix(user, transfer)
	if err != nil {
		return false, err
	}
	if ok, err := c.folderExists(ctx, p); err != nil || ok != exists {
		return false, err
	}
	return true, c.mark(ctx, p)
}

// RemoveFolder removes the chunks, then the folder mark (an interrupted
// removal leaves a folder that lists what is left, or a mark that expires).
func (c Chunks) RemoveFolder(ctx context.Context, user, transfer string) (bool, error) {
	p, err := c.prefix(user, transfer)
	if err != nil {
		return false, err
	}
	ok, err := c.folderExists(ctx, p)
	if err != nil || !ok {
		return false, err
	}
	return true, c.removeAll(ctx, p)
}

func (c Chunks) removeAll(ctx context.Context, prefix string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var keys []string
	for o := range c.s.client.ListObjects(ctx, c.s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("s3 chunks: list %s: %w", prefix, o.Err)
		}
		if !strings.HasSuffix(o.Key, "/"+folderMark) {
			keys = append(keys, o.Key)
		}
	}
	keys = append(keys, prefix+folderMark)
	for _, k := range keys {
		if err := c.s.client.RemoveObject(ctx, c.s.bucket, k, minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
			return fmt.Errorf("s3 chunks: remove %s: %w", k, err)
		}
	}
	return nil
}

// ChunkInfo is a chunk as List returns it.
type ChunkInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// List returns the transfer's chunks; an error wrapping os.ErrNotExist when
// its folder does not exist.
func (c Chunks) List(ctx context.Context, user, transfer string) ([]ChunkInfo, error) {
	p, err := c.prefix(user, transfer)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out []ChunkInfo
	folder := false
	for o := range c.s.client.ListObjects(ctx, c.s.bucket, minio.ListObjectsOptions{Prefix: p}) {
		if o.Err != nil {
			return nil, fmt.Errorf("s3 chunks: list %s: %w", transfer, fault(o.Err))
		}
		name := strings.TrimPrefix(o.Key, p)
		if name == folderMark {
			folder = true
			continue
		}
		if name == "" || strings.Contains(name, "/") {
			continue
		}
		out = append(out, ChunkInfo{Name: name, Size: o.Size, ModTime: o.LastModified})
	}
	if !folder {
		return nil, fmt.Errorf("s3 chunks: upload %s: %w", transfer, os.ErrNotExist)
	}
	return out, nil
}

// Put uploads r as the chunk name, replacing one of that name: whole or not
// at all. With its size known the bytes stream to the store; with it
// unknown they are spooled to a scratch file first, so that what goes out
// is known to be within limit. It fails with ErrChunkTooLarge when r holds
// more than limit bytes, io.ErrUnexpectedEOF when it ends before size.
func (c Chunks) Put(ctx context.Context, user, transfer, name string, r io.Reader, size, limit int64) error {
	key, err := c.key(user, transfer, name)
	if err != nil {
		return err
	}
	if size > limit {
		return ErrChunkTooLarge
	}
	if size < 0 {
		f, obj, err := c.s.spool(ctx, r, limit)
		if err != nil {
			if errors.Is(err, blob.ErrTooLarge) {
				return ErrChunkTooLarge
			}
			return err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		r, size = f, obj.Size
	}
	cr := &countReader{r: io.LimitReader(ctxReader{ctx, r}, size)}
	_, err = c.s.client.PutObject(ctx, c.s.bucket, key, cr, size, putOptions(size, "application/octet-stream"))
	if cr.n < size {
		return io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("s3 chunks: put %s: %w", name, fault(err))
	}
	return nil
}

// ErrChunkTooLarge is Put's refusal of a chunk over its limit.
var ErrChunkTooLarge = errors.New("s3 chunks: chunk over its limit")

// countReader counts what is read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// RemoveChunk removes one chunk; false when it did not exist.
func (c Chunks) RemoveChunk(ctx context.Context, user, transfer, name string) (bool, error) {
	key, err := c.key(user, transfer, name)
	if err != nil {
		return false, err
	}
	if _, err := c.s.client.StatObject(ctx, c.s.bucket, key, minio.StatObjectOptions{}); notFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("s3 chunks: %w", err)
	}
	if err := c.s.client.RemoveObject(ctx, c.s.bucket, key, minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return false, fmt.Errorf("s3 chunks: remove %s: %w", name, err)
	}
	return true, nil
}

// Open reads a chunk.
func (c Chunks) Open(ctx context.Context, user, transfer, name string) (io.ReadCloser, error) {
	key, err := c.key(user, transfer, name)
	if err != nil {
		return nil, err
	}
	o, err := c.s.openKey(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("s3 chunks: open %s: %w", name, err)
	}
	return o, nil
}

// Sweep removes the transfers whose folder mark is older than before, and
// chunks left without a mark (a removal cut short) as old.
func (c Chunks) Sweep(ctx context.Context, before time.Time) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type folder struct {
		marked bool
		newest time.Time
	}
	folders := map[string]*folder{}
	for o := range c.s.client.ListObjects(ctx, c.s.bucket, minio.ListObjectsOptions{Prefix: chunkPrefix, Recursive: true}) {
		if o.Err != nil {
			return 0, fmt.Errorf("s3 chunks: sweep: %w", o.Err)
		}
		i := strings.LastIndexByte(o.Key, '/')
		p := o.Key[:i+1]
		f := folders[p]
		if f == nil {
			f = &folder{}
			folders[p] = f
		}
		if o.Key[i+1:] == folderMark {
			f.marked = true
			f.newest = o.LastModified // the mark decides
		} else if !f.marked && o.LastModified.After(f.newest) {
			f.newest = o.LastModified
		}
	}
	removed := 0
	for p, f := range folders {
		if !f.newest.Before(before) {
			continue
		}
		if err := c.removeAll(ctx, p); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}
