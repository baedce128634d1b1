package sqldb

import (
	"context"
	"database/sql"
	"time"

	"atrium/app/drive"
)

const lockCols = `l.token, l.file_id, l.owner_id, l.kind, l.shared, l.deep, l.owner_info, l.expires_at, l.created_at`

func scanLock(sc interface{ Scan(...any) error }) (drive.Lock, error) {
	var l drive.Lock
	var e, c int64
	err := sc.Scan(&l.Token, &l.FileID, &l.OwnerID, &l.Kind, &l.Shared, &l.Deep, &l.OwnerInfo, &e, &c)
	l.ExpiresAt, l.CreatedAt = fromMS(e), fromMS(c)
	return l, err
}

func scanLocks(rows *sql.Rows, err error) ([]drive.Lock, error) {
	if err != nil {
		return nil, mapErr(err, "drive locks")
	}
	defer rows.Close()
	out := []drive.Lock{}
	for rows.Next() {
		l, err := scanLock(rows)
		if err != nil {
			return nil, mapErr(err, "drive locks")
		}
		out = append(out, l)
	}
	return out, mapErr(rows.Err(), "drive locks")
}

// AddLock inserts a lock, first removing expired locks of the same file, in
// one transaction (the caller's, or one of its own).
func (s DriveStore) AddLock(ctx context.Context, l drive.Lock) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		// Set in the transaction, on the committer's goroutine, before the
		// insert: the lock checks look from now on. Set before the
		// transaction began, a commit that cleared the hint in between
		// (another transaction released the last lock) would hide this one.
		s.driveLocks.Store(true)
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_locks WHERE file_id = ? AND expires_at <= ?`,
			l.FileID, ms(l.CreatedAt)); err != nil {
			return mapErr(err, "drive lock")
		}
		noteLocksGone(ctx)
		_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_locks (token, file_id, owner_id, kind, shared, deep, owner_info,
			expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, l.Token, l.FileID, l.OwnerID, l.Kind, l.Shared, l.Deep,
			l.OwnerInfo, ms(l.ExpiresAt), ms(l.CreatedAt))
		return mapErr(err, "drive lock")
	})
}

// LockByToken returns a lock, expired or not.
func (s DriveStore) LockByToken(ctx context.Context, token string) (drive.Lock, error) {
	l, err := scanLock(s.read(ctx).QueryRowContext(ctx, `SELECT `+lockCols+` FROM drive_locks l WHERE l.token = ?`, token))
	return l, mapErr(err, "drive lock")
}

// SetLockExpiry moves a lock's expiry.
func (s DriveStore) SetLockExpiry(ctx context.Context, token string, at time.Time) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE drive_locks SET expires_at = ? WHERE token = ?`, ms(at), token)
	if err != nil {
		return mapErr(err, "drive lock")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapErr(sql.ErrNoRows, "drive lock")
	}
	return nil
}

// DeleteLock removes a lock (in the caller's transaction, or one of its own,
// whose commit clears the lock hint when no lock is left: noteLocksGone).
func (s DriveStore) DeleteLock(ctx context.Context, token string) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_locks WHERE token = ?`, token)
		noteLocksGone(ctx)
		return mapErr(err, "drive lock")
	})
}

// anyLiveLock is true when some lock is live. Every write checks the locks
// on its item and the folders above, and there are seldom any: SQLite tests
// this first and, when it is false, does not walk the folders (a recursive
// query, which opens a table of its own). With no lock, the check takes
// about a third of what it took (storage BenchmarkDriveLocksOn, beyond its
// empty transaction: 4-8 us against 12-21 us).
const anyLiveLock = `EXISTS (SELECT 1 FROM drive_locks WHERE expires_at > ?2)`

// LocksOn returns the live locks on fileID, deep ones above it and, with
// below, those on its descendants.
func (s DriveStore) LocksOn(ctx context.Context, fileID string, below bool, now time.Time) ([]drive.Lock, error) {
	if !s.driveLocks.Load() {
		return []drive.Lock{}, nil // no lock was ever taken (DB.driveLocks)
	}
	q := `WITH RECURSIVE up(id, parent_id, depth) AS (
			SELECT id, parent_id, 0 FROM drive_files WHERE id = ?1
			UNION ALL SELECT p.id, p.parent_id, up.depth + 1 FROM drive_files p JOIN up ON p.id = up.parent_id WHERE up.depth < 1000)
		SELECT ` + lockCols + ` FROM up JOIN drive_locks l ON l.file_id = up.id
		WHERE ` + anyLiveLock + ` AND l.expires_at > ?2 AND (up.depth = 0 OR l.deep = 1)`
	if below {
		q = `WITH RECURSIVE up(id, parent_id, depth) AS (
			SELECT id, parent_id, 0 FROM drive_files WHERE id = ?1
			UNION ALL SELECT p.id, p.parent_id, up.depth + 1 FROM drive_files p JOIN up ON p.id = up.parent_id WHERE up.depth < 1000),
		down(id, depth) AS (
			SELECT c.id, 1 FROM drive_files c WHERE c.parent_id = ?1
			UNION ALL SELECT c.id, down.depth + 1 FROM drive_files c JOIN down ON c.parent_id = down.id WHERE down.depth < 1000)
		SELECT ` + lockCols + ` FROM up JOIN drive_locks l ON l.file_id = up.id
		WHERE ` + anyLiveLock + ` AND l.expires_at > ?2 AND (up.depth = 0 OR l.deep = 1)
		UNION ALL
		SELECT ` + lockCols + ` FROM down JOIN drive_locks l ON l.file_id = down.id WHERE ` + anyLiveLock + ` AND l.expires_at > ?2`
	}
	return scanLocks(s.read(ctx).QueryContext(ctx, q, fileID, ms(now)))
}

// LocksOnFiles returns the live locks held directly on fileIDs.
func (s DriveStore) LocksOnFiles(ctx context.Context, fileIDs []string, now time.Time) ([]drive.Lock, error) {
	if len(fileIDs) == 0 || !s.driveLocks.Load() {
		return []drive.Lock{}, nil
	}
	return scanLocks(s.read(ctx).QueryContext(ctx, `SELECT `+lockCols+` FROM json_each(?) j
		JOIN drive_locks l ON l.file_id = j.value WHERE l.expires_at > ? ORDER BY l.created_at`, distinctJSONIDs(fileIDs), ms(now)))
}

// DeleteExpiredLocks removes locks that expired before t (in the caller's
// transaction or one of its own: see DeleteLock).
func (s DriveStore) DeleteExpiredLocks(ctx context.Context, t time.Time) (int, error) {
	var n int64
	err := s.InTx(ctx, func(ctx context.Context) error {
		res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_locks WHERE expires_at < ?`, ms(t))
		if err != nil {
			return mapErr(err, "drive locks")
		}
		noteLocksGone(ctx)
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}

// anyDriveLock reports whether drive_locks holds a row, as w's transaction
// sees it (the committer, before a commit that deleted locks); true when the
// read fails, and the lock hint then stays.
func (w *writerConn) anyDriveLock() bool {
	var found bool
	if err := w.stmts.QueryRowContext(context.Background(), `SELECT EXISTS (SELECT 1 FROM drive_locks)`).Scan(&found); err != nil {
		return true
	}
	return found
}
