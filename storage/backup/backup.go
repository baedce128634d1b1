package backup

import (
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"atrium/storage/blob"
	"atrium/storage/sqldb"
)

// Options says what Create backs up and where to.
type Options struct {
	// Data is the data directory; a server may be running on it.
	Data string
	// To is the destination: a path ending in .tar.zst (which must not exist),
	// or a directory (which must not exist or be empty).
	To string
	// Config, when set, is the configuration file to include.
	Config string
	// Version is the Atrium version recorded in the manifest.
	Version string
	// Progress, when set, is called as bytes are copied; total grows when a
	// new snapshot refers to more.
	Progress func(done, total int64)
	// Log receives notes (a retaken snapshot); nil discards them.
	Log *slog.Logger
	// Now is the clock of the manifest (default time.Now).
	Now func() time.Time

	// afterSnapshot, in tests, runs after each database snapshot.
	afterSnapshot func(attempt int)
}

// maxSnapshots bounds how often Create retakes the database snapshot because
// the server deleted a blob the previous one referred to.
const maxSnapshots = 5

// ErrLost is wrapped when the data directory lacks bytes its database refers
// to (and not because the running server deleted them after the snapshot).
var ErrLost = errors.New("data directory is missing referenced bytes")

// ErrDamaged is wrapped when stored bytes do not match their hash.
var ErrDamaged = errors.New("content does not match its hash")

// errMissing marks a source file that is not there (any more).
var errMissing = errors.New("missing")

// IsTarZst reports whether path names a compressed tar backup rather than a
// directory.
func IsTarZst(path string) bool { return strings.HasSuffix(path, ".tar.zst") }

// Create takes a consistent backup of o.Data into o.To and returns its
// manifest.
//
// The database is snapshotted with VACUUM INTO; then the blobs, archive copies
// and upload parts the snapshot refers to are copied, each hash verified. The
// running server deletes a blob only after nothing refers to it (for blob
// store objects, an hour after), so a blob the snapshot refers to can vanish
// before it is copied only when the server dropped its last reference after
// the snapshot: Create then takes a new snapshot (which no longer refers to
// it) and copies what that one adds, keeping what it already has. A blob that
// is missing and still referred to by the next snapshot was lost before the
// backup began: Create fails with ErrLost rather than write a backup that
// refers to bytes it does not hold. Nothing appears under o.To unless the
// whole backup succeeded.
func Create(ctx context.Context, o Options) (Manifest, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	dbPath := filepath.Join(o.Data, nameDB)
	if _, err := os.Stat(dbPath); err != nil {
		return Manifest{}, fmt.Errorf("backup: no Atrium database in %s: %w", o.Data, err)
	}
	dest, err := filepath.Abs(o.To)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	if err := checkDest(dest, IsTarZst(dest)); err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	work, err := os.MkdirTemp(parent, "."+filepath.Base(dest)+".partial-")
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: work directory: %w", err)
	}
	defer os.RemoveAll(work) // after a directory backup's commit, work is gone already

	now := o.Now().UTC()
	var out sink
	if IsTarZst(dest) {
		ts, err := newTarSink(filepath.Join(work, "backup.tar.zst"), now)
		if err != nil {
			return Manifest{}, fmt.Errorf("backup: %w", err)
		}
		out = ts
	} else {
		out = newDirSink(work)
	}
	committed := false
	defer func() {
		if !committed {
			out.abort()
		}
	}()
	r := &run{o: o, out: out, done: map[string]int64{}, now: now}
	m, err := r.copyAll(ctx, dbPath, work)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	if err := out.commit(dest); err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	committed = true
	return m, nil
}

// checkDest refuses a destination that holds something.
func checkDest(dest string, tarForm bool) error {
	fi, err := os.Lstat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if tarForm {
		return fmt.Errorf("%s already exists", dest)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dest)
	}
	entries, err := os.ReadDir(dest)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty", dest)
	}
	return nil
}

