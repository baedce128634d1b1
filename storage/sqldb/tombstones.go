package sqldb

import (
	"context"
	"time"
)

// pruneTombstones deletes the tombstones of table recorded before before and,
// in the same transaction, raises pruned_seq of their collections (rows of
// collTable whose collKey is the tombstone's collCol) to the newest sequence
// deleted: a sync token or cursor older than that is refused from then on. It
// returns how many tombstones it deleted.
func pruneTombstones(ctx context.Context, db *DB, table, collCol, collTable, collKey string, before time.Time) (int, error) {
	n := 0
	err := db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.write(ctx).ExecContext(ctx, `UPDATE `+collTable+` SET pruned_seq = `+db.greatest(`pruned_seq`,
			`(SELECT max(seq) FROM `+table+` t WHERE t.`+collCol+` = `+collTable+`.`+collKey+` AND t.deleted_at < ?)`)+`
			WHERE `+collKey+` IN (SELECT `+collCol+` FROM `+table+` WHERE deleted_at < ?)`, ms(before), ms(before)); err != nil {
			return err
		}
		res, err := db.write(ctx).ExecContext(ctx, `DELETE FROM `+table+` WHERE deleted_at < ?`, ms(before))
		if err != nil {
			return err
		}
		k, _ := res.RowsAffected()
		n = int(k)
		return nil
	})
	return n, mapErr(err, table)
}
