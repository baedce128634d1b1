package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// Archive is the cold tier of the drive: zstd-compressed copies of objects,
// named by the SHA-256 of their uncompressed content, at
// dir/<hh>/<64-hex-sha256>.zst. Like Store, a copy is written through a temp
// file that is fsynced and renamed into place, so a name only ever holds a
// complete, durable copy.
type Archive struct {
	dir string
	tmp string
}

// OpenArchive opens (creating) the archive in dir.
func OpenArchive(dir string) (*Archive, error) {
	a := &Archive{dir: dir, tmp: filepath.Join(dir, "tmp")}
	if err := os.MkdirAll(a.tmp, 0o700); err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	return a, nil
}

func (a *Archive) path(hash string) string {
	return filepath.Join(a.dir, hash[:2], hash+".zst")
}

// Put compresses r into the archive as hash; the SHA-256 of r must be hash.
// The copy is durable on return.
func (a *Archive) Put(hash string, r io.Reader) error {
	if err := ValidHash(hash); err != nil {
		return fmt.Errorf("archive put: %w", err)
	}
	f, err := os.CreateTemp(a.tmp, "put-*")
	if err != nil {
		return fmt.Errorf("archive put: create temp file: %w", err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		f.Close()
		if !renamed {
			os.Remove(tmp)
		}
	}()
	enc, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return fmt.Errorf("archive put: %w", err)
	}
	h := sha256.New()
	if _, err := io.Copy(enc, io.TeeReader(r, h)); err != nil {
		enc.Close()
		return fmt.Errorf("archive put: compress: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("archive put: compress: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hash {
		return fmt.Errorf("archive put: content hash %s, want %s", got, hash)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("archive put: sync temp file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("archive put: close temp file: %w", err)
	}
	final := a.path(hash)
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("archive put: %w", err)
	}
	if err := SyncDir(a.dir); err != nil {
		return fmt.Errorf("archive put: sync archive dir: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("archive put: rename into place: %w", err)
	}
	renamed = true
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("archive put: sync dir: %w", err)
	}
	return nil
}

// Open returns the uncompressed content of hash.
func (a *Archive) Open(hash string) (io.ReadCloser, error) {
	f, err := openObject("archive open", hash, a.path)
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("archive open: %w", err)
	}
	return &archiveReader{dec: dec, f: f}, nil
}

type archiveReader struct {
	dec *zstd.Decoder
	f   *os.File
}

func (r *archiveReader) Read(p []byte) (int, error) { return r.dec.Read(p) }

func (r *archiveReader) Close() error {
	r.dec.Close()
	return r.f.Close()
}

// Exists reports whether the archive holds hash.
func (a *Archive) Exists(hash string) bool {
	if ValidHash(hash) != nil {
		return false
	}
	fi, err := os.Stat(a.path(hash))
	return err == nil && fi.Mode().IsRegular()
}

// Delete removes hash; a missing copy is not an error.
func (a *Archive) Delete(hash string) error {
	if err := ValidHash(hash); err != nil {
		return fmt.Errorf("archive delete: %w", err)
	}
	if err := os.Remove(a.path(hash)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("archive delete: %w", err)
	}
	return nil
}
