package drive

// The one content-write path. Every door that writes a file's content
// (REST confirm, WebDAV PUT, TUS complete, WOPI PutFile, link write, version
// restore, copy and move onto an existing item) ends in writeTx: lock, quota and
// name checks run inside its transaction, and commitContent/addVersion make the
// new head, record the version, move usage, emit the event and advance the
// sync feed together. PutLocked creates-and-locks in one transaction. No
// content write records an audit entry (see the package doc): the version it
// makes names its author.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"atrium/app"
)

// referenced runs fn, which commits a reference to blob hash, so that the
// collector cannot delete the blob in between: under refMu it checks the blob
// exists and runs fn in a transaction.
func (s *Service) referenced(ctx context.Context, hash string, fn func(ctx context.Context) error) error {
	return s.storeReferenced(ctx, content{hash: hash}, nil, fn)
}

// storeReferenced is referenced with put, which stores the blob, run under the
// same lock first: a put that finds the content already stored (and drops its
// own copy) cannot lose it to the collector before fn commits the reference.
// An error of put is returned as a *PutError. A small content (c.small) is
// stored in fn's transaction, before fn runs; the content's digests, when
// known (c.digests), are recorded there too, right after its bytes (the
// store may keep a small content's with them: DigestStore.AddDigests).
func (s *Service) storeReferenced(ctx context.Context, c content, put func() error, fn func(ctx context.Context) error) error {
	s.refMu.RLock()
	defer s.refMu.RUnlock()
	digested := func(ctx context.Context) error {
		if c.digests != nil {
			if err := s.store.AddDigests(ctx, FormatHash(c.hash), *c.digests); err != nil {
				return err
			}
		}
		return fn(ctx)
	}
	if c.small != nil {
		return s.writeTx(ctx, func(ctx context.Context) error {
			if err := s.blobs.PutSmall(ctx, c.hash, c.small); err != nil {
				return err
			}
			return digested(ctx)
		})
	}
	if put != nil {
		if err := put(); err != nil {
			return &PutError{Err: err}
		}
	}
	// Hold the blob for any node's collector before looking at it, and
	// drop the hold with the reference: refMu keeps this process's
	// collector out, the hold every other's (collectOne).
	hold, h := app.NewID(), FormatHash(blobName(c.hash))
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.LockBlob(ctx, h); err != nil {
			return err
		}
		return s.store.HoldBlob(ctx, hold, h, s.clock.Now().Add(blobHoldFor))
	})
	if err != nil {
		return err
	}
	if !s.blobs.Exists(ctx, c.hash) {
		_ = s.store.InTx(ctx, func(ctx context.Context) error { return s.store.ReleaseBlob(ctx, hold) })
		return fmt.Errorf("blob %s vanished before it was referenced", c.hash)
	}
	err = s.writeTx(ctx, func(ctx context.Context) error {
		if err := s.store.ReleaseBlob(ctx, hold); err != nil {
			return err
		}
		return digested(ctx)
	})
	if err != nil {
		// The reference did not commit: the hold goes (the blob is an
		// orphan, or another reference's).
		_ = s.store.InTx(context.WithoutCancel(ctx), func(ctx context.Context) error { return s.store.ReleaseBlob(ctx, hold) })
	}
	return err
}

// blobHoldFor is how long a write's hold on a blob lasts when its process
// dies before it commits or drops it (storeReferenced).
const blobHoldFor = 15 * time.Minute

// content is the bytes of a write as received: already an object of the blob
// store, or small (at most Options.SmallBytes) and held in memory until the
// transaction that commits its first reference stores it (storeReferenced).
type content struct {
	hash  string // hex SHA-256
	size  int64
	small []byte // not nil: the whole content, not stored yet
	// digests are the content's SHA-1 and MD5 when the door computed them
	// as the bytes came (nil: maintenance computes them later).
	digests *Digests
}

// withDigests returns c with its digests d.
func (c content) withDigests(d Digests) content {
	c.digests = &d
	return c
}

// SmallContent reports whether a content of size bytes is small: kept with
// the transaction that commits its reference (Options.SmallBytes) rather than
// as an object of the blob store. A door that holds a whole content asks it
// before handing the bytes over (CompleteTusUpload). Errors: none of its own.
func (s *Service) SmallContent(size int64) bool {
	return s.opts.SmallBytes > 0 && size >= 0 && size <= s.opts.SmallBytes
}

