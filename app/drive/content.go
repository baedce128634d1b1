package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"atrium/app"
)

// UploadRequest announces a three-step upload.
type UploadRequest struct {
	Name     string
	MimeType string
	Size     int64
	ParentID string
}

// UploadTicket answers an upload request (UploadResponse).
type UploadTicket struct {
	UploadURL string    `json:"upload_url"`
	Method    string    `json:"method"`
	Headers   Headers   `json:"headers"`
	ExpiresAt time.Time `json:"expires_at"`
	File      File      `json:"file"`
}

// Headers are the headers a presigned PUT must carry.
type Headers struct {
	ContentType string `json:"Content-Type"`
}

// Link is a presigned URL (the download result).
type Link struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

func (s *Service) owner(p *app.Principal, parent *File) string {
	if parent != nil {
		return parent.OwnerID
	}
	return p.UserID
}

// RequestUpload announces an upload: it returns a presigned PUT URL and the
// file the bytes will become — a pending new file, or the existing file of that
// name in the folder, which gains a version on confirmation.
func (s *Service) RequestUpload(ctx context.Context, p *app.Principal, req UploadRequest) (UploadTicket, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return UploadTicket{}, err
	}
	var v app.Validator
	name, err := CleanName("body.name", req.Name)
	if err != nil {
		v.Add("body.name", app.ErrorMessage(err), req.Name)
	}
	req.Name = name
	v.Check(req.Size >= 0, "body.size", "The size is a number of bytes, 0 or more.", req.Size)
	v.Check(req.Size <= s.opts.MaxUploadBytes, "body.size", fmt.Sprintf("One upload is at most %d bytes; use the resumable upload for larger files.", s.opts.MaxUploadBytes), req.Size)
	if err := v.Err(); err != nil {
		return UploadTicket{}, err
	}
	parent, err := s.parentFolder(ctx, p, req.ParentID, "body.parent_id")
	if err != nil {
		return UploadTicket{}, err
	}
	if err := s.quota(ctx, p, req.Size); err != nil {
		return UploadTicket{}, err
	}
	now := s.clock.Now()
	mimeType := DetectMime(req.Name, req.MimeType)
	owner := s.owner(p, parent)
	var ticket UploadTicket
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		f, err := s.store.LiveChild(ctx, owner, req.ParentID, NameKey(req.Name))
		switch {
		case err == nil && f.IsFolder:
			return nameConflict(req.Name)
		case err == nil: // a new version of f on confirmation
		case app.ErrorCode(err) == app.ENotFound:
			f = File{ID: app.NewID(), OrgID: p.OrgID, OwnerID: owner, ParentID: strPtr(req.ParentID), Name: req.Name,
				MimeType: mimeType, MimeGroup: MimeGroup(mimeType), SizeBytes: req.Size, Status: StatusPending,
				Metadata: Metadata{Tags: []string{}, Custom: map[string]string{}}, CreatedAt: now, UpdatedAt: now}
			if err := s.change(ctx, &f); err != nil {
				return err
			}
			if err := s.store.CreateFile(ctx, f); err != nil {
				return err
			}
		default:
			return err
		}
		u := Upload{ID: app.NewID() + app.RandomHex(8), FileID: f.ID, OrgID: p.OrgID, OwnerID: owner, CreatedBy: p.UserID,
			Name: req.Name, MimeType: mimeType, SizeBytes: req.Size, CreatedAt: now, ExpiresAt: now.Add(s.opts.UploadTTL)}
		if err := s.store.CreateUpload(ctx, u); err != nil {
			return err
		}
		f, err = s.store.File(ctx, f.ID)
		if err != nil {
			return err
		}
		f.Permission = PermOwner
		if f.OwnerID != p.UserID {
			f.Permission = PermEdit
		}
		ticket = UploadTicket{UploadURL: s.urls.Upload(u.ID, s.opts.UploadTTL), Method: "PUT", Headers: Headers{ContentType: mimeType},
			ExpiresAt: u.ExpiresAt, File: f}
		return nil
	})
	return ticket, err
}

