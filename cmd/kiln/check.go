package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/spf13/cobra"

	klog "github.com/kiln-db/kiln/internal/log"
)

func checkCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Verify a stopped node's binlog (framing, CRC, index order, torn tail)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			// As the server opens it: preallocated, so the last segment's zero-filled remainder is
			// room for the next commits, not a torn tail.
			rep, err := klog.CheckOptions(filepath.Join(dataDir, "log"), klog.Options{FS: vfs.Default, Preallocate: true})
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
			if err != nil {
				return fmt.Errorf("check %s: %w", dataDir, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "./kiln-data", "data directory of a stopped node")
	return cmd
}
