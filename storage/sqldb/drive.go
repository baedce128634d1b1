package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"atrium/app/drive"
)

// DriveStore implements drive.Store.
type DriveStore struct{ *DB }

var _ drive.Store = DriveStore{}

const fileCols = `f.id, f.organization_id, f.owner_id, f.parent_id, f.name, f.is_folder, f.mime_type, f.mime_group,
	f.size_bytes, f.stored_bytes, f.content_hash, f.version, f.status, f.is_favorite, f.description, f.tags, f.custom,
	f.trashed_at, coalesce(f.trash_root, ''), coalesce(f.trash_parent_id, ''), coalesce(f.comments_channel, ''), f.seq,
	f.last_access_at, f.created_at, f.updated_at, coalesce(f.modified_at, f.updated_at),
	coalesce((SELECT CASE WHEN trim(u.first_name || ' ' || u.last_name) = '' THEN u.email ELSE trim(u.first_name || ' ' || u.last_name) END
		FROM users u WHERE u.id = f.owner_id), ''), f.tree_seq`

func scanFile(sc interface{ Scan(...any) error }, extra ...any) (drive.File, error) {
	var f drive.File
	var parent sql.NullString
	var tags, custom string
	var trashed, access sql.NullInt64
	var c, u, m int64
	err := sc.Scan(append([]any{&f.ID, &f.OrgID, &f.OwnerID, &parent, &f.Name, &f.IsFolder, &f.MimeType, &f.MimeGroup,
		&f.SizeBytes, &f.StoredBytes, &f.ContentHash, &f.Version, &f.Status, &f.IsFavorite, &f.Metadata.Description, &tags, &custom,
		&trashed, &f.TrashRoot, &f.TrashParentID, &f.CommentsChannel, &f.Seq, &access, &c, &u, &m, &f.OwnerName, &f.TreeSeq}, extra...)...)
	if err != nil {
		return f, err
	}
	if parent.Valid {
		f.ParentID = &parent.String
	}
	f.TrashedAt, f.LastAccessAt = fromMSPtr(trashed), fromMSPtr(access)
	f.CreatedAt, f.UpdatedAt, f.ModifiedAt = fromMS(c), fromMS(u), fromMS(m)
	// Most items have neither tags nor custom metadata: the stored "[]" and
	// "{}" need no JSON decoder (a listing reads thousands of rows).
	if tags == "[]" || json.Unmarshal([]byte(tags), &f.Metadata.Tags) != nil || f.Metadata.Tags == nil {
		f.Metadata.Tags = []string{}
	}
	if custom == "{}" || json.Unmarshal([]byte(custom), &f.Metadata.Custom) != nil || f.Metadata.Custom == nil {
		f.Metadata.Custom = map[string]string{}
	}
	return f, nil
}

func scanFiles(rows *sql.Rows, err error) ([]drive.File, error) {
	if err != nil {
		return nil, mapErr(err, "drive items")
	}
	defer rows.Close()
	out := []drive.File{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, mapErr(err, "drive items")
		}
		out = append(out, f)
	}
	return out, mapErr(rows.Err(), "drive items")
}

func nullStr(s *string) any {
	if s == nil || *s == "" {
		return nil
	}
	return *s
}

func emptyNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonIDs encodes ids for json_each: one parameter however many ids.
func jsonIDs(ids []string) string { return idList(ids, false) }

