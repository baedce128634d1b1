package sqldb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// The writer never checkpoints (wal_autocheckpoint 0 on its connection): with
// SQLite's default, the commit that takes the log past 1,000 pages also copies
// them into the database and syncs it, and every other write waits behind it
// (100-300 ms on a small VM's disk, seen in the soak). A checkpointer of its own
// copies the log in the background instead, in PASSIVE mode, which never blocks
// the writer or the readers.
//
// A log is started over (written again from its first frame) by the first
// write that finds every frame of it copied and no reader in it. Under a
// steady stream of writes that moment never comes: each PASSIVE copies what
// the log held when it began, and commits add more meanwhile. So when a
// PASSIVE leaves a long log (walTruncateFrames), the checkpointer asks the
// writer, between two of its transactions, to copy the few frames committed
// since (a PASSIVE on the writer's connection, a few milliseconds); its next
// write then starts the log over. Only when that did not happen by the next
// tick (a reader was still in the log: the log's header, which a start over
// rewrites, is unchanged) does the checkpointer RESTART: that checkpoint holds
// the log's write lock while it copies and then waits for the readers, and
// every write waits with it; when the readers outwait it, the checkpointer
// holds off (see checkpoint). With a RESTART every second, 20,000 small PUTs
// saw the writer held 2-4.5 s in all, up to 2.3 s at a time (9.8-12.1 s for
// the PUTs); with the writer's catch-up, 0.14 s in all, 22 ms at most
// (9.2-9.5 s), in three alternating pairs.
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
	db      *sql.DB
	walPath string
	writer  *committer // nil: a long log is RESTARTed at once
	stop    chan struct{}
	done    sync.WaitGroup

	// asked is the log's header when the writer was last asked to catch up,
	// while the log stayed long; holdOff and idle, how many ticks to let a
	// long log be after a RESTART that readers kept waiting, and how many are
	// left; what the checkpoints did (for the tests). Only the checkpointer's
	// goroutine uses them.
	asked              []byte
	holdOff, idle      int
	catchUps, restarts int
}

func startCheckpointer(path string, writer *committer, log *slog.Logger) (*checkpointer, error) {
	cp, err := newCheckpointer(path, writer)
	if err != nil {
		return nil, err
	}
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
			if err := cp.checkpoint(context.Background()); err != nil && log != nil {
				log.Warn("database checkpoint", "err", err)
			}
		}
	}()
	return cp, nil
}

// newCheckpointer opens the checkpointer's connection; it checkpoints when
// asked (checkpoint), and every checkpointEvery once startCheckpointer runs it.
func newCheckpointer(path string, writer *committer) (*checkpointer, error) {
	// A RESTART waits for readers at most a quarter second (blocking new writes
	// meanwhile), then gives up until the next tick.
	c, err := pool(dsn(path, true, "busy_timeout(250)", "wal_autocheckpoint(0)"), 1)
	if err != nil {
		return nil, fmt.Errorf("open database checkpointer: %w", err)
	}
	return &checkpointer{db: c, walPath: path + "-wal", writer: writer, stop: make(chan struct{})}, nil
}

// checkpoint runs one PASSIVE checkpoint. When it leaves a long log it asks
// the writer to catch up, so that its next write starts the log over, or,
// when the log was not started over since it last asked, RESTARTs. A RESTART
// that a reader kept waiting (busy) holds every write for its busy timeout:
// the checkpointer then lets the long log be for 1, 2, 4... ticks (up to
// maxHoldOff) before it asks or RESTARTs again. A reader that stays, such as
// Litestream, which checkpoints the log itself, would otherwise hold the
// writes every other second.
func (cp *checkpointer) checkpoint(ctx context.Context) error {
	_, logFrames, err := walCheckpoint(ctx, cp.db, "PASSIVE")
	if err != nil {
		return err
	}
	if logFrames < walTruncateFrames {
		cp.asked, cp.holdOff, cp.idle = nil, 0, 0
		return nil
	}
	if cp.idle > 0 {
		cp.idle--
		return nil
	}
	if header := cp.walHeader(); cp.writer != nil && header != nil && !bytes.Equal(header, cp.asked) {
		cp.asked = header
		cp.catchUps++
		return cp.writer.onConn(ctx, func(conn *sql.Conn) error {
			_, _, err := walCheckpoint(ctx, conn, "PASSIVE")
			return err
		})
	}
	cp.asked = nil
	cp.restarts++
	busy, _, err := walCheckpoint(ctx, cp.db, "RESTART")
	if err != nil {
		return err
	}
	if busy == 0 {
		cp.holdOff = 0
	} else {
		cp.holdOff = min(max(2*cp.holdOff, 1), maxHoldOff)
		cp.idle = cp.holdOff
	}
	return nil
}

// maxHoldOff bounds how many ticks the checkpointer lets a long log be after
// a RESTART that readers kept waiting.
const maxHoldOff = 16

// walCheckpoint runs PRAGMA wal_checkpoint(mode) on q and reports whether it
// was kept from finishing (busy) and the log's length in pages.
func walCheckpoint(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, mode string) (busy, logFrames int, err error) {
	var copied int
	if err := q.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logFrames, &copied); err != nil {
		return 0, 0, fmt.Errorf("wal_checkpoint(%s): %w", mode, err)
	}
	return busy, logFrames, nil
}

// walHeader reads the log's checkpoint sequence and salts, which SQLite
// changes each time it starts the log over; nil when it cannot.
func (cp *checkpointer) walHeader() []byte {
	f, err := os.Open(cp.walPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 12) // bytes 12-23 of the header
	if _, err := f.ReadAt(b, 12); err != nil {
		return nil
	}
	return b
}

// close stops the loop and closes its connection.
func (cp *checkpointer) close() error {
	close(cp.stop)
	cp.done.Wait()
	return cp.db.Close()
}
