package sqldb

import (
	"context"
	"testing"
)

// openTest opens a fresh, migrated database for a test, closed (and on
// PostgreSQL dropped) when the test ends: on the PostgreSQL server of
// ATRIUM_TEST_DATABASE_URL when it is set, else a SQLite file.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, closeDB, err := OpenForTest(context.Background(), t.TempDir())
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

// sqliteOnly skips a test of SQLite's own machinery (its writer, log,
// files) when the tests run on PostgreSQL.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if TestPostgresURL() != "" {
		t.Skip("SQLite's own machinery: the tests run on PostgreSQL")
	}
}