// run is one backup in progress.
type run struct {
	o    Options
	out  sink
	done map[string]int64 // entries written, and their sizes
	now  time.Time        // when the backup began

	copied, total int64
}

// copyAll snapshots the database and copies what it refers to, retaking the
// snapshot when the server deleted a blob meanwhile; it adds the database,
// the configuration and the manifest last.
func (r *run) copyAll(ctx context.Context, dbPath, work string) (Manifest, error) {
	var (
		snap    string
		refs    sqldb.BlobRefs
		m       = Manifest{Format: formatName, FormatVersion: FormatVersion}
		missing map[string]bool // entries missing after the previous snapshot
	)
	for attempt := 1; ; attempt++ {
		if attempt > maxSnapshots {
			return Manifest{}, fmt.Errorf("the server kept deleting blobs between %d snapshots and their copies; try again", maxSnapshots)
		}
		if snap != "" {
			os.Remove(snap)
		}
		snap = filepath.Join(work, fmt.Sprintf(".snapshot-%d.db", attempt))
		if err := sqldb.Snapshot(ctx, dbPath, snap); err != nil {
			return Manifest{}, err
		}
		if r.o.afterSnapshot != nil {
			r.o.afterSnapshot(attempt)
		}
		var err error
		if refs, err = sqldb.ReadBlobRefs(ctx, snap); err != nil {
			return Manifest{}, err
		}
		if err := validRefs(refs); err != nil {
			return Manifest{}, err
		}
		r.plan(snap, refs)
		gone, err := r.copyRefs(ctx, refs)
		if err != nil {
			return Manifest{}, err
		}
		if len(gone) == 0 {
			m.Snapshots = attempt
			break
		}
		for _, name := range gone {
			if missing[name] {
				return Manifest{}, fmt.Errorf("%w: %s is referred to by the database but not in %s", ErrLost, name, r.o.Data)
			}
		}
		r.o.Log.Info("backup: blobs deleted by the server since the snapshot; taking a new one", "count", len(gone), "attempt", attempt)
		missing = map[string]bool{}
		for _, name := range gone {
			missing[name] = true
		}
	}
	// Directories drop what the last snapshot no longer refers to.
	keep := map[string]bool{}
	for _, h := range refs.Hot {
		keep[blobEntry(h)] = true
	}
	for _, h := range refs.Warm {
		keep[blobEntry(h)] = true
	}
	for _, h := range refs.Cold {
		keep[archiveEntry(h)] = true
	}
	for _, p := range refs.Tus {
		keep[tusEntry(p.ID)] = true
	}
	for name, size := range r.done {
		if !keep[name] {
			if err := r.out.drop(name); err != nil {
				return Manifest{}, err
			}
			continue
		}
		switch {
		case strings.HasPrefix(name, dirBlobs+"/"):
			m.Blobs.add(size)
		case strings.HasPrefix(name, dirArchive+"/"):
			m.Archive.add(size)
		case strings.HasPrefix(name, dirTus+"/"):
			m.Uploads.add(size)
		}
	}

	integrity, schema, err := sqldb.CheckFile(ctx, snap)
	if err != nil {
		return Manifest{}, err
	}
	if integrity != "ok" {
		return Manifest{}, fmt.Errorf("database snapshot fails its integrity check: %s", integrity)
	}
	m.SchemaVersion = schema
	sum, size, err := fileSHA256(snap)
	if err != nil {
		return Manifest{}, err
	}
	m.Database = File{Name: nameDB, SHA256: sum, Bytes: size}
	if err := r.out.addFile(nameDB, snap); err != nil {
		return Manifest{}, err
	}
	r.advance(size)
	if r.o.Config != "" {
		f, err := r.addConfig()
		if err != nil {
			return Manifest{}, err
		}
		m.ConfigIncluded, m.Config = true, &f
	}
	m.CreatedAt, m.AtriumVersion = r.now, r.o.Version
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	b = append(b, '\n')
	if err := r.out.add(nameManifest, int64(len(b)), strings.NewReader(string(b))); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// validRefs refuses hashes that are not hex SHA-256 and upload ids outside the layout.
func validRefs(refs sqldb.BlobRefs) error {
	for _, l := range [][]string{refs.Hot, refs.Warm, refs.Cold} {
		for _, h := range l {
			if err := blob.ValidHash(h); err != nil {
				return fmt.Errorf("database refers to blob %q: %w", h, err)
			}
		}
	}
	for _, p := range refs.Tus {
		if !reTus.MatchString(tusEntry(p.ID)) {
			return fmt.Errorf("database has a resumable upload with id %q", p.ID)
		}
	}
	return nil
}

// plan sets the progress total: what is copied already, plus the sizes of
// what the snapshot refers to and is not, plus the snapshot itself.
func (r *run) plan(snap string, refs sqldb.BlobRefs) {
	total := r.copied
	add := func(name, path string) {
		if _, ok := r.done[name]; ok {
			return
		}
		if fi, err := os.Stat(path); err == nil {
			total += fi.Size()
		}
	}
	for _, h := range slices.Concat(refs.Hot, refs.Warm) {
		add(blobEntry(h), r.src(blobEntry(h)))
	}
	for _, h := range refs.Cold {
		add(archiveEntry(h), r.src(archiveEntry(h)))
	}
	for _, p := range refs.Tus {
		if _, ok := r.done[tusEntry(p.ID)]; !ok {
			total += p.Offset
		}
	}
	for _, p := range []string{snap, r.o.Config} {
		if fi, err := os.Stat(p); p != "" && err == nil {
			total += fi.Size()
		}
	}
	r.total = total
	r.report()
}

func (r *run) report() {
	if r.o.Progress != nil {
		r.o.Progress(r.copied, r.total)
	}
}

func (r *run) advance(n int64) {
	r.copied += n
	r.report()
}

// src is the data-directory path of a backup entry.
func (r *run) src(name string) string { return filepath.Join(r.o.Data, filepath.FromSlash(name)) }

// copyRefs copies what refs name and is not copied yet, and returns the
// required entries that were missing.
func (r *run) copyRefs(ctx context.Context, refs sqldb.BlobRefs) (gone []string, err error) {
	type item struct {
		name     string
		hash     string
		kind     kind
		required bool
	}
	var items []item
	for _, h := range refs.Hot {
		items = append(items, item{blobEntry(h), h, kindBlob, true})
	}
	for _, h := range refs.Warm {
		items = append(items, item{blobEntry(h), h, kindBlob, false})
	}
	for _, h := range refs.Cold {
		items = append(items, item{archiveEntry(h), h, kindArchive, true})
	}
	for _, it := range items {
		if _, ok := r.done[it.name]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		size, err := r.copyVerified(ctx, it.name, it.kind, it.hash)
		switch {
		case errors.Is(err, errMissing):
			if it.required {
				gone = append(gone, it.name)
			}
		case err != nil:
			return nil, err
		default:
			r.done[it.name] = size
		}
	}
	for _, p := range refs.Tus {
		name := tusEntry(p.ID)
		if _, ok := r.done[name]; ok {
			continue
		}
		ok, err := r.copyUpload(ctx, name, p)
		if err != nil {
			return nil, err
		}
		if ok {
			r.done[name] = p.Offset
		}
	}
	return gone, nil
}

// copyVerified copies a blob (k kindBlob) or an archive copy (kindArchive)
// into the backup, checking that its content hashes to want.
func (r *run) copyVerified(ctx context.Context, name string, k kind, want string) (int64, error) {
	f, err := os.Open(r.src(name))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, errMissing
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("read %s: not a regular file", name)
	}
	v := newVerifier(k)
	src := &progressReader{ctx: ctx, r: io.TeeReader(f, v), advance: r.advance}
	err = r.out.add(name, fi.Size(), src)
	got, verr := v.sum()
	if err != nil {
		return 0, err
	}
	if verr != nil {
		return 0, fmt.Errorf("%w: %s in %s: %v", ErrDamaged, name, r.o.Data, verr)
	}
	if got != want {
		return 0, fmt.Errorf("%w: %s in %s holds content %s", ErrDamaged, name, r.o.Data, got)
	}
	return fi.Size(), nil
}

