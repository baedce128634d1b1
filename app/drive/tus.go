package drive

// The TUS state machine (resumable uploads): create, progress, declare the
// length, complete (commit through the content-write path), resolve a name
// conflict, terminate and expire.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"atrium/app"
)

// Statuses of a resumable upload.
const (
	// TusUploading: bytes are still arriving.
	TusUploading = "uploading"
	// TusConflict: complete, but a live item of its name exists in the folder;
	// the upload waits for ResolveTusUpload and keeps its blob referenced.
	TusConflict = "conflict"
	// TusDone: the bytes became FileID.
	TusDone = "done"
)

// Strategies that settle a resumable upload's name conflict.
const (
	// StrategySkip discards the upload and keeps the existing item.
	StrategySkip = "skip"
	// StrategyRename stores the upload as a new file named "name (1).ext".
	StrategyRename = "rename"
	// StrategyOverwrite makes the upload a new version of the existing file.
	StrategyOverwrite = "overwrite"
)

// TusUpload is a resumable (TUS) upload. It belongs to the user who created it;
// Offset counts the durable bytes received and HashState is the marshalled
// SHA-256 state after them, so a resumed upload continues the hash.
type TusUpload struct {
	ID        string
	OrgID     string
	CreatedBy string
	ParentID  string
	Name      string
	MimeType  string
	// Length is the total size; meaningless while LengthDeferred.
	Length         int64
	LengthDeferred bool
	Offset         int64
	HashState      []byte
	// Parts names, in order, the stored pieces that hold the bytes up to
	// Offset, as the door's part store named them (one per PATCH when the
	// pieces are objects of a bucket); empty when the store keeps one file
	// per upload.
	Parts  []string
	Status string
	// ContentHash ("sha256:…") is the blob of an upload in conflict.
	ContentHash string
	// FileID is the file a done upload became (or kept, for skip).
	FileID    string
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt is when an abandoned upload is dropped: UploadTTL after its
	// last activity.
	ExpiresAt time.Time
}

// Complete reports whether every byte has arrived.
func (u TusUpload) Complete() bool { return !u.LengthDeferred && u.Offset == u.Length }

// TusStore keeps resumable uploads. Methods return not_found for a missing row.
type TusStore interface {
	CreateTusUpload(ctx context.Context, u TusUpload) error
	TusUpload(ctx context.Context, id string) (TusUpload, error)
	// UpdateTusUpload writes the mutable columns: length, deferral, offset,
	// hash state, parts, status, content hash, file id, updated and expiry
	// times.
	UpdateTusUpload(ctx context.Context, u TusUpload) error
	DeleteTusUploads(ctx context.Context, ids []string) error
	// TusUploadsKnown returns which of ids are uploads that exist.
	TusUploadsKnown(ctx context.Context, ids []string) (map[string]bool, error)
	// ExpiredTusUploads returns uploads whose expiry is before t, at most limit.
	ExpiredTusUploads(ctx context.Context, t time.Time, limit int) ([]TusUpload, error)
}

// TusCreate is what the creation of a resumable upload carries (its metadata
// filename, filetype and parent_id, and Upload-Length or Upload-Defer-Length).
type TusCreate struct {
	Name     string
	MimeType string
	ParentID string
	Length   int64
	Deferred bool
	// Content, when not nil, is the whole content of a small upload (Length
	// bytes, a small content) that came with its creation (the
	// creation-with-upload extension): the upload is created complete, with
	// its file or in the conflict state, in one transaction.
	Content []byte
}

// TusResolution is the outcome of settling a conflict (CONTRACT §4).
type TusResolution struct {
	Strategy string `json:"strategy" enum:"skip,rename,overwrite" doc:"The strategy applied."`
	File     File   `json:"file" doc:"The resulting file: the new file or version, or for skip the existing item."`
}

// MaxTusBytes is the largest resumable upload (the upload cap). Errors: none of
// its own.
func (up *Uploads) MaxTusBytes() int64 { return up.core.opts.MaxUploadBytes }

