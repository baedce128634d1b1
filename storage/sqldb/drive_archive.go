package sqldb

import (
	"context"
	"time"

	"atrium/app/drive"
)

var _ drive.ArchiveStore = DriveStore{}

// TouchFile records a download of a file (its last access).
func (s DriveStore) TouchFile(ctx context.Context, id string, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE drive_files SET last_access_at = ? WHERE id = ?`, ms(at), id)
	return mapErr(err, "file access")
}

// coldScanIndex is the index ColdCandidates reads: the active files by last
// access (or change), oldest first.
const coldScanIndex = `CREATE INDEX IF NOT EXISTS drive_files_access ON drive_files((ifnull(last_access_at, updated_at)))
	WHERE status = 'active' AND is_folder = 0`

// ColdScanIndex builds the index of ColdCandidates when on (the archive tier
// archives cold files: [drive] archive_after) and drops it when off. Every new
// or downloaded file writes a row into it, which only that scan reads, so a
// server that does not archive keeps none (migration 00023). Building it is a
// pass over the files (seconds for a million), once, when the setting is
// turned on; changed says whether it was built or dropped now.
func (db *DB) ColdScanIndex(ctx context.Context, on bool) (changed bool, err error) {
	var exists bool
	if err := db.read(ctx).QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+db.indexes()+`
		WHERE name = 'drive_files_access')`).Scan(&exists); err != nil {
		return false, mapErr(err, "cold files index")
	}
	if exists == on {
		return false, nil
	}
	q := `DROP INDEX IF EXISTS drive_files_access` // idempotent: another process (a command) may have done it meanwhile
	if on {
		q = coldScanIndex
	}
	if _, err := db.Exec(ctx, q); err != nil {
		return false, mapErr(err, "cold files index")
	}
	return true, nil
}

// coldCandidates is the scan of cold files after its SELECT list.
const coldCandidates = ` FROM drive_files f
	WHERE f.status = 'active' AND f.is_folder = 0 AND f.trashed_at IS NULL AND ifnull(f.last_access_at, f.updated_at) < ?
	ORDER BY ifnull(f.last_access_at, f.updated_at) LIMIT ?`

// ColdCandidates returns active files not downloaded (nor changed) since t.
func (s DriveStore) ColdCandidates(ctx context.Context, t time.Time, limit int) ([]drive.File, error) {
	return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+coldCandidates, ms(t), limit))
}

// AddArchived records that the archive holds hash.
func (s DriveStore) AddArchived(ctx context.Context, hash string, size int64, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_archive (content_hash, size_bytes, archived_at) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, hash, size, ms(at))
	return mapErr(err, "archived copy")
}

// UnusedArchived returns archived copies no archived or restoring file refers to.
func (s DriveStore) UnusedArchived(ctx context.Context, limit int) ([]string, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT a.content_hash FROM drive_archive a WHERE NOT EXISTS (
		SELECT 1 FROM drive_files f WHERE f.content_hash = a.content_hash AND f.status IN ('archived', 'restoring')) LIMIT ?`, limit)
	if err != nil {
		return nil, mapErr(err, "archived copies")
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, mapErr(err, "archived copies")
		}
		out = append(out, h)
	}
	return out, mapErr(rows.Err(), "archived copies")
}

// DeleteArchived forgets the archived copy of hash.
func (s DriveStore) DeleteArchived(ctx context.Context, hash string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_archive WHERE content_hash = ?`, hash)
	return mapErr(err, "archived copy")
}
