package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"atrium/storage/blob"
	"atrium/storage/sqldb"
)

// RestoreOptions says what Restore restores and where to.
type RestoreOptions struct {
	// From is the backup: a directory or a .tar.zst file.
	From string
	// Data is the data directory to create; it must not exist or be empty.
	Data string
	// ConfigTo, when set, is where the backup's configuration file is written
	// (it must not exist).
	ConfigTo string
	// MaxSchema, when positive, is the newest database schema this binary
	// knows; a backup of a newer one is refused.
	MaxSchema int64
	// Progress, when set, is called as the backup is read (bytes of the
	// backup as stored).
	Progress func(done, total int64)
	// Log receives notes; nil discards them.
	Log *slog.Logger
}

// Restored is what Restore did.
type Restored struct {
	Manifest Manifest
	// ConfigWritten reports whether the configuration went to ConfigTo.
	ConfigWritten bool
	// Dropped counts entries left out: bytes the database does not refer to,
	// and upload parts that do not match their recorded hash.
	Dropped int
}

// Restore brings the backup o.From back into the empty data directory
// o.Data. It checks the manifest, the database's checksum and integrity and
// every object's hash, and that every blob and archive copy the database
// refers to is there; it assembles the data directory in a temporary
// directory beside o.Data and renames it into place only when all of that
// held, so a failed restore leaves o.Data as it was. The search index is not
// part of a backup: the server rebuilds it at its first start.
func Restore(ctx context.Context, o RestoreOptions) (Restored, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	data, err := filepath.Abs(o.Data)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	if err := checkEmpty(data); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	if o.ConfigTo != "" {
		if _, err := os.Lstat(o.ConfigTo); err == nil {
			return Restored{}, fmt.Errorf("restore: %s already exists", o.ConfigTo)
		}
	}
	src, err := openSource(o.From)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	defer src.close()
	parent := filepath.Dir(data)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	work, err := os.MkdirTemp(parent, "."+filepath.Base(data)+".restore-")
	if err != nil {
		return Restored{}, fmt.Errorf("restore: work directory: %w", err)
	}
	defer os.RemoveAll(work) // gone already once renamed into place

	rs := &restoring{o: o, src: src, work: work, files: map[string]int64{}, dirs: map[string]bool{work: true}}
	res, err := rs.run(ctx)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	// The configuration is written beside its destination, then linked into
	// place once the data directory is.
	var config string
	if rs.config != nil && o.ConfigTo != "" {
		config = o.ConfigTo + ".restore-tmp"
		if err := writeFileSync(config, rs.config); err != nil {
			return Restored{}, fmt.Errorf("restore: configuration: %w", err)
		}
		defer os.Remove(config)
	}
	for d := range rs.dirs {
		if err := blob.SyncDir(d); err != nil {
			return Restored{}, fmt.Errorf("restore: sync %s: %w", d, err)
		}
	}
	if err := os.Rename(work, data); err != nil {
		return Restored{}, fmt.Errorf("restore: move the data directory into place: %w", err)
	}
	if err := blob.SyncDir(parent); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	if config != "" {
		if err := os.Link(config, o.ConfigTo); err != nil {
			return res, fmt.Errorf("restore: the data directory is restored, but not the configuration: %w", err)
		}
		res.ConfigWritten = true
	} else if o.ConfigTo != "" {
		o.Log.Warn("restore: the backup holds no configuration file", "config_to", o.ConfigTo)
	}
	return res, nil
}

// checkEmpty refuses a data directory that holds anything.
func checkEmpty(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("data directory %s is not empty; restore only into a new or empty directory", dir)
	}
	return nil
}

// restoring is one restore in progress.
type restoring struct {
	o     RestoreOptions
	src   source
	work  string
	files map[string]int64 // entries written (blobs, archive copies, uploads), by name
	dirs  map[string]bool  // directories made, to fsync

	manifest  []byte
	dbSum     string
	dbSize    int64
	config    []byte // the configuration file
	configSum string
}

