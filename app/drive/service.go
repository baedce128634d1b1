package drive

// The Service, its options and constructor, and the checks every operation
// shares: scope and feature, access to an item (owner, edit, view), the
// parent folder of a new item, the change sequence, events and audit.

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"atrium/app"
)

const module = "drive"

// Options are the drive's tunables.
type Options struct {
	// UploadTTL is how long an announced upload may wait for its bytes and
	// confirmation (default 24 h).
	UploadTTL time.Duration
	// URLTTL is the lifetime of presigned download URLs (default 15 min).
	URLTTL time.Duration
	// MaxVersions and VersionMaxAge bound the versions kept per file (defaults
	// 50 and 180 days); the head is always kept.
	MaxVersions   int
	VersionMaxAge time.Duration
	// TrashMaxAge is how long trashed items are kept (default 30 days).
	TrashMaxAge time.Duration
	// TombstoneMaxAge is how long delta sync remembers deletions (default 90
	// days); an older cursor is expired.
	TombstoneMaxAge time.Duration
	// OrphanGrace is how long an unreferenced blob is kept before it is
	// deleted (default 1 h).
	OrphanGrace time.Duration
	// MaxUploadBytes caps one presigned upload (default 10 GiB).
	MaxUploadBytes int64
	// SmallBytes is the size up to which a content written whole (a PUT, a
	// presigned upload, a completed resumable upload) is kept with the
	// transaction that commits its reference (Blobs.PutSmall) rather than as
	// an object of its own: one durable write, shared by the writes committed
	// together, instead of the object's, its directory's and the log's
	// (default 64 KiB; negative: never).
	SmallBytes int64
	// SyncKey signs delta sync cursors (HMAC-SHA256); required by delta sync.
	SyncKey []byte
	// PublicURL is the server's external base URL; share links are
	// {PublicURL}/s/{token}.
	PublicURL string
	// archive is the archive tier (WithArchive); nil: none.
	archive *archiveTier
	// direct is the object store clients reach themselves (WithDirect);
	// nil: none, the node relays the bytes.
	direct Direct
	// search is the search index (WithSearch); nil: none.
	search SearchBackend
	// sharedTus: other processes may change resumable uploads
	// (WithSharedUploads).
	sharedTus bool
	// PreviewCacheBytes caps the cached thumbnails and previews (default 1 GiB);
	// PreviewMaxPixels refuses larger source images (default 50 million).
	PreviewCacheBytes, PreviewMaxPixels int64
	// Editor configures online editing (WithEditor); no URL: none.
	Editor EditorOptions
	// Converter converts office documents to ODF (WithConverter); nil: none.
	Converter Converter
	// Imaging decodes and encodes images for previews (WithImaging); nil:
	// no previews.
	Imaging Imaging
}

func (o *Options) defaults() {
	if o.UploadTTL <= 0 {
		o.UploadTTL = 24 * time.Hour
	}
	if o.URLTTL <= 0 {
		o.URLTTL = 15 * time.Minute
	}
	if o.MaxVersions <= 0 {
		o.MaxVersions = 50
	}
	if o.VersionMaxAge <= 0 {
		o.VersionMaxAge = 180 * 24 * time.Hour
	}
	if o.TrashMaxAge <= 0 {
		o.TrashMaxAge = 30 * 24 * time.Hour
	}
	if o.TombstoneMaxAge <= 0 {
		o.TombstoneMaxAge = 90 * 24 * time.Hour
	}
	if o.OrphanGrace <= 0 {
		o.OrphanGrace = time.Hour
	}
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = 10 << 30
	}
	if o.SmallBytes == 0 {
		o.SmallBytes = DefaultSmallBytes
	}
}

// DefaultSmallBytes is the default of Options.SmallBytes. Below about this
// size SQLite reads and writes a content faster than the file system does
// with a file per content ("35% Faster Than The Filesystem", sqlite.org).
const DefaultSmallBytes = 64 << 10