// tusParentField is where a TUS client names the upload's folder, as an
// error locates it.
const tusParentField = "header.Upload-Metadata.parent_id"

// CreateTusUpload starts a resumable upload into the caller's folder (or one
// shared with edit permission): the name must be valid, the folder live and,
// when the length is known, the quota must hold it. Errors: insufficient_scope
// (no drive:write), no_bound_user, feature_not_in_plan, validation_failed (no
// name or an invalid one, a negative length, a parent that is a file),
// payload_too_large (over MaxTusBytes), not_found (no such parent folder, or
// not shared with the caller), forbidden (a parent shared for viewing),
// quota_exceeded, locked (a lock on the folder, for a creation with its
// content).
func (up *Uploads) CreateTusUpload(ctx context.Context, p *app.Principal, req TusCreate) (TusUpload, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return TusUpload{}, err
	}
	if req.Name == "" {
		return TusUpload{}, app.Invalid("header.Upload-Metadata", "The metadata must carry the file name under the key filename.", nil)
	}
	name, err := CleanName("header.Upload-Metadata.filename", req.Name)
	if err != nil {
		return TusUpload{}, err
	}
	req.Name = name
	if !req.Deferred {
		if req.Length < 0 {
			return TusUpload{}, app.Invalid("header.Upload-Length", "The length is a number of bytes, 0 or more.", req.Length)
		}
		if req.Length > up.core.opts.MaxUploadBytes {
			return TusUpload{}, app.Errorf(app.EPayloadTooLarge, "One upload is at most %d bytes.", up.core.opts.MaxUploadBytes)
		}
	}
	now := up.core.clock.Now()
	u := TusUpload{ID: app.NewID() + app.RandomHex(8), OrgID: p.OrgID, CreatedBy: p.UserID, ParentID: req.ParentID, Name: req.Name,
		MimeType: DetectMime(req.Name, req.MimeType), Length: req.Length, LengthDeferred: req.Deferred, Status: TusUploading,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(up.core.opts.UploadTTL)}
	if u.LengthDeferred {
		u.Length = 0
	}
	if req.Content != nil {
		return up.createWholeTus(ctx, p, u, req.Content)
	}
	// The folder and the quota are read in the transaction that creates the
	// upload, on the writer's connection: no bytes wait on these checks, and
	// a read there finds its pages cached, where a reader's cache starts
	// empty after every commit.
	err = up.core.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := up.core.parentFolder(ctx, p, req.ParentID, tusParentField); err != nil {
			return err
		}
		if !req.Deferred {
			if err := up.core.quota(ctx, p, req.Length); err != nil {
				return err
			}
		}
		return up.core.store.CreateTusUpload(ctx, u)
	})
	if err != nil {
		return TusUpload{}, err
	}
	if !up.core.opts.sharedTus {
		up.core.freshTus.put(u)
	}
	return u, nil
}

// WithSharedUploads tells the service that other processes (the nodes of a
// cluster, on one database and one bucket) may change its resumable uploads:
// every read of an upload then goes to the database, none is answered from
// what this process created (freshTus), since another node may have taken
// its bytes since.
func (o Options) WithSharedUploads() Options {
	o.sharedTus = true
	return o
}

// TusUpload returns one of the caller's resumable uploads; another user's, or
// an expired one, is not_found. An upload this process created and no request
// read since is returned as it was created, without a read of the database:
// a client sends its bytes right after creating it, and each change of an
// upload reads it again in its transaction (not with WithSharedUploads, where
// another node may have taken its bytes). Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan, not_found (no such upload of
// the caller's, or an expired one).
func (up *Uploads) TusUpload(ctx context.Context, p *app.Principal, id string) (TusUpload, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return TusUpload{}, err
	}
	if u, ok := up.core.freshTus.take(id); ok && up.ownsTus(p, u) {
		return u, nil
	}
	return up.ownTusUpload(ctx, p, id)
}

// ownsTus reports whether u is p's and not expired.
func (up *Uploads) ownsTus(p *app.Principal, u TusUpload) bool {
	return u.OrgID == p.OrgID && u.CreatedBy == p.UserID && up.core.clock.Now().Before(u.ExpiresAt)
}