func (rs *restoring) run(ctx context.Context) (Restored, error) {
	for {
		if err := ctx.Err(); err != nil {
			return Restored{}, err
		}
		e, err := rs.src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Restored{}, err
		}
		if err := rs.entry(e); err != nil {
			return Restored{}, err
		}
		if rs.o.Progress != nil {
			rs.o.Progress(rs.src.progress())
		}
	}
	if rs.manifest == nil {
		return Restored{}, errors.New("the backup has no manifest.json")
	}
	m, err := parseManifest(rs.manifest)
	if err != nil {
		return Restored{}, err
	}
	if rs.dbSum == "" {
		return Restored{}, errors.New("the backup has no atrium.db")
	}
	if rs.dbSum != m.Database.SHA256 || rs.dbSize != m.Database.Bytes {
		return Restored{}, fmt.Errorf("%w: atrium.db (%d bytes, sha256 %s) is not the database of the manifest", ErrDamaged, rs.dbSize, rs.dbSum)
	}
	if m.ConfigIncluded && (rs.config == nil || rs.configSum != m.Config.SHA256 || int64(len(rs.config)) != m.Config.Bytes) {
		return Restored{}, fmt.Errorf("%w: config.toml is missing or not the one of the manifest", ErrDamaged)
	}
	if !m.ConfigIncluded && rs.config != nil {
		return Restored{}, errors.New("the backup holds a config.toml its manifest does not list")
	}
	dbPath := filepath.Join(rs.work, nameDB)
	integrity, schema, err := sqldb.CheckFile(ctx, dbPath)
	if err != nil {
		return Restored{}, err
	}
	if integrity != "ok" {
		return Restored{}, fmt.Errorf("%w: atrium.db fails its integrity check: %s", ErrDamaged, integrity)
	}
	if rs.o.MaxSchema > 0 && schema > rs.o.MaxSchema {
		return Restored{}, fmt.Errorf("the backup's database has schema version %d; this atrium knows up to %d: restore with a newer atrium", schema, rs.o.MaxSchema)
	}
	refs, err := sqldb.ReadBlobRefs(ctx, dbPath)
	if err != nil {
		return Restored{}, err
	}
	if err := validRefs(refs); err != nil {
		return Restored{}, err
	}
	res := Restored{Manifest: m}
	keep := map[string]bool{}
	var blobs, archive, uploads Count
	need := func(name string, required bool, c *Count) error {
		size, ok := rs.files[name]
		if !ok {
			if required {
				return fmt.Errorf("%w: the database refers to %s, which the backup lacks", ErrLost, name)
			}
			return nil
		}
		if !keep[name] {
			keep[name] = true
			c.add(size)
		}
		return nil
	}
	for _, h := range refs.Hot {
		if err := need(blobEntry(h), true, &blobs); err != nil {
			return Restored{}, err
		}
	}
	for _, h := range refs.Warm {
		if err := need(blobEntry(h), false, &blobs); err != nil {
			return Restored{}, err
		}
	}
	for _, h := range refs.Cold {
		if err := need(archiveEntry(h), true, &archive); err != nil {
			return Restored{}, err
		}
	}
	for _, p := range refs.Tus {
		name := tusEntry(p.ID)
		if _, ok := rs.files[name]; !ok {
			continue
		}
		if ok, err := rs.uploadOK(name, p); err != nil {
			return Restored{}, err
		} else if ok {
			keep[name] = true
			uploads.add(p.Offset)
		}
	}
	if blobs != m.Blobs || archive != m.Archive {
		return Restored{}, fmt.Errorf("%w: the backup holds %d blobs (%d bytes) and %d archive copies (%d bytes) the database refers to; its manifest lists %d (%d bytes) and %d (%d bytes)",
			ErrDamaged, blobs.Count, blobs.Bytes, archive.Count, archive.Bytes, m.Blobs.Count, m.Blobs.Bytes, m.Archive.Count, m.Archive.Bytes)
	}
	for name := range rs.files {
		if keep[name] {
			continue
		}
		if err := os.Remove(filepath.Join(rs.work, filepath.FromSlash(name))); err != nil {
			return Restored{}, fmt.Errorf("leave out %s: %w", name, err)
		}
		res.Dropped++
	}
	return res, nil
}