// Service is the one place the drive's rules live.
type Service struct {
	store  Store
	blobs  Blobs
	urls   URLs
	audit  app.Auditor
	outbox app.Outbox
	clock  app.Clock
	log    *slog.Logger
	opts   Options

	// refMu orders "a blob gained a reference" against "the collector deletes
	// an unreferenced blob": writers, any number at once, store a blob, check
	// it exists and commit its reference under its read lock; the collector
	// re-checks references and deletes under its write lock, so a deduplicated
	// Put can never lose its bytes to the collector. The collector never
	// queues for the write lock while an upload streams (that would stop every
	// new writer behind the one upload): see lockForCollect.
	refMu sync.RWMutex
	// collectStarved counts the collector's rounds in a row that found
	// writers holding refMu throughout.
	collectStarved atomic.Int32

	// lastStrays is when findStrays last walked the blob store.
	strayMu    sync.Mutex
	lastStrays time.Time

	// editing is the online editors' part (Editing).
	editing *Editing
	// uploads is the resumable and presigned uploads' part (Uploads).
	uploads *Uploads
	// links is the shared links' part (Links).
	links *Links
	// derived is the derived data's part (DerivedData).
	derived *DerivedData
	// archiving is the archive tier's part (Archiving).
	archiving *Archiving

	// folderSizes keeps folders' counted bytes by id (FolderSizes);
	// folderSizeCount about how many.
	folderSizes     sync.Map
	folderSizeCount atomic.Int64

	// digests is where fillDigests goes on.
	digests digestCursor

	// childBatch is how many items one query of Children reads (0: 2000;
	// tests set fewer).
	childBatch int
	// beforeWrite, in tests, runs between a change's early checks and its
	// transaction (see export_test.go).
	beforeWrite atomic.Pointer[func()]
	// collectorWaits, in tests, runs each time the collector finds refMu
	// held by writers (see export_test.go).
	collectorWaits atomic.Pointer[func()]

	// freshTus: the resumable uploads created and not yet read (TusUpload).
	freshTus freshTus
}

// NewService returns the drive service.
func NewService(store Store, blobs Blobs, urls URLs, audit app.Auditor, outbox app.Outbox, clock app.Clock, log *slog.Logger, opts Options) *Service {
	opts.defaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Service{store: store, blobs: blobs, urls: urls, audit: audit, outbox: outbox, clock: clock, log: log, opts: opts}
	s.editing = newEditing(s)
	s.uploads = &Uploads{core: s}
	s.links = &Links{core: s}
	s.derived = &DerivedData{core: s}
	s.archiving = &Archiving{core: s}
	return s
}

// Options returns the effective options. Errors: none of its own.
func (s *Service) Options() Options { return s.opts }

// check verifies the caller may use the drive with scope.
func check(p *app.Principal, scope string) error {
	if err := p.Require(scope); err != nil {
		return err
	}
	if err := p.RequireUser(); err != nil {
		return err
	}
	if !p.HasFeature("drive") {
		return app.Errorf(app.EFeatureNotInPlan, "The organisation's plan does not include the drive.")
	}
	return nil
}

func notFound() error { return app.Errorf(app.ENotFound, "No such file or folder.") }

// access loads item id and returns what the caller may do with it: owner, edit
// or view. Items of other organisations, pending items of others and items
// neither owned nor shared answer not_found; need is the least permission the
// operation requires (view or edit, or owner).
func (s *Service) access(ctx context.Context, p *app.Principal, id, need string) (File, error) {
	f, err := s.store.File(ctx, id)
	if app.ErrorCode(err) == app.ENotFound {
		return f, notFound()
	}
	if err != nil {
		return f, err
	}
	if f.OrgID != p.OrgID {
		return File{}, notFound()
	}
	if f.OwnerID == p.UserID {
		f.Permission = PermOwner
		return f, nil
	}
	if f.Status == StatusPending || f.TrashedAt != nil {
		return File{}, notFound()
	}
	perm, err := s.sharedPermission(ctx, p.UserID, f)
	if err != nil {
		return File{}, err
	}
	if perm == "" {
		return File{}, notFound()
	}
	f.Permission = perm
	if need == PermOwner || (need == PermEdit && perm != PermEdit) {
		return f, app.Errorf(app.EForbidden, "The item is shared with you for %s only; this needs %s.", describePerm(perm), describePerm(need))
	}
	return f, nil
}

func describePerm(p string) string {
	switch p {
	case PermOwner:
		return "its owner"
	case PermEdit:
		return "edit permission"
	}
	return "viewing"
}