// updateTusUpload and deleteTusUploads change uploads in the store; what
// freshTus kept of them goes.
func (up *Uploads) updateTusUpload(ctx context.Context, u TusUpload) error {
	up.core.freshTus.drop(u.ID)
	return up.core.store.UpdateTusUpload(ctx, u)
}

func (up *Uploads) deleteTusUploads(ctx context.Context, ids []string) error {
	up.core.freshTus.drop(ids...)
	return up.core.store.DeleteTusUploads(ctx, ids)
}

// freshTusMax bounds the uploads freshTus keeps (the oldest go first).
const freshTusMax = 1024

// freshTus keeps each upload this process created, as created, until a
// request reads it (TusUpload takes it) or a change of it drops it
// (updateTusUpload, deleteTusUploads): the first PATCH of an upload, most
// often its only one, then needs no read of the database before its bytes (a
// read on a reader whose cache every commit empties: 7% of a small TUS
// upload's CPU).
type freshTus struct {
	mu    sync.Mutex
	m     map[string]TusUpload
	order []string // ids in the order they came, some taken already
}

func (f *freshTus) put(u TusUpload) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]TusUpload{}
	}
	f.m[u.ID] = u
	f.order = append(f.order, u.ID)
	for len(f.order) > freshTusMax {
		delete(f.m, f.order[0])
		f.order = f.order[1:]
	}
}

// take returns upload id and forgets it.
func (f *freshTus) take(id string) (TusUpload, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.m[id]
	delete(f.m, id)
	return u, ok
}

// drop forgets the uploads ids.
func (f *freshTus) drop(ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		delete(f.m, id)
	}
}

func (up *Uploads) ownTusUpload(ctx context.Context, p *app.Principal, id string) (TusUpload, error) {
	u, err := up.core.store.TusUpload(ctx, id)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && !up.ownsTus(p, u)) {
		return TusUpload{}, app.Errorf(app.ENotFound, "No such upload; it may have expired. Create a new one.")
	}
	return u, err
}

// TusRoom returns how many bytes the caller's organisation may still store.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan.
func (up *Uploads) TusRoom(ctx context.Context, p *app.Principal) (int64, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return 0, err
	}
	if p.QuotaBytes <= 0 {
		return math.MaxInt64, nil
	}
	used, _, err := up.core.store.OrgUsage(ctx, p.OrgID)
	if err != nil {
		return 0, err
	}
	return max(0, p.QuotaBytes-used), nil
}

// Allowance is how many more bytes an upload in parts may take: the less of
// what the organisation's quota leaves and the upload cap, beside what the
// upload holds already.
type Allowance struct {
	// Left is the bytes the upload may still take (negative: it holds more
	// than it may already).
	Left  int64
	quota bool // the quota, not the cap, is the bound
	cap   int64
}

// Refusal is the error of a part past the allowance: quota_exceeded when the
// quota is the bound, payload_too_large when the upload cap is.
func (a Allowance) Refusal() error {
	if a.quota {
		return QuotaError(max(0, a.Left))
	}
	return app.Errorf(app.EPayloadTooLarge, "An upload is at most %d bytes.", a.cap)
}

// UploadAllowance is the allowance of an upload in parts (the sync clients'
// chunks) that holds held bytes so far. Errors: insufficient_scope (no
// drive:write), no_bound_user, feature_not_in_plan.
func (up *Uploads) UploadAllowance(ctx context.Context, p *app.Principal, held int64) (Allowance, error) {
	room, err := up.TusRoom(ctx, p)
	if err != nil {
		return Allowance{}, err
	}
	limit := up.MaxTusBytes()
	if room < limit {
		return Allowance{Left: room - held, quota: true, cap: limit}, nil
	}
	return Allowance{Left: limit - held, cap: limit}, nil
}

// QuotaError is the error of an upload that would exceed the quota.
func QuotaError(room int64) error {
	return app.Errorf(app.EQuotaExceeded, "The upload would exceed the storage quota: %d more bytes fit.", room)
}