// deleteByID removes the rows of table whose id is one of ids: a lone id (a
// confirmation's upload, one purged item) by key, several through one JSON
// list, a statement however many they are.
func deleteByID(ctx context.Context, q querier, table string, ids []string) error {
	var err error
	switch len(ids) {
	case 0:
	case 1:
		_, err = q.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, ids[0])
	default:
		_, err = q.ExecContext(ctx, `DELETE FROM `+table+` WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	}
	return err
}

// idList writes ids as a JSON array; distinct leaves out repeats, keeping the
// first of each.
func idList(ids []string, distinct bool) string {
	var seen map[string]struct{}
	if distinct {
		seen = make(map[string]struct{}, len(ids))
	}
	b := make([]byte, 0, jsonSize(ids))
	b = append(b, '[')
	for _, id := range ids {
		if distinct {
			if _, ok := seen[id]; ok {
				continue
			}
			seen[id] = struct{}{}
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
	}
	return string(append(b, ']'))
}

// jsonSize is the length of ids as a JSON array when none needs escaping.
func jsonSize(ids []string) int {
	n := 2
	for _, id := range ids {
		n += len(id) + 3
	}
	return n
}

// appendJSONString appends s as a JSON string; an id is plain ASCII and is
// written as it is, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// distinctJSONIDs is jsonIDs without repeats, for a lookup written as a join
// with json_each (`FROM json_each(?) j JOIN t ON t.k = j.value`): SQLite then
// probes t's index once per id, where `k IN (SELECT value FROM json_each(?))`
// first builds a temporary index of the list — on a listing's page of 2,000
// ids, about eight times the work. The join repeats rows for repeated ids.
func distinctJSONIDs(ids []string) string { return idList(ids, true) }

// NextSeq bumps and returns the owner's change sequence. Every drive write
// takes one, on the one writer that every write waits for: where the value
// this DB last wrote is known (seqs), the bump is an UPDATE that holds only
// while the stored value is still that one, and otherwise (the first write of
// an owner, a hint that a rolled-back transaction or another process left
// stale) an upsert that returns the stored value. The upsert's RETURNING
// costs SQLite a temporary table a statement: in a small file's write
// transaction it took 15-19 us against about 7 for the UPDATE.
func (s DriveStore) NextSeq(ctx context.Context, ownerID string) (int64, error) {
	w := s.write(ctx)
	if last, ok := s.seqs.get(ownerID); ok {
		res, err := w.ExecContext(ctx, `UPDATE drive_seq SET seq = ? WHERE owner_id = ? AND seq = ?`, last+1, ownerID, last)
		if err != nil {
			return 0, mapErr(err, "drive sequence")
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			s.seqs.set(ownerID, last+1)
			return last + 1, nil
		}
	}
	var seq int64
	err := w.QueryRowContext(ctx, `INSERT INTO drive_seq(owner_id, seq) VALUES (?, 1)
		ON CONFLICT(owner_id) DO UPDATE SET seq = drive_seq.seq + 1 RETURNING seq`, ownerID).Scan(&seq)
	if err != nil {
		return 0, mapErr(err, "drive sequence")
	}
	s.seqs.set(ownerID, seq)
	return seq, nil
}

// seqHints keeps, per owner, the change sequence NextSeq last wrote: a
// hint only, since the transaction that wrote it may have been rolled back
// since, or another process may have written the sequence. NextSeq's UPDATE
// checks it against the stored value. At most maxSeqHints owners are kept.
type seqHints struct {
	mu   sync.Mutex
	last map[string]int64
}

const maxSeqHints = 4096

func (h *seqHints) get(owner string) (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.last[owner]
	return v, ok
}

func (h *seqHints) set(owner string, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == nil || len(h.last) >= maxSeqHints {
		h.last = map[string]int64{}
	}
	h.last[owner] = seq
}

func fileArgs(f drive.File) []any {
	tags, custom := f.Metadata.Tags, f.Metadata.Custom
	if tags == nil {
		tags = []string{}
	}
	if custom == nil {
		custom = map[string]string{}
	}
	return []any{f.OrgID, f.OwnerID, nullStr(f.ParentID), f.Name, drive.NameKey(f.Name), f.IsFolder, f.MimeType, f.MimeGroup,
		f.SizeBytes, f.StoredBytes, f.ContentHash, f.Version, f.Status, f.IsFavorite, f.Metadata.Description, jsonText(tags), jsonText(custom),
		msPtr(f.TrashedAt), emptyNull(f.TrashRoot), emptyNull(f.TrashParentID), emptyNull(f.CommentsChannel), f.Seq, msPtr(f.LastAccessAt),
		ms(f.CreatedAt), ms(f.UpdatedAt), modifiedArg(f)}
}

// modifiedArg is the stored modified_at of f: NULL (read as updated_at) when
// no modification time was set.
func modifiedArg(f drive.File) any {
	if f.ModifiedAt.IsZero() {
		return nil
	}
	return ms(f.ModifiedAt)
}

// CreateFile inserts an item.
func (s DriveStore) CreateFile(ctx context.Context, f drive.File) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_files (organization_id, owner_id, parent_id, name, name_key, is_folder,
		mime_type, mime_group, size_bytes, stored_bytes, content_hash, version, status, is_favorite, description, tags, custom,
		trashed_at, trash_root, trash_parent_id, comments_channel, seq, last_access_at, created_at, updated_at, modified_at, id)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, append(fileArgs(f), f.ID)...)
	return mapErr(err, "drive item")
}

// fileColumns are the columns fileArgs gives the values of, in its order.
var fileColumns = []string{"organization_id", "owner_id", "parent_id", "name", "name_key", "is_folder",
	"mime_type", "mime_group", "size_bytes", "stored_bytes", "content_hash", "version", "status", "is_favorite",
	"description", "tags", "custom", "trashed_at", "trash_root", "trash_parent_id", "comments_channel", "seq",
	"last_access_at", "created_at", "updated_at", "modified_at"}

var selectFileColumns = `SELECT ` + strings.Join(fileColumns, ", ") + ` FROM drive_files WHERE id = ?`

// UpdateFile writes f: the columns whose stored value differs, read first.
// SQLite rewrites every index that holds a column an UPDATE names, whether
// its value changed or not, and each page it touches is written to the log
// and checkpointed: naming every column, a new version of a file wrote 9
// pages to the log where 4 do (TestDriveUpdateFile).
func (s DriveStore) UpdateFile(ctx context.Context, f drive.File) error {
	q := s.write(ctx)
	stored := make([]any, len(fileColumns))
	dest := make([]any, len(stored))
	for i := range stored {
		dest[i] = &stored[i]
	}
	if err := q.QueryRowContext(ctx, selectFileColumns, f.ID).Scan(dest...); err != nil {
		return mapErr(err, "drive item")
	}
	var set strings.Builder
	args := fileArgs(f)
	changed := make([]any, 0, len(args)+1)
	for i, v := range args {
		if sameStored(stored[i], v) {
			continue
		}
		if set.Len() > 0 {
			set.WriteString(", ")
		}
		set.WriteString(fileColumns[i] + " = ?")
		changed = append(changed, v)
	}
	if len(changed) == 0 {
		return nil
	}
	_, err := q.ExecContext(ctx, `UPDATE drive_files SET `+set.String()+` WHERE id = ?`, append(changed, f.ID)...)
	return mapErr(err, "drive item")
}

// sameStored reports whether a column holding stored (as read) holds v (an
// argument of fileArgs) already.
func sameStored(stored, v any) bool {
	switch x := v.(type) {
	case bool:
		v = int64(0)
		if x {
			v = int64(1)
		}
	case int:
		v = int64(x)
	}
	if b, ok := stored.([]byte); ok {
		stored = string(b)
	}
	return stored == v
}

// File returns an item by id. In a transaction the folders it finds are kept
// on the writer while nothing changes them (itemCache): the uploads a group
// commits into one folder read its row once.
func (s DriveStore) File(ctx context.Context, id string) (drive.File, error) {
	items := writerItems(ctx)
	if f, ok := items.get(idKey(id)); ok {
		return f, nil
	}
	f, err := scanFile(s.read(ctx).QueryRowContext(ctx, `SELECT `+fileCols+` FROM drive_files f WHERE f.id = ?`, id))
	if err != nil {
		return f, mapErr(err, "drive item")
	}
	if items != nil && f.IsFolder {
		items.put(idKey(id), f, []string{id})
	}
	return f, nil
}

// FilesByID returns the items of ids that exist, in no particular order: one
// query for a batch, where File would be one per id.
func (s DriveStore) FilesByID(ctx context.Context, ids []string) ([]drive.File, error) {
	if len(ids) == 0 {
		return []drive.File{}, nil
	}
	return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+` FROM json_each(?) j
		JOIN drive_files f ON f.id = j.value`, distinctJSONIDs(ids)))
}

// liveChild is LiveChild's query after its SELECT list (the unique index
// drive_files_live_name).
const liveChild = ` FROM drive_files f
	WHERE f.owner_id = ? AND ifnull(f.parent_id, '') = ? AND f.name_key = ? AND f.trashed_at IS NULL AND f.status <> 'pending'`

// LiveChild returns the live item named nameKey in a folder ("" is the root).
// Most lookups find nothing (a new file's name, a rename's target): they ask
// for the id alone first. The driver spends about 8 us of a query on naming
// its columns before the first step, found or not (a miss on the writer took
// 13-14 us for the whole row, 5-6 us for the id), and these run in write
// transactions, on the one writer every write waits for. A name that is
// there is then read whole.
func (s DriveStore) LiveChild(ctx context.Context, ownerID, parentID, nameKey string) (drive.File, error) {
	var id string
	if err := s.read(ctx).QueryRowContext(ctx, `SELECT f.id`+liveChild, ownerID, parentID, nameKey).Scan(&id); err != nil {
		return drive.File{}, mapErr(err, "drive item")
	}
	f, err := scanFile(s.read(ctx).QueryRowContext(ctx, `SELECT `+fileCols+liveChild, ownerID, parentID, nameKey))
	return f, mapErr(err, "drive item")
}

// LiveItemAt returns the live item at the end of the path nameKeys from the
// root of ownerID's drive: a lookup of the id per folder on the way, then the
// last item's row, each through the index drive_files_live_name. It runs in
// write transactions (a PUT's folder), where the pages are the writer's
// own: there the lookups cost less than ResolvePath's recursive query (a
// folder one deep about 18 us against 30, three deep 28 against 57, beyond
// the transaction's own 10: BenchmarkDriveLiveItemAt). In a transaction the
// folders it finds are kept on the writer while nothing changes them
// (itemCache): a group's writes into one folder read its row once.
func (s DriveStore) LiveItemAt(ctx context.Context, ownerID string, nameKeys []string) (drive.File, error) {
	if len(nameKeys) == 0 {
		return drive.File{}, fmt.Errorf("live item at an empty path")
	}
	items := writerItems(ctx)
	key := pathKey(ownerID, nameKeys)
	if f, ok := items.get(key); ok {
		return f, nil
	}
	parent := ""
	chain := make([]string, 0, len(nameKeys))
	for _, k := range nameKeys[:len(nameKeys)-1] {
		if err := s.read(ctx).QueryRowContext(ctx, `SELECT f.id`+liveChild, ownerID, parent, k).Scan(&parent); err != nil {
			return drive.File{}, mapErr(err, "drive folder")
		}
		chain = append(chain, parent)
	}
	f, err := scanFile(s.read(ctx).QueryRowContext(ctx, `SELECT `+fileCols+liveChild, ownerID, parent, nameKeys[len(nameKeys)-1]))
	if err != nil {
		return f, mapErr(err, "drive item")
	}
	if items != nil && f.IsFolder {
		items.put(key, f, append(chain, f.ID))
	}
	return f, nil
}

// Ancestors returns the folders above id, the root-most first.
func (s DriveStore) Ancestors(ctx context.Context, id string) ([]drive.File, error) {
	return scanFiles(s.read(ctx).QueryContext(ctx, `WITH RECURSIVE a(id, parent_id, depth) AS (
			SELECT id, parent_id, 0 FROM drive_files WHERE id = ?
			UNION ALL SELECT p.id, p.parent_id, a.depth + 1 FROM drive_files p JOIN a ON p.id = a.parent_id WHERE a.depth < 1000)
		SELECT `+fileCols+` FROM a JOIN drive_files f ON f.id = a.id WHERE a.depth > 0 ORDER BY a.depth DESC`, id))
}

// Subtree returns the descendants of id, parents before children.
func (s DriveStore) Subtree(ctx context.Context, id string, liveOnly bool) ([]drive.File, error) {
	return scanFiles(s.read(ctx).QueryContext(ctx, subtreeQuery(liveOnly), id))
}

// subtreeQuery is Subtree's query: each level read by parent through the
// index drive_files_children.
func subtreeQuery(liveOnly bool) string {
	live := ""
	if liveOnly {
		live = ` AND c.trashed_at IS NULL AND c.status <> 'pending'`
	}
	return `WITH RECURSIVE t(id, depth) AS (
			SELECT c.id, 1 FROM drive_files c WHERE c.parent_id = ?` + live + `
			UNION ALL SELECT c.id, t.depth + 1 FROM drive_files c JOIN t ON c.parent_id = t.id WHERE t.depth < 1000` + live + `)
		SELECT ` + fileCols + ` FROM t JOIN drive_files f ON f.id = t.id ORDER BY t.depth, f.id`
}

// TrashedWith returns the items trashed together with root.
func (s DriveStore) TrashedWith(ctx context.Context, ownerID, root string) ([]drive.File, error) {
	return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+` FROM drive_files f
		WHERE f.owner_id = ? AND f.trash_root = ? AND f.trashed_at IS NOT NULL ORDER BY f.id`, ownerID, root))
}

var sortCols = map[string]string{"name": "f.name_key", "size_bytes": "f.size_bytes", "created_at": "f.created_at",
	"updated_at": "f.updated_at", "mime_type": "f.mime_type"}

var filterCols = map[string]string{"name": "f.name", "mime_type": "f.mime_type", "size_bytes": "f.size_bytes",
	"created_at": "f.created_at", "updated_at": "f.updated_at", "is_favorite": "f.is_favorite", "owner_id": "f.owner_id"}

var filterOps = map[string]string{"eq": "=", "ne": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

// filterSQL renders one parsed filter.
func filterSQL(f drive.Filter) (string, any) {
	col := filterCols[f.Field]
	v := f.Value
	if t, ok := v.(time.Time); ok {
		v = ms(t)
	}
	switch f.Op {
	case "contains":
		return col + ` LIKE ? ESCAPE '\'`, "%" + likeEscape(fmt.Sprint(v)) + "%"
	case "prefix":
		return col + ` LIKE ? ESCAPE '\'`, likeEscape(fmt.Sprint(v)) + "%"
	}
	if f.Field == "name" && (f.Op == "eq" || f.Op == "ne") {
		return col + " " + filterOps[f.Op] + " ? COLLATE NOCASE", v
	}
	return col + " " + filterOps[f.Op] + " ?", v
}

