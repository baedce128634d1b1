// Package copydata moves an embedded installation (a data directory's
// SQLite database and blobs) into a PostgreSQL database and an object store:
// atrium copy-data.
//
// The database is read from a snapshot (SQLite's VACUUM INTO, as a backup
// takes it: the database as of one commit, also while a server writes to
// it). The target database must be empty, or hold the marker of a copy of
// the same installation: a run after an interruption finishes the job (the
// rows are copied anew from its snapshot, the blobs the store holds are
// passed over), and --again copies the rows anew over a finished copy (the
// final pass, once the source's server stopped). Every blob's bytes are checked against
// their hash while they stream; a mismatch stops the copy naming the blob.
//
// Like package backup, it reads the source through the layouts of
// storage/sqldb and storage/blob without opening their stores (opening a
// Store empties its scratch directory, which a running server uses).
package copydata

import (
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/klauspost/compress/zstd"

	"atrium/app/contacts"
	"atrium/storage/blob"
	"atrium/storage/sqldb"
)

// Options says what Run copies and where to.
type Options struct {
	// From is the source data directory; a server may be running on it.
	From string
	// Scratch is a directory of the target's for the snapshot (removed
	// after).
	Scratch string
	// DB is the target database: PostgreSQL, migrated to this binary's schema.
	DB *sqldb.DB
	// Objects and Archive are the target's blob store and archive tier.
	Objects blob.Objects
	Archive blob.Cold
	// Tus is the target's directory of resumable uploads' received bytes
	// (<data>/tus): uploads in progress are copied there, unless Parts is
	// set.
	Tus string
	// Parts, set when the target's uploads in progress keep their bytes in
	// the bucket (s3blob.TusParts), takes each upload's received bytes as
	// its first part.
	Parts TusParts
	// Rows, when set, is called as a table's rows are copied; Bytes as
	// blobs are.
	Rows  func(table string, done, total int64)
	Bytes func(done, total int64)
	// Log receives notes; nil discards them.
	Log *slog.Logger
	// Again copies the rows anew over a finished copy of the same
	// installation (the final pass, once its server stopped, after one made
	// while it served); without it Run finds the copy done and does nothing.
	Again bool
	// DiscardChanges lets Again copy over writes the copy took since it was
	// made (lost), which it refuses otherwise.
	DiscardChanges bool

	// StopAfterRows and StopAfterBlobs, in tests, interrupt the copy
	// (ErrStopped) after that many rows or blobs.
	StopAfterRows, StopAfterBlobs int64
}

// TusParts keeps the bytes of resumable uploads in a bucket (s3blob.TusParts).
type TusParts interface {
	Append(ctx context.Context, id string, offset int64, parts []string, h hash.Hash, src io.Reader, limit int64) (string, int64, bool, error)
}

// Result is what Run did.
type Result struct {
	// AlreadyDone: an earlier run finished copying this installation;
	// nothing was done.
	AlreadyDone bool
	// Resumed: an earlier run of this installation was interrupted.
	Resumed bool
	Schema  int64
	Tables  int
	Rows    int64
	// Blobs and Archived count the objects and archive copies the source
	// refers to; Present those of them the target store held already
	// (copied by an earlier run); Bytes what was copied now.
	Blobs, Archived, Present, Uploads int
	Bytes                             int64
	Contacts                          int
}

var (
	// ErrDamaged is wrapped when a source blob's bytes do not match its hash.
	ErrDamaged = errors.New("content does not match its hash")
	// ErrStopped is returned when Options.StopAfterRows or StopAfterBlobs
	// interrupted the copy (tests).
	ErrStopped = errors.New("copy interrupted (test)")
)

const dbName = "atrium.db"

// blobWorkers is how many blobs are copied at once.
const blobWorkers = 4

