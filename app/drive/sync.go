package drive

// The sync feed (delta sync): signed per-device cursors over the owner's
// change sequence, tombstones, and the devices' sync status
// (SyncCommit, SyncStatus).

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"atrium/app"
)

// Delta sync (spec §4.7). Every change to an owner's item is stamped with the
// owner's next change sequence number in the same transaction (Service.change;
// permanent deletions leave a tombstone with its own number), so "the changes
// after sequence c, in sequence order" is a total, stable order per owner: a row
// changed while a client pages moves to a higher number and is seen again later.
// A cursor carries the last number the client has seen; it is signed, bound to
// the owner, and does not age — it expires only when deletions it has not seen
// were forgotten (TombstoneMaxAge, PruneTombstones).

// Delta limits (CONTRACT §4).
const (
	DefaultDeltaLimit = 500
	MaxDeltaLimit     = 1000
	MaxDeviceIDLen    = 64
)

// DeltaItem is one change of the delta feed: the item as it is now, or
// deleted: true when it left the owner's live tree (trashed, alone or with its
// folder, or deleted permanently). Items may arrive child before parent: a
// replica resolves parent_id by id once the page (or the feed) is applied.
type DeltaItem struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	ParentID *string `json:"parent_id"`
	Deleted  bool    `json:"deleted"`
	// IsFolder tells folders from files; false for permanently deleted items.
	IsFolder    bool      `json:"is_folder"`
	ContentHash string    `json:"content_hash"`
	Version     int       `json:"version"`
	SizeBytes   int64     `json:"size_bytes"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Seq is the owner's change sequence number of this change.
	Seq int64 `json:"-"`
}

// DeltaPage is one response of sync/delta.
type DeltaPage struct {
	Items   []DeltaItem `json:"items"`
	Cursor  string      `json:"cursor"`
	HasMore bool        `json:"has_more"`
}

// DeviceStatus is a device's committed progress (sync/status and sync/commit).
type DeviceStatus struct {
	DeviceID    string     `json:"device_id"`
	Cursor      string     `json:"cursor"`
	CommittedAt *time.Time `json:"committed_at"`
	// PendingChanges counts the changes after the committed cursor (all live
	// items when nothing was committed yet).
	PendingChanges int64 `json:"pending_changes"`
}

// Device is a registered sync device (sync/devices).
type Device struct {
	DeviceID    string     `json:"device_id"`
	LastSeenAt  time.Time  `json:"last_seen_at"`
	CommittedAt *time.Time `json:"committed_at"`
	// Cursor is the committed cursor, "" when none.
	Cursor string `json:"-"`
}

// SyncStore is what delta sync needs of the store.
type SyncStore interface {
	// SyncSeq returns the owner's current and pruned change sequence numbers
	// (0, 0 for an owner who never changed anything).
	SyncSeq(ctx context.Context, ownerID string) (seq, pruned int64, err error)
	// Changes returns up to limit changes of the owner with a sequence number
	// above after, in sequence order: items (never pending ones; trashed ones as
	// deleted) and tombstones; deleted items and tombstones numbered at most
	// omitDeleted are left out (a snapshot does not report what it never showed).
	Changes(ctx context.Context, ownerID string, after, omitDeleted int64, limit int) ([]DeltaItem, error)
	// CountChanges counts what Changes would return without a limit.
	CountChanges(ctx context.Context, ownerID string, after, omitDeleted int64) (int64, error)
	// TouchDevice registers the device or updates its last_seen_at.
	TouchDevice(ctx context.Context, ownerID, deviceID string, at time.Time) error
	// CommitDevice stores the device's committed cursor (registering it).
	CommitDevice(ctx context.Context, ownerID, deviceID, cursor string, cursorSeq int64, at time.Time) error
	// Device returns one device; not_found when unknown.
	Device(ctx context.Context, ownerID, deviceID string) (Device, error)
	// Devices lists the owner's devices, the most recently seen first.
	Devices(ctx context.Context, ownerID string) ([]Device, error)
}

// syncCursor is the decoded position of a delta client.
type syncCursor struct {
	// snapshot is true while a full snapshot is being paged.
	snapshot bool
	// seq is the last change sequence number the client has seen.
	seq int64
	// start is the owner's sequence number when the snapshot began: deleted
	// items numbered up to it are not reported by the snapshot.
	start int64
}

const (
	cursorVersion  = 1
	modeDelta      = 'd'
	modeSnapshot   = 's'
	cursorMACBytes = 16
)

func (s *Service) syncMAC(ownerID string, payload []byte) ([]byte, error) {
	if len(s.opts.SyncKey) == 0 {
		return nil, errors.New("drive sync: no cursor signing key configured (Options.SyncKey)")
	}
	m := hmac.New(sha256.New, s.opts.SyncKey)
	m.Write([]byte("drive-sync\x00" + ownerID + "\x00"))
	m.Write(payload)
	return m.Sum(nil)[:cursorMACBytes], nil
}

// encodeCursor returns a compact signed cursor bound to ownerID.
func (s *Service) encodeCursor(ownerID string, c syncCursor) (string, error) {
	mode := byte(modeDelta)
	if c.snapshot {
		mode = modeSnapshot
	}
	b := []byte{cursorVersion, mode}
	b = binary.AppendUvarint(b, uint64(c.seq))
	if c.snapshot {
		b = binary.AppendUvarint(b, uint64(c.start))
	}
	mac, err := s.syncMAC(ownerID, b)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(append(b, mac...)), nil
}

// decodeCursor reads a cursor of ownerID; a tampered, malformed or foreign one
// is invalid_cursor.
func (s *Service) decodeCursor(ownerID, cursor string) (syncCursor, error) {
	invalid := app.Errorf(app.EInvalidCursor, "The sync cursor is not valid; restart with a snapshot (no cursor).")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) < 3+cursorMACBytes {
		return syncCursor{}, invalid
	}
	payload, sig := raw[:len(raw)-cursorMACBytes], raw[len(raw)-cursorMACBytes:]
	want, err := s.syncMAC(ownerID, payload)
	if err != nil {
		return syncCursor{}, err
	}
	if !hmac.Equal(sig, want) || payload[0] != cursorVersion {
		return syncCursor{}, invalid
	}
	c := syncCursor{snapshot: payload[1] == modeSnapshot}
	if !c.snapshot && payload[1] != modeDelta {
		return syncCursor{}, invalid
	}
	rest := payload[2:]
	seq, n := binary.Uvarint(rest)
	if n <= 0 {
		return syncCursor{}, invalid
	}
	c.seq, rest = int64(seq), rest[n:]
	if c.snapshot {
		start, n := binary.Uvarint(rest)
		if n <= 0 {
			return syncCursor{}, invalid
		}
		c.start, rest = int64(start), rest[n:]
	}
	if len(rest) != 0 || c.seq < 0 || c.start < 0 {
		return syncCursor{}, invalid
	}
	return c, nil
}

// omitDeleted is the sequence number up to which deletions are not reported.
func (c syncCursor) omitDeleted() int64 {
	if c.snapshot {
		return c.start
	}
	return 0
}

// needs is the lowest sequence number whose deletions the cursor still needs:
// deletions numbered above it.
func (c syncCursor) needs() int64 { return max(c.seq, c.omitDeleted()) }

func checkDevice(deviceID, location string) error {
	if deviceID == "" {
		return app.Invalid(location, "A device id is required: a stable id the client generates once (a UUID is recommended).", deviceID)
	}
	if utf8.RuneCountInString(deviceID) > MaxDeviceIDLen {
		return app.Invalid(location, fmt.Sprintf("A device id is at most %d characters.", MaxDeviceIDLen), deviceID)
	}
	if !utf8.ValidString(deviceID) || strings.IndexFunc(deviceID, unicode.IsControl) >= 0 {
		return app.Invalid(location, "A device id must be valid UTF-8 without control characters.", deviceID)
	}
	return nil
}

// expired checks that the deletions c still needs are remembered.
func (s *Service) expired(c syncCursor, pruned int64) error {
	if pruned > c.needs() {
		return app.Errorf(app.ECursorExpired, "The sync cursor is older than the kept change log; restart with a snapshot (no cursor).")
	}
	return nil
}

// Delta returns the caller's changes after cursor, at most limit (0: the
// default): without a cursor a full snapshot starts. While has_more is true the
// client calls again with the returned cursor; the last page's cursor is the
// one to store and to commit. The call registers deviceID (last_seen_at).
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan, validation_failed (the device id, the limit),
// invalid_cursor, cursor_expired.
func (s *Service) Delta(ctx context.Context, p *app.Principal, deviceID, cursor string, limit int) (DeltaPage, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return DeltaPage{}, err
	}
	var v app.Validator
	if err := checkDevice(deviceID, "query.device_id"); err != nil {
		v.Add("query.device_id", app.ErrorMessage(err), deviceID)
	}
	if limit == 0 {
		limit = DefaultDeltaLimit
	}
	v.Check(limit >= 1 && limit <= MaxDeltaLimit, "query.limit", fmt.Sprintf("The limit is 1 to %d.", MaxDeltaLimit), limit)
	if err := v.Err(); err != nil {
		return DeltaPage{}, err
	}
	seq, pruned, err := s.store.SyncSeq(ctx, p.UserID)
	if err != nil {
		return DeltaPage{}, err
	}
	c := syncCursor{snapshot: true, start: seq}
	if cursor != "" {
		if c, err = s.decodeCursor(p.UserID, cursor); err != nil {
			return DeltaPage{}, err
		}
		if err := s.expired(c, pruned); err != nil {
			return DeltaPage{}, err
		}
	}
	if err := s.store.TouchDevice(ctx, p.UserID, deviceID, s.clock.Now()); err != nil {
		return DeltaPage{}, err
	}
	items, err := s.store.Changes(ctx, p.UserID, c.seq, c.omitDeleted(), limit+1)
	if err != nil {
		return DeltaPage{}, err
	}
	page := DeltaPage{Items: items, HasMore: len(items) > limit}
	if page.HasMore {
		page.Items = items[:limit]
	}
	if n := len(page.Items); n > 0 {
		c.seq = page.Items[n-1].Seq
	}
	if !page.HasMore && c.snapshot {
		// The snapshot is complete: what it left out is at most c.start, so the
		// client continues with the changes after both.
		c = syncCursor{seq: c.needs()}
	}
	if page.Cursor, err = s.encodeCursor(p.UserID, c); err != nil {
		return DeltaPage{}, err
	}
	return page, nil
}

// SyncCommit records that deviceID has applied everything up to cursor. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// validation_failed (the device id, no cursor), invalid_cursor, cursor_expired.
func (s *Service) SyncCommit(ctx context.Context, p *app.Principal, deviceID, cursor string) (DeviceStatus, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return DeviceStatus{}, err
	}
	if err := checkDevice(deviceID, "body.device_id"); err != nil {
		return DeviceStatus{}, err
	}
	if cursor == "" {
		return DeviceStatus{}, app.Invalid("body.cursor", "The cursor of the last delta page applied is required.", cursor)
	}
	c, err := s.decodeCursor(p.UserID, cursor)
	if err != nil {
		return DeviceStatus{}, err
	}
	_, pruned, err := s.store.SyncSeq(ctx, p.UserID)
	if err != nil {
		return DeviceStatus{}, err
	}
	if err := s.expired(c, pruned); err != nil {
		return DeviceStatus{}, err
	}
	if err := s.store.CommitDevice(ctx, p.UserID, deviceID, cursor, c.seq, s.clock.Now()); err != nil {
		return DeviceStatus{}, err
	}
	return s.syncStatus(ctx, p, deviceID)
}

// SyncStatus returns a device's committed cursor and how many changes it has not
// applied; a device that never called sync/delta is not_found. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// validation_failed (the device id), not_found (a device that never called
// Delta).
func (s *Service) SyncStatus(ctx context.Context, p *app.Principal, deviceID string) (DeviceStatus, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return DeviceStatus{}, err
	}
	if err := checkDevice(deviceID, "query.device_id"); err != nil {
		return DeviceStatus{}, err
	}
	return s.syncStatus(ctx, p, deviceID)
}

func (s *Service) syncStatus(ctx context.Context, p *app.Principal, deviceID string) (DeviceStatus, error) {
	d, err := s.store.Device(ctx, p.UserID, deviceID)
	if app.ErrorCode(err) == app.ENotFound {
		return DeviceStatus{}, app.Errorf(app.ENotFound, "No sync device %q; it registers with its first sync/delta call.", deviceID)
	}
	if err != nil {
		return DeviceStatus{}, err
	}
	seq, _, err := s.store.SyncSeq(ctx, p.UserID)
	if err != nil {
		return DeviceStatus{}, err
	}
	c := syncCursor{snapshot: true, start: seq} // nothing committed: a snapshot is pending
	if d.Cursor != "" {
		if c, err = s.decodeCursor(p.UserID, d.Cursor); err != nil {
			return DeviceStatus{}, fmt.Errorf("stored cursor of device %s: %w", deviceID, err)
		}
	}
	n, err := s.store.CountChanges(ctx, p.UserID, c.seq, c.omitDeleted())
	if err != nil {
		return DeviceStatus{}, err
	}
	return DeviceStatus{DeviceID: d.DeviceID, Cursor: d.Cursor, CommittedAt: d.CommittedAt, PendingChanges: n}, nil
}

// Devices lists the caller's sync devices. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan.
func (s *Service) Devices(ctx context.Context, p *app.Principal) ([]Device, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	return s.store.Devices(ctx, p.UserID)
}

// SyncFile returns one of the caller's own items in delta-item shape (trashed:
// deleted). Items of others — shared with the caller or not — are not_found.
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan, not_found (no such item of the caller's own, or a
// pending upload).
func (s *Service) SyncFile(ctx context.Context, p *app.Principal, id string) (DeltaItem, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return DeltaItem{}, err
	}
	f, err := s.store.File(ctx, id)
	if app.ErrorCode(err) == app.ENotFound {
		return DeltaItem{}, notFound()
	}
	if err != nil {
		return DeltaItem{}, err
	}
	if f.OrgID != p.OrgID || f.OwnerID != p.UserID || f.Status == StatusPending {
		return DeltaItem{}, notFound()
	}
	return DeltaItemOf(f), nil
}

// DeltaItemOf returns f in delta-item shape.
func DeltaItemOf(f File) DeltaItem {
	it := DeltaItem{ID: f.ID, Name: f.Name, ParentID: f.ParentID, Deleted: f.TrashedAt != nil, IsFolder: f.IsFolder,
		ContentHash: f.ContentHash, Version: f.Version, SizeBytes: f.SizeBytes, UpdatedAt: f.UpdatedAt, Seq: f.Seq}
	if f.TrashedAt != nil && f.TrashedAt.After(it.UpdatedAt) {
		it.UpdatedAt = *f.TrashedAt
	}
	return it
}

// WithSyncKey returns o with the key that signs delta sync cursors.
func (o Options) WithSyncKey(key []byte) Options {
	o.SyncKey = key
	return o
}