// listWhere renders the conditions of a listing and their arguments.
func listWhere(q drive.Query) (cond string, args []any, err error) {
	var where []string
	switch q.Kind {
	case drive.ListFolder:
		where = append(where, "f.owner_id = ?", parentIs("f.parent_id", q.ParentID), "f.trashed_at IS NULL", "f.status <> 'pending'")
		args = append(args, q.OwnerID)
		if q.ParentID != "" {
			args = append(args, q.ParentID)
		}
	case drive.ListTrash:
		where = append(where, "f.owner_id = ?", "f.trashed_at IS NOT NULL", "f.trash_root = f.id")
		args = append(args, q.OwnerID)
	case drive.ListFavorites:
		// The literal terms match the partial index drive_files_favorites
		// (migration 00021): the list reads only the owner's favourites.
		where = append(where, "f.owner_id = ?", "f.is_favorite = 1", "f.trashed_at IS NULL", "f.status <> 'pending'")
		args = append(args, q.OwnerID)
	case drive.ListShared:
		where = append(where, "f.organization_id = ?", "f.trashed_at IS NULL", "f.status <> 'pending'", "f.owner_id <> ?",
			"f.id IN (SELECT file_id FROM drive_share_grants WHERE user_id = ? AND (expires_at IS NULL OR expires_at > ?))")
		args = append(args, q.OrgID, q.UserID, q.UserID, ms(q.Now))
	default:
		return "", nil, fmt.Errorf("unknown listing kind %q", q.Kind)
	}
	if q.Q != "" {
		where = append(where, `f.name LIKE ? ESCAPE '\'`)
		args = append(args, "%"+likeEscape(q.Q)+"%")
	}
	if len(q.MimeTypes) > 0 {
		where = append(where, "f.mime_type IN (SELECT value FROM json_each(?))")
		args = append(args, jsonIDs(q.MimeTypes))
	}
	if q.MimeGroup != "" {
		where = append(where, "f.mime_group = ?")
		args = append(args, q.MimeGroup)
	}
	if q.IsFolder != nil {
		where = append(where, "f.is_folder = ?")
		args = append(args, *q.IsFolder)
	}
	for _, fl := range q.Filters {
		c, a := filterSQL(fl)
		where = append(where, c)
		args = append(args, a)
	}
	if len(q.OrFilters) > 0 {
		var ors []string
		for _, fl := range q.OrFilters {
			c, a := filterSQL(fl)
			ors = append(ors, c)
			args = append(args, a)
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	return strings.Join(where, " AND "), args, nil
}

// listOrder is the ORDER BY of a listing: folders first, then the sort field, then the id.
func listOrder(q drive.Query) string {
	dir := "ASC"
	if q.SortDesc {
		dir = "DESC"
	}
	return "f.is_folder DESC, " + sortCols[q.SortBy] + " " + dir + ", f.id " + dir
}

// parentIs is the condition that col is parentID (a placeholder) or, for
// "", NULL: an index on col serves either on both engines, where PostgreSQL
// reads no index for IS NOT DISTINCT FROM (a folder's listing scanned the
// whole drive).
func parentIs(col, parentID string) string {
	if parentID == "" {
		return col + " IS NULL"
	}
	return col + " = ?"
}

// listQueries are a listing's count and its page of cols (LIMIT and OFFSET
// its last arguments) for the conditions cond of listWhere, in order.
func listQueries(cols, cond, order string) (count, page string) {
	return `SELECT count(*) FROM drive_files f WHERE ` + cond,
		`SELECT ` + cols + ` FROM drive_files f WHERE ` + cond + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
}

// latePage is listQueries' page for PostgreSQL: it finds the page's ids
// first, then reads their rows. PostgreSQL computes a row's columns (the
// owner's name, a query of its own) for every row up to the page's end, the
// skipped ones too: the last page of 500 of a 5,000-item folder took 26 ms
// of its server's time, 9 this way. SQLite skips before it computes, and
// the join costs it more than it saves.
func latePage(cols, cond, order string) string {
	return `SELECT ` + cols + ` FROM (SELECT f.id FROM drive_files f WHERE ` + cond + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?) p
		JOIN drive_files f ON f.id = p.id ORDER BY ` + order
}

// List returns one page of a listing and the total count.
func (s DriveStore) List(ctx context.Context, q drive.Query) ([]drive.File, int, error) {
	cond, args, err := listWhere(q)
	if err != nil {
		return nil, 0, err
	}
	if q.Kind == drive.ListShared {
		return s.listShared(ctx, q, cond, args)
	}
	count, page := listQueries(fileCols, cond, listOrder(q))
	if s.IsPostgres() {
		page = latePage(fileCols, cond, listOrder(q))
	}
	var total int
	if err := s.read(ctx).QueryRowContext(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, mapErr(err, "drive listing")
	}
	rows, err := s.read(ctx).QueryContext(ctx, page, append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, mapErr(err, "drive listing")
	}
	defer rows.Close()
	out := []drive.File{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, 0, mapErr(err, "drive listing")
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, mapErr(err, "drive listing")
	}
	return out, total, nil
}

// listShared is List of Shared with me, whose items are found through the
// grants, any number of them, each an item looked up by id: one pass over
// them finds the page's ids (in order) and the count together, then the
// page's items are read whole (their owner's name and all), rather than
// every item read whole to be sorted and counted again.
func (s DriveStore) listShared(ctx context.Context, q drive.Query, cond string, args []any) ([]drive.File, int, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT f.id, count(*) OVER () FROM drive_files f WHERE `+cond+
		` ORDER BY `+listOrder(q)+` LIMIT ? OFFSET ?`, append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, mapErr(err, "drive listing")
	}
	var ids []string
	total := 0
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &total); err != nil {
			rows.Close()
			return nil, 0, mapErr(err, "drive listing")
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, 0, mapErr(err, "drive listing")
	}
	rows.Close()
	if len(ids) == 0 {
		if q.Offset > 0 { // past the end: the count alone
			count, _ := listQueries("", cond, "")
			if err := s.read(ctx).QueryRowContext(ctx, count, args...).Scan(&total); err != nil {
				return nil, 0, mapErr(err, "drive listing")
			}
		}
		return []drive.File{}, total, nil
	}
	found, err := s.FilesByID(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[string]drive.File, len(found))
	for _, f := range found {
		byID[f.ID] = f
	}
	// What the shares grant, for the page's items only, in one query whose
	// every branch reads by (grantee, item).
	perms, err := s.sharePermissions(ctx, q.UserID, ids, q.Now)
	if err != nil {
		return nil, 0, err
	}
	out := make([]drive.File, 0, len(ids))
	for _, id := range ids {
		f, ok := byID[id]
		if !ok {
			continue // deleted between the two reads
		}
		f.Permission = perms[id]
		out = append(out, f)
	}
	return out, total, nil
}

