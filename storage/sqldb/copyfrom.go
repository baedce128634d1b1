package sqldb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"atrium/app/contacts"
)

// copyMarker is the name of the row of server_secrets where atrium copy-data
// records, before it writes anything else, which installation it is copying
// and whether it finished (CopyMarker). The source's own secrets never take
// this name.
const copyMarker = "copy_data"

// CopyState is what a PostgreSQL database says about a copy of an embedded
// installation into it (atrium copy-data).
type CopyState struct {
	// Empty: the database holds no organisation, user or drive item (a
	// server's first start seeds plans and secrets; those do not count).
	Empty bool
	// Source is the identity of the installation an earlier copy came from
	// ("" when there was none); State is "copying" or "done".
	Source, State string
	// Changed: since the copy was done, a server on it took writes of files,
	// calendars, contacts or the organisations' people (its fingerprint,
	// copyFingerprint, is not the one recorded then), which copying again
	// would lose. False too when a copy by an older atrium recorded none.
	Changed bool
}

type copyMarkerValue struct {
	Source string `json:"source"`
	State  string `json:"state"`
	// Fingerprint is copyFingerprint when the copy was done.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// copyFingerprint sums up the writes a database took: the outbox's last
// sequence number (every change of the drive, the calendars and the
// organisations' people emits an event) and the address books' change
// sequences (a contact's change moves its book's), with how many books there
// are. Neither goes back, and neither counts a sign-in.
func (db *DB) copyFingerprint(ctx context.Context) (string, error) {
	var outbox, books, bookSeqs int64
	err := db.pg.pool.QueryRowContext(ctx, `SELECT `+db.lastOutboxSeq()+`, (SELECT count(*) FROM address_books),
		(SELECT coalesce(sum(sync_seq), 0) FROM address_books)`).Scan(&outbox, &books, &bookSeqs)
	if err != nil {
		return "", fmt.Errorf("copy-data: the target's changes: %w", err)
	}
	return fmt.Sprintf("outbox %d, books %d, book changes %d", outbox, books, bookSeqs), nil
}

// CopyStatus reads the copy marker and whether the database is empty.
func (db *DB) CopyStatus(ctx context.Context) (CopyState, error) {
	if db.pg == nil {
		return CopyState{}, errors.New("copy-data: the target database must be PostgreSQL")
	}
	var st CopyState
	err := db.pg.pool.QueryRowContext(ctx, `SELECT NOT (EXISTS (SELECT 1 FROM organizations) OR EXISTS (SELECT 1 FROM users)
		OR EXISTS (SELECT 1 FROM drive_files))`).Scan(&st.Empty)
	if err != nil {
		return CopyState{}, fmt.Errorf("copy-data: is the target database empty: %w", err)
	}
	var v []byte
	err = db.pg.pool.QueryRowContext(ctx, `SELECT value FROM server_secrets WHERE name = $1`, copyMarker).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return CopyState{}, fmt.Errorf("copy-data: read the copy marker: %w", err)
	}
	var m copyMarkerValue
	if err := json.Unmarshal(v, &m); err != nil {
		return CopyState{}, fmt.Errorf("copy-data: the copy marker of the target database is not readable: %w", err)
	}
	st.Source, st.State = m.Source, m.State
	if m.State == "done" && m.Fingerprint != "" {
		now, err := db.copyFingerprint(ctx)
		if err != nil {
			return CopyState{}, err
		}
		st.Changed = now != m.Fingerprint
	}
	return st, nil
}

