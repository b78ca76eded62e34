// Package engine owns the storage engine under Kiln's tables: a pebble LSM that is a materialised view of
// the committed history. It stores key/value pairs for rows, indexes and the catalog, plus the applied
// commit position, and gives consistent snapshots for reads.
//
// The contract, as numbered duties:
//  1. Apply writes one batch atomically together with the commit position it applies; positions only grow.
//  2. Readers see either all or none of a batch: Get and iterators on the Engine see the latest applied
//     state, Snapshot sees the state at the time it was taken.
//  3. Callers copy nothing out of an Iterator beyond its current position: Key and Value are valid until
//     the next call that moves it.
//  4. Range scans do not keep paying for old versions: when they step over more superseded versions
//     than rows, the memtable holding them is flushed (versions.go).
//
// Until the log-first commit path (issue 3) exists, Apply with sync=true is also what makes a commit
// durable: pebble's commit pipeline already groups concurrent synced batches into one WAL fsync and
// publishes a batch only after its fsync, so nothing is visible before it is durable.
package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// appliedKey stores the last applied commit position. It sorts before every table and catalog key.
var appliedKey = []byte{0x00, 'a', 'p', 'p', 'l', 'i', 'e', 'd'}

// Options configure Open.
type Options struct {
	FS         vfs.FS // nil: the real filesystem
	CacheBytes int64  // block cache size; 0: 256 MiB
	Logger     *slog.Logger
	DisableWAL bool // for the log-first path: the binlog is the durable record
	// MemTableBytes is the size of one memtable; 0: 32 MiB (DefaultMemTableBytes).
	MemTableBytes uint64
}

// DefaultMemTableBytes is the memtable size of a server's engine. Large memtables mean fewer, larger
// flushes, so an L0 compaction takes more new data per rewrite of the base level: on LinkBench's
// load (1.95 M rows) 32 MiB wrote 1.5 GB of tables against 2.0 GB with 8 MiB and cost 13-15% less
// server CPU per row. They once made range scans step over many old versions of hot rows
// (docs/decisions.md: 64 MiB cut read_write 10x after updates, hence 8 MiB until 2026-11-25); the
// flush for old versions (versions.go) now bounds that, and sysbench shows no difference between 8,
// 16 and 32 MiB (docs/benchmarks.md, "Flushing old versions for range scans").
const DefaultMemTableBytes = 32 << 20

// Engine is an open pebble store.
type Engine struct {
	db          *pebble.DB
	fs          vfs.FS
	dir         string
	beforeFlush atomic.Pointer[func()]
	// gen counts the batches applied (and snapshot ingests): see Generation. started counts the
	// same changes when they begin (Apply, Install, ClearMarker), for the shared snapshots (sharedsnap.go).
	gen     atomic.Uint64
	started atomic.Uint64
	snaps   snapCache
	steps   stepCounter // reads stepping over old versions: see versions.go
}

// Generation counts the changes made to the latest state (applied batches, ingests), each
// counted once it is visible. An iterator opened after reading Generation() == g sees the latest
// value of every key for as long as Generation() is still g: a reader of many keys can keep one
// iterator instead of a Get per key (a Get builds an iterator stack of its own).
func (e *Engine) Generation() uint64 { return e.gen.Load() }

// SetBeforeFlush installs f to run before every memtable flush, before the flush writes anything
// (pebble's FlushBegin, called with the DB's mutex held: f must not call back into the engine). The
// commit path uses it to fsync the log first, so the engine never persists what the log has not.
func (e *Engine) SetBeforeFlush(f func()) { e.beforeFlush.Store(&f) }

// Open opens (creating if needed) the store in dir.
func Open(dir string, o Options) (*Engine, error) {
	cacheBytes := o.CacheBytes
	if cacheBytes == 0 {
		cacheBytes = 256 << 20
	}
	cache := pebble.NewCache(cacheBytes)
	defer cache.Unref()
	memtable := o.MemTableBytes
	if memtable == 0 {
		memtable = DefaultMemTableBytes
	}
	opts := &pebble.Options{
		FS:                          o.FS,
		Cache:                       cache,
		MemTableSize:                memtable,
		MemTableStopWritesThreshold: 4,
		L0CompactionThreshold:       L0CompactionThreshold,
		L0StopWritesThreshold:       24,
		LBaseMaxBytes:               64 << 20,
		DisableWAL:                  o.DisableWAL,
		Logger:                      quietLogger{},
	}
	setCompression(opts)
	opts.Experimental.CompactionScheduler = newCompactionScheduler() // compactsched.go
	e := &Engine{}
	opts.EventListener = &pebble.EventListener{FlushBegin: func(pebble.FlushInfo) {
		e.steps.unflushed.Store(0)
		if f := e.beforeFlush.Load(); f != nil {
			(*f)()
		}
	}}
	opts.EnsureDefaults()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open pebble in %s: %w", dir, err)
	}
	e.db = db
	e.fs, e.dir = opts.FS, dir
	return e, nil
}

