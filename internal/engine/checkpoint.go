package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// A file-form online backup (internal/backup) copies the engine's files instead of reading every
// key: Checkpoint hard-links the current sstables (immutable, so the link is a frozen copy) and
// copies the small MANIFEST/OPTIONS files into a directory of its own beside the engine, which the
// backup streams and then removes.
//
// The engine runs without a WAL (the log is the durable record), so a checkpoint holds exactly
// what pebble has flushed: Checkpoint flushes first, and the checkpoint's own applied key (written
// in the same batch as the data it applied, duty 1) says which index it holds. Writers are never
// blocked: batches applied after the flush stay in the memtable and out of the checkpoint.

// checkpointsDir is the directory, beside the engine's, under which checkpoints are made.
const checkpointsDir = "backup-checkpoints"

// Checkpoint is a frozen copy of the engine's files.
type Checkpoint struct {
	e *Engine
	// Dir is the checkpoint's directory.
	Dir string
	// Files are the checkpoint's files (names within Dir, sizes), sorted by name.
	Files []CheckpointFile
	// Applied is the applied index of the state the files hold.
	Applied uint64
}

// CheckpointFile is one file of a checkpoint.
type CheckpointFile struct {
	Name  string
	Bytes int64
}

// Checkpoint flushes the memtable and checkpoints the engine into a new directory. The caller
// removes it (Remove) when done; RemoveCheckpoints clears those a crash left behind.
func (e *Engine) Checkpoint() (*Checkpoint, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	parent := e.CheckpointsDir()
	if err := e.fs.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("engine checkpoint: %w", err)
	}
	c := &Checkpoint{e: e, Dir: e.fs.PathJoin(parent, hex.EncodeToString(b[:]))}
	if err := e.db.Flush(); err != nil {
		return nil, fmt.Errorf("engine checkpoint: flush: %w", err)
	}
	if err := e.db.Checkpoint(c.Dir); err != nil {
		_ = e.fs.RemoveAll(c.Dir)
		return nil, fmt.Errorf("engine checkpoint: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = c.Remove()
		}
	}()
	// The file list is taken before the read-only open below, which adds a LOCK file.
	names, err := e.fs.List(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("engine checkpoint: %w", err)
	}
	slices.Sort(names)
	for _, n := range names {
		fi, err := e.fs.Stat(e.fs.PathJoin(c.Dir, n))
		if err != nil {
			return nil, fmt.Errorf("engine checkpoint: %w", err)
		}
		if fi.IsDir() {
			return nil, fmt.Errorf("engine checkpoint: unexpected directory %s", n)
		}
		c.Files = append(c.Files, CheckpointFile{Name: n, Bytes: fi.Size()})
	}
	db, err := pebble.Open(c.Dir, &pebble.Options{FS: e.fs, ReadOnly: true, Logger: quietLogger{}})
	if err != nil {
		return nil, fmt.Errorf("engine checkpoint: open it to read its applied index: %w", err)
	}
	c.Applied, err = appliedPosition(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("engine checkpoint: %w", err)
	}
	ok = true
	return c, nil
}

// CheckpointsDir is the directory under which Checkpoint makes its checkpoints.
func (e *Engine) CheckpointsDir() string {
	return e.fs.PathJoin(e.fs.PathDir(e.dir), checkpointsDir)
}

// Path is the path of the checkpoint's file name.
func (c *Checkpoint) Path(name string) string { return c.e.fs.PathJoin(c.Dir, name) }

// Remove deletes the checkpoint (its links: the engine's own files stay).
func (c *Checkpoint) Remove() error { return c.e.fs.RemoveAll(c.Dir) }

// RemoveCheckpoints removes every checkpoint under the engine's directory's parent: those a node
// killed during a backup left behind (run at start-up, before any backup can begin).
func (e *Engine) RemoveCheckpoints() error {
	return e.fs.RemoveAll(e.CheckpointsDir())
}
