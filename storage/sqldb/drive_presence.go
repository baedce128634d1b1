package sqldb

import (
	"context"
	"time"

	"atrium/app/drive"
)

// SeenEditor refreshes the presence of session key on fileID when it was
// last seen before stale; false when there is none.
func (s DriveStore) SeenEditor(ctx context.Context, fileID, key string, now, stale time.Time) (bool, error) {
	var n int
	err := s.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM drive_editor_presence WHERE file_id = ? AND session_key = ?`, fileID, key).Scan(&n)
	if err != nil || n == 0 {
		return false, mapErr(err, "editor presence")
	}
	_, err = s.write(ctx).ExecContext(ctx, `UPDATE drive_editor_presence SET seen = ? WHERE file_id = ? AND session_key = ? AND seen < ?`,
		ms(now), fileID, key, ms(stale))
	return true, mapErr(err, "editor presence")
}

// AddEditor records a presence; one already there for the key stays.
func (s DriveStore) AddEditor(ctx context.Context, fileID, key string, pr drive.EditorPresence) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_editor_presence (file_id, session_key, user_id, name, email, guest, since, seen)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (file_id, session_key) DO UPDATE SET seen = excluded.seen`,
		fileID, key, pr.UserID, pr.Name, pr.Email, pr.Guest, ms(pr.Since), ms(pr.Seen))
	return mapErr(err, "editor presence")
}

// Editors returns the presences on fileID seen since since, the earliest
// arrived first.
func (s DriveStore) Editors(ctx context.Context, fileID string, since time.Time) ([]drive.EditorPresence, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT user_id, name, email, guest, since, seen FROM drive_editor_presence
		WHERE file_id = ? AND seen >= ? ORDER BY since, session_key`, fileID, ms(since))
	if err != nil {
		return nil, mapErr(err, "editor presence")
	}
	defer rows.Close()
	var out []drive.EditorPresence
	for rows.Next() {
		var pr drive.EditorPresence
		var since, seen int64
		if err := rows.Scan(&pr.UserID, &pr.Name, &pr.Email, &pr.Guest, &since, &seen); err != nil {
			return nil, mapErr(err, "editor presence")
		}
		pr.Since, pr.Seen = time.UnixMilli(since), time.UnixMilli(seen)
		out = append(out, pr)
	}
	return out, mapErr(rows.Err(), "editor presence")
}

// DropEditors forgets the presences on fileID.
func (s DriveStore) DropEditors(ctx context.Context, fileID string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_editor_presence WHERE file_id = ?`, fileID)
	return mapErr(err, "editor presence")
}

// PruneEditors forgets the presences last seen before before.
func (s DriveStore) PruneEditors(ctx context.Context, before time.Time) (int, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_editor_presence WHERE seen < ?`, ms(before))
	if err != nil {
		return 0, mapErr(err, "editor presence")
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
