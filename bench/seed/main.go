// Command seed fills an Atrium data directory with rows for the start-up
// benchmark (bench/foundation.sh): an organisation, -users users (through the
// identity service, each with its own audit entry) and -audit audit log entries
// in transactions of -batch rows. It prints how many rows the database then holds.
//
//	go run ./bench/seed -data /tmp/atrium-bench
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/storage/sqldb"
	"atrium/wire"
)

func main() {
	data := flag.String("data", "", "data directory to seed (created when absent)")
	users := flag.Int("users", 1000, "users to create")
	audit := flag.Int("audit", 100000, "audit log entries to insert")
	batch := flag.Int("batch", 10000, "rows per transaction")
	flag.Parse()
	if *data == "" || *batch < 1 {
		fmt.Fprintln(os.Stderr, "usage: seed -data DIR [-users N] [-audit N] [-batch N]")
		os.Exit(2)
	}
	if err := run(context.Background(), *data, *users, *audit, *batch); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, data string, users, audit, batch int) error {
	start := time.Now()
	cfg, err := wire.LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		return err
	}
	cfg.Data = data
	m, err := wire.Open(ctx, cfg, wire.NewLogger(cfg, io.Discard))
	if err != nil {
		return err
	}
	defer m.Close()

	boot, err := m.Bootstrap(ctx, "Operator", "admin@example.test", "admin")
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	org := boot.OrganizationID

	for i := 0; i < users; i += batch {
		err := m.DB.InTx(ctx, func(ctx context.Context) error {
			for j := i; j < min(i+batch, users); j++ {
				in := identity.EnsureUserInput{Email: fmt.Sprintf("user%06d@example.test", j), Role: app.RoleMember}
				if _, err := m.Identity.EnsureUser(ctx, org, in); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("users: %w", err)
		}
	}

	auditor := sqldb.Auditor{DB: m.DB}
	t0 := time.Now().Add(-time.Duration(audit) * time.Second)
	for i := 0; i < audit; i += batch {
		err := m.DB.InTx(ctx, func(ctx context.Context) error {
			for j := i; j < min(i+batch, audit); j++ {
				e := app.AuditEntry{Module: "bench", Action: "entry.seeded", ActorID: boot.UserID, TargetType: "entry",
					TargetID: fmt.Sprintf("entry-%07d", j), OrgID: org, ChangedFields: []string{"name", "size"},
					CreatedAt: t0.Add(time.Duration(j) * time.Second)}
				if err := auditor.Record(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
	}
	if err := m.Close(); err != nil {
		return err
	}
	m.DB = nil

	n, err := countRows(ctx, filepath.Join(data, "atrium.db"))
	if err != nil {
		return err
	}
	fmt.Printf("rows=%d seconds=%.1f\n", n, time.Since(start).Seconds())
	return nil
}

// countRows counts the rows of every table of the database.
func countRows(ctx context.Context, path string) (int64, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return 0, err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return 0, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var total int64
	for _, t := range tables {
		var n int64
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM "`+t+`"`).Scan(&n); err != nil {
			return 0, fmt.Errorf("count %s: %w", t, err)
		}
		total += n
	}
	return total, nil
}