// sharePermissions returns the best permission unexpired shares grant userID
// on each of fileIDs (those with none are left out).
func (s DriveStore) sharePermissions(ctx context.Context, userID string, fileIDs []string, now time.Time) (map[string]string, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT file_id, max(CASE permission WHEN 'edit' THEN 2 ELSE 1 END)
		FROM drive_share_grants WHERE user_id = ? AND file_id IN (SELECT value FROM json_each(?))
		AND (expires_at IS NULL OR expires_at > ?) GROUP BY file_id`, userID, jsonIDs(fileIDs), ms(now))
	if err != nil {
		return nil, mapErr(err, "drive shares")
	}
	defer rows.Close()
	out := make(map[string]string, len(fileIDs))
	for rows.Next() {
		var id string
		var best int
		if err := rows.Scan(&id, &best); err != nil {
			return nil, mapErr(err, "drive shares")
		}
		out[id] = drive.PermView
		if best == 2 {
			out[id] = drive.PermEdit
		}
	}
	return out, mapErr(rows.Err(), "drive shares")
}

// DeleteFiles removes rows; versions, shares and locks go with them.
func (s DriveStore) DeleteFiles(ctx context.Context, ids []string) error {
	return mapErr(deleteByID(ctx, s.write(ctx), "drive_files", ids), "drive items")
}

// AddTombstone records a permanently deleted item.
func (s DriveStore) AddTombstone(ctx context.Context, ownerID string, t drive.Tombstone) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_tombstones (owner_id, file_id, name, parent_id, seq, deleted_at)
		VALUES (?, ?, ?, ?, ?, ?)`, ownerID, t.FileID, t.Name, emptyNull(t.ParentID), t.Seq, ms(t.DeletedAt))
	return mapErr(err, "drive tombstone")
}

