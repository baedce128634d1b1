package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// The writer never checkpoints (wal_autocheckpoint 0 on its connection): with
// SQLite's default, the commit that takes the log past 1,000 pages also copies
// them into the database and syncs it, and every other write waits behind it
// (100-300 ms on a small VM's disk, seen in the soak). A checkpointer of its own
// copies the log in the background instead, in PASSIVE mode, which never blocks
// the writer or the readers.
const (
	checkpointEvery = time.Second
	// walTruncateFrames is a log length (pages) past which the checkpointer waits
	// briefly for the writer and the readers to reset it (a RESTART checkpoint),
	// so that a steady stream of readers cannot make it grow without bound.
	walTruncateFrames = 8192
	// walKeepBytes is what a reset leaves of the log file (journal_size_limit):
	// more than walTruncateFrames pages and a busy second after them, so that
	// the commits after a reset overwrite the file rather than grow it. An fsync
	// after an overwrite needs no journal commit of the file system's (its size
	// and blocks are unchanged); after an append it does, which costs 1.5-3x on
	// a busy small machine, where the file system's journal thread waits for a
	// core. Measured with 2,000 small TUS uploads four at a time (after 1,200
	// to warm up; the writer's /metrics), a commit's log writes and fsync took
	// 0.56-0.67 ms against 0.69-0.87 ms with the file cut back to 16 MiB at
	// each reset and reset past 16,384 pages.
	walKeepBytes = 64 << 20
)

// checkpointer copies the log into the database every checkpointEvery.
type checkpointer struct {
	db   *sql.DB
	stop chan struct{}
	done sync.WaitGroup
}

func startCheckpointer(path string, log *slog.Logger) (*checkpointer, error) {
	// A RESTART waits for readers at most a quarter second (blocking new writes
	// meanwhile), then gives up until the next tick.
	c, err := pool(dsn(path, true)+"&_pragma=busy_timeout(250)&_pragma=wal_autocheckpoint(0)", 1)
	if err != nil {
		return nil, fmt.Errorf("open database checkpointer: %w", err)
	}
	cp := &checkpointer{db: c, stop: make(chan struct{})}
	cp.done.Add(1)
	go func() {
		defer cp.done.Done()
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-cp.stop:
				return
			case <-t.C:
			}
			if err := cp.checkpoint(context.Background(), "PASSIVE"); err != nil && log != nil {
				log.Warn("database checkpoint", "err", err)
			}
		}
	}()
	return cp, nil
}

// checkpoint runs one checkpoint in mode; a PASSIVE one that leaves a long log
// is followed by a RESTART.
func (cp *checkpointer) checkpoint(ctx context.Context, mode string) error {
	var busy, logFrames, copied int
	if err := cp.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logFrames, &copied); err != nil {
		return fmt.Errorf("wal_checkpoint(%s): %w", mode, err)
	}
	if mode == "PASSIVE" && logFrames >= walTruncateFrames {
		return cp.checkpoint(ctx, "RESTART")
	}
	return nil
}

// close stops the loop and closes its connection.
func (cp *checkpointer) close() error {
	close(cp.stop)
	cp.done.Wait()
	return cp.db.Close()
}
