package sqldb

import (
	"context"
	"path/filepath"
	"testing"
)

// openTest opens a fresh, migrated database for a test, closed (and on
// PostgreSQL dropped) when the test ends: on the PostgreSQL server of
// ATRIUM_TEST_DATABASE_URL when it is set, else a SQLite file.
func openTest(t testing.TB) *DB {
	t.Helper()
	ctx := context.Background()
	if admin := TestPostgresURL(); admin != "" {
		url, drop, err := NewTestPostgres(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		db, err := OpenPostgres(ctx, url, nil)
		if err != nil {
			drop()
			t.Fatal(err)
		}
		t.Cleanup(func() {
			db.Close()
			if err := drop(); err != nil {
				t.Errorf("drop test database: %v", err)
			}
		})
		return db
	}
	db, err := Open(ctx, filepath.Join(t.TempDir(), "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sqliteOnly skips a test of SQLite's own machinery (its writer, log,
// files) when the tests run on PostgreSQL.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if TestPostgresURL() != "" {
		t.Skip("SQLite's own machinery: the tests run on PostgreSQL")
	}
}
