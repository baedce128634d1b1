package wire

import (
	"context"
	"io"
	"path/filepath"

	"atrium/app/drive"
	"atrium/index"
	"atrium/index/extract"
	"atrium/storage/sqldb"
)

// extractor is the drive's text extractor (index/extract).
type extractor struct{}

func (extractor) Supported(mimeType, name string) bool { return extract.Supported(mimeType, name) }

func (extractor) Text(ctx context.Context, r io.Reader, size int64, mimeType, name string, max int) (string, bool, error) {
	return extract.Text(ctx, r, size, mimeType, name, max)
}

// searchIndexes is the drive's search index: with the metadata in
// PostgreSQL, its tables there (every node reads the same); on SQLite, the
// Bleve index under the data dir.
func searchIndexes(data string, db *sqldb.DB) drive.SearchIndexes {
	if db.IsPostgres() {
		return sqldb.PostgresSearch{DB: db}
	}
	return index.Dir{Path: filepath.Join(data, "index")}
}

// StartSearch opens the search index (rebuilding it in the background when it
// is missing or unreadable) and applies new drive events to it until Close.
// Commands that only open the data directory do not call it, so they never
// touch the index of a running server.
func (m *Main) StartSearch(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	m.stopSearch = func() {
		cancel()
		<-done
	}
	m.Search.Start(ctx)
	go func() {
		defer close(done)
		m.Search.Run(ctx, m.Config.Drive.IndexInterval, func() uint64 { return m.DB.WriteStats().Transactions })
	}()
}
