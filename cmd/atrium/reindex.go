package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"atrium/app/drive"
)

func newReindexCmd() *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the drive's search index from the database",
		Long: "Rebuilds <data>/index from the database and the stored files, then puts it in place.\n" +
			"Run it with the server stopped; a running server rebuilds a missing or damaged index by itself.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			limitMemory() // the index is built with the server's bounds
			m, err := openFor(cmd)
			if err != nil {
				return err
			}
			defer m.Close()
			ctx, stop := context.WithCancel(cmd.Context())
			defer stop()
			go m.ReleaseExecutablePages(ctx)
			var bar *progressbar.ProgressBar
			progress := func(done, total int64) {
				if quiet {
					return
				}
				if bar == nil {
					bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(cmd.ErrOrStderr()),
						progressbar.OptionSetDescription("indexing"), progressbar.OptionShowCount(),
						progressbar.OptionSetItsString("files"), progressbar.OptionShowIts(),
						progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
				}
				bar.Set64(done)
			}
			start := time.Now()
			err = m.Search.Rebuild(cmd.Context(), progress)
			if bar != nil {
				bar.Finish()
			}
			if errors.Is(err, drive.ErrSearchIndexBusy) {
				return fmt.Errorf("reindex: %w: stop the server first (it rebuilds a missing or damaged index by itself)", err)
			}
			if err != nil {
				return err
			}
			_, done, _ := m.Search.Progress()
			fmt.Fprintf(cmd.OutOrStdout(), "indexed %d items in %s\n", done, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	dataFlags(cmd.Flags())
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	return cmd
}
