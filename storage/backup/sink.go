package backup

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"

	"atrium/storage/blob"
)

// sink receives the files of a backup being written.
type sink interface {
	// add writes the entry name from r, which yields exactly size bytes.
	add(name string, size int64, r io.Reader) error
	// addFile moves (or copies) the local file path in as the entry name.
	addFile(name, path string) error
	// drop forgets an entry added before, where the form allows it (a
	// directory); a tar keeps it, and restore leaves out what the database
	// does not refer to.
	drop(name string) error
	// commit makes the backup durable and renames it to dest.
	commit(dest string) error
	// abort frees what the sink holds; the caller removes the work directory.
	abort()
}

// dirSink writes a backup directory in place (root, a temporary directory
// beside the destination).
type dirSink struct {
	root string
	dirs map[string]bool // directories to fsync before commit
}

func newDirSink(root string) *dirSink { return &dirSink{root: root, dirs: map[string]bool{root: true}} }

func (s *dirSink) path(name string) (string, error) {
	p := filepath.Join(s.root, filepath.FromSlash(name))
	if err := s.mkdirs(filepath.Dir(p)); err != nil {
		return "", err
	}
	return p, nil
}

func (s *dirSink) mkdirs(dir string) error {
	if s.dirs[dir] {
		return nil
	}
	if err := s.mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	s.dirs[dir] = true
	return nil
}

func (s *dirSink) add(name string, size int64, r io.Reader) error {
	p, err := s.path(name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("%d bytes, want %d", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func (s *dirSink) addFile(name, path string) error {
	p, err := s.path(name)
	if err != nil {
		return err
	}
	if err := os.Rename(path, p); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func (s *dirSink) drop(name string) error {
	if err := os.Remove(filepath.Join(s.root, filepath.FromSlash(name))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	return nil
}

func (s *dirSink) commit(dest string) error {
	for d := range s.dirs {
		if err := blob.SyncDir(d); err != nil {
			return fmt.Errorf("sync %s: %w", d, err)
		}
	}
	// rename(2) replaces an empty directory; one that is not empty fails.
	if err := os.Rename(s.root, dest); err != nil {
		return fmt.Errorf("move the backup into place: %w", err)
	}
	return blob.SyncDir(filepath.Dir(dest))
}

func (s *dirSink) abort() {}

// tarSink writes a zstd-compressed tar to a temporary file.
type tarSink struct {
	path    string
	f       *os.File
	zw      *zstd.Encoder
	tw      *tar.Writer
	modTime time.Time
}

func newTarSink(path string, modTime time.Time) (*tarSink, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create backup file: %w", err)
	}
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("create backup file: %w", err)
	}
	return &tarSink{path: path, f: f, zw: zw, tw: tar.NewWriter(zw), modTime: modTime.Truncate(time.Second)}, nil
}

func (s *tarSink) add(name string, size int64, r io.Reader) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: s.modTime}
	if err := s.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	n, err := io.Copy(s.tw, r)
	if err == nil && n != size {
		err = fmt.Errorf("%d bytes, want %d", n, size)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func (s *tarSink) addFile(name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return s.add(name, fi.Size(), f)
}

func (s *tarSink) drop(string) error { return nil }

func (s *tarSink) commit(dest string) error {
	err := s.tw.Close()
	if zerr := s.zw.Close(); err == nil {
		err = zerr
	}
	if err == nil {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	if err != nil {
		return fmt.Errorf("finish backup file: %w", err)
	}
	// A link, unlike a rename, never replaces a file someone created meanwhile.
	if err := os.Link(s.path, dest); err == nil {
		os.Remove(s.path)
	} else if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("move the backup into place: %w", err)
	} else if err := os.Rename(s.path, dest); err != nil { // a file system without hard links
		return fmt.Errorf("move the backup into place: %w", err)
	}
	return blob.SyncDir(filepath.Dir(dest))
}

func (s *tarSink) abort() {
	if s.f != nil {
		s.zw.Close()
		s.f.Close()
	}
}