// TusProgress records that the upload's durable bytes, which ended at from,
// now end at to, with the hash state after them and, when not empty, the
// name of the part that holds the new bytes (appended to Parts); the
// upload's expiry moves UploadTTL ahead. It is a compare-and-set on the
// offset: when the recorded offset is no longer from (another request, on
// this node or another, recorded bytes meanwhile), nothing changes and the
// error is conflict, so that of two requests that wrote at the same offset
// exactly one counts. Errors: insufficient_scope (no drive:write),
// no_bound_user, feature_not_in_plan, not_found (no such upload of the
// caller's, or an expired one), conflict (a complete upload, or an offset
// that moved on).
func (up *Uploads) TusProgress(ctx context.Context, p *app.Principal, id string, from, to int64, hashState []byte, part string) (TusUpload, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return TusUpload{}, err
	}
	var out TusUpload
	err := up.core.store.InTx(ctx, func(ctx context.Context) error {
		u, err := up.ownTusUpload(ctx, p, id)
		if err != nil {
			return err
		}
		if u.Status != TusUploading {
			return app.Errorf(app.EConflict, "The upload is complete; it takes no more bytes.")
		}
		if u.Offset != from {
			return app.Errorf(app.EConflict, "Upload-Offset does not match the upload's offset (%d bytes recorded since); send HEAD to learn where to resume.", u.Offset)
		}
		if to < from || (!u.LengthDeferred && to > u.Length) {
			return fmt.Errorf("tus upload %s: offset %d outside [%d, %d]", id, to, u.Offset, u.Length)
		}
		now := up.core.clock.Now()
		u.Offset, u.HashState, u.UpdatedAt, u.ExpiresAt = to, hashState, now, now.Add(up.core.opts.UploadTTL)
		if part != "" {
			u.Parts = append(u.Parts[:len(u.Parts):len(u.Parts)], part)
		}
		out = u
		return up.updateTusUpload(ctx, u)
	})
	return out, err
}

// TusDeclareLength sets the length of an upload created with a deferred length.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, payload_too_large (over MaxTusBytes), quota_exceeded,
// not_found (no such upload of the caller's, or an expired one),
// validation_failed (a length known already, or below the bytes received).
func (up *Uploads) TusDeclareLength(ctx context.Context, p *app.Principal, id string, length int64) (TusUpload, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return TusUpload{}, err
	}
	if length > up.core.opts.MaxUploadBytes {
		return TusUpload{}, app.Errorf(app.EPayloadTooLarge, "One upload is at most %d bytes.", up.core.opts.MaxUploadBytes)
	}
	if err := up.core.quota(ctx, p, length); err != nil {
		return TusUpload{}, err
	}
	var out TusUpload
	err := up.core.store.InTx(ctx, func(ctx context.Context) error {
		u, err := up.ownTusUpload(ctx, p, id)
		if err != nil {
			return err
		}
		if !u.LengthDeferred {
			return app.Invalid("header.Upload-Length", "The upload's length is already known.", length)
		}
		if length < u.Offset {
			return app.Invalid("header.Upload-Length", fmt.Sprintf("%d bytes have arrived already.", u.Offset), length)
		}
		u.Length, u.LengthDeferred, u.UpdatedAt = length, false, up.core.clock.Now()
		out = u
		return up.updateTusUpload(ctx, u)
	})
	return out, err
}

