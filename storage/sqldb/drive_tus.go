package sqldb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"atrium/app/drive"
)

var _ drive.TusStore = DriveStore{}

const tusCols = `id, organization_id, created_by, parent_id, name, mime_type, length, length_deferred, upload_offset, hash_state,
	parts, status, content_hash, file_id, created_at, updated_at, expires_at`

func scanTusUpload(sc interface{ Scan(...any) error }) (drive.TusUpload, error) {
	var u drive.TusUpload
	var c, up, e int64
	var parts string
	err := sc.Scan(&u.ID, &u.OrgID, &u.CreatedBy, &u.ParentID, &u.Name, &u.MimeType, &u.Length, &u.LengthDeferred, &u.Offset,
		&u.HashState, &parts, &u.Status, &u.ContentHash, &u.FileID, &c, &up, &e)
	if err != nil {
		return u, err
	}
	u.CreatedAt, u.UpdatedAt, u.ExpiresAt = fromMS(c), fromMS(up), fromMS(e)
	if parts != "" && parts != "[]" {
		if err := json.Unmarshal([]byte(parts), &u.Parts); err != nil {
			return u, fmt.Errorf("parts of upload %s: %w", u.ID, err)
		}
	}
	return u, nil
}

// tusParts is the parts column of u: a JSON array, '[]' for none.
func tusParts(u drive.TusUpload) string {
	if len(u.Parts) == 0 {
		return "[]"
	}
	return jsonText(u.Parts)
}

// CreateTusUpload inserts a resumable upload.
func (s DriveStore) CreateTusUpload(ctx context.Context, u drive.TusUpload) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_tus_uploads (`+tusCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, u.OrgID, u.CreatedBy, u.ParentID, u.Name, u.MimeType,
		u.Length, u.LengthDeferred, u.Offset, u.HashState, tusParts(u), u.Status, u.ContentHash, u.FileID, ms(u.CreatedAt), ms(u.UpdatedAt), ms(u.ExpiresAt))
	return mapErr(err, "upload")
}

// TusUpload returns a resumable upload by id.
func (s DriveStore) TusUpload(ctx context.Context, id string) (drive.TusUpload, error) {
	u, err := scanTusUpload(s.read(ctx).QueryRowContext(ctx, `SELECT `+tusCols+` FROM drive_tus_uploads WHERE id = ?`, id))
	return u, mapErr(err, "upload")
}

// UpdateTusUpload writes the mutable columns of u.
func (s DriveStore) UpdateTusUpload(ctx context.Context, u drive.TusUpload) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE drive_tus_uploads SET length = ?, length_deferred = ?, upload_offset = ?,
		hash_state = ?, parts = ?, status = ?, content_hash = ?, file_id = ?, updated_at = ?, expires_at = ? WHERE id = ?`,
		u.Length, u.LengthDeferred, u.Offset, u.HashState, tusParts(u), u.Status, u.ContentHash, u.FileID, ms(u.UpdatedAt), ms(u.ExpiresAt), u.ID)
	return affected(res, err, "upload")
}

// TusUploadsKnown returns which of ids are uploads that exist.
func (s DriveStore) TusUploadsKnown(ctx context.Context, ids []string) (map[string]bool, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT id FROM drive_tus_uploads WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, mapErr(err, "tus uploads")
	}
	defer rows.Close()
	known := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, mapErr(err, "tus uploads")
		}
		known[id] = true
	}
	return known, mapErr(rows.Err(), "tus uploads")
}

// DeleteTusUploads removes resumable uploads.
func (s DriveStore) DeleteTusUploads(ctx context.Context, ids []string) error {
	return mapErr(deleteByID(ctx, s.write(ctx), "drive_tus_uploads", ids), "uploads")
}

// ExpiredTusUploads returns resumable uploads whose expiry is before t.
func (s DriveStore) ExpiredTusUploads(ctx context.Context, t time.Time, limit int) ([]drive.TusUpload, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+tusCols+` FROM drive_tus_uploads WHERE expires_at < ? ORDER BY expires_at LIMIT ?`, ms(t), limit)
	if err != nil {
		return nil, mapErr(err, "uploads")
	}
	defer rows.Close()
	var out []drive.TusUpload
	for rows.Next() {
		u, err := scanTusUpload(rows)
		if err != nil {
			return nil, mapErr(err, "uploads")
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err(), "uploads")
}