// copyUpload copies the received bytes of a resumable upload, as far as the
// snapshot recorded them; it reports false (and copies nothing) when the
// upload finished meanwhile or its bytes do not match the recorded hash state.
func (r *run) copyUpload(ctx context.Context, name string, p sqldb.TusPart) (bool, error) {
	f, err := os.Open(r.src(name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("read %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() < p.Offset {
		return false, nil
	}
	// Check before writing: a tar cannot take an entry back.
	if ok, err := uploadMatches(io.NewSectionReader(f, 0, p.Offset), p.HashState); err != nil || !ok {
		if err != nil {
			return false, fmt.Errorf("read %s: %w", name, err)
		}
		r.o.Log.Warn("backup: resumable upload left out: its bytes do not match its recorded hash", "upload", p.ID)
		return false, nil
	}
	src := &progressReader{ctx: ctx, r: io.NewSectionReader(f, 0, p.Offset), advance: r.advance}
	if err := r.out.add(name, p.Offset, src); err != nil {
		return false, err
	}
	return true, nil
}

// uploadMatches reports whether the bytes of r hash to the SHA-256 state
// recorded with a resumable upload.
func uploadMatches(r io.Reader, state []byte) (bool, error) {
	want := sha256.New()
	if err := want.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return false, nil
	}
	got := sha256.New()
	if _, err := io.Copy(got, r); err != nil {
		return false, err
	}
	return hex.EncodeToString(got.Sum(nil)) == hex.EncodeToString(want.Sum(nil)), nil
}

// addConfig copies the configuration file into the backup.
func (r *run) addConfig() (File, error) {
	b, err := os.ReadFile(r.o.Config)
	if err != nil {
		return File{}, fmt.Errorf("configuration file: %w", err)
	}
	sum := sha256.Sum256(b)
	if err := r.out.add(nameConfig, int64(len(b)), strings.NewReader(string(b))); err != nil {
		return File{}, err
	}
	r.advance(int64(len(b)))
	return File{Name: nameConfig, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(b))}, nil
}

