package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SmallBlobs keeps small contents in the database, named like the blob
// store's objects by hex SHA-256 (drive_small_blobs). Put joins the
// transaction of its context, so that the bytes commit with the reference
// that needs them, at the cost of no fsync of their own.
type SmallBlobs struct{ *DB }

// ErrNoSmallBlob is what Open, Size and Data answer for a hash the table lacks.
var ErrNoSmallBlob = errors.New("no such small blob")

// Put stores data under hash, written at at; an existing row stays (the same
// hash is the same bytes). Inside a transaction (InTx) it commits with it.
func (s SmallBlobs) Put(ctx context.Context, hash string, data []byte, at time.Time) error {
	if data == nil {
		data = []byte{} // NOT NULL: the empty content is an empty blob
	}
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_small_blobs (hash, data, created_at) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, hash, data, ms(at))
	return mapErr(err, "small blob")
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