// PruneTombstones forgets deletions older than t.
func (s DriveStore) PruneTombstones(ctx context.Context, t time.Time) (int, error) {
	return pruneTombstones(ctx, s.DB, "drive_tombstones", "owner_id", "drive_seq", "owner_id", t)
}

// TrashRootsBefore returns trash roots trashed before t.
func (s DriveStore) TrashRootsBefore(ctx context.Context, t time.Time, limit int) ([]drive.File, error) {
	return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+` FROM drive_files f
		WHERE f.trashed_at < ? AND f.trash_root = f.id ORDER BY f.trashed_at LIMIT ?`, ms(t), limit))
}

// StalePending returns pending files created before t.
func (s DriveStore) StalePending(ctx context.Context, t time.Time, limit int) ([]drive.File, error) {
	return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+` FROM drive_files f
		WHERE f.status = 'pending' AND f.created_at < ? ORDER BY f.created_at LIMIT ?`, ms(t), limit))
}

// AddVersion records a version.
func (s DriveStore) AddVersion(ctx context.Context, v drive.Version) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_versions (id, file_id, version, size_bytes, content_hash, mime_type,
		created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, v.ID, v.FileID, v.Version, v.SizeBytes, v.ContentHash, v.MimeType,
		v.CreatedBy, ms(v.CreatedAt))
	return mapErr(err, "file version")
}

