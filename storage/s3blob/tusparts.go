package s3blob

// The bytes of resumable (tus) uploads in progress, in the bucket: each
// PATCH's bytes become one object, so that any node can take an upload's
// next PATCH and nothing of it is on a node's disk.
//
//	tusparts/<upload id>.<offset, 20 digits>.<16 random hex>
//
// A PATCH's length is known only at its end, so its bytes are spooled to a
// scratch file (and hashed, by the caller's SHA-256, on the way) and then
// uploaded whole under a key of their own; the upload's row records the
// part's name with the new offset only once the object is stored (a
// compare-and-set on the offset: of two PATCHes racing at one offset on two
// nodes, one counts, and the other's object is freed by its PATCH or by
// Remove and RemoveStrays). The random tail keeps the loser from
// overwriting the winner's bytes. Keys stay flat, one level under their
// prefix, like every key of the bucket.
//
// Finishing streams the parts, in order, into one scratch file while
// hashing them, checks the hash against the one the row recorded and
// uploads the blob (skipped when the bucket holds the content already); the
// caller then commits the file and frees the parts.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"

	"atrium/storage/blob"
)

// tusPartPrefix is the prefix of the parts of resumable uploads.
const tusPartPrefix = "tusparts/"

// TusParts keeps the bytes of resumable uploads in progress in the bucket
// (see above); it is the tus door's Parts (web/tus), wired by the wire. Its
// errors wrap fs.ErrNotExist for a part that is not there.
type TusParts struct{ s *Store }

// TusParts returns the store's keeper of resumable uploads' parts.
func (s *Store) TusParts() TusParts { return TusParts{s} }

