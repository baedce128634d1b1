package sqldb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestDatabaseEnv names the PostgreSQL server the tests run on, when set: a
// URL of a database on a server where the tests may create and drop
// databases (scripts/pg-cluster.sh starts a throwaway one). Unset, they run
// on SQLite alone.
const TestDatabaseEnv = "ATRIUM_TEST_DATABASE_URL"

// TestPostgresURL is the URL of TestDatabaseEnv, "" when unset.
func TestPostgresURL() string { return os.Getenv(TestDatabaseEnv) }

// OpenForTest opens a fresh, migrated database for a test: a database of its
// own on the PostgreSQL server of TestDatabaseEnv when that is set, else a
// SQLite file in dir. closeDB closes it and, on PostgreSQL, drops it.
func OpenForTest(ctx context.Context, dir string) (db *DB, closeDB func() error, err error) {
	admin := TestPostgresURL()
	if admin == "" {
		db, err := Open(ctx, filepath.Join(dir, "atrium.db"), nil)
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	}
	url, drop, err := NewTestPostgres(ctx, admin)
	if err != nil {
		return nil, nil, err
	}
	if db, err = OpenPostgres(ctx, url, nil); err != nil {
		drop()
		return nil, nil, err
	}
	return db, func() error {
		db.Close()
		return drop()
	}, nil
}

// NewTestPostgres makes a database for one test on the server of admin (a
// URL of any database there) as a copy of a migrated template, made once per
// schema and server and shared by test binaries, and returns its URL and a
// function that drops it.
func NewTestPostgres(ctx context.Context, admin string) (url string, drop func() error, err error) {
	tpl, err := pgTemplate(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	name := "atrium_test_" + randomHex(8)
	if err := pgAdmin(ctx, admin, func(db *sql.DB) error {
		return createFromTemplate(ctx, db, name, tpl)
	}); err != nil {
		return "", nil, err
	}
	url, err = withDatabase(admin, name)
	if err != nil {
		return "", nil, err
	}
	return url, func() error {
		return pgAdmin(context.Background(), admin, func(db *sql.DB) error {
			_, err := db.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
			return err
		})
	}, nil
}

// createFromTemplate makes database name from tpl. PostgreSQL refuses a copy
// while another session is connected to the template (another binary's copy
// under way does not count, its making does): it is tried again a while.
func createFromTemplate(ctx context.Context, db *sql.DB, name, tpl string) error {
	var err error
	for range 100 {
		if _, err = db.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+tpl); err == nil {
			return nil
		}
		if !strings.Contains(err.Error(), "is being accessed by other users") {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("create test database from %s: %w", tpl, err)
}

var templates struct {
	sync.Mutex
	made map[string]string // admin URL -> template name
}

// pgTemplate returns the name of the migrated template database on admin's
// server, making it when absent: named by a digest of the migrations, made
// under a temporary name and renamed, under an advisory lock so that test
// binaries starting together make it once.
func pgTemplate(ctx context.Context, admin string) (string, error) {
	templates.Lock()
	defer templates.Unlock()
	if name, ok := templates.made[admin]; ok {
		return name, nil
	}
	sub, err := fs.Sub(migrationsPG, "migrations_pg")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return err
	}); err != nil {
		return "", err
	}
	name := "atrium_tpl_" + hex.EncodeToString(h.Sum(nil))[:16]
	err = pgAdmin(ctx, admin, func(db *sql.DB) error {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(4097083627)`); err != nil {
			return err
		}
		defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(4097083627)`)
		var exists bool
		if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || exists {
			return err
		}
		tmp := name + "_making"
		if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+tmp+` WITH (FORCE)`); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+tmp); err != nil {
			return err
		}
		url, err := withDatabase(admin, tmp)
		if err != nil {
			return err
		}
		if _, err := MigratePostgres(ctx, url, nil); err != nil {
			return fmt.Errorf("migrate the test template: %w", err)
		}
		if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+tmp+` RENAME TO `+name); err != nil {
			return err
		}
		_, err = conn.ExecContext(ctx, `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("test template database: %w", err)
	}
	if templates.made == nil {
		templates.made = map[string]string{}
	}
	templates.made[admin] = name
	return name, nil
}

// pgAdmin runs fn on a connection pool of admin's database.
func pgAdmin(ctx context.Context, admin string, fn func(db *sql.DB) error) error {
	db, err := pgPool(admin, DefaultMaxConnections)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(2)
	if err := pgPing(ctx, db, admin); err != nil {
		return err
	}
	return fn(db)
}

// withDatabase is url naming database name instead.
func withDatabase(url, name string) (string, error) {
	if _, err := pgx.ParseConfig(url); err != nil {
		return "", err
	}
	i := strings.Index(url, "://")
	rest := url[i+3:]
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return "", errors.New("database url names no database")
	}
	tail := ""
	if q := strings.IndexByte(rest[slash:], '?'); q >= 0 {
		tail = rest[slash+q:]
	}
	return url[:i+3] + rest[:slash] + "/" + name + tail, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