// sharedPermission returns what user shares of f or its ancestors grant userID.
func (s *Service) sharedPermission(ctx context.Context, userID string, f File) (string, error) {
	ids := []string{f.ID}
	if f.ParentID != nil {
		anc, err := s.store.Ancestors(ctx, f.ID)
		if err != nil {
			return "", err
		}
		for _, a := range anc {
			ids = append(ids, a.ID)
		}
	}
	return s.store.SharePermission(ctx, userID, ids, s.clock.Now())
}

// folder returns the live folder id owned by the caller ("" is the root) as a
// parent for new items; location names the input in errors.
func (s *Service) parentFolder(ctx context.Context, p *app.Principal, id, location string) (*File, error) {
	if id == "" {
		return nil, nil
	}
	f, err := s.access(ctx, p, id, PermEdit)
	if app.ErrorCode(err) == app.ENotFound {
		return nil, app.Errorf(app.ENotFound, "No such folder %s (%s).", id, location)
	}
	if err != nil {
		return nil, err
	}
	if !f.IsFolder {
		return nil, app.Invalid(location, "The target is a file, not a folder.", id)
	}
	if f.TrashedAt != nil || f.Status == StatusPending {
		return nil, app.Errorf(app.ENotFound, "The folder %s is in the trash.", id)
	}
	return &f, nil
}

// change stamps f with the owner's next sequence number and raises the
// tree sequence of every folder above f to it (TreeTag): a folder's tag
// changes whenever anything below it does, in the change's own transaction.
// A change that takes f out of a folder raises that folder too (leave).
func (s *Service) change(ctx context.Context, f *File) error {
	seq, err := s.store.NextSeq(ctx, f.OwnerID)
	if err != nil {
		return fmt.Errorf("next drive seq: %w", err)
	}
	f.Seq = seq
	if err := s.store.RaiseTreeSeq(ctx, f.Parent(), seq); err != nil {
		return fmt.Errorf("raise the folders above %s: %w", f.ID, err)
	}
	return nil
}

// leave raises the folders above from, the folder f was moved out of by
// its change (f.Seq), when it is not f's folder now.
func (s *Service) leave(ctx context.Context, f File, from string) error {
	if from == f.Parent() {
		return nil
	}
	if err := s.store.RaiseTreeSeq(ctx, from, f.Seq); err != nil {
		return fmt.Errorf("raise the folders %s left: %w", f.ID, err)
	}
	return nil
}

// TreeTag is what a folder's entity tag is made of: its id and the later of
// its own last change and the last change of anything below it.
func TreeTag(f File) (id string, seq int64) { return f.ID, max(f.Seq, f.TreeSeq) }

// emit records an event about f.
func (s *Service) emit(ctx context.Context, typ string, f File, extra map[string]any) error {
	data := map[string]any{"file_id": f.ID}
	if typ != EventFileDeleted {
		data["name"] = f.Name
	}
	for k, v := range extra {
		data[k] = v
	}
	return s.outbox.Emit(ctx, app.Event{Type: typ, OrgID: f.OrgID, CreatedAt: s.clock.Now(), Data: data})
}

func (s *Service) record(ctx context.Context, p *app.Principal, action, targetType, id string, fields ...string) error {
	return s.audit.Record(ctx, app.AuditEntry{Module: module, Action: action, ActorID: p.UserID, TargetType: targetType,
		TargetID: id, OrgID: p.OrgID, ChangedFields: fields, CreatedAt: s.clock.Now()})
}

// freeName returns name, or the first "name (n).ext" free in the folder.
func (s *Service) freeName(ctx context.Context, ownerID, parentID, name string) (string, error) {
	cand := name
	for n := 1; n < 10000; n++ {
		_, err := s.store.LiveChild(ctx, ownerID, parentID, NameKey(cand))
		if app.ErrorCode(err) == app.ENotFound {
			return cand, nil
		}
		if err != nil {
			return "", err
		}
		cand = NumberedName(name, n)
	}
	return "", app.Errorf(app.EConflict, "No free name like %q in the folder.", name)
}

func nameConflict(name string) error {
	return app.Errorf(app.EConflict, "An item named %q already exists in the folder.", name)
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *Service) owner(p *app.Principal, parent *File) string {
	if parent != nil {
		return parent.OwnerID
	}
	return p.UserID
}