// CompleteTusUpload turns a fully received upload into a drive file. hash is
// the hex SHA-256 of its bytes; small, when not nil, is the whole content (at
// most Options.SmallBytes), stored with the file's commit, and completes the
// upload even at recorded offset 0; else put, when not nil, moves the bytes
// into the blob store (nil: they are there already). put runs where the
// collector cannot delete a stored blob of the same content before the file
// refers to it. Without a live item of its name in the folder the file is
// created (drive.file.created); otherwise the upload waits in the conflict
// state for ResolveTusUpload, keeping the blob referenced. When put fails
// nothing changes (the caller keeps its bytes and may try again); when
// completion fails after it, the upload is dropped and its blob left to the
// collector. When another request (on another node) completed the upload
// meanwhile, a large content's completion returns the upload as that one
// left it (the same recorded bytes), a small content's is conflict. Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, not_found (no such upload of the caller's, or an expired
// one, no such parent folder), validation_failed (a parent that is a file),
// forbidden (a parent shared for viewing), conflict (a folder gone meanwhile,
// or a small content's upload completed meanwhile), locked (a lock on the
// folder), quota_exceeded.
func (up *Uploads) CompleteTusUpload(ctx context.Context, p *app.Principal, id, hash string, size int64, small []byte, put func() error) (TusUpload, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return TusUpload{}, err
	}
	c := content{hash: hash, size: size}
	if small != nil {
		if sum := sha256.Sum256(small); int64(len(small)) != size || !up.core.SmallContent(size) || hex.EncodeToString(sum[:]) != hash {
			return TusUpload{}, fmt.Errorf("tus upload %s: %d bytes given as the small content %s of %d bytes", id, len(small), hash, size)
		}
		c.small = small
		// Its bytes are all here: their digests cost little now, and
		// maintenance would read them back for them.
		c = c.withDigests(digestsOf(small))
	}
	// A small content's upload is read in the transaction that completes it,
	// on the writer's cached pages (a reader's cache starts empty after every
	// commit); a large one's before its bytes move into the blob store.
	var u TusUpload
	if c.small == nil {
		var err error
		if u, err = up.ownTusUpload(ctx, p, id); err != nil {
			return TusUpload{}, err
		}
	}
	u, err := up.completeTus(ctx, p, id, u, c, put)
	var pe *PutError
	var stays *tusUploadStays
	var done *tusCompleted
	if errors.As(err, &done) {
		return done.u, nil
	}
	if errors.As(err, &pe) {
		return TusUpload{}, err
	}
	if errors.As(err, &stays) {
		return TusUpload{}, stays.err
	}
	if err != nil {
		ctx := context.WithoutCancel(ctx)
		if derr := up.core.store.InTx(ctx, func(ctx context.Context) error {
			if err := up.deleteTusUploads(ctx, []string{id}); err != nil {
				return err
			}
			return up.core.orphan(ctx, hash)
		}); derr != nil {
			up.core.log.ErrorContext(ctx, "drop failed resumable upload", "upload", id, "err", derr)
		}
		return TusUpload{}, err
	}
	return u, nil
}

// tusUploadStays is a failure of completeTus after which the upload is not
// dropped: it was not found among the caller's (or could not be read) in the
// transaction, so there is nothing to drop; or the quota refused a small
// content of which nothing was recorded (its bytes came whole in the
// completing request), and the upload stays resumable from offset 0, as when
// the quota refuses a larger upload's bytes before they are read.
type tusUploadStays struct{ err error }

func (e *tusUploadStays) Error() string { return e.err.Error() }
func (e *tusUploadStays) Unwrap() error { return e.err }

// tusCompleted is the upload as another request (on another node) completed
// it while this one put its bytes: this one's completion is that one.
type tusCompleted struct{ u TusUpload }

func (e *tusCompleted) Error() string {
	return fmt.Sprintf("tus upload %s completed meanwhile", e.u.ID)
}