// receive reads r to its end, at most limit bytes (limit > 0): a content of
// at most Options.SmallBytes is returned in memory, a larger one is streamed
// into the blob store. A content over limit is ErrTooLarge. size is the
// length the writer announced (-1: none); a larger one goes to the blob
// store without a look.
func (s *Service) receive(ctx context.Context, r io.Reader, limit, size int64) (content, error) {
	if s.SmallContent(max(size, 0)) { // unknown (-1): may be small
		small := s.opts.SmallBytes
		if limit > 0 {
			small = min(small, limit)
		}
		data, err := io.ReadAll(io.LimitReader(r, small+1))
		if err != nil {
			return content{}, err
		}
		if int64(len(data)) <= small {
			sum := sha256.Sum256(data)
			return content{hash: hex.EncodeToString(sum[:]), size: int64(len(data)), small: data}, nil
		}
		r = io.MultiReader(bytes.NewReader(data), r)
	}
	hash, n, err := s.blobs.Put(ctx, r, limit)
	if err != nil {
		return content{}, err
	}
	return content{hash: hash, size: n}, nil
}

// drop gives up content c before a reference to it committed: a stored
// object becomes an orphan for the collector; a small one was never stored.
func (s *Service) drop(ctx context.Context, c content) {
	if c.small == nil {
		_ = s.orphan(ctx, c.hash)
	}
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
// name created after a door's early checks still holds. A door that creates
// the file in the same transaction goes through createContent, which makes
// the same checks.
func (s *Service) commitContentAt(ctx context.Context, p *app.Principal, target File, name, mimeType, hash string, size int64, modified time.Time) (File, error) {
	if target.Status == StatusPending {
		if _, err := s.checkNewFile(ctx, p, target); err != nil {
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
		return s.activate(ctx, p, target, mimeType, hash, size, modified, false)
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

// createContent creates f, a new file the caller built in this transaction
// after finding no live item of its name in the folder, with content (hash,
// size) as version 1: the checks of a pending file's first content, and one
// insert of the active row.
//
// folder, when not nil, is f's folder as this transaction read and checked it
// already (parentFolder): it is not read again, only its locks are checked.
func (s *Service) createContent(ctx context.Context, p *app.Principal, f File, folder *File, mimeType, hash string, size int64, modified time.Time) (File, error) {
	var parent File
	var err error
	if folder != nil && f.ParentID != nil && folder.ID == *f.ParentID {
		parent, err = *folder, s.checkFolderLock(ctx, p, f.Parent())
	} else {
		parent, err = s.checkNewFile(ctx, p, f)
	}
	if err != nil {
		return File{}, err
	}
	if parent.OwnerID == f.OwnerID {
		f.OwnerName = parent.OwnerName // the same join, in the same transaction
	}
	return s.activate(ctx, p, f, mimeType, hash, size, modified, true)
}

// checkNewFile checks, in the write's transaction, that a new file may
// appear in target's folder: the folder is there and not in the trash, and
// no lock on it refuses p. It returns the folder (a zero File at the top of a
// drive).
func (s *Service) checkNewFile(ctx context.Context, p *app.Principal, target File) (File, error) {
	var parent File
	if target.ParentID != nil {
		var err error
		if parent, err = s.store.File(ctx, *target.ParentID); err != nil || parent.TrashedAt != nil {
			return File{}, app.Errorf(app.EConflict, "The folder this upload was going to went to the trash or is gone; upload again.")
		}
	}
	return parent, s.checkFolderLock(ctx, p, target.Parent())
}

// activate makes content (hash, size) version 1 of target, a new file: the
// quota, the active row (inserted when fresh, else the pending row updated),
// the version, the usage counters and drive.file.created.
func (s *Service) activate(ctx context.Context, p *app.Principal, target File, mimeType, hash string, size int64, modified time.Time, fresh bool) (File, error) {
	if err := s.quota(ctx, p, size); err != nil {
		return File{}, err
	}
	now := s.clock.Now()
	target.Status = StatusActive
	target.MimeType, target.MimeGroup = mimeType, MimeGroup(mimeType)
	target.SizeBytes, target.StoredBytes, target.ContentHash, target.Version = size, size, hash, 1
	target.CreatedAt, target.UpdatedAt, target.ModifiedAt = now, now, modifiedOr(modified, now)
	if err := s.change(ctx, &target); err != nil {
		return File{}, err
	}
	write := s.store.UpdateFile
	if fresh {
		write = s.store.CreateFile
	}
	if err := write(ctx, target); err != nil {
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
	return s.written(ctx, target)
}

// written is f, just written (or, unchanged, just read) in the write's
// transaction, as a read of its row would return it: the write answers with
// it rather than read the row back (that read was a seventh of a small PUT's
// statement time on the database writer, which every write waits for). The
// store keeps times to the millisecond, reads an unset modification time as
// the last change's and never gives nil metadata; the owner's name is not a
// column, so f carries it from the row it was read from or from its folder,
// and where neither gave it the row is read.
func (s *Service) written(ctx context.Context, f File) (File, error) {
	if f.OwnerName == "" {
		return s.store.File(ctx, f.ID)
	}
	if f.ModifiedAt.IsZero() {
		f.ModifiedAt = f.UpdatedAt
	}
	f.CreatedAt, f.UpdatedAt, f.ModifiedAt = storedTime(f.CreatedAt), storedTime(f.UpdatedAt), storedTime(f.ModifiedAt)
	if f.Metadata.Tags == nil {
		f.Metadata.Tags = []string{}
	}
	if f.Metadata.Custom == nil {
		f.Metadata.Custom = map[string]string{}
	}
	f.Permission = ""
	return f, nil
}

// storedTime is t as the store keeps it: UTC, to the millisecond.
func storedTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

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
	return s.written(ctx, f)
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
	// Checksum, when set, is a digest the writer sent with the content
	// (WebDAV OC-Checksum): content whose own digest differs was changed on
	// the way and is refused, and nothing changes.
	Checksum *Checksum

	// Folder, when not nil, names the folder by its path of names below the
	// caller's own root (empty: the root) in place of ParentID. For a small
	// content it is walked in the write's transaction, on the writer's pages,
	// rather than by a read before it (a reader's first read after a commit
	// re-reads its pages); a larger one's folder is walked before its bytes
	// are read, and checked again in the transaction. A name missing on the
	// way, or naming a file, is a conflict. Ignored when FileID is set.
	Folder []string
	// Check, when set, is called with the live item of the name (nil when
	// there is none) in the write's transaction, before anything is written,
	// and also before the bytes are read when the content is not small; its
	// error refuses the write and changes nothing. A door's preconditions
	// (WebDAV If-Match, If-None-Match, no file over a folder) are decided
	// against the same state the write changes.
	Check func(existing *File) error

	// keepExisting: a live item of the name is left as it is (PutLocked).
	keepExisting bool
}

// Put stores the body and makes it the content of the named file in the folder:
// a new version when it exists, a new file otherwise. The quota is checked
// before the bytes are read (when the size is known) and before they are kept.
// It returns the file and whether it was created. An error of req.Check is
// returned as it is. Errors: insufficient_scope (no drive:write),
// no_bound_user, feature_not_in_plan, validation_failed (the name, a
// modification time out of range, a parent that is a file), not_found (no such
// file or parent folder, or not shared with the caller), forbidden (a file or
// folder shared for viewing), conflict (a folder at FileID or at the name, a
// file in the trash or archived, a folder gone meanwhile, a missing folder on
// req.Folder), locked (a lock the caller does not hold), quota_exceeded,
// payload_too_large (over MaxBytes), bad_request (an incomplete body, a
// checksum that does not match).
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
	// A body announced as small is read before the checks: its bytes cost
	// less than their reads on a reader (70-130 us each after a commit, which
	// empties the readers' page caches). A new file's folder is then read and
	// checked in the write's transaction, which reads it anyway.
	early := !s.SmallContent(req.Size)
	folderInTx := !early && req.FileID == ""
	byPath := req.Folder != nil && req.FileID == ""
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
		switch {
		case folderInTx:
		case byPath:
			if parent, err = s.folderAt(ctx, p, req.Folder, req.Name); err != nil {
				return File{}, false, err
			}
			req.ParentID, byPath = "", false
			if parent != nil {
				req.ParentID = parent.ID
			}
		default:
			if parent, err = s.parentFolder(ctx, p, req.ParentID, "parent_id"); err != nil {
				return File{}, false, err
			}
		}
	}
	// The preconditions, the locks and the quota are checked before a large
	// body is read, so that a refused upload is refused before its bytes
	// arrive, and again in the transaction, where they count.
	if early {
		existing := target
		if existing == nil {
			var err error
			if existing, err = s.liveItem(ctx, s.owner(p, parent), req.ParentID, req.Name); err != nil {
				return File{}, false, err
			}
		}
		if req.Check != nil {
			if err := req.Check(existing); err != nil {
				return File{}, false, err
			}
		}
		if !req.keepExisting {
			if err := s.checkPutLock(ctx, p, existing, req.ParentID); err != nil {
				return File{}, false, err
			}
		}
	}
	if early && req.Size >= 0 {
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
	c, err := s.receive(ctx, dg, limit, req.Size)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return File{}, false, app.Errorf(app.EPayloadTooLarge, "One upload is at most %d bytes.", limit)
		}
		return File{}, false, fmt.Errorf("store file bytes: %w", err)
	}
	hash, n := c.hash, c.size
	if req.Size >= 0 && n != req.Size {
		s.drop(ctx, c)
		return File{}, false, app.Errorf(app.EBadRequest, "The body is incomplete: %d of %d bytes arrived.", n, req.Size)
	}
	c = c.withDigests(dg.sums())
	if err := req.Checksum.verify(hash, *c.digests); err != nil {
		s.drop(ctx, c)
		return File{}, false, err
	}
	mimeType := DetectMime(req.Name, req.MimeType)
	// keptMime is the type of a new content of f: the writer's, else f's own.
	keptMime := func(f File) string {
		if req.MimeType == "" {
			return f.MimeType
		}
		return mimeType
	}
	var out File
	created := false
	write := func(ctx context.Context) error {
		if target != nil {
			f, err := s.store.File(ctx, target.ID)
			if err != nil {
				return err
			}
			if req.Check != nil {
				if err := req.Check(&f); err != nil {
					return err
				}
			}
			out, err = s.commitContentAt(ctx, p, f, f.Name, keptMime(f), FormatHash(hash), n, req.ModifiedAt)
			return err
		}
		// checked is the folder as this transaction read and checked it.
		folder, checked, parentID := parent, (*File)(nil), req.ParentID
		if folderInTx {
			var err error
			if byPath {
				checked, err = s.folderAt(ctx, p, req.Folder, req.Name)
			} else {
				checked, err = s.parentFolder(ctx, p, req.ParentID, "parent_id")
			}
			if err != nil {
				return err
			}
			folder = checked
			if byPath && checked != nil {
				parentID = checked.ID
			}
		}
		owner := s.owner(p, folder)
		existing, err := s.liveItem(ctx, owner, parentID, req.Name)
		if err != nil {
			return err
		}
		if req.Check != nil {
			if err := req.Check(existing); err != nil {
				return err
			}
		}
		if existing != nil && req.keepExisting {
			out = *existing
			return s.orphan(ctx, hash)
		}
		if existing != nil {
			out, err = s.commitContentAt(ctx, p, *existing, existing.Name, keptMime(*existing), FormatHash(hash), n, req.ModifiedAt)
			return err
		}
		f := File{ID: app.NewID(), OrgID: p.OrgID, OwnerID: owner, ParentID: strPtr(parentID), Name: req.Name,
			Metadata: Metadata{Tags: []string{}, Custom: map[string]string{}}}
		created = true
		out, err = s.createContent(ctx, p, f, checked, mimeType, FormatHash(hash), n, req.ModifiedAt)
		return err
	}
	err = s.storeReferenced(ctx, c, nil, func(ctx context.Context) error {
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
			s.drop(context.WithoutCancel(ctx), c)
		}
		return File{}, false, err
	}
	out.Permission = PermOwner
	if out.OwnerID != p.UserID {
		out.Permission = PermEdit
	}
	return out, created, nil
}

// liveItem returns the live item called name in folder parentID of owner,
// nil when there is none.
func (s *Service) liveItem(ctx context.Context, owner, parentID, name string) (*File, error) {
	f, err := s.store.LiveChild(ctx, owner, parentID, NameKey(name))
	if app.ErrorCode(err) == app.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// PutLocked locks the item named req.Name in folder req.ParentID (a LOCK on
// an unmapped URL): when there is none it is created empty (Put) and locked
// in the same transaction, so that a refused lock leaves no file, event or
// tombstone behind. It returns the item, the lock and whether it was created.
// An error of req.Check is returned as it is. Errors: insufficient_scope (no
// drive:write), no_bound_user, feature_not_in_plan, validation_failed (the
// name, a parent that is a file), not_found (no such parent folder, or not
// shared with the caller), forbidden (a folder shared for viewing), conflict (a
// missing folder on req.Folder, a folder gone meanwhile, an item pending or in
// the trash), locked (a lock on the folder or the item the caller does not
// hold, or one that r cannot share).
func (s *Service) PutLocked(ctx context.Context, p *app.Principal, req PutRequest, r LockRequest) (File, Lock, bool, error) {
	var l Lock
	req.Size, req.Body, req.FileID, req.keepExisting = 0, strings.NewReader(""), "", true
	f, created, err := s.put(ctx, p, req, func(ctx context.Context, f File, created bool) error {
		if !created && (f.Status == StatusPending || f.TrashedAt != nil) {
			return app.Errorf(app.EConflict, "Only live, confirmed items can be locked.")
		}
		var err error
		l, err = s.addLock(ctx, p, f, r)
		return err
	})
	if err != nil {
		return File{}, Lock{}, false, err
	}
	return f, l, created, nil
}