// SetCopyMarker records that the installation source is being copied
// (state "copying") or was copied ("done", with the target's
// copyFingerprint, which CopyStatus compares).
func (db *DB) SetCopyMarker(ctx context.Context, source, state string) error {
	m := copyMarkerValue{Source: source, State: state}
	if state == "done" {
		var err error
		if m.Fingerprint, err = db.copyFingerprint(ctx); err != nil {
			return err
		}
	}
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = db.pg.pool.ExecContext(ctx, `INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, copyMarker, v, ms(db.now()))
	if err != nil {
		return fmt.Errorf("copy-data: write the copy marker: %w", err)
	}
	return nil
}

// ResetCopiedRows empties every table a copy writes, before a run that
// carries on an interrupted copy or copies again (atrium copy-data --again):
// the rows are then those of one snapshot of the source, never a mix of two
// (a row the source changed or deleted between them would stay as the first
// had it, and could refer to a blob that the second's blob pass does not
// copy). The blobs copied so far stay in the store. Kept: the migrations'
// bookkeeping, and the secrets and plans, which the copy overwrites.
func (db *DB) ResetCopiedRows(ctx context.Context) error {
	rows, err := db.pg.pool.QueryContext(ctx, `SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relkind IN ('r', 'p')
		AND c.relname NOT IN ('goose_db_version', 'server_secrets', 'plans') ORDER BY c.relname`)
	if err != nil {
		return fmt.Errorf("copy-data: list the target's tables: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, quoteIdent(n))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	if _, err := db.pg.pool.ExecContext(ctx, `TRUNCATE `+strings.Join(names, ", ")); err != nil {
		return fmt.Errorf("copy-data: empty the rows of the earlier run: %w", err)
	}
	return nil
}

// SetCopiedUploadParts records the parts in a bucket of a resumable upload
// whose received bytes copy-data stored there (the source kept them in one
// file, and its row lists none).
func (db *DB) SetCopiedUploadParts(ctx context.Context, id string, parts []string) error {
	v, err := json.Marshal(parts)
	if err != nil {
		return err
	}
	if _, err := db.pg.pool.ExecContext(ctx, `UPDATE drive_tus_uploads SET parts = $1 WHERE id = $2`, string(v), id); err != nil {
		return fmt.Errorf("copy-data: parts of upload %s: %w", id, err)
	}
	return nil
}

// SourceIdentity names the installation of the SQLite database file at path
// (a snapshot): a digest of its cursor key, a random secret made at its first
// start that never changes. "" when it has none (a database never served).
func SourceIdentity(ctx context.Context, path string) (string, error) {
	src, err := openImmutable(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	var v []byte
	err = src.QueryRowContext(ctx, `SELECT value FROM server_secrets WHERE name = 'cursor_key'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the source's identity: %w", err)
	}
	sum := sha256.Sum256(v)
	return hex.EncodeToString(sum[:8]), nil
}

// CopyOptions adjusts CopyFromSQLite.
type CopyOptions struct {
	// Progress, when set, is called as a table's rows are copied.
	Progress func(table string, done, total int64)
	// Warn, when set, is told of source columns the target's schema lacks
	// (their values are not copied; the schemas are meant to match).
	Warn func(msg string, args ...any)
	// StopAfter, in tests, ends the copy with ErrCopyStopped once that many
	// rows were written (an interruption).
	StopAfter int64
}

// CopyStats is what CopyFromSQLite copied.
type CopyStats struct {
	Tables int
	// Rows is the count of rows of the source's tables that were copied
	// (including those an earlier, interrupted run had already written).
	Rows int64
}

// ErrCopyStopped is returned by CopyFromSQLite when CopyOptions.StopAfter
// ended it.
var ErrCopyStopped = errors.New("copy stopped (test)")

// pgColumn is a column of the PostgreSQL schema.
type pgColumn struct {
	name, dataType string
	generated      bool
}

// pgTable is a table of the PostgreSQL schema.
type pgTable struct {
	name     string
	columns  []pgColumn
	unlogged bool
	unique   bool // a primary key or a unique index: ON CONFLICT finds a row again
	parents  []string
	// selfFrom and selfTo are the columns of a foreign key to the table itself
	// (drive_files.parent_id → id): its rows are copied parents first.
	selfFrom, selfTo string
}

// copySkip are tables of both schemas whose rows are not copied, and why.
var copySkip = map[string]string{
	// Each engine's migrations record their own versions.
	"goose_db_version": "migration bookkeeping",
	// PostgreSQL's trigger drive_usage_org adds each drive_usage row to its
	// organisation's total as the row is inserted: copying the source's
	// totals as well would count everything twice.
	"drive_org_usage": "derived from drive_usage by a trigger",
	// SQLite's contacts_fts is an FTS5 table (skipped as virtual anyway);
	// PostgreSQL's is rebuilt from the contacts (IndexMissingContacts).
	"contacts_fts": "rebuilt from the contacts",
}

