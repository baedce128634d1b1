// Package sqldbtest opens databases for tests: on the PostgreSQL server of
// ATRIUM_TEST_DATABASE_URL when it is set, else on SQLite.
package sqldbtest

import (
	"context"
	"testing"

	"atrium/storage/sqldb"
)

// Open opens a fresh, migrated database for a test, closed and removed
// when the test ends: a database of its own on the PostgreSQL server of
// sqldb.TestDatabaseEnv when that is set, else a SQLite file in the test's
// temporary directory.
func Open(t testing.TB) *sqldb.DB {
	t.Helper()
	db, closeDB, err := sqldb.OpenForTest(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := closeDB(); err != nil {
			t.Errorf("close the test database: %v", err)
		}
	})
	return db
}
