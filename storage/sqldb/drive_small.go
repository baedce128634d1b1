package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"atrium/app/drive"
)

// SmallBlobs keeps small contents in the database, named like the blob
// store's objects by hex SHA-256 (drive_small_blobs). Put joins the
// transaction of its context, so that the bytes commit with the reference
// that needs them, at the cost of no fsync of their own.
type SmallBlobs struct{ *DB }

// ErrNoSmallBlob is what Open, Size and Data answer for a hash the table lacks.
var ErrNoSmallBlob = errors.New("no such small blob")

// Put stores data under hash, written at at; an existing row stays (the same
// hash is the same bytes). Inside a transaction (InTx) it commits with it:
// the row is written with the writer's next statement, or by the
// transaction's AddDigests of the same content, which then writes the
// digests into the row (pendingSmall).
func (s SmallBlobs) Put(ctx context.Context, hash string, data []byte, at time.Time) error {
	if data == nil {
		data = []byte{} // NOT NULL: the empty content is an empty blob
	}
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		w := st.w
		if err := w.small.flush(ctx, w.stmts); err != nil {
			return err
		}
		w.small = pendingSmall{hash: hash, data: data, at: at, set: true}
		return nil
	}
	return putSmall(ctx, s.write(ctx), hash, data, at, drive.Digests{})
}

// putSmallQuery writes a small content, with its digests when they are
// known; a row of the same content that lacks them takes them.
const putSmallQuery = `INSERT INTO drive_small_blobs (hash, data, created_at, sha1, md5) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (hash) DO UPDATE SET sha1 = excluded.sha1, md5 = excluded.md5
	WHERE drive_small_blobs.sha1 IS NULL AND excluded.sha1 IS NOT NULL AND excluded.md5 IS NOT NULL`

func putSmall(ctx context.Context, q querier, hash string, data []byte, at time.Time, d drive.Digests) error {
	_, err := q.ExecContext(ctx, putSmallQuery, hash, data, ms(at), emptyNull(d.SHA1), emptyNull(d.MD5))
	return mapErr(err, "small blob")
}

// pendingSmall is a small content Put in the writer's transaction and not
// written yet. A write that stores a small content records its digests next
// (AddDigests), and they go into the content's row: one statement, and no
// row of drive_digests, a table keyed by a random hash whose row cost a
// small write about 1.7 pages of the log. Any other statement of the writer
// first writes the content without them (writerConn.onStatement), so at most
// one is pending, and never past the statement that follows its Put.
type pendingSmall struct {
	hash string
	data []byte
	at   time.Time
	set  bool
	// flushing: its own statement runs
	flushing bool
}

// flush writes the pending content, if any, without digests.
func (p *pendingSmall) flush(ctx context.Context, w *stmtDB) error {
	return p.write(ctx, w, drive.Digests{})
}

// write writes the pending content, if any, with digests d (zero: unknown).
func (p *pendingSmall) write(ctx context.Context, w *stmtDB, d drive.Digests) error {
	if !p.set || p.flushing {
		return nil
	}
	hash, data, at := p.hash, p.data, p.at
	p.flushing = true
	err := putSmall(ctx, w, hash, data, at, d)
	*p = pendingSmall{}
	return err
}

// Data returns the bytes stored under hash (ErrNoSmallBlob: none).
func (s SmallBlobs) Data(ctx context.Context, hash string) ([]byte, error) {
	var data []byte
	err := s.read(ctx).QueryRowContext(ctx, `SELECT data FROM drive_small_blobs WHERE hash = ?`, hash).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("small blob %s: %w", hash, ErrNoSmallBlob)
	}
	if err != nil {
		return nil, fmt.Errorf("small blob %s: %w", hash, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// Exists reports whether hash is stored.
func (s SmallBlobs) Exists(ctx context.Context, hash string) (bool, error) {
	var ok bool
	err := s.read(ctx).QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM drive_small_blobs WHERE hash = ?)`, hash).Scan(&ok)
	return ok, mapErr(err, "small blob")
}

// Delete removes hash; a missing row is not an error.
func (s SmallBlobs) Delete(ctx context.Context, hash string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_small_blobs WHERE hash = ?`, hash)
	return mapErr(err, "small blob")
}

// Walk calls fn with every stored hash and when it was written, in hash
// order, a page at a time (no read transaction is held while fn runs), until
// fn returns an error (which Walk returns) or ctx ends.
func (s SmallBlobs) Walk(ctx context.Context, fn func(hash string, written time.Time) error) error {
	type row struct {
		hash string
		at   int64
	}
	after := ""
	for {
		rows, err := s.read(ctx).QueryContext(ctx, `SELECT hash, created_at FROM drive_small_blobs
			WHERE hash > ? ORDER BY hash LIMIT 1000`, after)
		if err != nil {
			return mapErr(err, "small blobs")
		}
		var page []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.hash, &r.at); err != nil {
				rows.Close()
				return mapErr(err, "small blobs")
			}
			page = append(page, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return mapErr(err, "small blobs")
		}
		for _, r := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(r.hash, fromMS(r.at)); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after = page[len(page)-1].hash
	}
}