// completeTus completes upload id: u is the upload as read before, or, for a
// small content (c.small), read here in the transaction.
func (up *Uploads) completeTus(ctx context.Context, p *app.Principal, id string, u TusUpload, c content, put func() error) (TusUpload, error) {
	size := c.size
	// ready checks that u may complete with the content.
	ready := func(u TusUpload) error {
		// A small content given whole may complete an upload with nothing
		// recorded yet (the door kept its one request's bytes in memory).
		offset := u.Offset
		if c.small != nil && offset == 0 {
			offset = size
		}
		if u.Status != TusUploading || u.LengthDeferred || offset != size || u.Length != size {
			return fmt.Errorf("tus upload %s: completing %d bytes in state %s at %d of %d", u.ID, size, u.Status, u.Offset, u.Length)
		}
		return nil
	}
	if c.small == nil {
		if err := ready(u); err != nil {
			return TusUpload{}, err
		}
	}
	// The folder is checked before the bytes of a large content move into
	// the blob store (put). A small content has nothing to move: its folder
	// is read in its transaction, whose reads find their pages cached on the
	// writer's connection (a reader's cache starts empty after every commit).
	// Either way the transaction checks the folder again (checkNewFile).
	var parent *File
	if c.small == nil {
		var err error
		if parent, err = up.core.parentFolder(ctx, p, u.ParentID, tusParentField); err != nil {
			return TusUpload{}, err
		}
	}
	// An upload holds no lock: it may end long after it began.
	ctx = withoutUserLocks(ctx)
	err := up.core.storeReferenced(ctx, c, put, func(ctx context.Context) error {
		if c.small != nil {
			var err error
			if u, err = up.ownTusUpload(ctx, p, id); err != nil {
				return &tusUploadStays{err}
			}
			if u.Status != TusUploading {
				// Completed by another request meanwhile (on another
				// node), which may have carried other bytes: these do not
				// count, and the upload stays as that one left it.
				return &tusUploadStays{app.Errorf(app.EConflict, "The upload is complete; it takes no more bytes.")}
			}
			if err := ready(u); err != nil {
				return err
			}
			if parent, err = up.core.parentFolder(ctx, p, u.ParentID, tusParentField); err != nil {
				return err
			}
		} else {
			// Read again in the transaction: another node may have
			// completed (or dropped) the upload while its bytes were put.
			cur, err := up.ownTusUpload(ctx, p, id)
			if err != nil {
				return &tusUploadStays{err}
			}
			if cur.Status != TusUploading {
				return &tusCompleted{cur}
			}
		}
		if err := up.completeTusIn(ctx, p, &u, c, parent); err != nil {
			if c.small != nil && u.Offset == 0 && app.ErrorCode(err) == app.EQuotaExceeded {
				return &tusUploadStays{err}
			}
			return err
		}
		return up.updateTusUpload(ctx, u)
	})
	return u, err
}

// completeTusIn completes u with content c in the write's transaction: a new
// file in u's folder when its name is free there, else the conflict state
// (the upload keeps the content for ResolveTusUpload). parent is the folder
// as the caller read it (a small content's in this transaction). The caller
// stores u.
func (up *Uploads) completeTusIn(ctx context.Context, p *app.Principal, u *TusUpload, c content, parent *File) error {
	owner := up.core.owner(p, parent)
	_, err := up.core.store.LiveChild(ctx, owner, u.ParentID, NameKey(u.Name))
	switch {
	case err == nil:
		u.Status, u.ContentHash = TusConflict, FormatHash(c.hash)
	case app.ErrorCode(err) == app.ENotFound:
		// A small content's folder was read in this transaction.
		var folder *File
		if c.small != nil {
			folder = parent
		}
		f, err := up.tusNewFile(ctx, p, owner, u.ParentID, u.Name, u.MimeType, FormatHash(c.hash), c.size, folder)
		if err != nil {
			return err
		}
		u.Status, u.FileID = TusDone, f.ID
	default:
		return err
	}
	now := up.core.clock.Now()
	u.Offset, u.HashState, u.Parts, u.UpdatedAt, u.ExpiresAt = c.size, nil, nil, now, now.Add(up.core.opts.UploadTTL)
	return nil
}