// uploadOK checks the received part of a resumable upload against the
// database's record and trims it to the recorded length; it reports false
// (and removes the part) when it does not match.
func (rs *restoring) uploadOK(name string, p sqldb.TusPart) (bool, error) {
	path := filepath.Join(rs.work, filepath.FromSlash(name))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, fmt.Errorf("check %s: %w", name, err)
	}
	defer f.Close()
	ok := rs.files[name] >= p.Offset
	if ok {
		if ok, err = uploadMatches(io.NewSectionReader(f, 0, p.Offset), p.HashState); err != nil {
			return false, fmt.Errorf("check %s: %w", name, err)
		}
	}
	if ok && rs.files[name] > p.Offset {
		if err := f.Truncate(p.Offset); err != nil {
			return false, fmt.Errorf("trim %s: %w", name, err)
		}
		if err := f.Sync(); err != nil {
			return false, fmt.Errorf("trim %s: %w", name, err)
		}
	}
	if !ok {
		rs.o.Log.Warn("restore: resumable upload left out: its bytes do not match its recorded hash", "upload", p.ID)
	}
	return ok, nil
}

// entry writes one file of the backup into the work directory, verifying it.
func (rs *restoring) entry(e entry) error {
	k, claim, err := classify(e.name)
	if err != nil {
		return err
	}
	if k == kindManifest || k == kindConfig {
		if (k == kindManifest && rs.manifest != nil) || (k == kindConfig && rs.config != nil) {
			return fmt.Errorf("the backup holds %s twice", e.name)
		}
		b, err := io.ReadAll(io.LimitReader(e.r, 1<<20+1))
		if err != nil {
			return fmt.Errorf("read %s: %w", e.name, err)
		}
		if len(b) > 1<<20 {
			return fmt.Errorf("%s is larger than 1 MiB", e.name)
		}
		if k == kindConfig {
			rs.config, rs.configSum = b, hexSHA256(b)
		} else {
			rs.manifest = b
		}
		return nil
	}
	target := filepath.Join(rs.work, filepath.FromSlash(e.name))
	if err := rs.mkdirs(filepath.Dir(target)); err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("the backup holds %s twice", e.name)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", e.name, err)
	}
	v := newVerifier(k)
	n, err := io.Copy(f, io.TeeReader(e.r, v))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	sum, verr := v.sum()
	if err != nil {
		return fmt.Errorf("write %s: %w", e.name, err)
	}
	switch k {
	case kindBlob, kindArchive:
		if verr != nil {
			return fmt.Errorf("%w: %s: %v", ErrDamaged, e.name, verr)
		}
		if sum != claim {
			return fmt.Errorf("%w: %s holds content %s", ErrDamaged, e.name, sum)
		}
		rs.files[e.name] = n
	case kindTus:
		rs.files[e.name] = n
	case kindDB:
		rs.dbSum, rs.dbSize = sum, n
	}
	return nil
}

func (rs *restoring) mkdirs(dir string) error {
	if rs.dirs[dir] {
		return nil
	}
	if err := rs.mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	rs.dirs[dir] = true
	return nil
}

// entry is one file of a backup being read.
type entry struct {
	name string // cleaned, slash-separated, relative
	r    io.Reader
}

// source reads the files of a backup in turn.
type source interface {
	// next returns the next file; io.EOF after the last.
	next() (entry, error)
	// progress reports how far the reading got, in bytes of the backup as stored.
	progress() (done, total int64)
	close()
}