var reUploadID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// Run copies the installation at o.From into o.DB and o.Objects.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var res Result
	dbPath := filepath.Join(o.From, dbName)
	if fi, err := os.Stat(dbPath); err != nil || !fi.Mode().IsRegular() {
		return res, fmt.Errorf("copy-data: %s is not an Atrium data directory (no %s there)", o.From, dbName)
	}
	if err := os.MkdirAll(o.Scratch, 0o700); err != nil {
		return res, fmt.Errorf("copy-data: scratch directory: %w", err)
	}
	work, err := os.MkdirTemp(o.Scratch, "snapshot-")
	if err != nil {
		return res, fmt.Errorf("copy-data: scratch directory: %w", err)
	}
	defer os.RemoveAll(work)
	snap := filepath.Join(work, dbName)
	if err := sqldb.Snapshot(ctx, dbPath, snap); err != nil {
		return res, fmt.Errorf("copy-data: %w", err)
	}
	integrity, schema, err := sqldb.CheckFile(ctx, snap)
	if err != nil {
		return res, fmt.Errorf("copy-data: %s is not an Atrium database: %w", dbPath, err)
	}
	if integrity != "ok" {
		return res, fmt.Errorf("copy-data: the snapshot of %s fails its integrity check: %s", dbPath, integrity)
	}
	res.Schema = schema
	if want := sqldb.MigrationVersion(); schema != want {
		return res, fmt.Errorf("copy-data: the database of %s is at schema %d, this atrium's is %d: copy with the same version of atrium the source runs (or upgrade the source first: start it with this version, or run atrium migrate --data %s)", o.From, schema, want, o.From)
	}
	source, err := sqldb.SourceIdentity(ctx, snap)
	if err != nil {
		return res, fmt.Errorf("copy-data: %w", err)
	}
	st, err := o.DB.CopyStatus(ctx)
	if err != nil {
		return res, err
	}
	switch {
	case st.State != "" && st.Source != source:
		return res, errors.New("copy-data: the target database holds a copy of another installation: give copy-data an empty database")
	case st.State == "done" && !o.Again:
		res.AlreadyDone = true
		return res, nil
	case st.State == "done" && st.Changed && !o.DiscardChanges:
		// A server ran on the copy and took writes: the rows anew from
		// the source would drop them.
		return res, errors.New("copy-data --again: the copy has taken writes since it was made (a server ran on it); copying the rows again would lose them, so nothing was changed. Add --discard-changes to copy again all the same")
	case st.State != "":
		// An interrupted copy, or a copy again (--again): the rows anew
		// from this snapshot, the blobs copied so far kept.
		res.Resumed = true
		if err := o.DB.ResetCopiedRows(ctx); err != nil {
			return res, err
		}
	case !st.Empty:
		return res, errors.New("copy-data: the target database is not empty (it has organisations, users or files): give copy-data an empty database")
	}
	if err := o.DB.SetCopyMarker(ctx, source, "copying"); err != nil {
		return res, err
	}

	// The bytes first: rows never refer to a blob the target lacks.
	refs, err := sqldb.ReadBlobRefs(ctx, snap)
	if err != nil {
		return res, fmt.Errorf("copy-data: %w", err)
	}
	parts, err := copyBlobs(ctx, o, refs, &res)
	if err != nil {
		return res, err
	}
	stats, err := o.DB.CopyFromSQLite(ctx, snap, sqldb.CopyOptions{Progress: o.Rows, Warn: o.Log.Warn, StopAfter: o.StopAfterRows})
	res.Tables, res.Rows = stats.Tables, stats.Rows
	if errors.Is(err, sqldb.ErrCopyStopped) {
		return res, ErrStopped
	}
	if err != nil {
		return res, err
	}
	for id, part := range parts {
		if err := o.DB.SetCopiedUploadParts(ctx, id, []string{part}); err != nil {
			return res, err
		}
	}
	if res.Contacts, err = (sqldb.ContactsStore{DB: o.DB}).IndexMissingContacts(ctx, contacts.StoredFields); err != nil {
		return res, fmt.Errorf("copy-data: contacts' search: %w", err)
	}
	if err := o.DB.SetCopyMarker(ctx, source, "done"); err != nil {
		return res, err
	}
	os.RemoveAll(work)
	os.Remove(o.Scratch) // when empty
	return res, nil
}

// item is a stored content to copy.
type item struct {
	hash     string
	path     string // in the source
	archive  bool   // an archive copy (zstd)
	required bool
	size     int64
}

