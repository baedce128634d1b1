package sqldb

import (
	"context"
	"time"

	"atrium/app/drive"
)

var _ drive.PreviewStore = DriveStore{}

const derivedCols = `source_hash, kind, size, derived_hash, size_bytes, created_at, last_used_at`

func scanDerived(sc interface{ Scan(...any) error }) (drive.Derived, error) {
	var d drive.Derived
	var created, used int64
	err := sc.Scan(&d.Source, &d.Kind, &d.Size, &d.Hash, &d.Bytes, &created, &used)
	d.CreatedAt, d.LastUsedAt = fromMS(created), fromMS(used)
	return d, err
}

// Derived returns the cached derived image of source, not_found when none.
func (s DriveStore) Derived(ctx context.Context, source, kind string, size int) (drive.Derived, error) {
	d, err := scanDerived(s.read(ctx).QueryRowContext(ctx, `SELECT `+derivedCols+` FROM drive_previews
		WHERE source_hash = ? AND kind = ? AND size = ?`, source, kind, size))
	return d, mapErr(err, "preview")
}

// AddDerived records a derived image, replacing the row of the same source,
// kind and size.
func (s DriveStore) AddDerived(ctx context.Context, d drive.Derived) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_previews (`+derivedCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (source_hash, kind, size) DO UPDATE SET derived_hash = excluded.derived_hash, size_bytes = excluded.size_bytes, last_used_at = excluded.last_used_at`,
		d.Source, d.Kind, d.Size, d.Hash, d.Bytes, ms(d.CreatedAt), ms(d.LastUsedAt))
	return mapErr(err, "preview")
}

// TouchDerived records a use of a derived image.
func (s DriveStore) TouchDerived(ctx context.Context, source, kind string, size int, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE drive_previews SET last_used_at = ?
		WHERE source_hash = ? AND kind = ? AND size = ?`, ms(at), source, kind, size)
	return mapErr(err, "preview")
}

// DerivedBytes returns the bytes of all cached derived images.
func (s DriveStore) DerivedBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT coalesce(sum(size_bytes), 0) FROM drive_previews`).Scan(&n)
	return n, mapErr(err, "preview bytes")
}

// LeastRecentDerived returns derived images, the least recently used first.
func (s DriveStore) LeastRecentDerived(ctx context.Context, limit int) ([]drive.Derived, error) {
	return s.derivedList(ctx, `SELECT `+derivedCols+` FROM drive_previews ORDER BY last_used_at, source_hash LIMIT ?`, limit)
}

// StaleDerived returns derived images whose source no version refers to any more.
func (s DriveStore) StaleDerived(ctx context.Context, limit int) ([]drive.Derived, error) {
	return s.derivedList(ctx, `SELECT `+derivedCols+` FROM drive_previews p
		WHERE NOT EXISTS (SELECT 1 FROM drive_versions v WHERE v.content_hash = p.source_hash) LIMIT ?`, limit)
}

func (s DriveStore) derivedList(ctx context.Context, query string, limit int) ([]drive.Derived, error) {
	rows, err := s.read(ctx).QueryContext(ctx, query, limit)
	if err != nil {
		return nil, mapErr(err, "previews")
	}
	defer rows.Close()
	var out []drive.Derived
	for rows.Next() {
		d, err := scanDerived(rows)
		if err != nil {
			return nil, mapErr(err, "previews")
		}
		out = append(out, d)
	}
	return out, mapErr(rows.Err(), "previews")
}

// DeleteDerived forgets a derived image.
func (s DriveStore) DeleteDerived(ctx context.Context, d drive.Derived) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_previews WHERE source_hash = ? AND kind = ? AND size = ?`,
		d.Source, d.Kind, d.Size)
	return mapErr(err, "preview")
}

// CreatePreviewToken stores a preview token (by its hash).
func (s DriveStore) CreatePreviewToken(ctx context.Context, t drive.PreviewToken) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_preview_tokens (token_hash, file_id, org_id, user_id, expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, t.Hash, t.FileID, t.OrgID, t.UserID, ms(t.ExpiresAt), ms(t.CreatedAt))
	return mapErr(err, "preview token")
}

// UsePreviewToken marks an unused, unexpired token of fileID used and returns
// it; in one statement, so a token works once. Unknown, used or expired →
// not_found.
func (s DriveStore) UsePreviewToken(ctx context.Context, hash, fileID string, now time.Time) (drive.PreviewToken, error) {
	t := drive.PreviewToken{Hash: hash, FileID: fileID}
	var exp, created int64
	err := s.write(ctx).QueryRowContext(ctx, `UPDATE drive_preview_tokens SET used_at = ?
		WHERE token_hash = ? AND file_id = ? AND used_at IS NULL AND expires_at > ?
		RETURNING org_id, user_id, expires_at, created_at`, ms(now), hash, fileID, ms(now)).Scan(&t.OrgID, &t.UserID, &exp, &created)
	t.ExpiresAt, t.CreatedAt = fromMS(exp), fromMS(created)
	return t, mapErr(err, "preview token")
}

// DeleteExpiredPreviewTokens removes tokens that expired before t.
func (s DriveStore) DeleteExpiredPreviewTokens(ctx context.Context, t time.Time) (int, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_preview_tokens WHERE expires_at < ?`, ms(t))
	if err != nil {
		return 0, mapErr(err, "preview tokens")
	}
	n, err := res.RowsAffected()
	return int(n), mapErr(err, "preview tokens")
}