// copyOverwrite are the tables whose rows a starting server makes on its own
// (a target database that a server or bootstrap opened before has them): the
// source's rows replace them, by this key. The source's secrets must win:
// they sign and check its users' tokens, cursors and links.
var copyOverwrite = map[string]string{
	"server_secrets": "name",
	"plans":          "slug",
}

// CopyFromSQLite copies the rows of the SQLite database file at path (a
// snapshot nothing writes to, of this binary's schema) into db, a PostgreSQL
// database of the same schema: every table both schemas have, in the order
// of their foreign keys, the columns both have. A row already in db is
// left as it is (ON CONFLICT DO NOTHING), so that a run after an
// interruption could carry on from where it stopped, though Run empties the
// tables first (ResetCopiedRows); tables whose count already matches are
// passed over. Then every sequence is set past the largest value copied.
func (db *DB) CopyFromSQLite(ctx context.Context, path string, o CopyOptions) (CopyStats, error) {
	if db.pg == nil {
		return CopyStats{}, errors.New("copy-data: the target database must be PostgreSQL")
	}
	src, err := openImmutable(path)
	if err != nil {
		return CopyStats{}, err
	}
	defer src.Close()
	srcTables, err := sqliteTables(ctx, src)
	if err != nil {
		return CopyStats{}, err
	}
	tables, err := db.pgTables(ctx)
	if err != nil {
		return CopyStats{}, err
	}
	order, err := copyOrder(tables)
	if err != nil {
		return CopyStats{}, err
	}
	var st CopyStats
	written := int64(0)
	for _, name := range order {
		t := tables[name]
		srcCols, ok := srcTables[name]
		if !ok || copySkip[name] != "" {
			// A table of PostgreSQL's schema alone (its search index:
			// search_docs, search_texts, search_state, filled by reindex).
			continue
		}
		// Logged tables of short-lived state (drive_editor_presence,
		// login_flows, drive_blob_holds, sign_in_challenges) are copied:
		// harmless, each row expires by itself, and a sign-in under way may
		// finish on the new servers.
		if t.unlogged {
			// The limits' counts (auth_failures, known_clients,
			// rate_windows): a PostgreSQL crash forgets them by design, and
			// SQLite's server counts in memory and leaves them empty.
			continue
		}
		var cols []pgColumn
		for _, c := range t.columns {
			if !c.generated && slices.Contains(srcCols, c.name) {
				cols = append(cols, c)
			}
		}
		if o.Warn != nil {
			for _, c := range srcCols {
				if !slices.ContainsFunc(t.columns, func(p pgColumn) bool { return p.name == c }) {
					o.Warn("copy-data: a column of the source is not in PostgreSQL's schema: not copied", "table", name, "column", c)
				}
			}
		}
		if len(cols) == 0 {
			continue
		}
		n, err := db.copyTable(ctx, src, t, cols, o, &written)
		st.Rows += n
		if err != nil {
			return st, fmt.Errorf("copy-data: table %s: %w", name, err)
		}
		st.Tables++
	}
	if err := db.advanceSequences(ctx, src); err != nil {
		return st, err
	}
	return st, nil
}

// sqliteTables lists the tables of the SQLite database and their columns
// (generated ones left out), but not SQLite's own (sqlite_*), virtual tables
// (FTS5) and their shadow tables: their content is an index each engine
// builds its own way.
func sqliteTables(ctx context.Context, src *sql.DB) (map[string][]string, error) {
	rows, err := src.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, fmt.Errorf("copy-data: list the source's tables: %w", err)
	}
	type tbl struct{ name, sql string }
	var all []tbl
	for rows.Next() {
		var t tbl
		if err := rows.Scan(&t.name, &t.sql); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var virtual []string
	for _, t := range all {
		if strings.HasPrefix(strings.ToUpper(t.sql), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, t.name)
		}
	}
	out := map[string][]string{}
	for _, t := range all {
		if slices.ContainsFunc(virtual, func(v string) bool { return t.name == v || strings.HasPrefix(t.name, v+"_") }) {
			continue
		}
		cols, err := sqliteColumns(ctx, src, t.name)
		if err != nil {
			return nil, err
		}
		out[t.name] = cols
	}
	return out, nil
}