// L0CompactionThreshold is how many L0 sublevels (a memtable flush adds one) make pebble compact L0
// into the base level (pebble's default: 4). Every such compaction rewrites the base level's tables
// that the flushed keys overlap, and a flush of keys from all over a table (LinkBench's links,
// sysbench's updates) overlaps all of them: merging eight flushes per rewrite instead of four
// halves those rewrites. Measured (docs/benchmarks.md, "L0 compactions after eight flushes"):
// LinkBench's load -20% server CPU per row (threshold 6: -17%; 12 and 16: no further gain). Reads
// pay for each sublevel a seek merges, but sysbench's reads after a minute of updates or after
// read_write cost within 3% of what they cost at 4 (L0 kept 1-3 sublevels there: flushes that
// follow updates are small). L0StopWritesThreshold stays well above it.
const L0CompactionThreshold = 8

// BlockSize is the size of an sstable's data blocks: InnoDB's page size (pebble's default is 4 KiB).
// Compactions and flushes do work per block (an index entry, a checksum, a compression call, a
// write), and reads seek through fewer index entries to the block they need; every block a read
// misses in the cache costs 16 KiB from the file, as an InnoDB page does. Measured
// (docs/benchmarks.md, "Write sets without a btree"): LinkBench's load -6..9% CPU per row, sysbench
// point selects -5..8% CPU per query, read_only -2..5%. 32 KiB did a little better on those cached
// runs; it was not taken because a store larger than memory reads whole blocks per point read.
const BlockSize = 16 << 10

// setCompression compresses only the bottom level's tables (Snappy, pebble's default) and writes
// every level above it uncompressed; every level gets BlockSize blocks. The upper levels are where
// the writes go: a memtable flush writes L0 and each L0 compaction rewrites the base level's
// overlapping tables, so in LinkBench's load the base level was written 3.5 times over and Snappy's
// encoding was ~11% of the server's CPU. The bottom level holds most of the data (about 90% once the store has several levels), so compressing it alone
// keeps most of the space saving. Measured on the LinkBench load (docs/benchmarks.md): 6-9% less
// server CPU per loaded row, the data directory about as large right after the load (the upper levels
// hold 30-40% of that small store; less as it grows). The choice is per table: stores written with
// other settings open and read as before, and their tables take the new settings as compactions
// rewrite them.
func setCompression(o *pebble.Options) {
	for i := range o.Levels {
		p := block.NoCompression
		if i == len(o.Levels)-1 {
			p = block.SnappyCompression
		}
		o.Levels[i].Compression = func() *block.CompressionProfile { return p }
		o.Levels[i].BlockSize = BlockSize
	}
}

// Close flushes nothing (the WAL or the log holds what matters) and closes the store.
func (e *Engine) Close() error {
	e.stopVersionFlushes()
	e.dropSnapshot()
	return e.db.Close()
}

// Flush forces the memtable to disk (used by tests and clean shutdown).
func (e *Engine) Flush() error { return e.db.Flush() }

// Get returns a copy of the value of key in the latest state.
func (e *Engine) Get(key []byte) ([]byte, bool, error) { return get(e.db, key) }

// Iterator walks a key range of the engine in order. The layers above read through it and hold no
// engine-specific type. It is a struct, not an interface, on purpose: every row of every scan goes
// through it, and these one-line methods inline to pebble's own, so the indirection costs nothing
// (an interface would cost a dynamic call per method per row and block inlining). A second engine
// (the B-tree one DESIGN.md plans) adds its cursor beside p and a branch in each method.
//
// Positioning methods report whether the iterator is now on an entry; Key and Value stay valid
// until the next call that moves it (duty 3); Error is the first error met, checked once Valid
// turns false. The zero Iterator is not usable: NewIter returns one only with a nil error.
type Iterator struct {
	p *pebble.Iterator
	e *Engine // counts its steps on Close (versions.go)
}

func (i *Iterator) First() bool { return i.p.First() }
func (i *Iterator) SeekGE(k []byte) bool {
	return i.p.SeekGE(k)
}
func (i *Iterator) Last() bool   { return i.p.Last() }
func (i *Iterator) Next() bool   { return i.p.Next() }
func (i *Iterator) Prev() bool   { return i.p.Prev() }
func (i *Iterator) Valid() bool  { return i.p.Valid() }
func (i *Iterator) Key() []byte  { return i.p.Key() }
func (i *Iterator) Error() error { return i.p.Error() }
func (i *Iterator) Close() error {
	if i.e != nil {
		i.e.noteSteps(i.p)
	}
	return i.p.Close()
}

// Value is the current value; ValueAndErr also reports a failure to read it (pebble may keep
// values out of line, in value blocks).
func (i *Iterator) Value() []byte                { return i.p.Value() }
func (i *Iterator) ValueAndErr() ([]byte, error) { return i.p.ValueAndErr() }

func (e *Engine) iterator(it *pebble.Iterator, err error) (Iterator, error) {
	if err != nil {
		return Iterator{}, fmt.Errorf("engine iterator: %w", err)
	}
	return Iterator{p: it, e: e}, nil
}

// NewIter iterates the latest state over [lower, upper).
func (e *Engine) NewIter(lower, upper []byte) (Iterator, error) {
	return e.iterator(e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper}))
}

