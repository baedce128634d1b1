package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"atrium/storage/backup"
	"atrium/storage/sqldb"
	"atrium/wire"
)

func newBackupCmd() *cobra.Command {
	var to string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "backup --to DIR|FILE.tar.zst",
		Short: "Take a consistent copy of the data directory, also while a server runs on it",
		Long: "Copies the database as of one moment (keys included), exactly the files it refers to (each\n" +
			"verified against its hash), the received part of resumable uploads, and the --config file when\n" +
			"given, with a manifest.json. --to is a new or empty directory, or a path ending in .tar.zst.\n" +
			"Nothing appears there unless the backup completed. The search index is not copied: a restored\n" +
			"server rebuilds it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadFor(cmd)
			if err != nil {
				return err
			}
			if cfg.Database.URL != "" {
				return errors.New("backup copies the embedded SQLite database; with [database] url set, back up the PostgreSQL database with pg_dump (or its server's own backups) and the data directory's blobs/ beside it")
			}
			if cfg.Blob.S3() {
				return fmt.Errorf("backup copies the data directory's blobs/; with [blob] s3_endpoint set, the bytes are in bucket %q: back it up with the object store's own tools (versioning, replication) together with the database", cfg.Blob.S3Bucket)
			}
			configPath, _ := cmd.Flags().GetString("config")
			bar := newByteBar(cmd.ErrOrStderr(), "backup", quiet)
			start := time.Now()
			m, err := backup.Create(cmd.Context(), backup.Options{
				Data: cfg.Data, To: to, Config: configPath, Version: atriumVersion(),
				Progress: bar.set, Log: wire.NewLogger(cfg, cmd.ErrOrStderr()),
			})
			bar.finish()
			if err != nil {
				return err
			}
			config := "no config"
			if m.ConfigIncluded {
				config = "config included"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backed up %s: database %s, %d blobs %s, %d archived %s, %d upload parts, %s, schema %d → %s in %s\n",
				cfg.Data, humanBytes(m.Database.Bytes), m.Blobs.Count, humanBytes(m.Blobs.Bytes), m.Archive.Count, humanBytes(m.Archive.Bytes),
				m.Uploads.Count, config, m.SchemaVersion, to, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	dataFlags(cmd.Flags())
	cmd.Flags().StringVar(&to, "to", "", "destination: a new or empty directory, or FILE.tar.zst (required)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func newRestoreCmd() *cobra.Command {
	var from, configTo string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "restore --from DIR|FILE.tar.zst --data DIR",
		Short: "Restore a backup into a new or empty data directory",
		Long: "Checks the backup (manifest, database checksum and integrity, every file's hash, every file the\n" +
			"database refers to present), assembles the data directory beside --data and moves it into place\n" +
			"only when all of that held. --data must not exist or be empty. --config-to writes the backup's\n" +
			"configuration file there. Start the restored directory with atrium serve: migrations run and the\n" +
			"search index is rebuilt.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, _ := cmd.Flags().GetString("data")
			if data == "" {
				data = os.Getenv("ATRIUM_DATA")
			}
			if data == "" {
				return fmt.Errorf("restore: --data is required")
			}
			bar := newByteBar(cmd.ErrOrStderr(), "restore", quiet)
			start := time.Now()
			res, err := backup.Restore(cmd.Context(), backup.RestoreOptions{
				From: from, Data: data, ConfigTo: configTo, MaxSchema: sqldb.MigrationVersion(),
				Progress: bar.set, Log: wire.NewLogger(wire.Config{}, cmd.ErrOrStderr()),
			})
			bar.finish()
			if err != nil {
				return err
			}
			m := res.Manifest
			config := ""
			if res.ConfigWritten {
				config = ", config → " + configTo
			} else if m.ConfigIncluded {
				config = ", config not written (use --config-to)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored the backup of %s (atrium %s, schema %d): %d blobs %s, %d archived %s, %d upload parts%s → %s in %s\n",
				m.CreatedAt.Format(time.RFC3339), m.AtriumVersion, m.SchemaVersion, m.Blobs.Count, humanBytes(m.Blobs.Bytes),
				m.Archive.Count, humanBytes(m.Archive.Bytes), m.Uploads.Count, config, data, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().String("data", "", "data directory to create: must not exist or be empty (env ATRIUM_DATA)")
	cmd.Flags().StringVar(&from, "from", "", "the backup: a directory or FILE.tar.zst (required)")
	cmd.Flags().StringVar(&configTo, "config-to", "", "write the backup's configuration file here (must not exist)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

// byteBar is a progress bar of bytes on a terminal, or nothing.
type byteBar struct {
	w    io.Writer
	desc string
	bar  *progressbar.ProgressBar
	max  int64
}

// newByteBar draws on w when w is a terminal and not quiet.
func newByteBar(w io.Writer, desc string, quiet bool) *byteBar {
	if quiet || !isTerminal(w) {
		return &byteBar{}
	}
	return &byteBar{w: w, desc: desc}
}

func (b *byteBar) set(done, total int64) {
	if b.w == nil {
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(b.desc),
			progressbar.OptionShowBytes(true), progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
		b.max = total
	}
	if total != b.max {
		b.bar.ChangeMax64(total)
		b.max = total
	}
	b.bar.Set64(done)
}

func (b *byteBar) finish() {
	if b.bar != nil {
		b.bar.Finish()
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// humanBytes formats a byte count for people.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
