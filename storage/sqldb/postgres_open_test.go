package sqldb

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// OpenPostgres refuses what it cannot use with a message an operator can act
// on, and changes nothing: a malformed URL, a server that does not answer, a
// database that does not exist, one holding another application's tables
// (an extension's views do not count),
// one whose schema is newer than the binary.
func TestOpenPostgresRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct{ name, url, want string }{
		{"malformed", "postgres://a:b@[::1", "not a PostgreSQL connection URL"},
		{"no database", "postgres://atrium@127.0.0.1:5432", "names no database"},
		{"no server", "postgres://atrium:secret@127.0.0.1:1/atrium?sslmode=disable&connect_timeout=2", "cannot reach the server"},
	} {
		_, err := OpenPostgres(ctx, c.url, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the message shows the password: %v", c.name, err)
		}
	}

	admin := TestPostgresURL()
	if admin == "" {
		t.Skip("the refusals of a server need ATRIUM_TEST_DATABASE_URL")
	}
	if cfg, err := pgx.ParseConfig(admin); err == nil && cfg.Password != "" {
		wrong := strings.Replace(admin, ":"+url.PathEscape(cfg.Password)+"@", ":not-the-password@", 1)
		if _, err := OpenPostgres(ctx, wrong, nil); err == nil || !strings.Contains(err.Error(), "refused the user name or password") ||
			strings.Contains(err.Error(), "not-the-password") {
			t.Errorf("a wrong password: %v", err)
		}
	}
	missing, err := withDatabase(admin, "atrium_no_such_database")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPostgres(ctx, missing, nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing database: %v", err)
	}

	// Another application's tables: refused, and left as they were.
	foreign := emptyPostgres(t, admin)
	pool, err := pgPool(foreign, DefaultMaxConnections)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.ExecContext(ctx, `CREATE TABLE invoices (id int)`); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPostgres(ctx, foreign, nil); err == nil || !strings.Contains(err.Error(), "another application") {
		t.Errorf("another application's database: %v", err)
	}
	var tables int
	if err := pool.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables); err != nil || tables != 1 {
		t.Errorf("after the refusal the database holds %d tables (%v), want its one", tables, err)
	}

	// A database whose only objects are an extension's (a DBA's
	// pg_stat_statements, whose views live in the schema): Atrium's.
	withExt := emptyPostgres(t, admin)
	extPool, err := pgPool(withExt, DefaultMaxConnections)
	if err != nil {
		t.Fatal(err)
	}
	defer extPool.Close()
	if _, err := extPool.ExecContext(ctx, `CREATE EXTENSION pg_stat_statements`); err != nil {
		t.Fatal(err)
	}
	if db, err := OpenPostgres(ctx, withExt, nil); err != nil {
		t.Errorf("a database with an extension's views only: %v", err)
	} else {
		db.Close()
	}

	// A schema newer than the binary: refused.
	url, drop, err := NewTestPostgres(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	db, err := OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.pg.pool.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenPostgres(ctx, url, nil); err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Errorf("a newer schema: %v", err)
	}
}

// emptyPostgres makes an empty database on admin's server for the test.
func emptyPostgres(t *testing.T, admin string) string {
	t.Helper()
	name := "atrium_empty_" + randomHex(6)
	err := pgAdmin(context.Background(), admin, func(db *sql.DB) error {
		_, err := db.ExecContext(context.Background(), `CREATE DATABASE `+name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pgAdmin(context.Background(), admin, func(db *sql.DB) error {
			_, err := db.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
			return err
		})
	})
	url, err := withDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// The node's pool holds as many connections as [database] max_connections
// says, DefaultMaxConnections without it.
func TestPostgresPoolSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ set, want int }{{0, DefaultMaxConnections}, {1, 2}, {7, 7}, {300, 300}} {
		o := postgresOptions{maxConns: DefaultMaxConnections}
		WithMaxConnections(c.set)(&o)
		pool, err := pgPool("postgres://atrium@127.0.0.1:5432/atrium", o.maxConns)
		if err != nil {
			t.Fatal(err)
		}
		if got := pool.Stats().MaxOpenConnections; got != c.want {
			t.Errorf("max_connections %d: a pool of %d, want %d", c.set, got, c.want)
		}
		pool.Close()
	}
}
