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
	"regexp"

	"github.com/tus/tusd/v2/pkg/handler"

	"atrium/app"
	"atrium/app/drive"
)

// store is tusd's data store: rows in the drive service, bytes in parts.
type store struct {
	svc   *drive.Uploads
	parts Parts
	log   *slog.Logger
}

var (
	_ handler.DataStore               = (*store)(nil)
	_ handler.TerminaterDataStore     = (*store)(nil)
	_ handler.LengthDeferrerDataStore = (*store)(nil)
)

var validID = regexp.MustCompile(`^[0-9A-Za-z-]{1,100}$`)

// remove frees the bytes of upload id.
func (s *store) remove(ctx context.Context, id string) error {
	if !validID.MatchString(id) {
		return nil
	}
	return s.parts.Remove(ctx, id)
}

// removeStrays frees the bytes of uploads that no longer exist (their user
// was deleted, the server stopped between dropping a row and its bytes, a
// PATCH stored its part as its upload went).
func (s *store) removeStrays(ctx context.Context) (int, error) {
	return s.parts.RemoveStrays(ctx, s.svc.TusUploadsKnown)
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
		// needs a data file (smallChunk); Append creates one at offset 0
		// when it does.
		up.headers()
		return up, nil
	}
	if err := s.parts.Create(ctx, u.ID); err != nil {
		if _, terr := s.svc.TerminateTusUpload(context.WithoutCancel(ctx), rq.p, u.ID); terr != nil {
			s.log.ErrorContext(ctx, "drop upload without room for its bytes", "upload", u.ID, "err", terr)
		}
		return nil, rq.fail(err)
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

// WriteChunk appends src at offset: the bytes go to the upload's parts and
// through the SHA-256 restored from the saved state; after the body ends (or
// breaks off) they are made durable (a data file fsynced, an object stored)
// and the new offset saved with the hash state and the new part, so the
// recorded offset never runs ahead of durable bytes. The offset is saved by a
// compare-and-set (drive.Uploads.TusProgress): when another request, on any
// node, recorded bytes at this offset meanwhile, this one counts for nothing
// and is refused with conflict (409). The quota is checked before (known
// length) or as the bytes arrive (deferred length); a small upload's whole
// content in one request, by the transaction that completes it.
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
	// The bytes that arrived are stored even when the client went away
	// meanwhile.
	keep := context.WithoutCancel(ctx)
	part, n, over, err := up.s.parts.Append(keep, u.ID, offset, u.Parts, h, src, limit)
	if err != nil {
		return 0, rq.fail(err)
	}
	if n > 0 {
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return 0, rq.fail(fmt.Errorf("save hash state: %w", err))
		}
		nu, err := up.s.svc.TusProgress(keep, rq.p, u.ID, offset, offset+n, state, part)
		if err != nil {
			if part != "" {
				// Not counted (another request's bytes were, or the upload
				// went): the part is garbage; the sweep takes what this misses.
				if rerr := up.s.parts.Discard(keep, u.ID, part); rerr != nil {
					up.s.log.WarnContext(ctx, "tus: free a part not counted", "upload", u.ID, "part", part, "err", rerr)
				}
			}
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

// finish moves the upload's bytes into the blob store under the hash
// computed while they arrived (Parts.Store: a data file renamed, or a
// bucket's parts streamed into one object, checked against that hash), and
// lets the service commit them: a new file, or the conflict state when the
// name is taken. The parts left after the commit are freed then; when the
// process stops in between, the upload's expiry frees them.
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
	store := func() error { return up.s.parts.Store(ctx, u.ID, u.Parts, sum, u.Length) }
	// A small content goes into the database with the file's commit (no move
	// into the blob store, no directory to sync); the bytes it was read from
	// are then freed. When the process stops in between, the upload's expiry
	// removes them. A content that came whole in this request's memory had
	// no data file (NewUpload makes none for a small upload); one that an
	// earlier, broken attempt left behind also goes with the expiry.
	small := up.small
	free := len(u.Parts) > 0 // parts of a bucket: freed once committed
	switch {
	case small != nil:
		free = false
	case !up.s.svc.SmallContent(u.Length):
	case u.Length == 0:
		small, free = []byte{}, false // completed at its creation: no data file
	default:
		small, err = up.s.parts.Read(ctx, u.ID, u.Parts, u.Length)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			small = nil // moved into the blob store by an earlier attempt: Store finds it
		case err != nil:
			return rq.fail(err)
		default:
			free = true
		}
	}
	if small != nil {
		s := sha256.Sum256(small)
		sum = hex.EncodeToString(s[:])
	}
	nu, err := up.s.svc.CompleteTusUpload(ctx, rq.p, u.ID, sum, u.Length, small, store)
	if err != nil {
		return rq.fail(err)
	}
	if free {
		if err := up.s.remove(ctx, u.ID); err != nil {
			up.s.log.Warn("tus: free the bytes of a completed upload", "upload", u.ID, "err", err)
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
	if err := up.s.remove(ctx, up.u.ID); err != nil {
		return up.rq.fail(fmt.Errorf("free the bytes of upload %s: %w", up.u.ID, err))
	}
	return nil
}
