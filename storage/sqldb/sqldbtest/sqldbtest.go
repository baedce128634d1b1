// Package sqldbtest opens databases for tests: on the PostgreSQL server of
// ATRIUM_TEST_DATABASE_URL when it is set, else on SQLite.
package sqldbtest

import (
	"context"
	"path/filepath"
	"testing"

	"atrium/storage/sqldb"
)

// Open opens a fresh, migrated database for a test, closed and removed
// when the test ends: a database of its own on the PostgreSQL server of
// sqldb.TestDatabaseEnv when that is set, else a SQLite file in the test's
// temporary directory.
func Open(t testing.TB) *sqldb.DB {
	t.Helper()
	ctx := context.Background()
	if admin := sqldb.TestPostgresURL(); admin != "" {
		url, drop, err := sqldb.NewTestPostgres(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		db, err := sqldb.OpenPostgres(ctx, url, nil)
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
	db, err := sqldb.Open(ctx, filepath.Join(t.TempDir(), "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