// ReceiveUpload stores the bytes of a presigned PUT for upload ref: the declared
// size and content type must match, the bytes stream to the blob store, and the
// upload remembers their hash for confirmation. No principal: the URL's
// signature authorised the request. contentLength is -1 when unknown.
func (s *Service) ReceiveUpload(ctx context.Context, ref, contentType string, contentLength int64, r io.Reader) (string, error) {
	u, err := s.store.Upload(ctx, ref)
	if app.ErrorCode(err) == app.ENotFound {
		return "", app.Errorf(app.ENotFound, "There is no such upload; request a new upload URL.")
	}
	if err != nil {
		return "", err
	}
	now := s.clock.Now()
	if now.After(u.ExpiresAt) {
		return "", app.Errorf(app.ENotFound, "The upload has expired; request a new upload URL.")
	}
	if contentType != "" && !sameMediaType(contentType, u.MimeType) {
		return "", app.Invalid("header.Content-Type", fmt.Sprintf("The upload was announced as %s; send that Content-Type.", u.MimeType), contentType)
	}
	if contentLength >= 0 && contentLength != u.SizeBytes {
		return "", app.Invalid("header.Content-Length", fmt.Sprintf("The upload was announced as %d bytes.", u.SizeBytes), contentLength)
	}
	// The quota again, before any byte is kept: the organisation may have
	// filled up since the upload was announced.
	plan, err := s.store.LinkPlan(ctx, u.OrgID, u.CreatedBy)
	if app.ErrorCode(err) == app.ENotFound {
		return "", app.Errorf(app.ENotFound, "There is no such upload; request a new upload URL.")
	}
	if err != nil {
		return "", err
	}
	if err := s.quota(ctx, &app.Principal{OrgID: u.OrgID, QuotaBytes: plan.QuotaBytes}, u.SizeBytes); err != nil {
		return "", err
	}
	dg := newDigester(r)
	hash, n, err := s.blobs.Put(ctx, dg, u.SizeBytes)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return "", app.Invalid("body", fmt.Sprintf("The upload was announced as %d bytes; more arrived.", u.SizeBytes), nil)
		}
		return "", fmt.Errorf("store upload bytes: %w", err)
	}
	if n != u.SizeBytes {
		_ = s.orphan(ctx, hash)
		return "", app.Errorf(app.EBadRequest, "The upload is incomplete: %d of %d bytes arrived.", n, u.SizeBytes)
	}
	err = s.referenced(ctx, hash, func(ctx context.Context) error {
		if err := s.store.AddDigests(ctx, FormatHash(hash), dg.sums()); err != nil {
			return err
		}
		return s.store.SetUploadReceived(ctx, u.ID, FormatHash(hash), s.clock.Now())
	})
	return FormatHash(hash), err
}

// ErrTooLarge is what Blobs.Put returns (wrapped) for a stream over its limit.
var ErrTooLarge = errors.New("too large")

func sameMediaType(a, b string) bool {
	base := func(s string) string {
		m, _, _ := strings.Cut(s, ";")
		return strings.ToLower(strings.TrimSpace(m))
	}
	return base(a) == base(b)
}

// referenced runs fn, which commits a reference to blob hash, so that the
// collector cannot delete the blob in between: under refMu it checks the blob
// exists and runs fn in a transaction.
func (s *Service) referenced(ctx context.Context, hash string, fn func(ctx context.Context) error) error {
	return s.storeReferenced(ctx, hash, nil, fn)
}

// storeReferenced is referenced with put, which stores the blob, run under the
// same lock first: a put that finds the content already stored (and drops its
// own copy) cannot lose it to the collector before fn commits the reference.
// An error of put is returned as a *PutError.
func (s *Service) storeReferenced(ctx context.Context, hash string, put func() error, fn func(ctx context.Context) error) error {
	s.refMu.RLock()
	defer s.refMu.RUnlock()
	if put != nil {
		if err := put(); err != nil {
			return &PutError{Err: err}
		}
	}
	if !s.blobs.Exists(hash) {
		return fmt.Errorf("blob %s vanished before it was referenced", hash)
	}
	return s.writeTx(ctx, fn)
}

