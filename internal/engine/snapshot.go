package engine

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// A node far behind its leader gets the leader's whole engine instead of the log it lacks. The
// contents arrive as an ordered stream of keys; SnapshotLoader writes them to sstables in a staging
// directory beside the engine, and Install swaps them in:
//
//  1. One batch deletes every key and sets the marker (a later op of a batch wins over its range
//     deletion), then a flush makes that durable: from here a restart sees "install in progress".
//  2. Ingest adds the staged sstables atomically (they carry the new applied index).
//  3. The caller finishes its own part (repl resets the log) and deletes the marker.
//
// A crash after 1 leaves an engine holding only the marker (or the marker and the whole snapshot, if
// the ingest happened): never a mix of old and new state.

// stagingBytes is the size at which a staged sstable is closed and the next begun.
const stagingBytes = 64 << 20

// SnapshotLoader builds sstables from keys in ascending order.
type SnapshotLoader struct {
	e     *Engine
	dir   string
	w     *sstable.Writer
	files []string
	last  []byte
	keys  uint64
	size  uint64
	n     uint64 // bytes in the current file
}

// NewSnapshotLoader starts a loader whose staging directory (name, beside the engine's directory) is
// emptied first.
func (e *Engine) NewSnapshotLoader(name string) (*SnapshotLoader, error) {
	dir := e.fs.PathJoin(e.fs.PathDir(e.dir), name)
	if err := e.fs.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("engine: clear %s: %w", dir, err)
	}
	if err := e.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", dir, err)
	}
	return &SnapshotLoader{e: e, dir: dir}, nil
}

// Add appends one key; keys must come in strictly ascending order.
func (l *SnapshotLoader) Add(k, v []byte) error {
	if l.last != nil && bytes.Compare(k, l.last) <= 0 {
		return fmt.Errorf("engine: snapshot key %q after %q: out of order", k, l.last)
	}
	if l.w == nil || l.n >= stagingBytes {
		if err := l.closeFile(); err != nil {
			return err
		}
		path := l.e.fs.PathJoin(l.dir, fmt.Sprintf("%06d.sst", len(l.files)))
		f, err := l.e.fs.Create(path, vfs.WriteCategoryUnspecified)
		if err != nil {
			return fmt.Errorf("engine: create %s: %w", path, err)
		}
		l.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), sstable.WriterOptions{
			TableFormat: l.e.db.FormatMajorVersion().MaxTableFormat(),
		})
		l.files = append(l.files, path)
		l.n = 0
	}
	if err := l.w.Set(k, v); err != nil {
		return fmt.Errorf("engine: stage snapshot key: %w", err)
	}
	l.last = append(l.last[:0], k...)
	l.keys++
	l.n += uint64(len(k) + len(v))
	l.size += uint64(len(k) + len(v))
	return nil
}

// Last is the last key added (nil before any): a resumed transfer continues after it.
func (l *SnapshotLoader) Last() []byte { return l.last }

// Keys and Bytes count what was added.
func (l *SnapshotLoader) Keys() uint64  { return l.keys }
func (l *SnapshotLoader) Bytes() uint64 { return l.size }

func (l *SnapshotLoader) closeFile() error {
	if l.w == nil {
		return nil
	}
	err := l.w.Close() // syncs and closes the file
	l.w = nil
	if err != nil {
		return fmt.Errorf("engine: finish staged sstable: %w", err)
	}
	return nil
}

// Abort drops the staged files.
func (l *SnapshotLoader) Abort() {
	if l.w != nil {
		_ = l.w.Close()
		l.w = nil
	}
	_ = l.e.fs.RemoveAll(l.dir)
}

// Install replaces the engine's whole contents with the staged keys (steps 1 and 2 above); marker is
// set with markerVal before the swap and left for the caller to delete (ClearMarker). Nothing may
// write to the engine meanwhile.
func (l *SnapshotLoader) Install(marker, markerVal []byte) error {
	if err := l.closeFile(); err != nil {
		return err
	}
	e := l.e
	// The whole swap is one change of the latest state for Generation and the shared snapshots.
	e.started.Add(1)
	defer e.gen.Add(1)
	b := e.db.NewBatch()
	if err := b.DeleteRange([]byte{0x00}, []byte{0xff}, nil); err != nil {
		b.Close()
		return err
	}
	if err := b.Set(marker, markerVal, nil); err != nil {
		b.Close()
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("engine: clear for snapshot: %w", err)
	}
	if err := e.db.Flush(); err != nil {
		return fmt.Errorf("engine: flush before snapshot ingest: %w", err)
	}
	if len(l.files) > 0 {
		if err := e.db.Ingest(context.Background(), l.files); err != nil {
			return fmt.Errorf("engine: ingest snapshot: %w", err)
		}
	}
	_ = e.fs.RemoveAll(l.dir)
	return nil
}

// ClearMarker deletes the install marker and makes the deletion durable.
func (e *Engine) ClearMarker(marker []byte) error {
	e.started.Add(1)
	err := e.db.Delete(marker, pebble.NoSync)
	e.gen.Add(1)
	if err != nil {
		return err
	}
	return e.db.Flush()
}
