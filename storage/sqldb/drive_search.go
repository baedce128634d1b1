package sqldb

import (
	"context"
	"time"

	"atrium/app/drive"
)

var _ drive.SearchStore = DriveStore{}

// DriveEventsAfter returns the file ids of drive.file.* events after seq (of
// them, those an event created and those an event may have changed below),
// the users whose names an organization.user.updated event changed, and the
// users deleted.
func (s DriveStore) DriveEventsAfter(ctx context.Context, seq int64, limit int) (drive.SearchChanges, int64, error) {
	// Every event moves the cursor; only some change the index.
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT seq,
			CASE WHEN type IN ('drive.file.created', 'drive.file.updated', 'drive.file.deleted')
			THEN coalesce(json_extract(data, '$.file_id'), '') ELSE '' END,
			type = 'drive.file.created',
			type <> 'drive.file.created' AND NOT (type = 'drive.file.updated'
				AND coalesce(json_extract(data, '$.change'), '') IN ('renamed', 'favorite', 'metadata', 'content', 'modified')),
			CASE WHEN type = 'organization.user.updated' AND EXISTS (SELECT 1 FROM json_each(data, '$.changed_fields')
				WHERE value IN ('first_name', 'last_name', 'email'))
			THEN coalesce(json_extract(data, '$.user_id'), '') ELSE '' END,
			CASE WHEN type = 'organization.user.deleted' THEN coalesce(json_extract(data, '$.user_id'), '') ELSE '' END
		FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?`, seq, limit)
	if err != nil {
		return drive.SearchChanges{}, seq, mapErr(err, "drive events")
	}
	defer rows.Close()
	ch := drive.SearchChanges{FileIDs: []string{}}
	last := seq
	for rows.Next() {
		var file, user, deleted string
		var created, below bool
		if err := rows.Scan(&last, &file, &created, &below, &user, &deleted); err != nil {
			return drive.SearchChanges{}, seq, mapErr(err, "drive events")
		}
		if file != "" {
			ch.FileIDs = append(ch.FileIDs, file)
			if created {
				ch.Created = append(ch.Created, file)
			}
			if below {
				ch.Below = append(ch.Below, file)
			}
		}
		if user != "" {
			ch.Renamed = append(ch.Renamed, user)
		}
		if deleted != "" {
			ch.Deleted = append(ch.Deleted, deleted)
		}
	}
	return ch, last, mapErr(rows.Err(), "drive events")
}

// LastEventSeq returns the seq of the newest event ever written (0 when
// none), pruned or not.
func (s DriveStore) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT `+s.greatest(`coalesce((SELECT max(seq) FROM outbox), 0)`, s.lastOutboxSeq())).Scan(&seq)
	return seq, mapErr(err, "outbox")
}

// EventsHorizon returns the seq up to which events were pruned: the one
// before the oldest kept, or the last ever written when none is kept.
func (s DriveStore) EventsHorizon(ctx context.Context) (int64, error) {
	var seq int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT coalesce((SELECT min(seq) - 1 FROM outbox), `+s.lastOutboxSeq()+`)`).Scan(&seq)
	return seq, mapErr(err, "outbox")
}

const indexableWhere = `f.trashed_at IS NULL AND f.status <> 'pending'`

// IndexableFiles returns live items after afterID, by id; only ownerID's
// when it is set.
func (s DriveStore) IndexableFiles(ctx context.Context, ownerID, afterID string, limit int) ([]drive.File, error) {
	if ownerID != "" {
		return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+` FROM drive_files f
			WHERE f.owner_id = ? AND f.id > ? AND `+indexableWhere+` ORDER BY f.id LIMIT ?`, ownerID, afterID, limit))
	}
	return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+` FROM drive_files f
		WHERE f.id > ? AND `+indexableWhere+` ORDER BY f.id LIMIT ?`, afterID, limit))
}

// CountIndexable returns the number of live items.
func (s DriveStore) CountIndexable(ctx context.Context) (int64, error) {
	var n int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM drive_files f WHERE `+indexableWhere).Scan(&n)
	return n, mapErr(err, "drive items")
}

// FolderParents returns the parent of every folder.
func (s DriveStore) FolderParents(ctx context.Context) (map[string]string, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT id, coalesce(parent_id, '') FROM drive_files WHERE is_folder = 1`)
	if err != nil {
		return nil, mapErr(err, "drive folders")
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, parent string
		if err := rows.Scan(&id, &parent); err != nil {
			return nil, mapErr(err, "drive folders")
		}
		out[id] = parent
	}
	return out, mapErr(rows.Err(), "drive folders")
}

// SharedRoots returns the items unexpired shares grant userID, and which of
// them are folders.
func (s DriveStore) SharedRoots(ctx context.Context, userID string, now time.Time) (roots, folders []string, err error) {
	// An item shared twice comes twice: one pass, no sort, the rest here.
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT file_id, is_folder FROM drive_share_grants
		WHERE user_id = ? AND (expires_at IS NULL OR expires_at > ?)`, userID, ms(now))
	if err != nil {
		return nil, nil, mapErr(err, "drive shares")
	}
	defer rows.Close()
	roots, folders = []string{}, []string{}
	seen := map[string]bool{}
	for rows.Next() {
		var id string
		var folder bool
		if err := rows.Scan(&id, &folder); err != nil {
			return nil, nil, mapErr(err, "drive shares")
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		roots = append(roots, id)
		if folder {
			folders = append(folders, id)
		}
	}
	return roots, folders, mapErr(rows.Err(), "drive shares")
}