// createWholeTus creates upload u complete with content, a small content
// that came whole with the creation: one transaction checks the folder and
// the quota, stores the content and its file (or leaves the upload in the
// conflict state) and records the upload as complete. When it fails nothing
// is left: no upload, no file, and the client sends its creation again.
func (up *Uploads) createWholeTus(ctx context.Context, p *app.Principal, u TusUpload, data []byte) (TusUpload, error) {
	if u.LengthDeferred || int64(len(data)) != u.Length || !up.core.SmallContent(u.Length) {
		return TusUpload{}, fmt.Errorf("tus upload %s: %d bytes given as the whole small content of %d bytes", u.ID, len(data), u.Length)
	}
	sum := sha256.Sum256(data)
	c := content{hash: hex.EncodeToString(sum[:]), size: u.Length, small: data}.withDigests(digestsOf(data))
	// An upload holds no lock: it may end long after it began.
	err := up.core.storeReferenced(withoutUserLocks(ctx), c, nil, func(ctx context.Context) error {
		parent, err := up.core.parentFolder(ctx, p, u.ParentID, tusParentField)
		if err != nil {
			return err
		}
		if err := up.core.quota(ctx, p, u.Length); err != nil {
			return err
		}
		if err := up.completeTusIn(ctx, p, &u, c, parent); err != nil {
			return err
		}
		return up.core.store.CreateTusUpload(ctx, u)
	})
	if err != nil {
		return TusUpload{}, err
	}
	return u, nil
}

// tusNewFile creates a file named name in the folder with content (hash,
// size), after completeTus found no live item of the name; it runs inside
// referenced. folder is the folder as the transaction read it, or nil
// (createContent).
func (up *Uploads) tusNewFile(ctx context.Context, p *app.Principal, owner, parentID, name, mimeType, hash string, size int64, folder *File) (File, error) {
	f := File{ID: app.NewID(), OrgID: p.OrgID, OwnerID: owner, ParentID: strPtr(parentID), Name: name,
		Metadata: Metadata{Tags: []string{}, Custom: map[string]string{}}}
	return up.core.createContent(ctx, p, f, folder, mimeType, hash, size, time.Time{})
}

// ResolveTusUpload settles the name conflict of a completed upload: skip
// discards it and returns the existing item, rename stores it as "name (1).ext",
// overwrite makes it a new version of the existing file. When the conflicting
// item is gone meanwhile, the upload becomes a file of its own name whatever
// the strategy. An upload not in conflict → conflict; another user's → not_found.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, validation_failed (the strategy, a parent that is a
// file), not_found (no such upload of the caller's, or an expired one, no such
// parent folder), conflict (an upload not in conflict, overwrite of a folder or
// an archived file, no free name, a folder gone meanwhile), forbidden (a parent
// shared for viewing), locked (a lock on the file or folder), quota_exceeded.
func (up *Uploads) ResolveTusUpload(ctx context.Context, p *app.Principal, id, strategy string) (TusResolution, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return TusResolution{}, err
	}
	switch strategy {
	case StrategySkip, StrategyRename, StrategyOverwrite:
	default:
		return TusResolution{}, app.Invalid("query.strategy", "The strategy is one of skip, rename, overwrite.", strategy)
	}
	u, err := up.ownTusUpload(ctx, p, id)
	if err != nil {
		return TusResolution{}, err
	}
	if u.Status != TusConflict {
		return TusResolution{}, app.Errorf(app.EConflict, "The upload is not waiting for a conflict resolution (it is %s).", u.Status)
	}
	parent, err := up.core.parentFolder(ctx, p, u.ParentID, "parent_id")
	if err != nil {
		return TusResolution{}, err
	}
	owner := up.core.owner(p, parent)
	var out File
	ctx = withoutUserLocks(ctx)
	err = up.core.referenced(ctx, blobName(u.ContentHash), func(ctx context.Context) error {
		cur, err := up.core.store.TusUpload(ctx, id)
		if err != nil {
			return err
		}
		if cur.Status != TusConflict {
			return app.Errorf(app.EConflict, "The upload is not waiting for a conflict resolution (it is %s).", cur.Status)
		}
		existing, err := up.core.store.LiveChild(ctx, owner, u.ParentID, NameKey(u.Name))
		switch {
		case app.ErrorCode(err) == app.ENotFound:
			out, err = up.tusNewFile(ctx, p, owner, u.ParentID, u.Name, u.MimeType, u.ContentHash, u.Length, nil)
		case err != nil:
		case strategy == StrategySkip:
			out, err = existing, up.core.orphan(ctx, u.ContentHash)
		case strategy == StrategyOverwrite:
			out, err = up.core.commitContent(ctx, p, existing, existing.Name, u.MimeType, u.ContentHash, u.Length)
		default:
			var name string
			if name, err = up.core.freeName(ctx, owner, u.ParentID, u.Name); err == nil {
				out, err = up.tusNewFile(ctx, p, owner, u.ParentID, name, u.MimeType, u.ContentHash, u.Length, nil)
			}
		}
		if err != nil {
			return err
		}
		now := up.core.clock.Now()
		cur.Status, cur.ContentHash, cur.FileID, cur.UpdatedAt = TusDone, "", out.ID, now
		return up.updateTusUpload(ctx, cur)
	})
	if err != nil {
		return TusResolution{}, err
	}
	out.Permission = PermOwner
	if out.OwnerID != p.UserID {
		out.Permission = PermEdit
	}
	return TusResolution{Strategy: strategy, File: out}, nil
}

