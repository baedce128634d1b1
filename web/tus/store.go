package tus

import (
	"bytes"
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
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/tus/tusd/v2/pkg/handler"

	"atrium/app"
	"atrium/app/drive"
	"atrium/diskio"
)

// store is tusd's data store: rows in the drive service, bytes in dir/<id>.
type store struct {
	svc   *drive.Service
	blobs Blobs
	dir   string
	log   *slog.Logger
}

var (
	_ handler.DataStore               = (*store)(nil)
	_ handler.TerminaterDataStore     = (*store)(nil)
	_ handler.LengthDeferrerDataStore = (*store)(nil)
)

var validID = regexp.MustCompile(`^[0-9A-Za-z-]{1,100}$`)

func (s *store) path(id string) string { return filepath.Join(s.dir, id) }

// holds reports whether the blob store has the object hash of size bytes.
func (s *store) holds(hash string, size int64) bool {
	n, err := s.blobs.Stat(hash)
	return err == nil && n == size
}

// remove frees the partial bytes of upload id.
func (s *store) remove(id string) error {
	if !validID.MatchString(id) {
		return nil
	}
	if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeStrays frees the data files of uploads that no longer exist. A data
// file is only ever made after its row, so one without a row (looked up after
// the directory was read) is left over.
func (s *store) removeStrays(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(s.dir)
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
	known, err := s.svc.TusUploadsKnown(ctx, ids)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if known[id] {
			continue
		}
		if err := s.remove(id); err != nil {
			return n, fmt.Errorf("free the bytes of gone upload %s: %w", id, err)
		}
		n++
	}
	return n, nil
}

// NewUpload creates the upload row (the service checks the caller, the folder,
// the name and the quota) and its empty data file.
func (s *store) NewUpload(ctx context.Context, info handler.FileInfo) (handler.Upload, error) {
	rq := requestFrom(ctx)
	meta := info.MetaData
	name, mimeType := meta["filename"], meta["filetype"]
	if name == "" {
		name = meta["name"] // Uppy sends both
	}
	if mimeType == "" {
		mimeType = meta["type"]
	}
	u, err := s.svc.CreateTusUpload(ctx, rq.p, drive.TusCreate{Name: name, MimeType: mimeType, ParentID: meta["parent_id"],
		Length: info.Size, Deferred: info.SizeIsDeferred, Content: rq.whole})
	if err != nil {
		return nil, rq.fail(err)
	}
	up := &upload{s: s, rq: rq, u: u, whole: rq.whole != nil}
	if up.whole {
		// Created complete with the content its creation carried: tusd's
		// write and finish that follow have nothing to do.
		up.headers()
		return up, nil
	}
	if !u.LengthDeferred && s.svc.SmallContent(u.Length) {
		// A small upload usually comes whole in its first PATCH and never
		// needs a data file (smallChunk); WriteChunk creates one at offset 0
		// when it does.
		up.headers()
		return up, nil
	}
	f, err := os.OpenFile(s.path(u.ID), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		if _, terr := s.svc.TerminateTusUpload(context.WithoutCancel(ctx), rq.p, u.ID); terr != nil {
			s.log.ErrorContext(ctx, "drop upload without data file", "upload", u.ID, "err", terr)
		}
		return nil, rq.fail(fmt.Errorf("create upload data file: %w", err))
	}
	up.headers()
	return up, nil
}

// GetUpload loads one of the caller's uploads; another user's is not found. An
// upload whose last bytes were stored but not yet committed (the server
// stopped in between) is completed here.
func (s *store) GetUpload(ctx context.Context, id string) (handler.Upload, error) {
	rq := requestFrom(ctx)
	if !validID.MatchString(id) {
		return nil, rq.fail(app.Errorf(app.ENotFound, "No such upload."))
	}
	u, err := s.svc.TusUpload(ctx, rq.p, id)
	if err != nil {
		return nil, rq.fail(err)
	}
	up := &upload{s: s, rq: rq, u: u}
	if u.Status == drive.TusUploading && u.Complete() && rq.p.Require(app.ScopeDriveWrite) == nil {
		if err := up.finish(ctx); err != nil {
			return nil, err
		}
	}
	up.headers()
	return up, nil
}

func (s *store) AsTerminatableUpload(u handler.Upload) handler.TerminatableUpload {
	return u.(*upload)
}

