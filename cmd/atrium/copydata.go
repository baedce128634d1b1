package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"atrium/storage/copydata"
	"atrium/storage/s3blob"
	"atrium/storage/sqldb"
	"atrium/wire"
)

func newCopyDataCmd() *cobra.Command {
	var from string
	var quiet, noReindex, again, discard bool
	cmd := &cobra.Command{
		Use:   "copy-data --from DIR",
		Short: "Copy an embedded installation into the configured PostgreSQL database and object store",
		Long: "Copies the SQLite database and the blobs of the data directory DIR (taken as of one moment, also\n" +
			"while a server runs on it) into the configured database ([database] url, ATRIUM_DATABASE_URL),\n" +
			"which must be empty, and the configured blob store (the bucket of [blob] s3_*, else the blobs of\n" +
			"--data). Every blob's hash is checked. After an interruption, run it again: it finishes the job.\n" +
			"At the end it rebuilds the search index (unless --no-reindex). Users, tokens, app passwords,\n" +
			"sessions, shares, versions, trash, events, contacts, calendars and webhooks all come along.\n" +
			"A copy made while the old server serves misses what it writes after the snapshot: stop it, then\n" +
			"run copy-data --again (the rows anew from a final snapshot; blobs copied already are passed over).\n" +
			"--again refuses once a server on the copy took writes (they would be lost) unless --discard-changes.\n" +
			"See docs/operations.md, \"Moving to PostgreSQL and S3\".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadFor(cmd)
			if err != nil {
				return err
			}
			if cfg.Database.URL == "" {
				return errors.New("copy-data: no target database: set ATRIUM_DATABASE_URL (or [database] url) to an empty PostgreSQL database; to copy an embedded installation into another data directory, use atrium backup and atrium restore")
			}
			if !sqldb.IsPostgresURL(cfg.Database.URL) {
				return errors.New("copy-data: ATRIUM_DATABASE_URL ([database] url) must be a postgres:// URL")
			}
			if from == "" {
				return errors.New("copy-data: --from is required")
			}
			src, err := filepath.Abs(from)
			if err != nil {
				return fmt.Errorf("copy-data: %w", err)
			}
			dst, err := filepath.Abs(cfg.Data)
			if err != nil {
				return fmt.Errorf("copy-data: %w", err)
			}
			if same(src, dst) {
				return fmt.Errorf("copy-data: --data %s is the source directory itself: give the new installation a data directory of its own", cfg.Data)
			}
			if fi, err := os.Stat(filepath.Join(src, "atrium.db")); err != nil || !fi.Mode().IsRegular() {
				return fmt.Errorf("copy-data: %s is not an Atrium data directory (no atrium.db there)", from)
			}
			log := wire.NewLogger(cfg, cmd.ErrOrStderr())
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if quiet {
				errOut = io.Discard
			}
			start := time.Now()
			ctx := cmd.Context()
			db, err := sqldb.OpenPostgres(ctx, cfg.Database.URL, log)
			if err != nil {
				return err
			}
			defer db.Close()
			objects, archive, err := wire.OpenBlobs(ctx, cfg)
			if err != nil {
				return err
			}
			bar := newByteBar(cmd.ErrOrStderr(), "copy-data: blobs", quiet)
			rows := rowReporter(errOut)
			opts := copydata.Options{
				From: src, Scratch: filepath.Join(dst, "copy-data"), DB: db, Objects: objects, Archive: archive,
				Tus: filepath.Join(dst, "tus"), Rows: rows, Bytes: bar.set, Log: log, Again: again, DiscardChanges: discard,
				StopAfterRows: testStopAfterRows, StopAfterBlobs: testStopAfterBlobs,
			}
			if s, ok := objects.(*s3blob.Store); ok {
				// With a bucket, uploads in progress keep their bytes in it.
				opts.Parts = s.TusParts()
			}
			res, err := copydata.Run(ctx, opts)
			bar.finish()
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("copy-data: interrupted; run the same command again to finish the copy (blobs copied so far are kept): %w", err)
			}
			if err != nil {
				return err
			}
			if res.AlreadyDone {
				fmt.Fprintf(out, "copy-data: %s was copied into this database already; nothing to do (--again copies its rows anew, e.g. once its server stopped)\n", from)
				return nil
			}
			anew := ""
			if res.Resumed {
				anew = " (over an earlier copy: its rows replaced)"
			}
			fmt.Fprintf(out, "copied %s (schema %d) in %s: %d tables, %s rows%s, %d blobs and %d archived (%d already there), %s copied, %d uploads in progress, %d contacts indexed\n",
				from, res.Schema, time.Since(start).Round(time.Millisecond), res.Tables, thousands(res.Rows), anew, res.Blobs, res.Archived,
				res.Present, humanBytes(res.Bytes), res.Uploads, res.Contacts)
			db.Close()
			if noReindex {
				fmt.Fprintln(out, "search index not rebuilt (--no-reindex): run atrium reindex before serving, or let the server rebuild it")
				return nil
			}
			return reindexAfterCopy(cmd, cfg)
		},
	}
	dataFlags(cmd.Flags())
	cmd.Flags().StringVar(&from, "from", "", "the embedded installation's data directory (required)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress")
	cmd.Flags().BoolVar(&noReindex, "no-reindex", false, "do not rebuild the search index at the end")
	cmd.Flags().BoolVar(&again, "again", false, "copy the rows anew over a finished copy of the same directory (the final pass once its server stopped; blobs already copied are kept)")
	cmd.Flags().BoolVar(&discard, "discard-changes", false, "with --again: copy even when a server on the copy has taken writes since it was made, which are lost (refused without it)")
	cmd.Flags().String("public-url", "", "public URL of the new installation (env ATRIUM_PUBLIC_URL; required with a database and a bucket, as for serve)")
	return cmd
}

// testStopAfterRows and testStopAfterBlobs interrupt copy-data in tests.
var testStopAfterRows, testStopAfterBlobs int64

// same reports whether two absolute paths name the same directory.
func same(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// rowReporter prints a line per table when it is done and every 10,000 rows
// of a large one.
func rowReporter(w io.Writer) func(table string, done, total int64) {
	var last string
	var lastDone int64
	return func(table string, done, total int64) {
		if table != last {
			last, lastDone = table, 0
		}
		if total > 0 && (done == total || done-lastDone >= 10000) {
			fmt.Fprintf(w, "copy-data: table %s %s/%s rows\n", table, thousands(done), thousands(total))
			lastDone = done
		}
	}
}

// thousands formats n with commas.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// reindexAfterCopy opens the target as serve does and rebuilds its search
// index.
func reindexAfterCopy(cmd *cobra.Command, cfg wire.Config) error {
	m, err := wire.Open(cmd.Context(), cfg, wire.NewLogger(cfg, io.Discard))
	if err != nil {
		return fmt.Errorf("copy-data: open the copy to index it: %w", err)
	}
	defer m.Close()
	start := time.Now()
	if err := m.Search.Rebuild(cmd.Context(), nil); err != nil {
		return fmt.Errorf("copy-data: rebuild the search index: %w (run atrium reindex)", err)
	}
	_, done, _ := m.Search.Progress()
	fmt.Fprintf(cmd.OutOrStdout(), "indexed %d items in %s\n", done, time.Since(start).Round(time.Millisecond))
	return nil
}
