// Package drive holds the rules of the drive: files and folders, uploads,
// versions, trash, quota, shares, locks and the per-owner change feed of delta
// sync. Every door (REST, presigned upload, WebDAV, TUS, WOPI) calls this
// package's Service, so permissions, quota, events, audit and the sync feed are
// applied once.
//
// What the audit log records: what removes or exposes data — trash
// (file.trashed), delete (file.deleted), empty trash (trash.emptied), purge by
// retention (file.purged, actor "system"), archive (file.archived) and shares
// (share.created, share.updated, share.revoked). Content writes, new folders,
// renames, moves, copies, metadata and version restores are not audited: each
// content write is a version with its author (Version.CreatedBy) and every
// change is a drive.file.* event and a step of the sync feed.
package drive

import (
	"context"
	"io"
	"time"

	"atrium/app"
)

// File statuses.
const (
	StatusPending   = "pending"
	StatusActive    = "active"
	StatusArchived  = "archived"
	StatusRestoring = "restoring"
)

// Share permissions. PermOwner is what the owner holds.
const (
	PermView  = "view"
	PermEdit  = "edit"
	PermOwner = "owner"
)

// FolderMime is the mime type of folders.
const FolderMime = "inode/directory"

// Event types of the drive.
const (
	EventFileCreated  = "drive.file.created"
	EventFileUpdated  = "drive.file.updated"
	EventFileDeleted  = "drive.file.deleted"
	EventShareCreated = "drive.share.created"
)

// Metadata is the user-editable description of a file.
type Metadata struct {
	Description string            `json:"description"`
	Tags        []string          `json:"tags"`
	Custom      map[string]string `json:"custom"`
}