// copyBlobs copies the objects and archive copies the snapshot refers to
// that the target does not hold, and the received bytes of uploads in
// progress; it returns the part each upload's bytes became in a bucket.
func copyBlobs(ctx context.Context, o Options, refs sqldb.BlobRefs, res *Result) (map[string]string, error) {
	var items []item
	add := func(hashes []string, archive, required bool) error {
		for _, h := range hashes {
			if err := blob.ValidHash(h); err != nil {
				return fmt.Errorf("copy-data: the database refers to blob %q: %w", h, err)
			}
			p := filepath.Join(o.From, "blobs", filepath.FromSlash(blob.ObjectName(h)))
			if archive {
				p = filepath.Join(o.From, "archive", filepath.FromSlash(blob.ArchiveName(h)))
			}
			it := item{hash: h, path: p, archive: archive, required: required}
			if fi, err := os.Stat(p); err == nil {
				it.size = fi.Size()
			}
			items = append(items, it)
		}
		return nil
	}
	if err := add(refs.Hot, false, true); err != nil {
		return nil, err
	}
	if err := add(refs.Warm, false, false); err != nil {
		return nil, err
	}
	if err := add(refs.Cold, true, true); err != nil {
		return nil, err
	}
	var total, done int64
	for _, it := range items {
		total += it.size
	}
	for _, p := range refs.Tus {
		total += p.Offset
	}
	report := func() {
		if o.Bytes != nil {
			o.Bytes(done, total)
		}
	}
	report()
	// A few copies at once: a bucket's requests wait mostly on the network.
	var (
		mu   sync.Mutex
		put  int64
		errs []error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		cancel()
	}
	advance := func(n int64) {
		mu.Lock()
		done += n
		report()
		mu.Unlock()
	}
	next := make(chan item)
	var wg sync.WaitGroup
	for range blobWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range next {
				var held bool
				if it.archive {
					held = o.Archive.Exists(it.hash)
				} else {
					held = o.Objects.Exists(ctx, it.hash)
				}
				if held {
					mu.Lock()
					res.Present++
					mu.Unlock()
					advance(it.size)
					continue
				}
				n, err := copyOne(ctx, o, it, advance)
				switch {
				case errors.Is(err, fs.ErrNotExist) && !it.required:
					continue
				case errors.Is(err, fs.ErrNotExist):
					fail(fmt.Errorf("copy-data: blob %s is referred to by the database but missing from %s (if its server deleted it since the snapshot, run copy-data again: a new snapshot no longer refers to it)", it.hash, o.From))
					continue
				case err != nil:
					fail(err)
					continue
				}
				mu.Lock()
				res.Bytes += n
				put++
				stop := o.StopAfterBlobs > 0 && put >= o.StopAfterBlobs
				mu.Unlock()
				if stop {
					fail(ErrStopped)
				}
			}
		}()
	}
	for _, it := range items {
		if it.archive {
			res.Archived++
		} else {
			res.Blobs++
		}
		select {
		case next <- it:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		// The first failure; the others are mostly the cancellation it caused.
		return nil, errs[0]
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parts := map[string]string{}
	for _, p := range refs.Tus {
		part, ok, err := copyUpload(ctx, o, p)
		if err != nil {
			return nil, err
		}
		if ok {
			res.Uploads++
			res.Bytes += p.Offset
		}
		if part != "" {
			parts[p.ID] = part
		}
		done += p.Offset
		report()
	}
	return parts, nil
}

// copyOne streams one object or archive copy into the target, checking its
// content's hash as it goes: a mismatch fails the Put, so nothing of it is
// stored.
func copyOne(ctx context.Context, o Options, it item, advance func(int64)) (int64, error) {
	f, err := os.Open(it.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	counted := &countReader{ctx: ctx, r: f, advance: advance}
	var content io.Reader = counted
	if it.archive {
		dec, err := zstd.NewReader(counted, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return 0, fmt.Errorf("copy-data: archive copy %s: %w", it.hash, err)
		}
		defer dec.Close()
		content = dec
	}
	v := &verifying{r: content, h: sha256.New(), want: it.hash, where: it.path}
	if it.archive {
		err = o.Archive.Put(it.hash, v)
	} else {
		var obj blob.Object
		obj, err = o.Objects.Put(ctx, v, 0)
		if err == nil && obj.Hash != it.hash {
			err = fmt.Errorf("%w: blob %s (%s) holds content %s", ErrDamaged, it.hash, it.path, obj.Hash)
		}
	}
	if v.err != nil {
		return counted.n, v.err
	}
	if err != nil {
		return counted.n, fmt.Errorf("copy-data: blob %s: %w", it.hash, err)
	}
	return counted.n, nil
}

// verifying passes r on and, at its end, fails unless its bytes hash to want.
type verifying struct {
	r     io.Reader
	h     hash.Hash
	want  string
	where string
	err   error
}

func (v *verifying) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			v.err = fmt.Errorf("copy-data: %w: blob %s (%s) holds content %s; nothing of it was copied", ErrDamaged, v.want, v.where, got)
			return n, v.err
		}
	} else if err != nil {
		v.err = fmt.Errorf("copy-data: read blob %s (%s): %w", v.want, v.where, err)
		return n, v.err
	}
	return n, err
}

