package sqlite

import (
	"context"
	"time"
)

// pruneTombstones deletes the tombstones of table (collection column collCol,
// key column keyCol) recorded before before, a batch per transaction, and
// raises pruned_seq of their collections in collTable to the newest sequence
// deleted: a sync token older than that is refused from then on.
func pruneTombstones(ctx context.Context, db *DB, table, collCol, keyCol, collTable string, before time.Time) (int, error) {
	const batch = 500
	total := 0
	for {
		n := 0
		err := db.InTx(ctx, func(ctx context.Context) error {
			rows, err := db.write(ctx).QueryContext(ctx, `SELECT `+collCol+`, `+keyCol+`, seq FROM `+table+`
				WHERE deleted_at < ? ORDER BY deleted_at LIMIT ?`, ms(before), batch)
			if err != nil {
				return mapErr(err, "tombstones")
			}
			type key struct{ coll, name string }
			var keys []key
			newest := map[string]int64{}
			for rows.Next() {
				var k key
				var seq int64
				if err := rows.Scan(&k.coll, &k.name, &seq); err != nil {
					rows.Close()
					return mapErr(err, "tombstones")
				}
				keys = append(keys, k)
				newest[k.coll] = max(newest[k.coll], seq)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return mapErr(err, "tombstones")
			}
			for coll, seq := range newest {
				if _, err := db.write(ctx).ExecContext(ctx, `UPDATE `+collTable+` SET pruned_seq = max(pruned_seq, ?) WHERE id = ?`, seq, coll); err != nil {
					return mapErr(err, collTable)
				}
			}
			for _, k := range keys {
				if _, err := db.write(ctx).ExecContext(ctx, `DELETE FROM `+table+` WHERE `+collCol+` = ? AND `+keyCol+` = ?`, k.coll, k.name); err != nil {
					return mapErr(err, "tombstones")
				}
			}
			n = len(keys)
			return nil
		})
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}