// TerminateTusUpload drops one of the caller's uploads (tus termination); an
// upload in conflict releases its blob. It returns the dropped upload so the
// door can remove its partial bytes. Errors: insufficient_scope (no
// drive:write), no_bound_user, feature_not_in_plan, not_found (no such upload
// of the caller's, or an expired one).
func (up *Uploads) TerminateTusUpload(ctx context.Context, p *app.Principal, id string) (TusUpload, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return TusUpload{}, err
	}
	var out TusUpload
	err := up.core.store.InTx(ctx, func(ctx context.Context) error {
		u, err := up.ownTusUpload(ctx, p, id)
		if err != nil {
			return err
		}
		if err := up.deleteTusUploads(ctx, []string{id}); err != nil {
			return err
		}
		out = u
		return up.core.orphan(ctx, u.ContentHash)
	})
	return out, err
}

// TusUploadsKnown returns which of ids are uploads that exist: the bytes of
// the others (their user was deleted, or the server stopped between dropping
// a row and its file) are free to go. Errors: none of its own.
func (up *Uploads) TusUploadsKnown(ctx context.Context, ids []string) (map[string]bool, error) {
	return up.core.store.TusUploadsKnown(ctx, ids)
}

// ExpireTusUploads drops the uploads abandoned longer than UploadTTL: remove
// frees each one's partial bytes first (a missing file is no error), then the
// rows go and the blobs of expired conflicts are left to the collector. It
// returns how many went. Errors: none of its own.
func (up *Uploads) ExpireTusUploads(ctx context.Context, remove func(TusUpload) error) (int, error) {
	total := 0
	now := up.core.clock.Now()
	deadline := time.Now().Add(sweepTime)
	for time.Now().Before(deadline) {
		ups, err := up.core.store.ExpiredTusUploads(ctx, now, batch)
		if err != nil || len(ups) == 0 {
			return total, err
		}
		ids := make([]string, 0, len(ups))
		for _, u := range ups {
			if err := remove(u); err != nil {
				return total, fmt.Errorf("free expired upload %s: %w", u.ID, err)
			}
			ids = append(ids, u.ID)
		}
		err = up.core.store.InTx(ctx, func(ctx context.Context) error {
			for _, u := range ups {
				if err := up.core.orphan(ctx, u.ContentHash); err != nil {
					return err
				}
			}
			return up.deleteTusUploads(ctx, ids)
		})
		if err != nil {
			return total, err
		}
		total += len(ups)
	}
	return total, nil
}

// Uploads is the part of the drive that files arrive through in more than
// one request: resumable uploads (tus; the WebDAV door's uploads in parts ask
// it for their allowance) and the three-step presigned upload (request, the
// bytes to the upload URL, confirm). It holds the drive's core (Service):
// every upload commits through the core's one write transaction, with its
// quota, locks, versions and events.
type Uploads struct {
	core *Service
}

// Uploads returns the drive's uploads part. Errors: none of its own.
func (s *Service) Uploads() *Uploads { return s.uploads }

// SmallContent is the core's SmallContent, for the tus door, which asks it
// before handing a whole content over. Errors: none of its own.
func (up *Uploads) SmallContent(size int64) bool { return up.core.SmallContent(size) }