const versionCols = `id, file_id, version, size_bytes, content_hash, mime_type, created_by, created_at`

func scanVersions(rows *sql.Rows, err error) ([]drive.Version, error) {
	if err != nil {
		return nil, mapErr(err, "file versions")
	}
	defer rows.Close()
	out := []drive.Version{}
	for rows.Next() {
		var v drive.Version
		var c int64
		if err := rows.Scan(&v.ID, &v.FileID, &v.Version, &v.SizeBytes, &v.ContentHash, &v.MimeType, &v.CreatedBy, &c); err != nil {
			return nil, mapErr(err, "file versions")
		}
		v.CreatedAt = fromMS(c)
		out = append(out, v)
	}
	return out, mapErr(rows.Err(), "file versions")
}

// Versions lists a file's versions, the newest first.
func (s DriveStore) Versions(ctx context.Context, fileID string) ([]drive.Version, error) {
	return scanVersions(s.read(ctx).QueryContext(ctx, `SELECT `+versionCols+` FROM drive_versions WHERE file_id = ? ORDER BY version DESC`, fileID))
}

// DeleteVersions removes versions by id.
func (s DriveStore) DeleteVersions(ctx context.Context, ids []string) error {
	return mapErr(deleteByID(ctx, s.write(ctx), "drive_versions", ids), "file versions")
}

// VersionsBefore returns non-head versions created before t.
func (s DriveStore) VersionsBefore(ctx context.Context, t time.Time, limit int) ([]drive.Version, error) {
	return scanVersions(s.read(ctx).QueryContext(ctx, `SELECT v.id, v.file_id, v.version, v.size_bytes, v.content_hash, v.mime_type,
		v.created_by, v.created_at FROM drive_versions v JOIN drive_files f ON f.id = v.file_id
		WHERE v.created_at < ? AND v.version <> f.version ORDER BY v.created_at LIMIT ?`, ms(t), limit))
}

// CreateUpload records an announced upload.
func (s DriveStore) CreateUpload(ctx context.Context, u drive.Upload) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_uploads (id, file_id, organization_id, owner_id, created_by, name,
		mime_type, size_bytes, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, u.FileID, u.OrgID, u.OwnerID,
		u.CreatedBy, u.Name, u.MimeType, u.SizeBytes, ms(u.CreatedAt), ms(u.ExpiresAt))
	return mapErr(err, "upload")
}

const uploadCols = `id, file_id, organization_id, owner_id, created_by, name, mime_type, size_bytes, content_hash, received_at, created_at, expires_at`

