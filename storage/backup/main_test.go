package backup_test

import (
	"fmt"
	"os"
	"testing"

	"atrium/storage/sqldb"
)

// TestMain runs the package's tests on SQLite only: `atrium backup` and
// `restore` copy the embedded database (a PostgreSQL database is backed up
// with its own tools), so with ATRIUM_TEST_DATABASE_URL set there is nothing
// of theirs to test.
func TestMain(m *testing.M) {
	if sqldb.TestPostgresURL() != "" {
		fmt.Println("backup and restore copy the embedded SQLite database: not run on PostgreSQL")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