func (s *store) AsLengthDeclarableUpload(u handler.Upload) handler.LengthDeclarableUpload {
	return u.(*upload)
}

// upload is one upload within one request.
type upload struct {
	s  *store
	rq *request
	u  drive.TusUpload
	// small is the whole content of a small upload that came in one request
	// (smallChunk): held here, not in the data file, until finish commits it.
	small []byte
	// whole: the upload was created complete (takeWhole), in this request.
	whole bool
}

// headers adds the upload's expiry and, once complete, its state and file.
func (up *upload) headers() {
	h := up.rq.header
	h.Set("Upload-Expires", up.u.ExpiresAt.UTC().Format(http.TimeFormat))
	if up.u.Status != drive.TusUploading {
		h.Set(HeaderStatus, up.u.Status)
	}
	if up.u.FileID != "" {
		h.Set(HeaderFileID, up.u.FileID)
	}
}

func (up *upload) GetInfo(context.Context) (handler.FileInfo, error) {
	u := up.u
	meta := handler.MetaData{"filename": u.Name, "filetype": u.MimeType}
	if u.ParentID != "" {
		meta["parent_id"] = u.ParentID
	}
	return handler.FileInfo{ID: u.ID, Size: u.Length, SizeIsDeferred: u.LengthDeferred, Offset: u.Offset, MetaData: meta}, nil
}

func (up *upload) GetReader(context.Context) (io.ReadCloser, error) { return nil, errNotServed }

// buffers recycle the copy buffers of WriteChunk.
var buffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// WriteChunk appends src at offset: the bytes go to the data file and through
// the SHA-256 restored from the saved state; after the body ends (or breaks
// off) the file is fsynced and the new offset saved with the hash state, so
// the recorded offset never runs ahead of durable bytes. The quota is checked
// before (known length) or as the bytes arrive (deferred length); a small
// upload's whole content in one request, by the transaction that completes it.
func (up *upload) WriteChunk(ctx context.Context, offset int64, src io.Reader) (int64, error) {
	rq, u := up.rq, up.u
	if up.whole {
		return 0, nil
	}
	if offset != u.Offset {
		return 0, rq.fail(fmt.Errorf("write upload %s at %d, recorded offset %d", u.ID, offset, u.Offset))
	}
	// A small upload's whole content in this request is checked against the
	// quota by the transaction that completes it (finish), which keeps the
	// upload, at offset 0, when the quota refuses it: no read of the usage
	// here, on a reader whose cache the last commit emptied.
	if offset == 0 && !u.LengthDeferred && up.s.svc.SmallContent(u.Length) {
		n, rest, err := up.smallChunk(src)
		if err != nil || up.small != nil { // the whole content (none for an empty file)
			return n, err
		}
		src = rest
	}
	room, err := up.s.svc.TusRoom(ctx, rq.p)
	if err != nil {
		return 0, rq.fail(err)
	}
	limit := room - offset // bytes this request may add
	if !u.LengthDeferred {
		if u.Length > room {
			return 0, rq.fail(drive.QuotaError(room))
		}
		limit = u.Length - offset
	}
	h, err := restoreHash(u)
	if err != nil {
		return 0, rq.fail(err)
	}
	flag := os.O_WRONLY
	if offset == 0 {
		// The server may have stopped between the upload's row and its data
		// file: nothing was written yet, so a missing file is an empty one.
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(up.s.path(u.ID), flag, 0o600)
	if err != nil {
		return 0, rq.fail(fmt.Errorf("open upload data file: %w", err))
	}
	n, over, werr := appendAt(f, offset, h, src, limit)
	if n > 0 && werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return 0, rq.fail(fmt.Errorf("write upload %s: %w", u.ID, werr))
	}
	if n > 0 {
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return 0, rq.fail(fmt.Errorf("save hash state: %w", err))
		}
		// Record what is on disk even when the client went away meanwhile.
		nu, err := up.s.svc.TusProgress(context.WithoutCancel(ctx), rq.p, u.ID, offset, offset+n, state, "")
		if err != nil {
			return 0, rq.fail(err)
		}
		up.u = nu
		up.headers()
	}
	if over {
		return n, rq.fail(drive.QuotaError(room))
	}
	return n, nil
}