// Snapshot is a consistent, read-only view of the store at one moment (duty 2), held until Close.
// It is an interface, unlike Iterator: its methods run once per point read or per scan, not per
// row, and txn's Engine seam (internal/txn/engine.go) must be able to name what NewSnapshot
// returns whatever engine is underneath.
type Snapshot interface {
	// Get returns a copy of key's value in the snapshot.
	Get(key []byte) ([]byte, bool, error)
	// NewIter iterates the snapshot over [lower, upper).
	NewIter(lower, upper []byte) (Iterator, error)
	// AppliedPosition returns the position of the last batch applied before the snapshot was
	// taken: the snapshot holds exactly the batches up to it.
	AppliedPosition() (uint64, error)
	// Close releases the snapshot.
	Close() error
}

// pebbleSnapshot is pebble's Snapshot.
type pebbleSnapshot struct {
	s *pebble.Snapshot
	e *Engine
}

func (s *pebbleSnapshot) Get(key []byte) ([]byte, bool, error) { return get(s.s, key) }

func (s *pebbleSnapshot) NewIter(lower, upper []byte) (Iterator, error) {
	return s.e.iterator(s.s.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper}))
}

func (s *pebbleSnapshot) Close() error { return s.s.Close() }

type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func get(r getter, key []byte) ([]byte, bool, error) {
	v, c, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("engine get: %w", err)
	}
	out := make([]byte, len(v))
	copy(out, v)
	_ = c.Close()
	return out, true, nil
}

// Batch is a set of writes applied atomically.
type Batch struct{ b *pebble.Batch }

// NewBatch starts an empty batch.
func (e *Engine) NewBatch() *Batch { return &Batch{b: e.db.NewBatch()} }

func (b *Batch) Set(k, v []byte) error           { return b.b.Set(k, v, nil) }
func (b *Batch) Delete(k []byte) error           { return b.b.Delete(k, nil) }
func (b *Batch) DeleteRange(lo, hi []byte) error { return b.b.DeleteRange(lo, hi, nil) }
func (b *Batch) Len() int                        { return b.b.Len() }
func (b *Batch) Close() error                    { return b.b.Close() }

// Apply commits b together with its commit position. sync makes it durable before it is visible.
func (e *Engine) Apply(b *Batch, pos uint64, sync bool) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], pos)
	if err := b.b.Set(appliedKey, buf[:], nil); err != nil {
		return err
	}
	wo := pebble.NoSync
	if sync {
		wo = pebble.Sync
	}
	// started and gen bracket the change (sharedsnap.go); gen moves also when Commit fails, as
	// the state may have changed.
	e.started.Add(1)
	err := b.b.Commit(wo)
	e.gen.Add(1)
	e.steps.unflushed.Add(int64(b.b.Len()))
	if err != nil {
		return fmt.Errorf("engine apply at %d: %w", pos, err)
	}
	return nil
}

// AppliedPosition returns the position of the last applied batch (0 if none).
func (e *Engine) AppliedPosition() (uint64, error) { return appliedPosition(e.db) }

func (s *pebbleSnapshot) AppliedPosition() (uint64, error) { return appliedPosition(s.s) }

// AppliedKey is the key under which the applied position is kept (for building an engine's whole
// contents elsewhere, e.g. a staged snapshot in tests).
func AppliedKey() []byte { return append([]byte(nil), appliedKey...) }

func appliedPosition(r getter) (uint64, error) {
	v, ok, err := get(r, appliedKey)
	if err != nil || !ok {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("engine: applied position has %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Metrics exposes pebble's metrics for /metrics and SHOW STATUS.
func (e *Engine) Metrics() *pebble.Metrics { return e.db.Metrics() }

type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	slog.Error(fmt.Sprintf(format, args...), "component", "pebble")
}
func (quietLogger) Fatalf(format string, args ...any) {
	slog.Error(fmt.Sprintf(format, args...), "component", "pebble")
	panic(fmt.Sprintf(format, args...))
}

// Diff compares two engines over [lo, hi) and describes the first difference ("" if equal).
func Diff(a, b *Engine, lo, hi []byte) (string, error) {
	ia, err := a.NewIter(lo, hi)
	if err != nil {
		return "", err
	}
	defer ia.Close()
	ib, err := b.NewIter(lo, hi)
	if err != nil {
		return "", err
	}
	defer ib.Close()
	va, vb := ia.First(), ib.First()
	for va || vb {
		switch {
		case !va:
			return fmt.Sprintf("only in second: %x", ib.Key()), nil
		case !vb:
			return fmt.Sprintf("only in first: %x", ia.Key()), nil
		}
		if c := bytes.Compare(ia.Key(), ib.Key()); c != 0 {
			if c < 0 {
				return fmt.Sprintf("only in first: %x", ia.Key()), nil
			}
			return fmt.Sprintf("only in second: %x", ib.Key()), nil
		}
		if !bytes.Equal(ia.Value(), ib.Value()) {
			return fmt.Sprintf("value of %x differs", ia.Key()), nil
		}
		va, vb = ia.Next(), ib.Next()
	}
	return "", nil
}