// File is a file or a folder (FileItem).
type File struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	IsFolder    bool       `json:"is_folder"`
	MimeType    string     `json:"mime_type"`
	MimeGroup   string     `json:"mime_group"`
	SizeBytes   int64      `json:"size_bytes"`
	ParentID    *string    `json:"parent_id"`
	OwnerID     string     `json:"owner_id"`
	OwnerName   string     `json:"owner_name"`
	OrgID       string     `json:"organization_id"`
	Status      string     `json:"status"`
	Version     int        `json:"version"`
	ContentHash string     `json:"content_hash"`
	IsFavorite  bool       `json:"is_favorite"`
	TrashedAt   *time.Time `json:"trashed_at"`
	Metadata    Metadata   `json:"metadata"`
	// Permission is what the caller may do with the item: owner, edit or view.
	Permission string    `json:"permission,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// UpdatedAt is the server's time of the item's last change (content,
	// name, place, metadata).
	UpdatedAt time.Time `json:"updated_at"`

	// ModifiedAt is the modification time of the content as its writer
	// reported it (WebDAV X-OC-Mtime, PROPPATCH of the modification time),
	// else the time of the last content write; a rename or a move keeps it,
	// a copy keeps the original's. The WebDAV mount serves it as
	// getlastmodified and Last-Modified. Zero when never set: it then reads
	// as UpdatedAt.
	ModifiedAt time.Time `json:"-"`

	// StoredBytes is the sum of the sizes of the file's versions.
	StoredBytes int64 `json:"-"`
	// TrashRoot is the item the user trashed when this one went with it.
	TrashRoot string `json:"-"`
	// TrashParentID is where a trashed root came from.
	TrashParentID string `json:"-"`
	// CommentsChannel is created on first request.
	CommentsChannel string `json:"-"`
	// Seq is the owner's change sequence number at the last change.
	Seq int64 `json:"-"`
	// TreeSeq, of a folder, is the owner's change sequence number at the
	// last change of anything below it (0: none since it was recorded); see
	// TreeTag.
	TreeSeq int64 `json:"-"`
	// LastAccessAt is the time of the last download (archive tier).
	LastAccessAt *time.Time `json:"-"`
}

// Parent returns the parent id, "" at the root.
func (f File) Parent() string {
	if f.ParentID == nil {
		return ""
	}
	return *f.ParentID
}

// Hash returns the content hash without its "sha256:" prefix (the blob name).
func (f File) Hash() string { return blobName(f.ContentHash) }

// Version is one stored content of a file (FileVersionResponse).
type Version struct {
	ID          string    `json:"id"`
	FileID      string    `json:"-"`
	Version     int       `json:"version"`
	SizeBytes   int64     `json:"size_bytes"`
	ContentHash string    `json:"content_hash"`
	MimeType    string    `json:"mime_type"`
	CreatedAt   time.Time `json:"created_at"`
	CreatedBy   string    `json:"created_by"`
	IsHead      bool      `json:"is_head"`
}

// Upload is an announced three-step upload.
type Upload struct {
	ID          string
	FileID      string
	OrgID       string
	OwnerID     string
	CreatedBy   string
	Name        string
	MimeType    string
	SizeBytes   int64
	ContentHash string
	ReceivedAt  *time.Time
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Usage is the storage use of an organisation as the caller sees it (StorageUsage).
type Usage struct {
	UsedBytes      int64 `json:"used_bytes"`
	QuotaBytes     int64 `json:"quota_bytes"`
	FileCount      int64 `json:"file_count"`
	UserUsedBytes  int64 `json:"user_used_bytes"`
	UserFileCount  int64 `json:"user_file_count"`
	AvailableBytes int64 `json:"available_bytes"`
}

// GroupUsage is one category of the storage breakdown.
type GroupUsage struct {
	MimeGroup string `json:"mime_group"`
	Bytes     int64  `json:"bytes"`
	Count     int64  `json:"count"`
}

// Breakdown is the caller's storage by category and their largest files.
type Breakdown struct {
	Categories   []GroupUsage `json:"categories"`
	LargestFiles []File       `json:"largest_files"`
}

// Breadcrumb is one folder on the path from the root to a folder.
type Breadcrumb struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Tombstone is a permanently deleted item, kept for delta sync.
type Tombstone struct {
	FileID    string
	Name      string
	ParentID  string
	Seq       int64
	DeletedAt time.Time
}

// Share is a share of an item with a user or by link.
type Share struct {
	ID         string     `json:"id"`
	FileID     string     `json:"file_id"`
	OrgID      string     `json:"-"`
	OwnerID    string     `json:"-"`
	CreatedBy  string     `json:"created_by"`
	UserID     string     `json:"-"`
	Token      string     `json:"-"`
	TeamID     string     `json:"-"`
	OrgWide    bool       `json:"shared_with_organization"`
	Permission string     `json:"permission"`
	ExpiresAt  *time.Time `json:"expires_at"`
	CreatedAt  time.Time  `json:"created_at"`
}

// Lock is a write lock on a file (WebDAV LOCK or an editor session).
type Lock struct {
	FileID    string
	Token     string
	OwnerID   string
	Kind      string
	OwnerInfo string
	// Shared is a shared (not exclusive) lock; Deep covers a folder's descendants.
	Shared    bool
	Deep      bool
	ExpiresAt time.Time
	CreatedAt time.Time
}

// Store keeps the drive: one interface per entity, all of them. Methods
// return app errors: not_found for a missing row, conflict when a live item of
// the same name exists in the folder.
type Store interface {
	app.TxRunner
	FileStore
	VersionStore
	UploadStore
	UsageStore
	BlobRefStore
	TusStore
	SyncStore
	ShareStore
	LockStore
	MountStore
	ArchiveStore
	PreviewStore
	SearchStore
	DigestStore
	PresenceStore

	// DeleteOwner deletes everything of ownerID's drive — items, versions,
	// pending uploads, usage counters, the sync feed, and the locks the user
	// holds — and marks every blob they referred to as orphaned at now.
	DeleteOwner(ctx context.Context, ownerID string, now time.Time) error
}

// FileStore keeps the items (files and folders), the owners' change
// sequences and the deletions' tombstones.
type FileStore interface {
	// NextSeq bumps and returns the owner's change sequence.
	NextSeq(ctx context.Context, ownerID string) (int64, error)
	// RaiseTreeSeq raises the TreeSeq of folder id and of every folder
	// above it to seq, where it is lower, in one statement.
	RaiseTreeSeq(ctx context.Context, id string, seq int64) error

	CreateFile(ctx context.Context, f File) error
	// UpdateFile writes every mutable column of f.
	UpdateFile(ctx context.Context, f File) error
	File(ctx context.Context, id string) (File, error)
	// FilesByID returns the items of ids that exist, in any order, in one
	// read.
	FilesByID(ctx context.Context, ids []string) ([]File, error)
	// LiveChild returns the live (active, not trashed) item named nameKey in a folder.
	LiveChild(ctx context.Context, ownerID, parentID, nameKey string) (File, error)
	// LiveItemAt returns the live item at the end of the path nameKeys (at
	// least one) from the root of ownerID's drive; not found when a name on
	// the way is missing.
	LiveItemAt(ctx context.Context, ownerID string, nameKeys []string) (File, error)
	// Ancestors returns the folders above id, the root-most first.
	Ancestors(ctx context.Context, id string) ([]File, error)
	// Subtree returns the descendants of id (not id itself), parents before
	// children; live only or every row.
	Subtree(ctx context.Context, id string, liveOnly bool) ([]File, error)
	// TrashedWith returns the items trashed together with root (root included).
	TrashedWith(ctx context.Context, ownerID, root string) ([]File, error)
	// List returns one page of a listing and the total count.
	List(ctx context.Context, q Query) ([]File, int, error)
	// DeleteFiles removes rows (versions, shares and locks go with them).
	DeleteFiles(ctx context.Context, ids []string) error
	AddTombstone(ctx context.Context, ownerID string, t Tombstone) error
	// PruneTombstones forgets deletions older than t, raising each owner's
	// pruned sequence so that older delta cursors expire.
	PruneTombstones(ctx context.Context, t time.Time) (int, error)
	// TrashRootsBefore returns trash roots trashed before t, at most limit.
	TrashRootsBefore(ctx context.Context, t time.Time, limit int) ([]File, error)
	// StalePending returns pending files created before t, at most limit.
	StalePending(ctx context.Context, t time.Time, limit int) ([]File, error)
}

// VersionStore keeps the files' versions.
type VersionStore interface {
	AddVersion(ctx context.Context, v Version) error
	Versions(ctx context.Context, fileID string) ([]Version, error)
	DeleteVersions(ctx context.Context, ids []string) error
	// VersionsBefore returns non-head versions created before t, at most limit.
	VersionsBefore(ctx context.Context, t time.Time, limit int) ([]Version, error)
}

// UploadStore keeps the three-step uploads announced and not yet
// confirmed.
type UploadStore interface {
	CreateUpload(ctx context.Context, u Upload) error
	Upload(ctx context.Context, id string) (Upload, error)
	// LatestUpload returns the newest upload of fileID announced by userID.
	LatestUpload(ctx context.Context, fileID, userID string) (Upload, error)
	SetUploadReceived(ctx context.Context, id, hash string, at time.Time) error
	DeleteUploads(ctx context.Context, ids []string) error
	ExpiredUploads(ctx context.Context, t time.Time, limit int) ([]Upload, error)
}

// UsageStore keeps the storage counters by owner and mime group.
type UsageStore interface {
	// AddUsage adjusts the counters of an owner's mime group.
	AddUsage(ctx context.Context, orgID, ownerID, group string, bytes, count int64) error
	// OrgUsage returns the organisation's stored bytes and file count.
	OrgUsage(ctx context.Context, orgID string) (bytes, count int64, err error)
	OwnerUsage(ctx context.Context, orgID, ownerID string) ([]GroupUsage, error)
	LargestFiles(ctx context.Context, orgID, ownerID string, limit int) ([]File, error)
}

// BlobRefStore keeps what the blob collector needs: which contents are
// referred to, orphaned, or held by a write about to refer to them.
type BlobRefStore interface {
	// HashInUse reports whether a version or an upload refers to hash.
	HashInUse(ctx context.Context, hash string) (bool, error)
	AddOrphan(ctx context.Context, hash string, at time.Time) error
	Orphans(ctx context.Context, before time.Time, limit int) ([]string, error)
	DeleteOrphan(ctx context.Context, hash string) error
	// LockBlob, in a transaction, takes blob hash's lock until the
	// transaction ends, waiting for a holder on any node: HoldBlob and the
	// collector's decision about the blob take it.
	LockBlob(ctx context.Context, hash string) error
	// HoldBlob records hold id on blob hash until until (in a transaction
	// that took LockBlob); ReleaseBlob forgets it.
	HoldBlob(ctx context.Context, id, hash string, until time.Time) error
	ReleaseBlob(ctx context.Context, id string) error
	// BlobHeld reports whether a hold on hash lasts past now.
	BlobHeld(ctx context.Context, hash string, now time.Time) (bool, error)
	// PruneBlobHolds forgets the holds that ended by now.
	PruneBlobHolds(ctx context.Context, now time.Time) (int, error)
}

// Blobs is the content-addressed byte store; names are hex SHA-256. It has
// two tiers: objects of their own (Put), and small contents kept with the
// transaction that refers to them (PutSmall). Reading, deleting and walking
// see both.
type Blobs interface {
	// Put streams r into the store, at most limit bytes (limit > 0), and returns
	// the hex SHA-256 and size of what it stored; bytes are durable on return.
	Put(ctx context.Context, r io.Reader, limit int64) (hash string, size int64, err error)
	// PutSmall stores data, whose hex SHA-256 is hash, with the transaction of
	// ctx (Store.InTx): durable when it commits, gone when it rolls back. For
	// contents of at most Options.SmallBytes.
	PutSmall(ctx context.Context, hash string, data []byte) error
	Exists(ctx context.Context, hash string) bool
	Open(ctx context.Context, hash string) (io.ReadSeekCloser, error)
	Delete(ctx context.Context, hash string) error
	// Walk calls fn with every stored blob's hash and modification time.
	Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error
}

// Sweeper is a Blobs that leaves things of its own to clean up (a bucket's
// multipart uploads that a process died in the middle of): maintenance calls
// Sweep with its time and counts what it removed.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time) (int, error)
}

// URLs makes presigned URLs for the byte store.
type URLs interface {
	// Download returns a URL serving blob hash under name with mime type;
	// inline asks browsers to show it rather than save it.
	Download(hash, name, mimeType string, inline bool, ttl time.Duration) string
	// Upload returns a URL accepting one PUT for upload ref.
	Upload(ref string, ttl time.Duration) string
}