// countReader reports what it reads and stops when ctx ends.
type countReader struct {
	ctx     context.Context
	r       io.Reader
	advance func(int64)
	n       int64
}

func (c *countReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if n > 0 && c.advance != nil {
		c.advance(int64(n))
	}
	return n, err
}

// copyUpload copies the received bytes of a resumable upload in progress,
// as far as the snapshot recorded them: into the bucket as the upload's first
// part (o.Parts; part names it), else into the target's tus directory, where
// a server finds the bytes of an upload with no parts. It reports false
// (copying nothing) when the upload finished meanwhile or its bytes do not
// match the recorded hash state (the client then starts it again).
func copyUpload(ctx context.Context, o Options, p sqldb.TusPart) (part string, ok bool, err error) {
	if !reUploadID.MatchString(p.ID) || p.Offset <= 0 {
		return "", false, nil
	}
	// Copied anew on every run: the upload may have received more since.
	dst := filepath.Join(o.Tus, p.ID)
	f, err := os.Open(filepath.Join(o.From, "tus", p.ID))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("copy-data: upload %s: %w", p.ID, err)
	}
	defer f.Close()
	want := sha256.New()
	if err := want.(encoding.BinaryUnmarshaler).UnmarshalBinary(p.HashState); err != nil {
		return "", false, nil
	}
	got := sha256.New()
	if _, err := io.Copy(got, io.NewSectionReader(f, 0, p.Offset)); err != nil {
		return "", false, fmt.Errorf("copy-data: upload %s: %w", p.ID, err)
	}
	if hex.EncodeToString(got.Sum(nil)) != hex.EncodeToString(want.Sum(nil)) {
		o.Log.Warn("copy-data: resumable upload left out: its bytes do not match its recorded hash", "upload", p.ID)
		return "", false, nil
	}
	src := &countReader{ctx: ctx, r: io.NewSectionReader(f, 0, p.Offset)}
	if o.Parts != nil {
		part, n, _, err := o.Parts.Append(ctx, p.ID, 0, nil, sha256.New(), src, p.Offset)
		if err != nil {
			o.Log.Warn("copy-data: resumable upload left out: its bytes could not be stored in the bucket", "upload", p.ID, "err", err)
			return "", false, nil
		}
		if n != p.Offset {
			return "", false, fmt.Errorf("copy-data: upload %s: %d bytes stored of %d", p.ID, n, p.Offset)
		}
		return part, true, nil
	}
	if err := os.MkdirAll(o.Tus, 0o700); err != nil {
		return "", false, fmt.Errorf("copy-data: %w", err)
	}
	tmp, err := os.CreateTemp(o.Tus, "."+p.ID+".copy-*")
	if err != nil {
		return "", false, fmt.Errorf("copy-data: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		return "", false, fmt.Errorf("copy-data: upload %s: %w", p.ID, err)
	}
	return "", true, nil
}
