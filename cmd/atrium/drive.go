package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newDriveCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "drive", Short: "Operate on the drive"}
	archive := &cobra.Command{
		Use:   "archive FILE_ID...",
		Short: "Move files to the compressed archive tier; a download restores them",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, ids []string) error {
			m, err := openFor(cmd)
			if err != nil {
				return err
			}
			defer m.Close()
			for _, id := range ids {
				f, err := m.Drive.Archiving().ArchiveFile(cmd.Context(), id)
				if err != nil {
					return fmt.Errorf("archive %s: %w", id, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %s  %s\n", f.ID, f.Status, f.Name)
			}
			return nil
		},
	}
	dataFlags(archive.Flags())
	cmd.AddCommand(archive)
	return cmd
}
