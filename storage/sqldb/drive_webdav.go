package sqldb

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"atrium/app/drive"
)

// ResolvePath walks nameKeys from folder parentID of ownerID in one recursive
// query over the live-name index and returns the items found, in path order.
func (s DriveStore) ResolvePath(ctx context.Context, ownerID, parentID string, nameKeys []string) ([]drive.File, error) {
	if len(nameKeys) == 0 {
		return []drive.File{}, nil
	}
	return scanFiles(s.read(ctx).QueryContext(ctx, `WITH RECURSIVE walk(id, depth) AS (
			SELECT ?, 0
			UNION ALL
			SELECT c.id, walk.depth + 1 FROM walk JOIN drive_files c
				ON c.owner_id = ? AND ifnull(c.parent_id, '') = walk.id
				AND c.name_key = json_extract(?, '$[' || walk.depth || ']')
				AND c.trashed_at IS NULL AND c.status <> 'pending'
			WHERE walk.depth < ?)
		SELECT `+fileCols+` FROM walk JOIN drive_files f ON f.id = walk.id WHERE walk.depth > 0 ORDER BY walk.depth`,
		parentID, ownerID, jsonText(nameKeys), len(nameKeys)))
}

// DeadProps returns the dead properties of fileIDs by file id.
func (s DriveStore) DeadProps(ctx context.Context, fileIDs []string) (map[string][]drive.DeadProp, error) {
	out := map[string][]drive.DeadProp{}
	if len(fileIDs) == 0 {
		return out, nil
	}
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT p.file_id, p.ns, p.name, p.value FROM json_each(?) j
		JOIN drive_props p ON p.file_id = j.value ORDER BY p.file_id, p.ns, p.name`, distinctJSONIDs(fileIDs))
	if err != nil {
		return nil, mapErr(err, "drive properties")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var d drive.DeadProp
		if err := rows.Scan(&id, &d.Space, &d.Name, &d.Value); err != nil {
			return nil, mapErr(err, "drive properties")
		}
		out[id] = append(out[id], d)
	}
	return out, mapErr(rows.Err(), "drive properties")
}

// FolderSizes sums the live files below each of folderIDs, walking each
// one's live subfolders by the children index.
func (s DriveStore) FolderSizes(ctx context.Context, folderIDs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(folderIDs))
	if len(folderIDs) == 0 {
		return out, nil
	}
	rows, err := s.read(ctx).QueryContext(ctx, `WITH RECURSIVE t(root, id) AS (
			SELECT j.value, j.value FROM json_each(?) j
			UNION ALL
			SELECT t.root, f.id FROM t JOIN drive_files f ON f.parent_id = t.id
			WHERE f.is_folder = 1 AND f.trashed_at IS NULL AND f.status <> 'pending')
		SELECT t.root, coalesce(sum(c.size_bytes), 0) FROM t
		LEFT JOIN drive_files c ON c.parent_id = t.id AND c.is_folder = 0 AND c.trashed_at IS NULL AND c.status <> 'pending'
		GROUP BY t.root`, distinctJSONIDs(folderIDs))
	if err != nil {
		return nil, mapErr(err, "folder sizes")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, mapErr(err, "folder sizes")
		}
		out[id] = n
	}
	return out, mapErr(rows.Err(), "folder sizes")
}

// ShareKinds returns the kinds of the unexpired shares of those of fileIDs
// that ownerID owns.
func (s DriveStore) ShareKinds(ctx context.Context, ownerID string, fileIDs []string, now time.Time) (map[string][]drive.ShareKind, error) {
	out := map[string][]drive.ShareKind{}
	if len(fileIDs) == 0 {
		return out, nil
	}
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT DISTINCT sh.file_id,
			CASE WHEN sh.token IS NOT NULL THEN 3 WHEN sh.user_id IS NOT NULL THEN 0 ELSE 1 END
		FROM json_each(?) j JOIN drive_shares sh ON sh.file_id = j.value
		WHERE sh.owner_id = ? AND (sh.expires_at IS NULL OR sh.expires_at > ?) ORDER BY 1, 2`, distinctJSONIDs(fileIDs), ownerID, ms(now))
	if err != nil {
		return nil, mapErr(err, "drive shares")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var k drive.ShareKind
		if err := rows.Scan(&id, &k); err != nil {
			return nil, mapErr(err, "drive shares")
		}
		out[id] = append(out[id], k)
	}
	return out, mapErr(rows.Err(), "drive shares")
}

