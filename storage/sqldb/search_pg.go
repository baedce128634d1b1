package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"html"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"atrium/app/drive"
)

// PostgresSearch is the drive's search index kept in PostgreSQL
// (drive.SearchIndexes), for a server whose metadata is there: every node
// reads the same index, and a write's document is in it once the indexer
// applied its event. Its tables (search_docs, search_texts, search_state)
// hold one row a live item with its words in a tsvector (GIN), weighted
// name, tags, description, content, accents removed (unaccent); the
// extracted text of each content once. It keeps the promises of the Bleve
// index the embedded server uses: every word of the text in some field,
// the last word also as the beginning of a word of the name, the filters,
// sorts and facets, visibility by owner, share and any folder above.
type PostgresSearch struct{ *DB }

var _ drive.SearchIndexes = PostgresSearch{}

// Open returns the index when it was built; an error otherwise (the indexer
// then builds it).
func (s PostgresSearch) Open() (drive.SearchIndex, error) {
	if s.pg == nil {
		return nil, errors.New("the search index in the database needs PostgreSQL")
	}
	var built int64
	err := s.read(context.Background()).QueryRowContext(context.Background(), `SELECT built FROM search_state WHERE id = 1`).Scan(&built)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && built == 0) {
		return nil, errors.New("the search index in the database is not built")
	}
	if err != nil {
		return nil, fmt.Errorf("search index state: %w", err)
	}
	return pgIndex{s.DB}, nil
}

