package wire

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestArchiveAfterBuildsTheColdIndex: a server started with [drive]
// archive_after has the index of the archive tier's scan of cold files; the
// same data started with archiving off has it dropped again. A command that
// opens the data directory beside the server (not Serving) leaves the index
// as the server has it, whatever its own configuration says.
func TestArchiveAfterBuildsTheColdIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		after   string
		serving bool
		want    int
	}{{"0s", true, 0}, {"720h", true, 1}, {"720h", true, 1}, {"0s", false, 1}, {"0s", true, 0}, {"720h", false, 0}} {
		file := filepath.Join(dir, "atrium.toml")
		if err := os.WriteFile(file, []byte("[drive]\narchive_after = \""+c.after+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"ATRIUM_DATA": data, "ATRIUM_LISTEN": "127.0.0.1:0"}
		cfg, err := LoadConfig(file, func(k string) string { return env[k] }, nil)
		if err != nil {
			t.Fatal(err)
		}
		var opts []Option
		if c.serving {
			opts = append(opts, Serving())
		}
		m, err := Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		db, err := sql.Open("sqlite", filepath.Join(data, "atrium.db"))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'drive_files_access'`).Scan(&n)
		db.Close()
		if err != nil || n != c.want {
			t.Fatalf("archive_after %s, serving %v: %d index (%v), want %d", c.after, c.serving, n, err, c.want)
		}
	}
}
