package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"atrium/app/drive"
)

var _ drive.SyncStore = DriveStore{}

// SyncSeq returns the owner's current and pruned change sequence numbers.
func (s DriveStore) SyncSeq(ctx context.Context, ownerID string) (int64, int64, error) {
	var seq, pruned int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT seq, pruned_seq FROM drive_seq WHERE owner_id = ?`, ownerID).Scan(&seq, &pruned)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	return seq, pruned, mapErr(err, "drive sequence")
}

// changesSQL selects an owner's changes after a sequence number: live and
// trashed items (never pending ones) and tombstones, leaving out deletions
// numbered at most omitDeleted. Both halves walk an (owner_id, seq) index, and
// SQLite merges them in sequence order.
const changesSQL = `
	SELECT f.id, f.name, f.parent_id, f.is_folder, f.content_hash, f.version, f.size_bytes, f.updated_at, f.trashed_at, f.seq
	FROM drive_files f
	WHERE f.owner_id = ?1 AND f.seq > ?2 AND f.status <> 'pending' AND (f.trashed_at IS NULL OR f.seq > ?3)
	UNION ALL
	SELECT t.file_id, t.name, t.parent_id, 0, '', 0, 0, t.deleted_at, t.deleted_at, t.seq
	FROM drive_tombstones t
	WHERE t.owner_id = ?1 AND t.seq > ?2 AND t.seq > ?3`

// Changes returns up to limit changes after a sequence number, in order.
func (s DriveStore) Changes(ctx context.Context, ownerID string, after, omitDeleted int64, limit int) ([]drive.DeltaItem, error) {
	rows, err := s.read(ctx).QueryContext(ctx, changesSQL+` ORDER BY seq LIMIT ?4`, ownerID, after, omitDeleted, limit)
	if err != nil {
		return nil, mapErr(err, "drive changes")
	}
	defer rows.Close()
	out := []drive.DeltaItem{}
	for rows.Next() {
		var it drive.DeltaItem
		var parent sql.NullString
		var updated int64
		var trashed sql.NullInt64
		if err := rows.Scan(&it.ID, &it.Name, &parent, &it.IsFolder, &it.ContentHash, &it.Version, &it.SizeBytes, &updated,
			&trashed, &it.Seq); err != nil {
			return nil, mapErr(err, "drive changes")
		}
		if parent.Valid {
			it.ParentID = &parent.String
		}
		it.UpdatedAt = fromMS(updated)
		if trashed.Valid {
			it.Deleted = true
			if t := fromMS(trashed.Int64); t.After(it.UpdatedAt) {
				it.UpdatedAt = t
			}
		}
		out = append(out, it)
	}
	return out, mapErr(rows.Err(), "drive changes")
}

// CountChanges counts an owner's changes after a sequence number.
func (s DriveStore) CountChanges(ctx context.Context, ownerID string, after, omitDeleted int64) (int64, error) {
	var n int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM drive_files f WHERE f.owner_id = ?1 AND f.seq > ?2 AND f.status <> 'pending'
			AND (f.trashed_at IS NULL OR f.seq > ?3))
		+ (SELECT count(*) FROM drive_tombstones t WHERE t.owner_id = ?1 AND t.seq > ?2 AND t.seq > ?3)`,
		ownerID, after, omitDeleted).Scan(&n)
	return n, mapErr(err, "drive changes")
}

// TouchDevice registers a device or updates its last_seen_at.
func (s DriveStore) TouchDevice(ctx context.Context, ownerID, deviceID string, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_devices (owner_id, device_id, last_seen_at) VALUES (?, ?, ?)
		ON CONFLICT (owner_id, device_id) DO UPDATE SET last_seen_at = excluded.last_seen_at`, ownerID, deviceID, ms(at))
	return mapErr(err, "sync device")
}

// CommitDevice stores a device's committed cursor.
func (s DriveStore) CommitDevice(ctx context.Context, ownerID, deviceID, cursor string, cursorSeq int64, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_devices (owner_id, device_id, cursor, cursor_seq, committed_at, last_seen_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT (owner_id, device_id) DO UPDATE SET cursor = excluded.cursor,
		cursor_seq = excluded.cursor_seq, committed_at = excluded.committed_at, last_seen_at = excluded.last_seen_at`,
		ownerID, deviceID, cursor, cursorSeq, ms(at))
	return mapErr(err, "sync device")
}

const deviceCols = `device_id, cursor, committed_at, last_seen_at`

func scanDevice(sc interface{ Scan(...any) error }) (drive.Device, error) {
	var d drive.Device
	var committed sql.NullInt64
	var seen int64
	err := sc.Scan(&d.DeviceID, &d.Cursor, &committed, &seen)
	d.CommittedAt, d.LastSeenAt = fromMSPtr(committed), fromMS(seen)
	return d, err
}

// Device returns one of the owner's devices.
func (s DriveStore) Device(ctx context.Context, ownerID, deviceID string) (drive.Device, error) {
	d, err := scanDevice(s.read(ctx).QueryRowContext(ctx, `SELECT `+deviceCols+` FROM drive_devices
		WHERE owner_id = ? AND device_id = ?`, ownerID, deviceID))
	return d, mapErr(err, "sync device")
}

// Devices lists the owner's devices, the most recently seen first.
func (s DriveStore) Devices(ctx context.Context, ownerID string) ([]drive.Device, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+deviceCols+` FROM drive_devices WHERE owner_id = ?
		ORDER BY last_seen_at DESC, device_id`, ownerID)
	if err != nil {
		return nil, mapErr(err, "sync devices")
	}
	defer rows.Close()
	out := []drive.Device{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, mapErr(err, "sync devices")
		}
		out = append(out, d)
	}
	return out, mapErr(rows.Err(), "sync devices")
}