// smallChunk reads the first chunk of a small upload (a known length the
// service calls a small content). When it is the whole content, it is kept in memory
// for finish, which commits it with the file in one transaction: no data
// file, no fsync and no progress of its own, and the recorded offset stays 0
// until that commit (a PATCH that fails before it has stored nothing, and the
// client sends the bytes again). Otherwise (n == 0) the bytes read are
// returned in front of the rest of src, for the data file.
func (up *upload) smallChunk(src io.Reader) (n int64, rest io.Reader, err error) {
	data, err := io.ReadAll(io.LimitReader(src, up.u.Length+1))
	if err != nil && len(data) == 0 {
		return 0, nil, up.rq.fail(fmt.Errorf("read upload %s: %w", up.u.ID, err))
	}
	if err == nil && int64(len(data)) == up.u.Length {
		up.small = data
		return int64(len(data)), nil, nil
	}
	// Short (the client sends it in pieces, or went away) or too long: the
	// data file takes what came, as for any upload.
	return 0, io.MultiReader(bytes.NewReader(data), src), nil
}

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

func restoreHash(u drive.TusUpload) (hash.Hash, error) {
	h := sha256.New()
	if u.Offset == 0 {
		return h, nil
	}
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(u.HashState); err != nil {
		return nil, fmt.Errorf("restore hash state of upload %s: %w", u.ID, err)
	}
	return h, nil
}

// FinishUpload runs when the last byte is stored: see finish.
func (up *upload) FinishUpload(ctx context.Context) error { return up.finish(ctx) }

// finish moves the data file into the blob store under the hash computed while
// it was written, and lets the service commit it: a new file, or the conflict
// state when the name is taken.
func (up *upload) finish(ctx context.Context) error {
	if up.whole {
		return nil
	}
	rq, u := up.rq, up.u
	ctx = context.WithoutCancel(ctx)
	h, err := restoreHash(u)
	if err != nil {
		return rq.fail(err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	adopt := func() error {
		if err := up.s.blobs.Adopt(up.s.path(u.ID), sum, u.Length); err != nil {
			// The process stopped after Adopt moved the data file into the store
			// and before the commit: the bytes are already there.
			if !errors.Is(err, fs.ErrNotExist) || !up.s.holds(sum, u.Length) {
				return err
			}
		}
		return nil
	}
	// A small content goes into the database with the file's commit (no move
	// into the blob store, no directory to sync); the data file it was read
	// from is then freed. When the process stops in between, the upload's
	// expiry removes it. A content that came whole in this request's memory
	// had no data file (NewUpload makes none for a small upload); one that an
	// earlier, broken attempt left behind also goes with the expiry.
	small := up.small
	fromFile := false
	switch {
	case small != nil || !up.s.svc.SmallContent(u.Length):
	case u.Length == 0:
		small = []byte{} // completed at its creation: no data file
	default:
		small, err = os.ReadFile(up.s.path(u.ID))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			small = nil // moved into the blob store by an earlier attempt: adopt finds it
		case err != nil:
			return rq.fail(fmt.Errorf("read upload data file: %w", err))
		default:
			fromFile = true
		}
	}
	if small != nil {
		s := sha256.Sum256(small)
		sum = hex.EncodeToString(s[:])
	}
	nu, err := up.s.svc.CompleteTusUpload(ctx, rq.p, u.ID, sum, u.Length, small, adopt)
	if err != nil {
		return rq.fail(err)
	}
	if fromFile {
		if err := up.s.remove(u.ID); err != nil {
			up.s.log.Warn("tus: remove the data file of a small upload", "upload", u.ID, "err", err)
		}
	}
	up.u = nu
	up.headers()
	return nil
}

// DeclareLength sets a deferred length.
func (up *upload) DeclareLength(ctx context.Context, length int64) error {
	nu, err := up.s.svc.TusDeclareLength(ctx, up.rq.p, up.u.ID, length)
	if err != nil {
		return up.rq.fail(err)
	}
	up.u = nu
	return nil
}

// Terminate drops the upload and its bytes.
func (up *upload) Terminate(ctx context.Context) error {
	if _, err := up.s.svc.TerminateTusUpload(ctx, up.rq.p, up.u.ID); err != nil {
		return up.rq.fail(err)
	}
	if err := up.s.remove(up.u.ID); err != nil {
		return up.rq.fail(fmt.Errorf("remove upload data file: %w", err))
	}
	return nil
}