// Build empties the index, fills it with fill and marks it built. Searches
// meanwhile answer index_rebuilding (the indexer holds no index until Build
// returns); a build cut short leaves it unbuilt, to be built again.
func (s PostgresSearch) Build(ctx context.Context, fill func(drive.SearchIndex) error) (drive.SearchIndex, error) {
	err := s.InTx(ctx, func(ctx context.Context) error {
		for _, q := range []string{
			`INSERT INTO search_state (id, built, cursor) VALUES (1, 0, 0) ON CONFLICT (id) DO UPDATE SET built = 0, cursor = 0`,
			`DELETE FROM search_docs`,
			`DELETE FROM search_texts`,
		} {
			if _, err := s.write(ctx).ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("empty the search index: %w", err)
	}
	idx := pgIndex{s.DB}
	if err := fill(idx); err != nil {
		return nil, err
	}
	if _, err := s.write(ctx).ExecContext(ctx, `UPDATE search_state SET built = 1 WHERE id = 1`); err != nil {
		return nil, fmt.Errorf("search index state: %w", err)
	}
	return idx, nil
}

// pgIndex is the built index (drive.SearchIndex).
type pgIndex struct{ *DB }

var _ drive.SearchIndex = pgIndex{}

// docWeights are ts_rank's weights of the four fields, D to A: content 1,
// description 1.5, tags 2, name 4 (the Bleve index's boosts), over 4.
const docWeights = `'{0.25, 0.375, 0.5, 1.0}'`

// Apply indexes docs, removes deletes and records cursor, in one
// transaction; the texts no document refers to any more go with them.
func (x pgIndex) Apply(ctx context.Context, docs []drive.SearchDoc, deletes []string, cursor int64) error {
	return x.InTx(ctx, func(ctx context.Context) error {
		w := x.write(ctx)
		touched := make([]string, 0, len(docs)+len(deletes))
		touched = append(touched, deletes...)
		for _, d := range docs {
			touched = append(touched, d.ID)
		}
		var old []string
		rows, err := w.QueryContext(ctx, `SELECT DISTINCT content_hash FROM search_docs WHERE id = ANY(CAST(? AS text[])) AND content_hash <> ''`, touched)
		if err != nil {
			return fmt.Errorf("search index: %w", err)
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return fmt.Errorf("search index: %w", err)
			}
			old = append(old, h)
		}
		rows.Close()
		if len(deletes) > 0 {
			if _, err := w.ExecContext(ctx, `DELETE FROM search_docs WHERE id = ANY(CAST(? AS text[]))`, deletes); err != nil {
				return fmt.Errorf("search index: %w", err)
			}
		}
		for _, d := range docs {
			if d.Content != "" && d.ContentHash != "" {
				if _, err := w.ExecContext(ctx, `INSERT INTO search_texts (content_hash, text) VALUES (?, ?)
					ON CONFLICT (content_hash) DO UPDATE SET text = excluded.text`, d.ContentHash, d.Content); err != nil {
					return fmt.Errorf("search index text: %w", err)
				}
			}
			folders := d.Folders
			if folders == nil {
				folders = []string{}
			}
			_, err := w.ExecContext(ctx, `INSERT INTO search_docs (id, org_id, owner_id, owner_name, folders, name, mime_type,
					mime_group, description, tags, is_folder, size_bytes, content_hash, created_at, updated_at, doc)
				VALUES (?, ?, ?, ?, CAST(? AS text[]), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
					setweight(to_tsvector('simple', unaccent(?)), 'A') || setweight(to_tsvector('simple', unaccent(?)), 'B') ||
					setweight(to_tsvector('simple', unaccent(?)), 'C') || setweight(to_tsvector('simple', unaccent(?)), 'D'))
				ON CONFLICT (id) DO UPDATE SET org_id = excluded.org_id, owner_id = excluded.owner_id,
					owner_name = excluded.owner_name, folders = excluded.folders, name = excluded.name,
					mime_type = excluded.mime_type, mime_group = excluded.mime_group, description = excluded.description,
					tags = excluded.tags, is_folder = excluded.is_folder, size_bytes = excluded.size_bytes,
					content_hash = excluded.content_hash, created_at = excluded.created_at, updated_at = excluded.updated_at,
					doc = excluded.doc`,
				d.ID, d.OrgID, d.OwnerID, d.OwnerName, folders, d.Name, d.MimeType, d.MimeGroup, d.Description,
				strings.Join(d.Tags, "\n"), d.IsFolder, d.SizeBytes, d.ContentHash, ms(d.CreatedAt), ms(d.UpdatedAt),
				words(d.Name), words(strings.Join(d.Tags, " ")), words(d.Description), words(d.Content))
			if err != nil {
				return fmt.Errorf("search index %s: %w", d.ID, err)
			}
		}
		if len(old) > 0 {
			if _, err := w.ExecContext(ctx, `DELETE FROM search_texts t WHERE t.content_hash = ANY(CAST(? AS text[]))
				AND NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.content_hash = t.content_hash)`, old); err != nil {
				return fmt.Errorf("search index texts: %w", err)
			}
		}
		_, err = w.ExecContext(ctx, `UPDATE search_state SET cursor = ? WHERE id = 1`, cursor)
		return err
	})
}

// Cursor returns the last event applied.
func (x pgIndex) Cursor() (int64, error) {
	var c int64
	err := x.read(context.Background()).QueryRowContext(context.Background(), `SELECT coalesce((SELECT cursor FROM search_state WHERE id = 1), 0)`).Scan(&c)
	return c, err
}

// Content returns the indexed text of id and the content it came from.
func (x pgIndex) Content(id string) (string, string, bool, error) {
	var hash, text string
	err := x.read(context.Background()).QueryRowContext(context.Background(), `SELECT d.content_hash, coalesce(t.text, '')
		FROM search_docs d LEFT JOIN search_texts t ON t.content_hash = d.content_hash WHERE d.id = ?`, id).Scan(&hash, &text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("search index: %w", err)
	}
	return hash, text, true, nil
}

// Count returns the number of indexed items.
func (x pgIndex) Count() (uint64, error) {
	var n uint64
	err := x.read(context.Background()).QueryRowContext(context.Background(), `SELECT count(*) FROM search_docs`).Scan(&n)
	return n, err
}

// OwnedBy returns the ids of at most limit items of ownerID.
func (x pgIndex) OwnedBy(ctx context.Context, ownerID string, limit int) ([]string, error) {
	rows, err := x.read(ctx).QueryContext(ctx, `SELECT id FROM search_docs WHERE owner_id = ? LIMIT ?`, ownerID, limit)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Close does nothing: the index is the database's.
func (x pgIndex) Close() error { return nil }

// searchWords are the words of a search's text, folded as the documents'
// are (letters and digits; case and accents are PostgreSQL's to fold).
func searchWords(text string) []string { return strings.Fields(words(text)) }

// tsQuery is the text as a tsquery: every word, the last one also as the
// beginning of a word of the name (weight A) when it has two letters or more.
func tsQuery(ws []string) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		w = strings.ToLower(w)
		parts[i] = "'" + w + "'"
		if i == len(ws)-1 && len([]rune(w)) >= 2 {
			parts[i] = "('" + w + "' | '" + w + "':*A)"
		}
	}
	return strings.Join(parts, " & ")
}

