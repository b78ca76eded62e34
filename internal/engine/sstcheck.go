package engine

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// CheckTable reads every block of the sstable at path (data, index, filter, properties...) and
// checks its checksum, as pebble would on reading it: a copy of an engine file (a file-form
// backup) can be checked block by block without opening an engine on it. The error names path.
func CheckTable(path string) error {
	f, err := vfs.Default.Open(path)
	if err != nil {
		return fmt.Errorf("sstable %s: %w", path, err)
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("sstable %s: %w", path, err)
	}
	// The options the engine reads its own tables with (comparer, key schemas, filters).
	opts := &pebble.Options{}
	opts.EnsureDefaults()
	r, err := sstable.NewReader(context.Background(), readable, opts.MakeReaderOptions())
	if err != nil {
		readable.Close()
		return fmt.Errorf("sstable %s: %w", path, err)
	}
	err = r.ValidateBlockChecksums()
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sstable %s: %w", path, err)
	}
	return nil
}