// writeTx runs fn, a change of the drive, in a transaction. Every check that
// guards the change (locks, quota, names) runs inside fn.
func (s *Service) writeTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if ctx.Value(inWriteKey{}) == nil {
		if h := s.beforeWrite.Load(); h != nil {
			(*h)()
		}
		ctx = context.WithValue(ctx, inWriteKey{}, true)
	}
	return s.store.InTx(ctx, fn)
}

// inWriteKey marks a context inside writeTx (a change made of changes runs
// the test hook once, before its one transaction).
type inWriteKey struct{}

// PutError is the failure of storing a blob's bytes, before anything was committed.
type PutError struct{ Err error }

func (e *PutError) Error() string { return "store blob: " + e.Err.Error() }
func (e *PutError) Unwrap() error { return e.Err }

// orphan records that blob hash may have lost its last reference.
func (s *Service) orphan(ctx context.Context, hash string) error {
	if hash == "" {
		return nil
	}
	return s.store.AddOrphan(ctx, FormatHash(blobName(hash)), s.clock.Now())
}

// Confirm completes a three-step upload: the bytes must have arrived; the file
// becomes active (or gains a version) and visible.
func (s *Service) Confirm(ctx context.Context, p *app.Principal, fileID string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	f, err := s.access(ctx, p, fileID, PermEdit)
	if app.ErrorCode(err) == app.ENotFound {
		f, err = s.sharedPending(ctx, p, fileID)
	}
	if err != nil {
		return File{}, err
	}
	u, err := s.store.LatestUpload(ctx, f.ID, p.UserID)
	if app.ErrorCode(err) == app.ENotFound {
		if f.Status != StatusPending {
			return f, app.Errorf(app.EConflict, "The file has no upload waiting for confirmation.")
		}
		return File{}, app.Errorf(app.EConflict, "No upload of yours is waiting for this file.")
	}
	if err != nil {
		return File{}, err
	}
	if u.ContentHash == "" {
		return File{}, app.Errorf(app.EConflict, "No bytes have arrived for this upload yet; PUT them to upload_url, then confirm.")
	}
	if err := s.checkWriteLock(ctx, p, f); err != nil {
		return File{}, err
	}
	var out File
	err = s.referenced(ctx, blobName(u.ContentHash), func(ctx context.Context) error {
		f, err := s.store.File(ctx, fileID)
		if err != nil {
			return err
		}
		res, err := s.commitContent(ctx, p, f, u.Name, u.MimeType, u.ContentHash, u.SizeBytes)
		if err != nil {
			return err
		}
		if err := s.store.DeleteUploads(ctx, []string{u.ID}); err != nil {
			return err
		}
		out = res
		return nil
	})
	if err != nil {
		return File{}, err
	}
	out.Permission = PermOwner
	if out.OwnerID != p.UserID {
		out.Permission = PermEdit
	}
	return out, nil
}

// commitContent makes content (hash, size) the head of target: a pending file
// becomes active with version 1 — or, when a live file of its name appeared
// meanwhile, that file gains the version and the pending row goes; an existing
// file gains a version. It runs inside a transaction and checks the quota.
func (s *Service) commitContent(ctx context.Context, p *app.Principal, target File, name, mimeType, hash string, size int64) (File, error) {
	return s.commitContentAt(ctx, p, target, name, mimeType, hash, size, time.Time{})
}

