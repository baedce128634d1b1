package sqldb

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copy-data's table order puts every table after those its foreign keys
// refer to, ties by name, and names the tables of a cycle.
func TestCopyOrder(t *testing.T) {
	tables := map[string]*pgTable{
		"users":         {name: "users", parents: []string{"organizations"}},
		"organizations": {name: "organizations", selfFrom: "parent_organization_id", selfTo: "id"},
		"drive_files":   {name: "drive_files", parents: []string{"users", "organizations"}, selfFrom: "parent_id", selfTo: "id"},
		"drive_shares":  {name: "drive_shares", parents: []string{"drive_files", "teams", "users"}},
		"teams":         {name: "teams", parents: []string{"organizations"}},
		"audit_log":     {name: "audit_log"},
	}
	order, err := copyOrder(tables)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"audit_log", "organizations", "teams", "users", "drive_files", "drive_shares"}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	tables["organizations"].parents = []string{"drive_shares"}
	if _, err := copyOrder(tables); err == nil || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), "organizations") {
		t.Errorf("a cycle: %v", err)
	}
}

// Values move to the PostgreSQL column's type where SQLite's differs.
func TestCopyValues(t *testing.T) {
	for _, tc := range []struct {
		in       any
		dataType string
		want     any
	}{
		{"key", "bytea", []byte("key")},
		{[]byte("text"), "text", "text"},
		{[]byte(`{"a":1}`), "jsonb", `{"a":1}`},
		{int64(1), "boolean", true},
		{int64(0), "boolean", false},
		{int64(7), "bigint", int64(7)},
		{nil, "text", nil},
		{3.5, "double precision", 3.5},
	} {
		got := pgValue(tc.in, tc.dataType)
		if b, ok := got.([]byte); ok {
			if w, _ := tc.want.([]byte); string(b) != string(w) {
				t.Errorf("pgValue(%v, %s) = %v, want %v", tc.in, tc.dataType, got, tc.want)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("pgValue(%v, %s) = %#v, want %#v", tc.in, tc.dataType, got, tc.want)
		}
	}
}

// Every column of every table of SQLite's schema is in PostgreSQL's (but
// SQLite's full-text tables and the migrations' bookkeeping): atrium
// copy-data copies the columns both have, so a column the PostgreSQL
// migrations forgot would be lost in the move.
func TestCopySchemasMatch(t *testing.T) {
	admin := TestPostgresURL()
	if admin == "" {
		t.Skip("needs " + TestDatabaseEnv)
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")
	if _, err := Migrate(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	src, err := openImmutable(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sqlite, err := sqliteTables(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	url, drop, err := NewTestPostgres(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	db, err := OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pg, err := db.pgTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for table, cols := range sqlite {
		if table == "goose_db_version" {
			continue
		}
		p := pg[table]
		if p == nil {
			t.Errorf("table %s is not in PostgreSQL's schema", table)
			continue
		}
		for _, c := range cols {
			if !slices.ContainsFunc(p.columns, func(pc pgColumn) bool { return pc.name == c }) {
				t.Errorf("column %s.%s is not in PostgreSQL's schema", table, c)
			}
		}
	}
}
