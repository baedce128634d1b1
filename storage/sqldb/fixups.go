package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"atrium/app/drive"
)

// fixups are data changes a migration cannot make in SQL: a migration inserts
// the name into pending_fixups, and runFixups applies it once, in one
// transaction with the removal of its row (so a crash leaves it pending).
var fixups = map[string]func(ctx context.Context, tx *sql.Tx) (int, error){
	"drive_names_nfc": normalizeDriveNames,
}

func runFixups(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pending_fixups ORDER BY name`)
	if err != nil {
		return fmt.Errorf("list pending fix-ups: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("list pending fix-ups: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	for _, name := range names {
		fix := fixups[name]
		if fix == nil {
			return fmt.Errorf("pending fix-up %q is unknown to this binary", name)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("fix-up %s: %w", name, err)
		}
		n, err := fix(ctx, tx)
		if err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM pending_fixups WHERE name = ?`, name)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("fix-up %s: %w", name, err)
		}
		if log != nil {
			log.Info("fix-up applied", "name", name, "rows", n)
		}
	}
	return nil
}

// normalizeDriveNames renames drive items whose name is not in NFC (or whose
// key was folded before keys were NFC) to NFC and re-keys them. An item whose
// NFC name is taken by a live sibling (the same name in both forms) gets the
// first free "name (n)" instead.
func normalizeDriveNames(ctx context.Context, tx *sql.Tx) (int, error) {
	type item struct{ id, name, key string }
	// ASCII names are NFC already and keyed the same as before.
	rows, err := tx.QueryContext(ctx, `SELECT id, name, name_key FROM drive_files WHERE name GLOB '*[^ -~]*'`)
	if err != nil {
		return 0, err
	}
	var todo []item
	for rows.Next() {
		var it item
		if err := rows.Scan(&it.id, &it.name, &it.key); err != nil {
			rows.Close()
			return 0, err
		}
		if n, err := drive.CleanName("name", it.name); err != nil || n != it.name || drive.NameKey(n) != it.key {
			todo = append(todo, it)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, it := range todo {
		name, err := drive.CleanName("name", it.name)
		if err != nil { // stored before the rule refused it (a bidi control, say): keep the name, fix the key
			name = it.name
		}
		for n := 1; ; n++ {
			cand := name
			if n > 1 {
				cand = drive.NumberedName(name, n)
			}
			_, err := tx.ExecContext(ctx, `UPDATE drive_files SET name = ?, name_key = ? WHERE id = ?`, cand, drive.NameKey(cand), it.id)
			var se *sqlite3.Error
			if errors.As(err, &se) && se.Code() == sqlite3lib.SQLITE_CONSTRAINT_UNIQUE && n < 1000 {
				continue
			}
			if err != nil {
				return 0, fmt.Errorf("rename drive item %s: %w", it.id, err)
			}
			break
		}
	}
	return len(todo), nil
}