// checkUploadID checks an upload id: 1 to 100 letters, digits and '-' (no
// '.', which ends it in a part's key).
func checkUploadID(id string) error {
	if id == "" || len(id) > 100 {
		return fmt.Errorf("upload id of %d characters", len(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' {
			return fmt.Errorf("upload id %q: only letters, digits and '-'", id)
		}
	}
	return nil
}

// partOffset returns the offset a part's name begins with, checking the
// name: 20 digits, '.', 16 hex digits.
func partOffset(part string) (int64, error) {
	off, tail, ok := strings.Cut(part, ".")
	if !ok || len(off) != 20 || len(tail) != 16 {
		return 0, fmt.Errorf("part name %q", part)
	}
	if _, err := hex.DecodeString(tail); err != nil {
		return 0, fmt.Errorf("part name %q", part)
	}
	n, err := strconv.ParseInt(off, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("part name %q", part)
	}
	return n, nil
}

func tusPartKey(id, part string) string { return tusPartPrefix + id + "." + part }

// Create has nothing to ready: an upload's first part is its first object.
func (p TusParts) Create(_ context.Context, id string) error {
	if err := checkUploadID(id); err != nil {
		return fmt.Errorf("s3 tus create: %w", err)
	}
	return nil
}

// Append spools src (until EOF or limit bytes) to a scratch file while
// writing it to h, then uploads it as one new part of upload id, and returns
// the part's name; nothing is stored when src had no byte.
func (p TusParts) Append(ctx context.Context, id string, offset int64, _ []string, h hash.Hash, src io.Reader, limit int64) (string, int64, bool, error) {
	if err := checkUploadID(id); err != nil {
		return "", 0, false, fmt.Errorf("s3 tus append: %w", err)
	}
	f, err := os.CreateTemp(p.s.scratch, "tuspart-*")
	if err != nil {
		return "", 0, false, fmt.Errorf("s3 tus append: create scratch file: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, over, err := copyLimited(io.MultiWriter(f, h), src, limit)
	if err != nil {
		return "", 0, false, fmt.Errorf("s3 tus append to %s: %w", id, err)
	}
	if n == 0 {
		return "", 0, over, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", 0, false, fmt.Errorf("s3 tus append to %s: %w", id, err)
	}
	tail := make([]byte, 8)
	if _, err := rand.Read(tail); err != nil {
		return "", 0, false, fmt.Errorf("s3 tus append to %s: %w", id, err)
	}
	part := fmt.Sprintf("%020d.%s", offset, hex.EncodeToString(tail))
	if _, err := p.s.client.PutObject(ctx, p.s.bucket, tusPartKey(id, part), f, n, putOptions(n, "application/octet-stream")); err != nil {
		return "", 0, false, fmt.Errorf("s3 tus append to %s: upload part: %w", id, fault(err))
	}
	return part, n, over, nil
}

// copyLimited copies src to w until EOF or limit bytes; over reports that
// src had more.
func copyLimited(w io.Writer, src io.Reader, limit int64) (n int64, over bool, err error) {
	buf := buffers.Get().(*[]byte)
	defer buffers.Put(buf)
	n, err = io.CopyBuffer(w, io.LimitReader(src, max(limit, 0)), *buf)
	if err != nil {
		return n, false, err
	}
	if n == max(limit, 0) {
		var one [1]byte
		m, _ := io.ReadFull(src, one[:])
		over = m > 0
	}
	return n, over, nil
}

// partsReader reads the parts of upload id, in order, as one stream of size
// bytes: each part from its offset to the next part's (the last to size),
// requested when the stream gets to it.
func (p TusParts) partsReader(ctx context.Context, id string, parts []string, size int64) (io.Reader, error) {
	if err := checkUploadID(id); err != nil {
		return nil, err
	}
	starts := make([]int64, len(parts))
	for i, part := range parts {
		off, err := partOffset(part)
		if err != nil {
			return nil, fmt.Errorf("upload %s: %w", id, err)
		}
		if (i == 0 && off != 0) || (i > 0 && off <= starts[i-1]) || off >= size {
			return nil, fmt.Errorf("upload %s: part %s out of order", id, part)
		}
		starts[i] = off
	}
	if size > 0 && len(parts) == 0 {
		return nil, fmt.Errorf("upload %s: no part holds its %d bytes: %w", id, size, fs.ErrNotExist)
	}
	readers := make([]io.Reader, len(parts))
	for i, part := range parts {
		end := size
		if i+1 < len(parts) {
			end = starts[i+1]
		}
		readers[i] = &partReader{ctx: ctx, p: p, key: tusPartKey(id, part), want: end - starts[i]}
	}
	return io.MultiReader(readers...), nil
}

// partReader reads one part, which must hold want bytes, opening it at its
// first read.
type partReader struct {
	ctx  context.Context
	p    TusParts
	key  string
	want int64
	o    *minio.Object
	got  int64
}

func (r *partReader) Read(b []byte) (int, error) {
	if r.o == nil {
		o, err := r.p.s.client.GetObject(r.ctx, r.p.s.bucket, r.key, minio.GetObjectOptions{})
		if err != nil {
			return 0, fmt.Errorf("read part %s: %w", r.key, err)
		}
		r.o = o
	}
	if r.got == r.want {
		r.o.Close()
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), r.want-r.got)]
	n, err := r.o.Read(b)
	r.got += int64(n)
	switch {
	case err == io.EOF && r.got < r.want:
		r.o.Close()
		return n, fmt.Errorf("part %s holds %d bytes, not %d", r.key, r.got, r.want)
	case err == io.EOF:
		err = nil
	case err != nil && notFound(err):
		r.o.Close()
		return n, fmt.Errorf("read part %s: %w", r.key, fs.ErrNotExist)
	case err != nil:
		r.o.Close()
		return n, fmt.Errorf("read part %s: %w", r.key, err)
	}
	return n, err
}

// Read reads the size bytes of upload id from its parts into memory.
func (p TusParts) Read(ctx context.Context, id string, parts []string, size int64) ([]byte, error) {
	r, err := p.partsReader(ctx, id, parts, size)
	if err != nil {
		return nil, fmt.Errorf("s3 tus read: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(int(size))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("s3 tus read %s: %w", id, err)
	}
	return buf.Bytes(), nil
}

// Store makes the parts of upload id the object hash: unless the bucket
// holds it already (a finish run again after a crash, or the content
// uploaded before), the parts are streamed into a scratch file while
// hashed, and the blob is uploaded only when they hash to hash.
func (p TusParts) Store(ctx context.Context, id string, parts []string, hash string, size int64) error {
	if err := blob.ValidHash(hash); err != nil {
		return fmt.Errorf("s3 tus store: %w", err)
	}
	n, err := p.s.Stat(ctx, hash)
	switch {
	case err == nil && n == size:
		return nil
	case err != nil && !errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("s3 tus store %s: %w", id, err)
	}
	r, err := p.partsReader(ctx, id, parts, size)
	if err != nil {
		return fmt.Errorf("s3 tus store: %w", err)
	}
	f, obj, err := p.s.spool(ctx, r, size)
	if err != nil {
		return fmt.Errorf("s3 tus store %s: %w", id, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if obj.Hash != hash || obj.Size != size {
		return fmt.Errorf("s3 tus store %s: its parts hold %d bytes of SHA-256 %s, not the %d bytes of %s it recorded", id, obj.Size, obj.Hash, size, hash)
	}
	if err := p.s.upload(ctx, f, obj); err != nil {
		return fmt.Errorf("s3 tus store %s: %w", id, fault(err))
	}
	return nil
}

// Discard removes one part of upload id.
func (p TusParts) Discard(ctx context.Context, id, part string) error {
	if err := checkUploadID(id); err != nil {
		return fmt.Errorf("s3 tus discard: %w", err)
	}
	if _, err := partOffset(part); err != nil {
		return fmt.Errorf("s3 tus discard: %w", err)
	}
	return p.remove(ctx, tusPartKey(id, part))
}

func (p TusParts) remove(ctx context.Context, key string) error {
	if err := p.s.client.RemoveObject(ctx, p.s.bucket, key, minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return fmt.Errorf("s3 remove %s: %w", key, err)
	}
	return nil
}

// Remove removes every part of upload id, recorded or not.
func (p TusParts) Remove(ctx context.Context, id string) error {
	if err := checkUploadID(id); err != nil {
		return fmt.Errorf("s3 tus remove: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range p.s.client.ListObjects(ctx, p.s.bucket, minio.ListObjectsOptions{Prefix: tusPartPrefix + id + ".", Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("s3 tus remove %s: list parts: %w", id, o.Err)
		}
		if err := p.remove(ctx, o.Key); err != nil {
			return fmt.Errorf("s3 tus remove %s: %w", id, err)
		}
	}
	return nil
}

// strayBatch is how many uploads RemoveStrays asks about at once.
const strayBatch = 500

// RemoveStrays removes the parts of uploads that no longer exist, and returns
// for how many uploads. A part is only ever stored after its upload's row,
// and an upload id never comes back, so a part whose row is gone (looked up
// after the listing) is left over at any age: the parts of a deleted user's
// uploads go at the next sweep, and those a PATCH stored as its upload was
// terminated or expired on another node at the one after.
func (p TusParts) RemoveStrays(ctx context.Context, known func(context.Context, []string) (map[string]bool, error)) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys := map[string][]string{} // upload id → its old parts' keys
	var ids []string
	for o := range p.s.client.ListObjects(ctx, p.s.bucket, minio.ListObjectsOptions{Prefix: tusPartPrefix, Recursive: true}) {
		if o.Err != nil {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			return 0, fmt.Errorf("s3 tus sweep: %w", o.Err)
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(o.Key, tusPartPrefix), ".")
		if checkUploadID(id) != nil {
			continue
		}
		if _, ok := keys[id]; !ok {
			ids = append(ids, id)
		}
		keys[id] = append(keys[id], o.Key)
	}
	n := 0
	for len(ids) > 0 {
		batch := ids[:min(len(ids), strayBatch)]
		ids = ids[len(batch):]
		ok, err := known(ctx, batch)
		if err != nil {
			return n, err
		}
		for _, id := range batch {
			if ok[id] {
				continue
			}
			for _, k := range keys[id] {
				if err := p.remove(ctx, k); err != nil {
					return n, fmt.Errorf("s3 tus sweep: %w", err)
				}
			}
			n++
		}
	}
	return n, ctx.Err()
}