func scanUpload(sc interface{ Scan(...any) error }) (drive.Upload, error) {
	var u drive.Upload
	var rec sql.NullInt64
	var c, e int64
	err := sc.Scan(&u.ID, &u.FileID, &u.OrgID, &u.OwnerID, &u.CreatedBy, &u.Name, &u.MimeType, &u.SizeBytes, &u.ContentHash, &rec, &c, &e)
	u.ReceivedAt, u.CreatedAt, u.ExpiresAt = fromMSPtr(rec), fromMS(c), fromMS(e)
	return u, err
}

// Upload returns an upload by id.
func (s DriveStore) Upload(ctx context.Context, id string) (drive.Upload, error) {
	u, err := scanUpload(s.read(ctx).QueryRowContext(ctx, `SELECT `+uploadCols+` FROM drive_uploads WHERE id = ?`, id))
	return u, mapErr(err, "upload")
}

// LatestUpload returns the newest upload of fileID announced by userID.
func (s DriveStore) LatestUpload(ctx context.Context, fileID, userID string) (drive.Upload, error) {
	u, err := scanUpload(s.read(ctx).QueryRowContext(ctx, `SELECT `+uploadCols+` FROM drive_uploads
		WHERE file_id = ? AND created_by = ? ORDER BY received_at IS NULL, created_at DESC LIMIT 1`, fileID, userID))
	return u, mapErr(err, "upload")
}

// SetUploadReceived records the hash of an upload's bytes.
func (s DriveStore) SetUploadReceived(ctx context.Context, id, hash string, at time.Time) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE drive_uploads SET content_hash = ?, received_at = ? WHERE id = ?`, hash, ms(at), id)
	if err != nil {
		return mapErr(err, "upload")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapErr(sql.ErrNoRows, "upload")
	}
	return nil
}

// DeleteUploads removes uploads by id.
func (s DriveStore) DeleteUploads(ctx context.Context, ids []string) error {
	return mapErr(deleteByID(ctx, s.write(ctx), "drive_uploads", ids), "uploads")
}

// ExpiredUploads returns uploads expired at t.
func (s DriveStore) ExpiredUploads(ctx context.Context, t time.Time, limit int) ([]drive.Upload, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+uploadCols+` FROM drive_uploads WHERE expires_at < ? ORDER BY expires_at LIMIT ?`, ms(t), limit)
	if err != nil {
		return nil, mapErr(err, "uploads")
	}
	defer rows.Close()
	var out []drive.Upload
	for rows.Next() {
		u, err := scanUpload(rows)
		if err != nil {
			return nil, mapErr(err, "uploads")
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err(), "uploads")
}

// OwnerUsage returns an owner's counters by mime group.
func (s DriveStore) OwnerUsage(ctx context.Context, orgID, ownerID string) ([]drive.GroupUsage, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT mime_group, bytes, file_count FROM drive_usage
		WHERE organization_id = ? AND owner_id = ? ORDER BY mime_group`, orgID, ownerID)
	if err != nil {
		return nil, mapErr(err, "drive usage")
	}
	defer rows.Close()
	var out []drive.GroupUsage
	for rows.Next() {
		var g drive.GroupUsage
		if err := rows.Scan(&g.MimeGroup, &g.Bytes, &g.Count); err != nil {
			return nil, mapErr(err, "drive usage")
		}
		out = append(out, g)
	}
	return out, mapErr(rows.Err(), "drive usage")
}

// LargestFiles returns an owner's largest live files.
func (s DriveStore) LargestFiles(ctx context.Context, orgID, ownerID string, limit int) ([]drive.File, error) {
	return scanFiles(s.read(ctx).QueryContext(ctx, `SELECT `+fileCols+` FROM drive_files f
		WHERE f.organization_id = ? AND f.owner_id = ? AND f.is_folder = 0 AND f.status <> 'pending' AND f.trashed_at IS NULL
		ORDER BY f.size_bytes DESC LIMIT ?`, orgID, ownerID, limit))
}

// HashInUse reports whether a version or an upload refers to hash. The head
// version of an archived file does not count: its bytes live in the archive.
func (s DriveStore) HashInUse(ctx context.Context, hash string) (bool, error) {
	var used bool
	err := s.read(ctx).QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM drive_versions v JOIN drive_files f ON f.id = v.file_id
			WHERE v.content_hash = ? AND NOT (f.status = 'archived' AND v.version = f.version))
		OR EXISTS (SELECT 1 FROM drive_uploads WHERE content_hash = ?)
		OR EXISTS (SELECT 1 FROM drive_tus_uploads WHERE content_hash = ?)
		OR EXISTS (SELECT 1 FROM drive_previews WHERE derived_hash = ?)`, hash, hash, hash, hash).Scan(&used)
	return used, mapErr(err, "blob references")
}

// AddOrphan records that hash may have lost its last reference.
func (s DriveStore) AddOrphan(ctx context.Context, hash string, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_orphans (content_hash, since) VALUES (?, ?)
		ON CONFLICT (content_hash) DO UPDATE SET since = excluded.since`, hash, ms(at))
	return mapErr(err, "orphan blob")
}

