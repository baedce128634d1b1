package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
)

// Snapshot writes a consistent copy of the database at src into the new file
// dst with VACUUM INTO: one read transaction, so the copy is the database as of
// one commit, whether or not a server is writing to src meanwhile (WAL lets the
// reader and the writer proceed side by side). src is not changed; dst must not
// exist.
func Snapshot(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("snapshot: %s already exists", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("snapshot: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", fileURI(src, q))
	if err != nil {
		return fmt.Errorf("snapshot: open %s: %w", src, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		os.Remove(dst)
		return fmt.Errorf("snapshot %s: %w", src, err)
	}
	// The copy holds every secret of the database: only its owner reads it.
	if err := os.Chmod(dst, 0o600); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// BlobRefs are the stored bytes a database refers to, by hex SHA-256.
type BlobRefs struct {
	// Hot are the objects of the blob store the database needs: every version
	// (but the head of an archived or restoring file, whose bytes are in the
	// archive), received uploads, TUS uploads awaiting resolution and previews
	// — but not the small contents the database holds itself (SmallBlobs).
	Hot []string
	// Warm are heads of restoring files: in the blob store when their restore
	// got far enough, else read again from the archive. Not required.
	Warm []string
	// Cold are the archive copies of archived and restoring files.
	Cold []string
	// Tus are the resumable uploads still receiving bytes and how many bytes of
	// each the database has recorded.
	Tus []TusPart
}

// TusPart is a resumable upload in progress.
type TusPart struct {
	ID        string
	Offset    int64
	HashState []byte
}

// ReadBlobRefs lists the stored bytes the database file at path refers to. The
// file is opened read-only and immutable: use it on a snapshot, not on a live
// database.
func ReadBlobRefs(ctx context.Context, path string) (BlobRefs, error) {
	db, err := openImmutable(path)
	if err != nil {
		return BlobRefs{}, err
	}
	defer db.Close()
	var out BlobRefs
	lists := []struct {
		to    *[]string
		query string
	}{
		{&out.Hot, `SELECT v.content_hash FROM drive_versions v JOIN drive_files f ON f.id = v.file_id
				WHERE NOT (f.status IN ('archived', 'restoring') AND v.version = f.version)
			UNION SELECT content_hash FROM drive_uploads WHERE content_hash <> ''
			UNION SELECT content_hash FROM drive_tus_uploads WHERE content_hash <> ''
			UNION SELECT derived_hash FROM drive_previews`},
		{&out.Warm, `SELECT content_hash FROM drive_files WHERE status = 'restoring' AND is_folder = 0 AND content_hash <> ''
			EXCEPT SELECT v.content_hash FROM drive_versions v JOIN drive_files f ON f.id = v.file_id
				WHERE NOT (f.status IN ('archived', 'restoring') AND v.version = f.version)`},
		{&out.Cold, `SELECT DISTINCT content_hash FROM drive_files
			WHERE status IN ('archived', 'restoring') AND is_folder = 0 AND content_hash <> ''`},
	}
	for _, l := range lists {
		hashes, err := scanHashes(db.QueryContext(ctx, l.query))
		if err != nil {
			return BlobRefs{}, fmt.Errorf("blob references of %s: %w", path, err)
		}
		*l.to = hashes
	}
	// Small contents are in the database itself: a backup copies no file of
	// theirs and a restore needs none. (A database from before the table has none.)
	var hasSmall bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema
		WHERE type = 'table' AND name = 'drive_small_blobs')`).Scan(&hasSmall); err != nil {
		return BlobRefs{}, fmt.Errorf("small contents of %s: %w", path, err)
	}
	var small []string
	if hasSmall {
		if small, err = scanHashes(db.QueryContext(ctx, `SELECT hash FROM drive_small_blobs`)); err != nil {
			return BlobRefs{}, fmt.Errorf("small contents of %s: %w", path, err)
		}
	}
	if len(small) > 0 {
		inDB := make(map[string]bool, len(small))
		for _, h := range small {
			inDB[h] = true
		}
		out.Hot, out.Warm = notIn(out.Hot, inDB), notIn(out.Warm, inDB)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, upload_offset, hash_state FROM drive_tus_uploads
		WHERE status = 'uploading' AND upload_offset > 0 ORDER BY id`)
	if err != nil {
		return BlobRefs{}, fmt.Errorf("resumable uploads of %s: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p TusPart
		if err := rows.Scan(&p.ID, &p.Offset, &p.HashState); err != nil {
			return BlobRefs{}, fmt.Errorf("resumable uploads of %s: %w", path, err)
		}
		out.Tus = append(out.Tus, p)
	}
	if err := rows.Err(); err != nil {
		return BlobRefs{}, fmt.Errorf("resumable uploads of %s: %w", path, err)
	}
	return out, nil
}

// notIn returns the hashes of l not in drop, in order.
func notIn(l []string, drop map[string]bool) []string {
	out := l[:0]
	for _, h := range l {
		if !drop[h] {
			out = append(out, h)
		}
	}
	return out
}

// scanHashes reads one column of content hashes ("sha256:<hex>" or bare hex)
// into bare hex, sorted as the query returns them.
func scanHashes(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out = append(out, strings.TrimPrefix(h, "sha256:"))
	}
	return out, rows.Err()
}

// CheckFile runs PRAGMA integrity_check on the database file at path (opened
// read-only and immutable) and returns its answer ("ok" when sound) and the
// schema version its migrations reached.
func CheckFile(ctx context.Context, path string) (integrity string, schema int64, err error) {
	db, err := openImmutable(path)
	if err != nil {
		return "", 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return "", 0, fmt.Errorf("integrity check of %s: %w", path, err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return "", 0, fmt.Errorf("integrity check of %s: %w", path, err)
		}
		out = append(out, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", 0, fmt.Errorf("integrity check of %s: %w", path, err)
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		return strings.Join(out, "; "), 0, fmt.Errorf("schema version of %s: %w", path, err)
	}
	return strings.Join(out, "; "), v.Int64, nil
}

// openImmutable opens a database file that nothing writes to: no locks, no WAL
// or journal files beside it, nothing written.
func openImmutable(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	q := url.Values{}
	q.Add("mode", "ro")
	q.Add("immutable", "1")
	db, err := sql.Open("sqlite", fileURI(path, q))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// fileURI is the file: URI of path with the query q; the path is escaped
// where URI parsing would cut or decode it.
func fileURI(path string, q url.Values) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + q.Encode()
}