var pgSortCols = map[string]string{"name": "lower(d.name)", "size_bytes": "d.size_bytes", "created_at": "d.created_at",
	"updated_at": "d.updated_at", "mime_type": "d.mime_type"}

// Search runs q.
func (x pgIndex) Search(ctx context.Context, q drive.SearchQuery) (drive.IndexResult, error) {
	ws := searchWords(q.Text)
	where := []string{"d.org_id = ?", "(d.owner_id = ? OR d.id = ANY(CAST(? AS text[])) OR d.folders && CAST(? AS text[]))"}
	roots, folders := q.SharedRoots, q.SharedFolders
	if roots == nil {
		roots = []string{}
	}
	if folders == nil {
		folders = []string{}
	}
	args := []any{q.OrgID, q.OwnerID, roots, folders}
	tq := ""
	if len(ws) > 0 {
		tq = tsQuery(ws)
		where = append(where, "d.doc @@ to_tsquery('simple', unaccent(?))")
		args = append(args, tq)
	} else if strings.TrimSpace(q.Text) != "" {
		return drive.IndexResult{Hits: []drive.IndexHit{}}, nil // no word to find
	}
	if q.FolderID != "" {
		where = append(where, "d.folders @> CAST(? AS text[])")
		args = append(args, []string{q.FolderID})
	}
	if len(q.MimeTypes) > 0 {
		where = append(where, "d.mime_type = ANY(CAST(? AS text[]))")
		args = append(args, q.MimeTypes)
	}
	timeBounds := func(col string, after, before *int64) {
		if after != nil {
			where = append(where, col+" >= ?")
			args = append(args, *after)
		}
		if before != nil {
			where = append(where, col+" <= ?")
			args = append(args, *before)
		}
	}
	msUp := func(t interface{ UnixMilli() int64 }, nanos int) int64 {
		v := t.UnixMilli()
		if nanos%1_000_000 != 0 {
			v++
		}
		return v
	}
	var ca, cb, ma, mb *int64
	if q.CreatedAfter != nil {
		v := msUp(q.CreatedAfter, q.CreatedAfter.Nanosecond())
		ca = &v
	}
	if q.CreatedBefore != nil {
		v := q.CreatedBefore.UnixMilli()
		cb = &v
	}
	if q.ModifiedAfter != nil {
		v := msUp(q.ModifiedAfter, q.ModifiedAfter.Nanosecond())
		ma = &v
	}
	if q.ModifiedBefore != nil {
		v := q.ModifiedBefore.UnixMilli()
		mb = &v
	}
	timeBounds("d.created_at", ca, cb)
	timeBounds("d.updated_at", ma, mb)
	if q.OwnerName != "" {
		where = append(where, "lower(d.owner_name) = lower(?)")
		args = append(args, q.OwnerName)
	}
	if q.IsFolder != nil {
		where = append(where, "d.is_folder = ?")
		args = append(args, *q.IsFolder)
	}
	if q.MinSize != nil {
		where = append(where, "d.size_bytes >= ?")
		args = append(args, *q.MinSize)
	}
	if q.MaxSize != nil {
		where = append(where, "d.size_bytes <= ?")
		args = append(args, *q.MaxSize)
	}
	cond := strings.Join(where, " AND ")
	dir := "ASC"
	if q.SortOrder == "desc" {
		dir = "DESC"
	}
	order := ""
	var orderArgs []any
	if col := pgSortCols[q.SortBy]; col != "" {
		order = col + " " + dir + ", lower(d.name), d.id"
	} else if tq != "" {
		order = "ts_rank(" + docWeights + ", d.doc, to_tsquery('simple', unaccent(?))) " + dir + ", d.id"
		orderArgs = append(orderArgs, tq)
	} else {
		order = "d.id"
	}
	limit := q.Limit
	if limit <= 0 {
		limit = drive.SearchDefaultLimit
	}
	all := append(append(append([]any{}, args...), orderArgs...), limit, q.Offset)
	rows, err := x.read(ctx).QueryContext(ctx, `SELECT d.id, count(*) OVER () FROM search_docs d WHERE `+cond+
		` ORDER BY `+order+` LIMIT ? OFFSET ?`, all...)
	if err != nil {
		return drive.IndexResult{}, fmt.Errorf("search: %w", err)
	}
	out := drive.IndexResult{Hits: []drive.IndexHit{}}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &out.Total); err != nil {
			rows.Close()
			return drive.IndexResult{}, fmt.Errorf("search: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return drive.IndexResult{}, fmt.Errorf("search: %w", err)
	}
	rows.Close()
	if len(ids) == 0 && q.Offset > 0 {
		if err := x.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM search_docs d WHERE `+cond, args...).Scan(&out.Total); err != nil {
			return drive.IndexResult{}, fmt.Errorf("search: %w", err)
		}
	}
	hl, err := x.highlights(ctx, ws, ids)
	if err != nil {
		return drive.IndexResult{}, err
	}
	for _, id := range ids {
		out.Hits = append(out.Hits, drive.IndexHit{ID: id, Highlights: hl[id]})
	}
	if q.Facets {
		if out.Facets, err = x.facets(ctx, cond, args); err != nil {
			return drive.IndexResult{}, err
		}
	}
	return out, nil
}

// facets counts the matches by mime group (the 20 most), owner name (50)
// and whether they are folders.
func (x pgIndex) facets(ctx context.Context, cond string, args []any) (map[string]map[string]int, error) {
	rows, err := x.read(ctx).QueryContext(ctx, `SELECT d.mime_group, d.owner_name, d.is_folder, GROUPING(d.mime_group),
			GROUPING(d.owner_name), count(*)
		FROM search_docs d WHERE `+cond+` GROUP BY GROUPING SETS ((d.mime_group), (d.owner_name), (d.is_folder))`, args...)
	if err != nil {
		return nil, fmt.Errorf("search facets: %w", err)
	}
	defer rows.Close()
	type count struct {
		term string
		n    int
	}
	var groups, owners []count
	folder := map[string]int{}
	for rows.Next() {
		var group, owner sql.NullString
		var isFolder sql.NullInt64
		var gGroup, gOwner int
		var n int
		if err := rows.Scan(&group, &owner, &isFolder, &gGroup, &gOwner, &n); err != nil {
			return nil, fmt.Errorf("search facets: %w", err)
		}
		switch {
		case gGroup == 0:
			groups = append(groups, count{group.String, n})
		case gOwner == 0:
			owners = append(owners, count{owner.String, n})
		default:
			folder[strconv.FormatBool(isFolder.Int64 == 1)] = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search facets: %w", err)
	}
	top := func(cs []count, n int) map[string]int {
		sort.Slice(cs, func(i, j int) bool { return cs[i].n > cs[j].n || (cs[i].n == cs[j].n && cs[i].term < cs[j].term) })
		m := map[string]int{}
		for i, c := range cs {
			if i == n {
				break
			}
			m[c.term] = c.n
		}
		return m
	}
	return map[string]map[string]int{"mime_group": top(groups, 20), "owner_name": top(owners, 50), "is_folder": folder}, nil
}

// highlightFragment is the length of a fragment of a long text around a
// match (the Bleve index's fragmenter's).
const highlightFragment = 200

// highlights returns the hits' fragments by field that hold a word of the
// search: HTML, the text escaped, the words in <mark>; a field's whole text
// when short, else up to three fragments around the matches.
func (x pgIndex) highlights(ctx context.Context, ws []string, ids []string) (map[string]map[string][]string, error) {
	out := map[string]map[string][]string{}
	if len(ws) == 0 || len(ids) == 0 {
		return out, nil
	}
	rows, err := x.read(ctx).QueryContext(ctx, `SELECT d.id, d.name, d.description, d.tags, coalesce(t.text, '')
		FROM search_docs d LEFT JOIN search_texts t ON t.content_hash = d.content_hash WHERE d.id = ANY(CAST(? AS text[]))`, ids)
	if err != nil {
		return nil, fmt.Errorf("search highlights: %w", err)
	}
	defer rows.Close()
	keys := make([]string, len(ws))
	for i, w := range ws {
		keys[i] = foldWord(w)
	}
	for rows.Next() {
		var id, name, desc, tags, content string
		if err := rows.Scan(&id, &name, &desc, &tags, &content); err != nil {
			return nil, fmt.Errorf("search highlights: %w", err)
		}
		m := map[string][]string{}
		for _, f := range []struct{ field, text string }{{"name", name}, {"description", desc}, {"content", content}} {
			if frags := markFragments(f.text, keys, f.field == "name"); len(frags) > 0 {
				m[f.field] = frags
			}
		}
		for _, tag := range strings.Split(tags, "\n") {
			if frags := markFragments(tag, keys, false); len(frags) > 0 {
				m["tags"] = append(m["tags"], frags...)
			}
		}
		out[id] = m
	}
	return out, rows.Err()
}

// foldWord is w lower-cased without accents: how the index compares words.
func foldWord(w string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(w)) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markFragments marks the words of text that are one of keys (the last key
// also as the beginning of a word when prefix) and returns the fragments that
// hold a mark.
func markFragments(text string, keys []string, prefix bool) []string {
	type span struct{ start, end int }
	var marks []span
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := foldWord(text[start:end])
		for i, k := range keys {
			if w == k || (prefix && i == len(keys)-1 && len([]rune(k)) >= 2 && strings.HasPrefix(w, k)) {
				marks = append(marks, span{start, end})
				break
			}
		}
		start = -1
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	if len(marks) == 0 {
		return nil
	}
	render := func(from, to int) string {
		var b strings.Builder
		at := from
		for _, m := range marks {
			if m.start < from || m.end > to {
				continue
			}
			b.WriteString(html.EscapeString(text[at:m.start]))
			b.WriteString("<mark>")
			b.WriteString(html.EscapeString(text[m.start:m.end]))
			b.WriteString("</mark>")
			at = m.end
		}
		b.WriteString(html.EscapeString(text[at:to]))
		return b.String()
	}
	if len(text) <= highlightFragment {
		return []string{render(0, len(text))}
	}
	var frags []string
	covered := -1
	for _, m := range marks {
		if m.start < covered || len(frags) == 3 {
			continue
		}
		from := max(0, m.start-highlightFragment/2)
		to := min(len(text), from+highlightFragment)
		for from > 0 && !utf8Start(text[from]) {
			from--
		}
		for to < len(text) && !utf8Start(text[to]) {
			to++
		}
		frags = append(frags, render(from, to))
		covered = to
	}
	return frags
}

// utf8Start reports whether b begins a UTF-8 sequence.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