// Orphans returns hashes orphaned before t.
func (s DriveStore) Orphans(ctx context.Context, before time.Time, limit int) ([]string, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT content_hash FROM drive_orphans WHERE since < ? ORDER BY since LIMIT ?`, ms(before), limit)
	if err != nil {
		return nil, mapErr(err, "orphan blobs")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, mapErr(err, "orphan blobs")
		}
		out = append(out, h)
	}
	return out, mapErr(rows.Err(), "orphan blobs")
}

// DeleteOwner deletes an owner's drive; the blobs go through the collector,
// which re-checks that no one else refers to them.
func (s DriveStore) DeleteOwner(ctx context.Context, ownerID string, now time.Time) error {
	db := s.write(ctx)
	if _, err := db.ExecContext(ctx, `INSERT INTO drive_orphans (content_hash, since)
		SELECT 'sha256:' || substr(h, instr(h, ':') + 1), ? FROM (
			SELECT v.content_hash AS h FROM drive_versions v JOIN drive_files f ON f.id = v.file_id WHERE f.owner_id = ?
			UNION SELECT content_hash FROM drive_uploads WHERE owner_id = ?
			UNION SELECT content_hash FROM drive_tus_uploads WHERE created_by = ?) AS hashes
		WHERE h <> ''
		ON CONFLICT (content_hash) DO UPDATE SET since = excluded.since`, ms(now), ownerID, ownerID, ownerID); err != nil {
		return mapErr(err, "orphan blobs")
	}
	for _, q := range []string{
		`DELETE FROM drive_uploads WHERE owner_id = ?`,
		`DELETE FROM drive_tus_uploads WHERE created_by = ?`,
		`DELETE FROM drive_locks WHERE owner_id = ?`,
		`DELETE FROM drive_preview_tokens WHERE user_id = ?`,
		// One statement: a folder and what is in it go together.
		`DELETE FROM drive_files WHERE owner_id = ?`,
		`DELETE FROM drive_usage WHERE owner_id = ?`,
		`DELETE FROM drive_tombstones WHERE owner_id = ?`,
		`DELETE FROM drive_devices WHERE owner_id = ?`,
		`DELETE FROM drive_seq WHERE owner_id = ?`,
	} {
		if _, err := db.ExecContext(ctx, q, ownerID); err != nil {
			return mapErr(err, "drive of a deleted user")
		}
	}
	noteLocksGone(ctx)
	return nil
}

// DeleteOrphan forgets an orphan.
func (s DriveStore) DeleteOrphan(ctx context.Context, hash string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_orphans WHERE content_hash = ?`, hash)
	return mapErr(err, "orphan blob")
}

// blobLockClass is the first key of the blob locks' advisory locks on
// PostgreSQL (two int4 keys: the class and the hash's hashtext).
const blobLockClass = 0x424c4f42 // "BLOB"

// LockBlob takes blob hash's lock until the transaction of ctx ends: on
// PostgreSQL an advisory lock; on SQLite the transaction, on the one writer,
// excludes every other already.
func (s DriveStore) LockBlob(ctx context.Context, hash string) error {
	if !s.IsPostgres() {
		return nil
	}
	_, err := s.write(ctx).ExecContext(ctx, `SELECT pg_advisory_xact_lock(?, hashtext(?))`, blobLockClass, hash)
	return mapErr(err, "blob lock")
}

// HoldBlob records hold id on hash until until.
func (s DriveStore) HoldBlob(ctx context.Context, id, hash string, until time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_blob_holds (id, content_hash, until) VALUES (?, ?, ?)`, id, hash, ms(until))
	return mapErr(err, "blob hold")
}

// ReleaseBlob forgets hold id.
func (s DriveStore) ReleaseBlob(ctx context.Context, id string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_blob_holds WHERE id = ?`, id)
	return mapErr(err, "blob hold")
}

// BlobHeld reports whether a hold on hash lasts past now.
func (s DriveStore) BlobHeld(ctx context.Context, hash string, now time.Time) (bool, error) {
	var held bool
	err := s.read(ctx).QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM drive_blob_holds WHERE content_hash = ? AND until > ?)`, hash, ms(now)).Scan(&held)
	return held, mapErr(err, "blob hold")
}

// PruneBlobHolds deletes the holds that ended by now.
func (s DriveStore) PruneBlobHolds(ctx context.Context, now time.Time) (int, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_blob_holds WHERE until <= ?`, ms(now))
	if err != nil {
		return 0, mapErr(err, "blob holds")
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// SharePermission returns the best permission unexpired shares of fileIDs
// grant userID: with them, with a team they are in, with their organisation.
func (s DriveStore) SharePermission(ctx context.Context, userID string, fileIDs []string, now time.Time) (string, error) {
	var best sql.NullInt64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT max(CASE permission WHEN 'edit' THEN 2 ELSE 1 END) FROM drive_share_grants
		WHERE user_id = ? AND file_id IN (SELECT value FROM json_each(?)) AND (expires_at IS NULL OR expires_at > ?)`,
		userID, jsonIDs(fileIDs), ms(now)).Scan(&best)
	if err != nil {
		return "", mapErr(err, "drive shares")
	}
	switch best.Int64 {
	case 2:
		return drive.PermEdit, nil
	case 1:
		return drive.PermView, nil
	}
	return "", nil
}