// openSource opens a backup directory or .tar.zst file.
func openSource(from string) (source, error) {
	fi, err := os.Stat(from)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if fi.IsDir() {
		return openDirSource(from)
	}
	return openTarSource(from, fi.Size())
}

// dirSource reads a backup directory; it refuses symbolic links and names
// outside the layout.
type dirSource struct {
	root  string
	names []string
	i     int
	open  *os.File
	done  atomic.Int64
	total int64
}

func openDirSource(root string) (*dirSource, error) {
	s := &dirSource{root: root}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name, err := cleanName(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("backup entry %q is a symbolic link", name)
		case d.IsDir():
			if !knownDir(name) {
				return fmt.Errorf("backup entry %q: not part of an Atrium backup", name)
			}
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("backup entry %q is not a regular file", name)
		}
		if _, _, err := classify(name); err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		s.names = append(s.names, name)
		s.total += fi.Size()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read backup directory: %w", err)
	}
	return s, nil
}

func (s *dirSource) next() (entry, error) {
	if s.open != nil {
		s.open.Close()
		s.open = nil
	}
	if s.i == len(s.names) {
		return entry{}, io.EOF
	}
	name := s.names[s.i]
	s.i++
	p := filepath.Join(s.root, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	if err != nil {
		return entry{}, fmt.Errorf("read backup: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return entry{}, fmt.Errorf("backup entry %q is not a regular file", name)
	}
	f, err := os.Open(p)
	if err != nil {
		return entry{}, fmt.Errorf("read backup: %w", err)
	}
	s.open = f
	return entry{name: name, r: &countReader{r: f, n: &s.done}}, nil
}

func (s *dirSource) progress() (int64, int64) { return s.done.Load(), s.total }

func (s *dirSource) close() {
	if s.open != nil {
		s.open.Close()
	}
}

// tarSource reads a .tar.zst backup; it refuses links, devices and names
// outside the layout.
type tarSource struct {
	path string
	f    *os.File
	zr   *zstd.Decoder
	tr   *tar.Reader
	// done is written by zstd's decoding goroutine, read by progress.
	done  atomic.Int64
	total int64
}

func openTarSource(path string, size int64) (*tarSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	// A backup file starts with zstd's magic number; anything else is not one.
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || !bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		f.Close()
		return nil, fmt.Errorf("%s is not an Atrium backup: a backup is the .tar.zst file or the folder that `atrium backup --to` wrote", path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("backup: %w", err)
	}
	s := &tarSource{f: f, path: path, total: size}
	zr, err := zstd.NewReader(&countReader{r: f, n: &s.done})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("backup %s: %w", path, err)
	}
	s.zr, s.tr = zr, tar.NewReader(zr)
	return s, nil
}

func (s *tarSource) next() (entry, error) {
	for {
		hdr, err := s.tr.Next()
		if err == io.EOF {
			return entry{}, io.EOF
		}
		if err != nil {
			return entry{}, fmt.Errorf("backup %s is damaged or cut short (after %d of %d bytes): %w; make a new one, or restore another", s.path, s.done.Load(), s.total, err)
		}
		name, err := cleanName(hdr.Name)
		if err != nil {
			return entry{}, err
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
			return entry{name: name, r: s.tr}, nil
		case tar.TypeDir:
			if !knownDir(name) {
				return entry{}, fmt.Errorf("backup entry %q: not part of an Atrium backup", name)
			}
		case tar.TypeXGlobalHeader:
		case tar.TypeSymlink, tar.TypeLink:
			return entry{}, fmt.Errorf("backup entry %q is a link", name)
		default:
			return entry{}, fmt.Errorf("backup entry %q is not a regular file", name)
		}
	}
}

func (s *tarSource) progress() (int64, int64) { return s.done.Load(), s.total }

func (s *tarSource) close() {
	s.zr.Close()
	s.f.Close()
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// writeFileSync creates the new file path holding b, durably.
func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// hexSHA256 is the hex SHA-256 of b.
func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
