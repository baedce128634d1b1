package sqldb

import (
	"context"
	"strings"
	"testing"
	"time"

	"atrium/app/drive"
)

// queryPlan is SQLite's plan for query, its steps joined by "; ".
func queryPlan(t *testing.T, db *DB, query string, args ...any) string {
	sqliteOnly(t) // the rest of the test checks SQLite's plans
	t.Helper()
	rows, err := db.r.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// TestDriveFolderReadsWithoutParentIndex: migration 00023 dropped
// drive_files_parent, which every new file paid for; the reads of a folder's
// items it could have served still read an index, none the whole drive.
func TestDriveFolderReadsWithoutParentIndex(t *testing.T) {
	t.Parallel()
	db, _ := contactsDB(t)
	var n int
	if err := db.read(context.Background()).QueryRowContext(context.Background(), `SELECT count(*) FROM `+db.indexes()+` WHERE name = 'drive_files_parent'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("drive_files_parent: %d (%v), want dropped", n, err)
	}
	folder := func(parent string) (count, page string, args []any) {
		q := drive.Query{Kind: drive.ListFolder, OrgID: "oa", OwnerID: "u1", ParentID: parent, SortBy: "name", Limit: 50}
		cond, args, err := listWhere(q)
		if err != nil {
			t.Fatal(err)
		}
		count, page = listQueries("f.id", cond, listOrder(q))
		return count, page, append(args, 50, 0)
	}
	count, page, args := folder("d1")
	_, top, topArgs := folder("")
	cases := []struct {
		name, query string
		args        []any
		index       string
	}{
		{"a folder's page", page, args, "drive_files_browse_name"},
		{"the top's page", top, topArgs, "drive_files_browse_name"},
		{"a folder's count", count, args[:len(args)-2], "drive_files_browse_name"},
		{"the mount's batch at the top", `SELECT id` + childrenBatch(""), childrenArgs("u1", "", false, drive.ChildKey{}, 100), "drive_files_browse_name"},
		{"the mount's batch of a folder", `SELECT id` + childrenBatch("d1"), childrenArgs("u1", "d1", false, drive.ChildKey{}, 100), "drive_files_browse_name"},
		{"a live name", `SELECT f.id` + liveChild, []any{"u1", "d1", "a.txt"}, "drive_files_live_name"},
		{"a subtree", subtreeQuery(false), []any{"d1"}, "drive_files_children"},
		{"a live subtree", subtreeQuery(true), []any{"d1"}, "drive_files_children"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := queryPlan(t, db, c.query, c.args...)
			if !strings.Contains(p, c.index) {
				t.Errorf("plan: %s\nwant it to read %s", p, c.index)
			}
			for _, step := range strings.Split(p, "; ") {
				rest, scan := strings.CutPrefix(step, "SCAN ")
				table, _, _ := strings.Cut(rest, " ")
				if scan && !strings.Contains(step, " USING ") && (table == "f" || table == "c" || table == "drive_files") {
					t.Errorf("plan: %s\nreads all of drive_files (%s)", p, step)
				}
			}
		})
	}
}

// TestColdScanIndex: the index of the archive tier's scan is built when the
// tier archives and dropped when it does not, once each; the scan answers the
// same files either way, and reads the index while there is one.
func TestColdScanIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	old := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Millisecond)
	for _, f := range []drive.File{
		{ID: "cold", Name: "cold.txt", Status: drive.StatusActive},
		{ID: "warm", Name: "warm.txt", Status: drive.StatusActive},
		{ID: "dir", Name: "Docs", IsFolder: true, Status: drive.StatusActive},
	} {
		f.OrgID, f.OwnerID, f.MimeType, f.MimeGroup, f.CreatedAt, f.UpdatedAt = "oa", "u1", "text/plain", "document", old, old
		if f.ID == "warm" {
			f.UpdatedAt = time.Now().UTC()
		}
		if err := s.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	exists := func() bool {
		t.Helper()
		var n int
		if err := db.read(context.Background()).QueryRowContext(context.Background(), `SELECT count(*) FROM `+db.indexes()+` WHERE name = 'drive_files_access'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	cold := func() string {
		t.Helper()
		files, err := s.ColdCandidates(ctx, time.Now().Add(-24*time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range files {
			ids = append(ids, f.ID)
		}
		return strings.Join(ids, ",")
	}
	if exists() {
		t.Fatal("a new database has the index of cold files; want it only while the archive tier archives")
	}
	for _, step := range []struct {
		on, changed bool
	}{{true, true}, {true, false}, {false, true}, {false, false}} {
		changed, err := db.ColdScanIndex(ctx, step.on)
		if err != nil || changed != step.changed || exists() != step.on {
			t.Fatalf("ColdScanIndex(%v) = %v, %v; index there: %v", step.on, changed, err, exists())
		}
		if got := cold(); got != "cold" {
			t.Fatalf("with the index %v: cold files %q, want cold", step.on, got)
		}
		p := queryPlan(t, db, `SELECT f.id`+coldCandidates, 0, 10)
		if step.on != strings.Contains(p, "drive_files_access") {
			t.Fatalf("with the index %v: plan %s", step.on, p)
		}
	}
}

// TestDriveShareGrantsReadByGrantee: what shares grant a user — directly,
// through a team, through the organisation — is read by the user's own rows
// of each branch of drive_share_grants, and by (grantee, item) when the items
// are known: never every grant of a team or an organisation per item, nor an
// index built on the fly.
func TestDriveShareGrantsReadByGrantee(t *testing.T) {
	t.Parallel()
	db, _ := contactsDB(t)
	q := drive.Query{Kind: drive.ListShared, OrgID: "oa", UserID: "u1", SortBy: "name", Limit: 50, Now: time.Now()}
	cond, args, err := listWhere(q)
	if err != nil {
		t.Fatal(err)
	}
	count, page := listQueries("f.id", cond, listOrder(q))
	now := ms(time.Now())
	cases := []struct {
		name, query string
		args        []any
		want        []string
	}{
		{"the shared listing's count", count, args, []string{"drive_shares_user (user_id=?)", "team_members_user (user_id=?)", "drive_shares_team (team_id=?)", "users_1 (id=?)"}},
		{"the shared listing's page", page, append(args, 50, 0), []string{"drive_shares_user (user_id=?)", "team_members_user (user_id=?)", "drive_shares_team (team_id=?)"}},
		{"the page's permissions", `SELECT file_id, max(CASE permission WHEN 'edit' THEN 2 ELSE 1 END) FROM drive_share_grants
			WHERE user_id = ? AND file_id IN (SELECT value FROM json_each(?)) AND (expires_at IS NULL OR expires_at > ?) GROUP BY file_id`,
			[]any{"u1", `["a","b"]`, now}, []string{"drive_shares_file_user (file_id=? AND user_id=?)", "drive_shares_team (team_id=? AND file_id=?)", "drive_shares_org (organization_id=? AND file_id=?)"}},
		{"an item's permission", `SELECT max(CASE permission WHEN 'edit' THEN 2 ELSE 1 END) FROM drive_share_grants
			WHERE user_id = ? AND file_id IN (SELECT value FROM json_each(?)) AND (expires_at IS NULL OR expires_at > ?)`,
			[]any{"u1", `["a"]`, now}, []string{"drive_shares_file_user (file_id=? AND user_id=?)", "drive_shares_team (team_id=? AND file_id=?)", "drive_shares_org (organization_id=? AND file_id=?)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := queryPlan(t, db, c.query, c.args...)
			for _, w := range c.want {
				if !strings.Contains(p, w) {
					t.Errorf("plan: %s\nwant it to read %s", p, w)
				}
			}
			if strings.Contains(p, "AUTOMATIC") || strings.Contains(p, "SCAN s") || strings.Contains(p, "SCAN m") {
				t.Errorf("plan: %s\nbuilds an index or reads a whole table", p)
			}
		})
	}
}

// On PostgreSQL too a folder's reads — a page of the listing (as List runs
// it there), its count, the mount's batch — read an index, never the whole
// table, with statistics that say the table is large (a condition with IS
// NOT DISTINCT FROM read none: every listing scanned every drive).
func TestDriveFolderReadsUseAnIndexOnPostgres(t *testing.T) {
	t.Parallel()
	db, _ := contactsDB(t)
	if !db.IsPostgres() {
		t.Skip("the plans of PostgreSQL (" + TestDatabaseEnv + ")")
	}
	ctx := context.Background()
	// A drive the planner must not scan: 20,000 rows in 20 folders.
	if _, err := db.pg.pool.ExecContext(ctx, `INSERT INTO drive_files (id, organization_id, owner_id, parent_id, name, name_key,
		is_folder, mime_type, mime_group, status, seq, created_at, updated_at)
		SELECT 'f' || g, 'oa', 'u1', CASE WHEN g > 20 THEN 'f' || (g % 20 + 1) END, 'n' || g, 'n' || g, CASE WHEN g <= 20 THEN 1 ELSE 0 END,
		'text/plain', 'text', 'active', g, 0, 0 FROM generate_series(1, 20000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pg.pool.ExecContext(ctx, `ANALYZE drive_files`); err != nil {
		t.Fatal(err)
	}
	for _, parent := range []string{"", "f3"} {
		q := drive.Query{Kind: drive.ListFolder, OrgID: "oa", OwnerID: "u1", ParentID: parent, SortBy: "name", Limit: 50}
		cond, args, err := listWhere(q)
		if err != nil {
			t.Fatal(err)
		}
		count, _ := listQueries("f.id", cond, listOrder(q))
		for name, c := range map[string]struct {
			sql  string
			args []any
		}{
			"page":  {latePage(fileCols, cond, listOrder(q)), append(args, 50, 900)},
			"count": {count, args},
			"batch": {`SELECT id` + childrenBatch(parent), childrenArgs("u1", parent, false, drive.ChildKey{}, 100)},
		} {
			var plan []string
			for i, a := range c.args { // the raw pool takes no bool for an integer column
				if b, ok := a.(bool); ok {
					c.args[i] = map[bool]int{false: 0, true: 1}[b]
				}
			}
			rows, err := db.pg.pool.QueryContext(ctx, `EXPLAIN `+rewritePG(c.sql), c.args...)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, line)
			}
			rows.Close()
			if p := strings.Join(plan, "\n"); strings.Contains(p, "Seq Scan on drive_files") || !strings.Contains(p, "Index") {
				t.Errorf("the %s of folder %q reads the whole table:\n%s", name, parent, p)
			}
		}
	}
}