// verifier computes the content hash of a blob (its bytes) or of an archive
// copy (its bytes decompressed) from the bytes written to it.
type verifier struct {
	h    hash.Hash
	pw   *io.PipeWriter
	done chan error
}

func newVerifier(k kind) *verifier {
	v := &verifier{h: sha256.New()}
	if k != kindArchive {
		return v
	}
	pr, pw := io.Pipe()
	v.pw, v.done = pw, make(chan error, 1)
	go func() {
		dec, err := zstd.NewReader(pr, zstd.WithDecoderConcurrency(1))
		if err == nil {
			_, err = io.Copy(v.h, dec)
			dec.Close()
		}
		// Keep reading, so that writes never block on a decoder that gave up.
		io.Copy(io.Discard, pr)
		v.done <- err
	}()
	return v
}

func (v *verifier) Write(p []byte) (int, error) {
	if v.pw != nil {
		return v.pw.Write(p)
	}
	return v.h.Write(p)
}

// sum ends the input and returns the hex content hash.
func (v *verifier) sum() (string, error) {
	if v.pw != nil {
		v.pw.Close()
		if err := <-v.done; err != nil {
			return "", fmt.Errorf("decompress: %w", err)
		}
	}
	return hex.EncodeToString(v.h.Sum(nil)), nil
}

// progressReader reports what it reads and stops when ctx ends.
type progressReader struct {
	ctx     context.Context
	r       io.Reader
	advance func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := p.r.Read(b)
	if n > 0 {
		p.advance(int64(n))
	}
	return n, err
}

// fileSHA256 returns the hex SHA-256 and the size of a file.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
