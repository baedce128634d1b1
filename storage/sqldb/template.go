package sqldb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// MigratedTemplate returns the path of a database file with every embedded
// migration applied, for tests: copying it (CopyDatabase) is much faster than
// migrating a new database per test. It is made once per schema (named by a
// digest of the migrations) under the system's temporary directory and
// shared by test binaries; it is written under a temporary name and renamed,
// so concurrent makers never see a half-made file.
func MigratedTemplate(ctx context.Context) (string, error) {
	sub, err := fsSub()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("digest migrations: %w", err)
	}
	path := filepath.Join(os.TempDir(), "atrium-test-schema-"+hex.EncodeToString(h.Sum(nil))[:16]+".db")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	dir, err := os.MkdirTemp("", "atrium-test-schema-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "atrium.db")
	if _, err := Migrate(ctx, tmp, slog.New(slog.DiscardHandler)); err != nil {
		return "", err
	}
	// Migrate closed the last connection: SQLite checkpointed the log into
	// the file and removed it. A log left behind would hold part of the schema.
	if _, err := os.Stat(tmp + "-wal"); err == nil {
		return "", fmt.Errorf("template database %s: the log was not checkpointed", tmp)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}

// CopyDatabase copies the database file src (a checkpointed one, such as
// MigratedTemplate's) to dst, which must not exist.
func CopyDatabase(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy database: %w", err)
	}
	return out.Close()
}