// commitContentAt is commitContent with the content's modification time as
// its writer reported it (zero: the time of the write).
//
// It is the one place content is committed, whatever the door: the locks
// (the file's, or for a new file its folder's), the quota and the name are
// checked here, in the transaction of the write, so that a lock taken or a
// name created after a door's early checks still holds.
func (s *Service) commitContentAt(ctx context.Context, p *app.Principal, target File, name, mimeType, hash string, size int64, modified time.Time) (File, error) {
	now := s.clock.Now()
	if target.Status == StatusPending {
		if target.ParentID != nil {
			if parent, err := s.store.File(ctx, *target.ParentID); err != nil || parent.TrashedAt != nil {
				return File{}, app.Errorf(app.EConflict, "The folder this upload was going to went to the trash or is gone; upload again.")
			}
		}
		if err := s.checkFolderLock(ctx, p, target.Parent()); err != nil {
			return File{}, err
		}
		other, err := s.store.LiveChild(ctx, target.OwnerID, target.Parent(), NameKey(target.Name))
		switch {
		case err == nil && other.IsFolder:
			return File{}, nameConflict(target.Name)
		case err == nil:
			// A file of the name appeared since the upload was announced: it
			// gains the version, under its own locks.
			if err := s.checkLock(ctx, p, other.ID); err != nil {
				return File{}, err
			}
			if err := s.quota(ctx, p, size); err != nil {
				return File{}, err
			}
			if err := s.store.DeleteFiles(ctx, []string{target.ID}); err != nil {
				return File{}, err
			}
			return s.addVersionAt(ctx, p, other, mimeType, hash, size, modified)
		case app.ErrorCode(err) != app.ENotFound:
			return File{}, err
		}
		if err := s.quota(ctx, p, size); err != nil {
			return File{}, err
		}
		target.Status = StatusActive
		target.MimeType, target.MimeGroup = mimeType, MimeGroup(mimeType)
		target.SizeBytes, target.StoredBytes, target.ContentHash, target.Version = size, size, hash, 1
		target.CreatedAt, target.UpdatedAt, target.ModifiedAt = now, now, modifiedOr(modified, now)
		if err := s.change(ctx, &target); err != nil {
			return File{}, err
		}
		if err := s.store.UpdateFile(ctx, target); err != nil {
			return File{}, err
		}
		if err := s.store.AddVersion(ctx, Version{ID: app.NewID(), FileID: target.ID, Version: 1, SizeBytes: size, ContentHash: hash,
			MimeType: mimeType, CreatedBy: p.UserID, CreatedAt: now}); err != nil {
			return File{}, err
		}
		if err := s.store.AddUsage(ctx, target.OrgID, target.OwnerID, target.MimeGroup, size, 1); err != nil {
			return File{}, err
		}
		if err := s.emit(ctx, EventFileCreated, target, map[string]any{"parent_id": target.ParentID, "size_bytes": size, "version": 1}); err != nil {
			return File{}, err
		}
		return s.store.File(ctx, target.ID)
	}
	if target.TrashedAt != nil {
		return File{}, app.Errorf(app.EConflict, "%q is in the trash; restore it to change its content.", target.Name)
	}
	if err := s.checkLock(ctx, p, target.ID); err != nil {
		return File{}, err
	}
	if err := s.quota(ctx, p, size); err != nil {
		return File{}, err
	}
	return s.addVersionAt(ctx, p, target, mimeType, hash, size, modified)
}

// modifiedOr is the modification time a write keeps: the writer's, else now.
func modifiedOr(modified, now time.Time) time.Time {
	if modified.IsZero() {
		return now
	}
	return modified.UTC().Truncate(time.Millisecond)
}

// addVersion makes (hash, size) the new head version of f; the caller checked
// the quota and runs the transaction.
func (s *Service) addVersion(ctx context.Context, p *app.Principal, f File, mimeType, hash string, size int64) (File, error) {
	return s.addVersionAt(ctx, p, f, mimeType, hash, size, time.Time{})
}

