package backup_test

import (
	"fmt"
	"os"
	"testing"

	"atrium/storage/s3blob"
	"atrium/storage/sqldb"
)

// TestMain runs the package's tests on SQLite and the local disk only:
// `atrium backup` and `restore` copy the embedded database and the data
// directory's blobs (a PostgreSQL database and a bucket are backed up with
// their own tools), so with ATRIUM_TEST_DATABASE_URL set there is nothing of
// theirs to test, and with ATRIUM_TEST_S3_ENDPOINT set their servers keep
// the bytes on the disk all the same.
func TestMain(m *testing.M) {
	if sqldb.TestPostgresURL() != "" {
		fmt.Println("backup and restore copy the embedded SQLite database: not run on PostgreSQL")
		os.Exit(0)
	}
	os.Unsetenv(s3blob.TestEndpointEnv)
	os.Exit(m.Run())
}