func sqliteColumns(ctx context.Context, src *sql.DB, table string) ([]string, error) {
	// table_info leaves out generated (hidden) columns: they are computed again.
	rows, err := src.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, fmt.Errorf("copy-data: columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// pgTables reads the tables of the current schema from PostgreSQL's catalog:
// their columns, whether each is unlogged or has a unique key, and their
// foreign keys.
func (db *DB) pgTables(ctx context.Context) (map[string]*pgTable, error) {
	pool := db.pg.pool
	out := map[string]*pgTable{}
	rows, err := pool.QueryContext(ctx, `SELECT c.relname, c.relpersistence = 'u',
			EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique AND i.indpred IS NULL)
		FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relkind IN ('r', 'p')`)
	if err != nil {
		return nil, fmt.Errorf("copy-data: list the target's tables: %w", err)
	}
	for rows.Next() {
		t := &pgTable{}
		if err := rows.Scan(&t.name, &t.unlogged, &t.unique); err != nil {
			rows.Close()
			return nil, err
		}
		out[t.name] = t
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = pool.QueryContext(ctx, `SELECT table_name, column_name, data_type, is_generated = 'ALWAYS'
		FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("copy-data: list the target's columns: %w", err)
	}
	for rows.Next() {
		var table string
		var c pgColumn
		if err := rows.Scan(&table, &c.name, &c.dataType, &c.generated); err != nil {
			rows.Close()
			return nil, err
		}
		if t := out[table]; t != nil {
			t.columns = append(t.columns, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = pool.QueryContext(ctx, `SELECT c.relname, f.relname,
			(SELECT attname FROM pg_attribute WHERE attrelid = k.conrelid AND attnum = k.conkey[1]),
			(SELECT attname FROM pg_attribute WHERE attrelid = k.confrelid AND attnum = k.confkey[1]),
			cardinality(k.conkey)
		FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
		WHERE k.contype = 'f' AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`)
	if err != nil {
		return nil, fmt.Errorf("copy-data: list the target's foreign keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var child, parent, from, to string
		var n int
		if err := rows.Scan(&child, &parent, &from, &to, &n); err != nil {
			return nil, err
		}
		t := out[child]
		if t == nil || out[parent] == nil {
			continue
		}
		if child == parent {
			if n != 1 {
				return nil, fmt.Errorf("copy-data: table %s refers to itself by %d columns: not supported", child, n)
			}
			t.selfFrom, t.selfTo = from, to
			continue
		}
		if !slices.Contains(t.parents, parent) {
			t.parents = append(t.parents, parent)
		}
	}
	return out, rows.Err()
}

// copyOrder sorts the tables so that every table comes after those its
// foreign keys refer to (ties by name, for a stable order).
func copyOrder(tables map[string]*pgTable) ([]string, error) {
	var names []string
	for n := range tables {
		names = append(names, n)
	}
	slices.Sort(names)
	done := map[string]bool{}
	var order []string
	for len(order) < len(names) {
		progress := false
		for _, n := range names {
			if done[n] {
				continue
			}
			if slices.ContainsFunc(tables[n].parents, func(p string) bool { return !done[p] }) {
				continue
			}
			done[n] = true
			order = append(order, n)
			progress = true
		}
		if !progress {
			var left []string
			for _, n := range names {
				if !done[n] {
					left = append(left, n)
				}
			}
			return nil, fmt.Errorf("copy-data: the foreign keys of tables %s form a cycle", strings.Join(left, ", "))
		}
	}
	return order, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// copyRowsPerStatement bounds a multi-row INSERT (and PostgreSQL's 65,535
// parameters of a statement).
const copyRowsPerStatement = 500

// copyBytesPerStatement bounds the text and bytes of a multi-row INSERT
// (500 small contents of up to 64 KiB would be 32 MiB).
const copyBytesPerStatement = 4 << 20

// copyTable copies the rows of one table in batches, each its own
// transaction; a table without a unique key (where ON CONFLICT would not
// find a row again) is copied in one transaction that first empties it.
func (db *DB) copyTable(ctx context.Context, src *sql.DB, t *pgTable, cols []pgColumn, o CopyOptions, written *int64) (int64, error) {
	var total, have int64
	if err := src.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(t.name)).Scan(&total); err != nil {
		return 0, fmt.Errorf("count the source's rows: %w", err)
	}
	if err := db.pg.pool.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(t.name)).Scan(&have); err != nil {
		return 0, fmt.Errorf("count the target's rows: %w", err)
	}
	_, overwrite := copyOverwrite[t.name]
	if total == 0 || have == total && !overwrite {
		// Nothing to copy, or copied already (a table without a unique key
		// is copied in one transaction: all of it or none). A run that
		// carries on an interrupted copy finds the tables emptied
		// (ResetCopiedRows); a server's seeded rows are overwritten.
		if o.Progress != nil {
			o.Progress(t.name, total, total)
		}
		return total, nil
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.name)
	}
	colList := strings.Join(names, ", ")
	var q string
	if t.selfFrom != "" {
		// Parents first: each row's depth below the rows whose parent is
		// not in the table.
		tn, from, to := quoteIdent(t.name), quoteIdent(t.selfFrom), quoteIdent(t.selfTo)
		var sel []string
		for _, n := range names {
			sel = append(sel, "t."+n)
		}
		q = `WITH RECURSIVE d(k, depth) AS (
				SELECT ` + to + `, 0 FROM ` + tn + ` WHERE ` + from + ` IS NULL OR ` + from + ` NOT IN (SELECT ` + to + ` FROM ` + tn + ` WHERE ` + to + ` IS NOT NULL)
				UNION ALL SELECT c.` + to + `, d.depth + 1 FROM ` + tn + ` c JOIN d ON c.` + from + ` = d.k)
			SELECT ` + strings.Join(sel, ", ") + ` FROM ` + tn + ` t JOIN d ON t.` + to + ` = d.k ORDER BY d.depth`
	} else {
		q = `SELECT ` + colList + ` FROM ` + quoteIdent(t.name)
	}
	rows, err := src.QueryContext(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("read the source's rows: %w", err)
	}
	defer rows.Close()

	conflict := ` ON CONFLICT DO NOTHING`
	if key, ok := copyOverwrite[t.name]; ok {
		var set []string
		for _, c := range cols {
			if c.name != key {
				set = append(set, quoteIdent(c.name)+" = excluded."+quoteIdent(c.name))
			}
		}
		conflict = ` ON CONFLICT (` + quoteIdent(key) + `) DO UPDATE SET ` + strings.Join(set, ", ")
	}
	perStmt := min(copyRowsPerStatement, 60000/len(cols))
	var tx *sql.Tx
	var exec func(ctx context.Context, q string, args ...any) (sql.Result, error) = db.pg.pool.ExecContext
	if !t.unique {
		if tx, err = db.pg.pool.BeginTx(ctx, nil); err != nil {
			return 0, err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(t.name)); err != nil {
			return 0, err
		}
		exec = tx.ExecContext
	}
	var (
		done  int64
		args  []any
		nrows int
		size  int // bytes of text and binary values in args
	)
	flush := func() error {
		if nrows == 0 {
			return nil
		}
		var b strings.Builder
		b.WriteString(`INSERT INTO ` + quoteIdent(t.name) + ` (` + colList + `) OVERRIDING SYSTEM VALUE VALUES `)
		for r := range nrows {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for c := range cols {
				if c > 0 {
					b.WriteString(", ")
				}
				b.WriteString("$" + strconv.Itoa(r*len(cols)+c+1))
			}
			b.WriteByte(')')
		}
		b.WriteString(conflict)
		if _, err := exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("insert rows: %w", err)
		}
		done += int64(nrows)
		*written += int64(nrows)
		args, nrows = args[:0], 0
		if o.Progress != nil {
			o.Progress(t.name, done, total)
		}
		if o.StopAfter > 0 && *written >= o.StopAfter {
			return ErrCopyStopped
		}
		return nil
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return done, fmt.Errorf("read a row: %w", err)
		}
		for i, c := range cols {
			v := pgValue(vals[i], c.dataType)
			switch x := v.(type) {
			case []byte:
				size += len(x)
			case string:
				size += len(x)
			}
			args = append(args, v)
		}
		nrows++
		if nrows >= perStmt || size >= copyBytesPerStatement {
			size = 0
			if err := flush(); err != nil {
				return done, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return done, fmt.Errorf("read the source's rows: %w", err)
	}
	if err := flush(); err != nil {
		return done, err
	}
	if tx != nil {
		if err := tx.Commit(); err != nil {
			return done, err
		}
	}
	return done, nil
}

// pgValue converts a value SQLite returned to what PostgreSQL's column of
// dataType takes: the schemas share integers for booleans and times and text
// for JSON, so only bytes and text may need converting (SQLite keeps a value
// of any type in any column of a table that is not STRICT).
func pgValue(v any, dataType string) any {
	switch dataType {
	case "bytea":
		if s, ok := v.(string); ok {
			return []byte(s)
		}
	case "text", "character varying", "json", "jsonb":
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	case "boolean":
		if n, ok := v.(int64); ok {
			return n != 0
		}
	}
	return v
}

// advanceSequences sets every sequence of the target (serial and identity
// columns: the outbox's seq, the contacts' n) past the largest value copied
// and past SQLite's high-water mark of the table (sqlite_sequence, which
// AUTOINCREMENT keeps above rows deleted since), so that new rows take new
// numbers and a client's cursor never sees a number again.
func (db *DB) advanceSequences(ctx context.Context, src *sql.DB) error {
	high := map[string]int64{}
	if rows, err := src.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`); err == nil {
		for rows.Next() {
			var n string
			var s int64
			if rows.Scan(&n, &s) == nil {
				high[n] = s
			}
		}
		rows.Close()
	}
	// The table's name is qualified with its schema: PostgreSQL may test the
	// sequence of a column before it tests the column's schema, and an
	// unqualified name of another schema's table (information_schema's own
	// views) is an error, not a NULL.
	rows, err := db.pg.pool.QueryContext(ctx, `SELECT table_name, column_name, seq FROM (
		SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_schema) || '.' || quote_ident(table_name), column_name) AS seq
		FROM information_schema.columns WHERE table_schema = current_schema()) c WHERE seq IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("copy-data: list the target's sequences: %w", err)
	}
	type seq struct{ table, column, name string }
	var seqs []seq
	for rows.Next() {
		var s seq
		if err := rows.Scan(&s.table, &s.column, &s.name); err != nil {
			rows.Close()
			return err
		}
		seqs = append(seqs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, s := range seqs {
		var maxv sql.NullInt64
		if err := db.pg.pool.QueryRowContext(ctx, `SELECT max(`+quoteIdent(s.column)+`) FROM `+quoteIdent(s.table)).Scan(&maxv); err != nil {
			return fmt.Errorf("copy-data: sequence of %s.%s: %w", s.table, s.column, err)
		}
		v := max(maxv.Int64, high[s.table])
		if v < 1 {
			continue
		}
		if _, err := db.pg.pool.ExecContext(ctx, `SELECT setval($1, greatest($2::bigint, (SELECT last_value FROM `+s.name+`)))`, s.name, v); err != nil {
			return fmt.Errorf("copy-data: advance sequence %s: %w", s.name, err)
		}
	}
	return nil
}

// IndexMissingContacts writes the PostgreSQL search entry of every contact
// that has none (after atrium copy-data: SQLite's FTS5 index cannot be read
// back), its fields read from its vCard by fields (contacts.StoredFields).
// It returns how many it wrote; on SQLite it does nothing.
func (s ContactsStore) IndexMissingContacts(ctx context.Context, fields func(contacts.ContactDetail) (contacts.ContactDetail, error)) (int, error) {
	if s.pg == nil {
		return 0, nil
	}
	rows, err := s.pg.pool.QueryContext(ctx, `SELECT n FROM contacts c WHERE NOT EXISTS (SELECT 1 FROM contacts_fts f WHERE f.rowid = c.n) ORDER BY n`)
	if err != nil {
		return 0, fmt.Errorf("contacts without a search entry: %w", err)
	}
	var ns []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return 0, err
		}
		ns = append(ns, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for i, n := range ns {
		c, err := s.one(ctx, `WHERE c.n = ?`, n)
		if err != nil {
			return i, err
		}
		if c, err = fields(c); err != nil {
			return i, err
		}
		if err := s.index(ctx, n, c); err != nil {
			return i, err
		}
	}
	return len(ns), nil
}