// addVersionAt is addVersion with the writer's modification time (zero: now).
func (s *Service) addVersionAt(ctx context.Context, p *app.Principal, f File, mimeType, hash string, size int64, modified time.Time) (File, error) {
	if f.IsFolder {
		return File{}, nameConflict(f.Name)
	}
	if isCold(f) {
		return File{}, archivedConflict(f)
	}
	now := s.clock.Now()
	oldGroup, oldStored := f.MimeGroup, f.StoredBytes
	f.Version++
	f.MimeType, f.MimeGroup = mimeType, MimeGroup(mimeType)
	f.SizeBytes, f.ContentHash = size, hash
	f.StoredBytes += size
	f.UpdatedAt, f.ModifiedAt = now, modifiedOr(modified, now)
	if err := s.store.AddVersion(ctx, Version{ID: app.NewID(), FileID: f.ID, Version: f.Version, SizeBytes: size, ContentHash: hash,
		MimeType: mimeType, CreatedBy: p.UserID, CreatedAt: now}); err != nil {
		return File{}, err
	}
	if err := s.moveUsage(ctx, f, oldGroup, oldStored, f.StoredBytes); err != nil {
		return File{}, err
	}
	pruned, err := s.pruneVersions(ctx, &f, s.opts.MaxVersions, time.Time{})
	if err != nil {
		return File{}, err
	}
	_ = pruned
	if err := s.change(ctx, &f); err != nil {
		return File{}, err
	}
	if err := s.store.UpdateFile(ctx, f); err != nil {
		return File{}, err
	}
	if err := s.emit(ctx, EventFileUpdated, f, map[string]any{"change": "content", "version": f.Version, "size_bytes": size}); err != nil {
		return File{}, err
	}
	return s.store.File(ctx, f.ID)
}

// moveUsage moves a file's stored bytes from (oldGroup, oldStored) to its
// current group and stored bytes in the counters.
func (s *Service) moveUsage(ctx context.Context, f File, oldGroup string, oldStored, newStored int64) error {
	if oldGroup == f.MimeGroup {
		return s.store.AddUsage(ctx, f.OrgID, f.OwnerID, f.MimeGroup, newStored-oldStored, 0)
	}
	if err := s.store.AddUsage(ctx, f.OrgID, f.OwnerID, oldGroup, -oldStored, -1); err != nil {
		return err
	}
	return s.store.AddUsage(ctx, f.OrgID, f.OwnerID, f.MimeGroup, newStored, 1)
}

// pruneVersions drops the oldest non-head versions of f beyond keep, and those
// created before cutoff (when not zero); it adjusts f.StoredBytes and the
// counters and returns how many went.
func (s *Service) pruneVersions(ctx context.Context, f *File, keep int, cutoff time.Time) (int, error) {
	vs, err := s.store.Versions(ctx, f.ID) // newest first
	if err != nil {
		return 0, err
	}
	var drop []string
	var freed int64
	for i, v := range vs {
		if v.Version == f.Version {
			continue
		}
		if i >= keep || (!cutoff.IsZero() && v.CreatedAt.Before(cutoff)) {
			drop = append(drop, v.ID)
			freed += v.SizeBytes
			if err := s.orphan(ctx, v.ContentHash); err != nil {
				return 0, err
			}
		}
	}
	if len(drop) == 0 {
		return 0, nil
	}
	if err := s.store.DeleteVersions(ctx, drop); err != nil {
		return 0, err
	}
	f.StoredBytes -= freed
	return len(drop), s.store.AddUsage(ctx, f.OrgID, f.OwnerID, f.MimeGroup, -freed, 0)
}

// PutRequest writes content by name (WebDAV PUT, resumable upload, shared-link edit).
type PutRequest struct {
	ParentID string
	Name     string
	MimeType string
	// Size is the declared length, -1 when unknown.
	Size int64
	Body io.Reader
	// MaxBytes caps the body (0: the service's upload cap).
	MaxBytes int64
	// FileID, when set, is the file whose content is replaced (the name is then
	// not looked up).
	FileID string
	// ModifiedAt, when set, is the content's modification time as the writer
	// reports it (WebDAV X-OC-Mtime); zero: the time of the write.
	ModifiedAt time.Time

	// keepExisting: a live item of the name is left as it is (PutLocked).
	keepExisting bool
}

// Put stores the body and makes it the content of the named file in the folder:
// a new version when it exists, a new file otherwise. The quota is checked
// before the bytes are read (when the size is known) and before they are kept.
// It returns the file and whether it was created.
func (s *Service) Put(ctx context.Context, p *app.Principal, req PutRequest) (File, bool, error) {
	return s.put(ctx, p, req, nil)
}