// PatchDeadProps stores set and removes remove.
func (s DriveStore) PatchDeadProps(ctx context.Context, fileID string, set, remove []drive.DeadProp) error {
	for _, d := range remove {
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_props WHERE file_id = ? AND ns = ? AND name = ?`,
			fileID, d.Space, d.Name); err != nil {
			return mapErr(err, "drive property")
		}
	}
	for _, d := range set {
		if _, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_props (file_id, ns, name, value) VALUES (?, ?, ?, ?)
			ON CONFLICT (file_id, ns, name) DO UPDATE SET value = excluded.value`, fileID, d.Space, d.Name, d.Value); err != nil {
			return mapErr(err, "drive property")
		}
	}
	return nil
}

// CopyDeadProps copies the dead properties of one item to another.
func (s DriveStore) CopyDeadProps(ctx context.Context, fromID, toID string) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_props (file_id, ns, name, value)
		SELECT ?, ns, name, value FROM drive_props WHERE file_id = ? ON CONFLICT (file_id, ns, name) DO UPDATE SET value = excluded.value`, toID, fromID)
	return mapErr(err, "drive properties")
}

// childrenBatch is Children's query after its SELECT list, of the top of
// the drive (parentID "") or a folder.
func childrenBatch(parentID string) string {
	return ` FROM drive_files
	WHERE owner_id = ? AND ` + parentIs("parent_id", parentID) + ` AND is_folder = ? AND trashed_at IS NULL AND status <> 'pending'
	AND (name_key, id) > (?, ?) ORDER BY name_key, id LIMIT ?`
}

// childrenArgs are childrenBatch's arguments.
func childrenArgs(ownerID, parentID string, folders bool, after drive.ChildKey, limit int) []any {
	args := []any{ownerID}
	if parentID != "" {
		args = append(args, parentID)
	}
	return append(args, folders, after.NameKey, after.ID, limit)
}

// Children returns a batch of a folder's live folders or files by name key,
// with the columns of a mount listing only.
func (s DriveStore) Children(ctx context.Context, ownerID, parentID string, folders bool, after drive.ChildKey, limit int, buf []drive.File) ([]drive.File, drive.ChildKey, error) {
	// The index drive_files_browse_name walks (owner, parent, is_folder,
	// name_key, id) of live items from the key on: no sort, no rescan.
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT id, name, is_folder, mime_type, size_bytes,
		content_hash, status, seq, tree_seq, created_at, updated_at, coalesce(modified_at, updated_at), name_key`+childrenBatch(parentID),
		childrenArgs(ownerID, parentID, folders, after, limit)...)
	if err != nil {
		return nil, after, mapErr(err, "drive listing")
	}
	defer rows.Close()
	out := buf[:0]
	if cap(out) == 0 {
		// A page after the first is of a folder that filled one: likely full too.
		out = make([]drive.File, 0, 64)
		if after != (drive.ChildKey{}) {
			out = make([]drive.File, 0, limit)
		}
	}
	last := after
	// The name key is read into one buffer (RawBytes is valid until the next
	// row); only the last row's becomes a string.
	var key sql.RawBytes
	var lastKey []byte
	var parent *string
	if parentID != "" {
		parent = &parentID
	}
	var c, u, m int64
	for rows.Next() {
		if len(out) == cap(out) && cap(out) < limit {
			// Straight to a whole page rather than doubling up to it.
			out = slices.Grow(out, limit-len(out))
		}
		// Scanned in place: a File of its own would escape to the heap.
		out = append(out, drive.File{OwnerID: ownerID, ParentID: parent})
		f := &out[len(out)-1]
		if err := rows.Scan(&f.ID, &f.Name, &f.IsFolder, &f.MimeType, &f.SizeBytes, &f.ContentHash,
			&f.Status, &f.Seq, &f.TreeSeq, &c, &u, &m, &key); err != nil {
			return nil, after, mapErr(err, "drive listing")
		}
		f.CreatedAt, f.UpdatedAt, f.ModifiedAt = fromMS(c), fromMS(u), fromMS(m)
		lastKey = append(lastKey[:0], key...)
	}
	if err := rows.Err(); err != nil {
		return nil, after, mapErr(err, "drive listing")
	}
	if len(out) > 0 {
		last = drive.ChildKey{NameKey: string(lastKey), ID: out[len(out)-1].ID}
	}
	return out, last, nil
}