// put is Put with then, when not nil, run in the transaction of the write
// with the file written; its error undoes the write.
func (s *Service) put(ctx context.Context, p *app.Principal, req PutRequest, then func(ctx context.Context, f File, created bool) error) (File, bool, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, false, err
	}
	if !req.ModifiedAt.IsZero() {
		if err := CheckModifiedTime("modified_at", req.ModifiedAt); err != nil {
			return File{}, false, err
		}
	}
	var target *File
	var parent *File
	if req.FileID != "" {
		f, err := s.access(ctx, p, req.FileID, PermEdit)
		if err != nil {
			return File{}, false, err
		}
		if f.IsFolder {
			return File{}, false, app.Errorf(app.EConflict, "%q is a folder.", f.Name)
		}
		target, req.Name, req.ParentID = &f, f.Name, f.Parent()
	} else {
		var err error
		if req.Name, err = CleanName("name", req.Name); err != nil {
			return File{}, false, err
		}
		if parent, err = s.parentFolder(ctx, p, req.ParentID, "parent_id"); err != nil {
			return File{}, false, err
		}
	}
	if !req.keepExisting {
		if err := s.checkPutLock(ctx, p, target, parent, req.ParentID, req.Name); err != nil {
			return File{}, false, err
		}
	}
	if req.Size >= 0 {
		if err := s.quota(ctx, p, req.Size); err != nil {
			return File{}, false, err
		}
	}
	limit := req.MaxBytes
	if limit <= 0 {
		limit = s.opts.MaxUploadBytes
	}
	if req.Size > limit {
		return File{}, false, app.Errorf(app.EPayloadTooLarge, "One upload is at most %d bytes.", limit)
	}
	dg := newDigester(req.Body)
	hash, n, err := s.blobs.Put(ctx, dg, limit)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return File{}, false, app.Errorf(app.EPayloadTooLarge, "One upload is at most %d bytes.", limit)
		}
		return File{}, false, fmt.Errorf("store file bytes: %w", err)
	}
	if req.Size >= 0 && n != req.Size {
		_ = s.orphan(ctx, hash)
		return File{}, false, app.Errorf(app.EBadRequest, "The body is incomplete: %d of %d bytes arrived.", n, req.Size)
	}
	mimeType := DetectMime(req.Name, req.MimeType)
	owner := s.owner(p, parent)
	var out File
	created := false
	write := func(ctx context.Context) error {
		if err := s.store.AddDigests(ctx, FormatHash(hash), dg.sums()); err != nil {
			return err
		}
		if target != nil {
			f, err := s.store.File(ctx, target.ID)
			if err != nil {
				return err
			}
			if req.MimeType == "" {
				mimeType = f.MimeType
			}
			out, err = s.commitContentAt(ctx, p, f, f.Name, mimeType, FormatHash(hash), n, req.ModifiedAt)
			return err
		}
		f, err := s.store.LiveChild(ctx, owner, req.ParentID, NameKey(req.Name))
		if err == nil && req.keepExisting {
			out = f
			return s.orphan(ctx, hash)
		}
		if err == nil {
			out, err = s.commitContentAt(ctx, p, f, f.Name, mimeType, FormatHash(hash), n, req.ModifiedAt)
			return err
		}
		if app.ErrorCode(err) != app.ENotFound {
			return err
		}
		now := s.clock.Now()
		f = File{ID: app.NewID(), OrgID: p.OrgID, OwnerID: owner, ParentID: strPtr(req.ParentID), Name: req.Name,
			MimeType: mimeType, MimeGroup: MimeGroup(mimeType), Status: StatusPending,
			Metadata: Metadata{Tags: []string{}, Custom: map[string]string{}}, CreatedAt: now, UpdatedAt: now}
		if err := s.change(ctx, &f); err != nil {
			return err
		}
		if err := s.store.CreateFile(ctx, f); err != nil {
			return err
		}
		created = true
		out, err = s.commitContentAt(ctx, p, f, f.Name, mimeType, FormatHash(hash), n, req.ModifiedAt)
		return err
	}
	err = s.referenced(ctx, hash, func(ctx context.Context) error {
		created = false
		if err := write(ctx); err != nil {
			return err
		}
		if then != nil {
			return then(ctx, out, created)
		}
		return nil
	})
	if err != nil {
		if app.ErrorCode(err) != "" {
			_ = s.orphan(context.WithoutCancel(ctx), hash)
		}
		return File{}, false, err
	}
	out.Permission = PermOwner
	if out.OwnerID != p.UserID {
		out.Permission = PermEdit
	}
	return out, created, nil
}

// Open returns the content of a file the caller may read, for doors that stream
// it themselves (WebDAV GET). An archived file starts its restore and answers
// unavailable with the seconds to wait: the client's retry reads it.
func (s *Service) Open(ctx context.Context, p *app.Principal, id string) (File, io.ReadSeekCloser, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return File{}, nil, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return File{}, nil, err
	}
	if !f.IsFolder && isCold(f) {
		if f, err = s.restoreForRead(ctx, f); err != nil {
			return File{}, nil, err
		}
	}
	return s.openFile(ctx, f)
}

// restoreForRead starts the restore of an archived file read by a door that
// cannot follow a restore: unavailable with a Retry-After while it runs, the
// file once it is active again.
func (s *Service) restoreForRead(ctx context.Context, f File) (File, error) {
	info, err := s.startRestore(ctx, f)
	if err != nil {
		return File{}, err
	}
	if info != nil {
		return File{}, &app.Error{Code: app.EUnavailable, RetryAfter: info.RetryAfterSeconds,
			Message: fmt.Sprintf("%q is being restored from the archive; try again in %d s.", f.Name, info.RetryAfterSeconds)}
	}
	return s.store.File(ctx, f.ID)
}

// openFile opens the content of f and records the access (the archive tier
// moves files nobody reads).
func (s *Service) openFile(ctx context.Context, f File) (File, io.ReadSeekCloser, error) {
	if f.IsFolder {
		return File{}, nil, app.Errorf(app.EConflict, "%q is a folder; it has no content.", f.Name)
	}
	if isCold(f) {
		return File{}, nil, archivedConflict(f)
	}
	if f.Status != StatusActive {
		return File{}, nil, app.Errorf(app.EConflict, "The file is %s; its content is not available now.", f.Status)
	}
	rc, err := s.blobs.Open(f.Hash())
	if err != nil {
		return File{}, nil, fmt.Errorf("open blob of %s: %w", f.ID, err)
	}
	s.accessed(ctx, f)
	return f, rc, nil
}

// accessResolution is how precisely a file's last access is kept: a read
// within it of the last recorded one writes nothing (the archive tier counts
// in days; most reads then cost no write transaction).
const accessResolution = time.Hour

// accessed records a read of f's content. A failure is logged: the read
// itself went well.
func (s *Service) accessed(ctx context.Context, f File) {
	now := s.clock.Now()
	if f.IsFolder || (f.LastAccessAt != nil && now.Sub(*f.LastAccessAt) < accessResolution && !now.Before(*f.LastAccessAt)) {
		return
	}
	if err := s.store.TouchFile(ctx, f.ID, now); err != nil && ctx.Err() == nil {
		s.log.Warn("could not record the access of a file", "file_id", f.ID, "err", err)
	}
}

// Download returns a presigned URL of the file's content.
func (s *Service) Download(ctx context.Context, p *app.Principal, id string) (Link, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return Link{}, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return Link{}, err
	}
	return s.downloadLink(f, false)
}

func (s *Service) downloadLink(f File, inline bool) (Link, error) {
	if f.IsFolder {
		return Link{}, app.Errorf(app.EConflict, "%q is a folder; download it as a ZIP archive: download.zip instead of download.", f.Name)
	}
	if f.Status == StatusPending {
		return Link{}, app.Errorf(app.EConflict, "The upload of %q is not confirmed yet.", f.Name)
	}
	if isCold(f) {
		return Link{}, archivedConflict(f)
	}
	now := s.clock.Now()
	return Link{URL: s.urls.Download(f.Hash(), f.Name, f.MimeType, inline && InlineSafe(f.MimeType), s.opts.URLTTL),
		ExpiresAt: now.Add(s.opts.URLTTL)}, nil
}
