package txn

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
)

// Local is one session's private key space: the rows of its temporary tables (internal/sql's
// temptable.go). A transaction given a Local (SetLocal) reads the keys in [lo, hi) from the Local's
// own in-memory engine instead of the shared one, and its commit applies the writes in that span
// there, never to the log: they are not replicated, not in backups, not recovered after a crash.
// The rest of the transaction is unchanged (same write set, undo list, savepoints and row locks),
// so ROLLBACK and statement rollback undo temporary rows as they undo any row, as with InnoDB's
// temporary tables.
//
// Only its session uses a Local, one transaction at a time, so its committed state changes only
// through that session's own commits: reads need no snapshot of it (the latest state is every
// read view's state) and no pending versions. Memory: what the store holds is reserved through
// Reserve before a commit adds to it (the caller's quota); Close gives it all back.
type Local struct {
	eng    *engine.Engine
	lo, hi []byte
	app    *Applier
	// Reserve asks for n more bytes (refusing returns an error, which fails the commit before
	// anything is written anywhere); Release returns n. Either may be nil.
	Reserve func(n int64) error
	Release func(n int64)
	held    int64 // bytes reserved through Reserve and not yet released
	closed  bool
}

// NewLocal opens an empty in-memory store for the keys in [lo, hi). ops are the logical operations
// a DDL on the span may log (an index build), run against this store instead of at log apply.
func NewLocal(lo, hi []byte, ops map[string]LogicalFunc) (*Local, error) {
	eng, err := engine.Open("", engine.Options{FS: vfs.NewMem(), CacheBytes: 1 << 20, DisableWAL: true, MemTableBytes: 8 << 20})
	if err != nil {
		return nil, fmt.Errorf("open temporary store: %w", err)
	}
	return &Local{eng: eng, lo: bytes.Clone(lo), hi: bytes.Clone(hi), app: NewApplier(ops)}, nil
}

// Reader is the store's committed state (the auto-increment counters read it for their maximum).
func (l *Local) Reader() Reader { return l.eng }

// Owns reports whether key belongs to the store's span.
func (l *Local) Owns(key []byte) bool {
	return bytes.Compare(key, l.lo) >= 0 && bytes.Compare(key, l.hi) < 0
}

// Held is the number of bytes the store has reserved (what it holds, as of its last commit).
func (l *Local) Held() int64 { return l.held }

// Close drops every row and gives the memory back. The Local must not be used afterwards.
func (l *Local) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	if l.Release != nil && l.held > 0 {
		l.Release(l.held)
	}
	l.held = 0
	return l.eng.Close()
}

// DeleteRange removes [lo, hi) from the store at once, outside any transaction: dropping a
// temporary table, which MySQL does not undo on ROLLBACK either.
func (l *Local) DeleteRange(lo, hi []byte) error {
	b := l.eng.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(lo, hi); err != nil {
		return err
	}
	if err := l.eng.Apply(b, 0, false); err != nil {
		return err
	}
	l.resync()
	return nil
}

// usage is what the store holds now: its memtables and its (in-memory) files.
func (l *Local) usage() int64 {
	m := l.eng.Metrics()
	return int64(m.DiskSpaceUsage() + m.MemTable.Size + m.MemTable.ZombieSize)
}

// resync moves the reservation to what the store holds after a change: down freely, up as far as
// Reserve allows (the commit that grew it already reserved its record's size).
func (l *Local) resync() {
	u := l.usage()
	switch {
	case u < l.held && l.Release != nil:
		l.Release(l.held - u)
		l.held = u
	case u > l.held && l.Reserve != nil:
		if l.Reserve(u-l.held) == nil {
			l.held = u
		}
	}
}

// apply writes a record of the span (or of a temporary table's DDL) into the store.
func (l *Local) apply(rec []byte) error {
	b := l.eng.NewBatch()
	defer b.Close()
	if err := l.app.ApplyRecord(rec, l.eng, b); err != nil {
		return err
	}
	if err := l.eng.Apply(b, 0, false); err != nil {
		return err
	}
	l.resync()
	return nil
}

// admit reserves room for a record about to be applied.
func (l *Local) admit(rec []byte) error {
	if l.Reserve == nil {
		return nil
	}
	if err := l.Reserve(int64(len(rec))); err != nil {
		return err
	}
	l.held += int64(len(rec))
	return nil
}

// SetLocal routes the transaction's keys in l's span to l (nil: none). A session sets it on every
// transaction it begins once it has a temporary table, and on the open one when it creates its first.
func (t *Txn) SetLocal(l *Local) { t.loc = l }

// isLocal reports whether key is read from and committed to the transaction's Local.
func (t *Txn) isLocal(key []byte) bool { return t.loc != nil && t.loc.Owns(key) }

// splitLocal moves the write set's writes in the Local's span (points and range deletions; with
// withLogical, its logical operations too) into a record of their own, which it returns (nil when
// there are none). What stays is what the log gets.
func (t *Txn) splitLocal(withLogical bool) []byte {
	var lw WriteSet
	var moved []wsEntry
	t.ws.pts.ascendRange(string(t.loc.lo), string(t.loc.hi), func(e wsEntry) bool {
		moved = append(moved, e)
		return true
	})
	for _, e := range moved {
		t.ws.pts.remove(e.key)
		lw.pts.put(e)
	}
	keep := t.ws.ranges[:0:0]
	for _, r := range t.ws.ranges {
		if t.loc.Owns(r.lo) && bytes.Compare(r.hi, t.loc.hi) <= 0 {
			lw.ranges = append(lw.ranges, r)
		} else {
			keep = append(keep, r)
		}
	}
	t.ws.ranges = keep
	if withLogical {
		lw.logical, t.ws.logical = t.ws.logical, nil
	}
	if lw.pts.Len() == 0 && len(lw.ranges) == 0 && len(lw.logical) == 0 {
		return nil
	}
	return lw.Encode()
}

// commitLocal is Commit for a transaction with a Local: the writes in its span go to the Local
// once the rest (if anything) has committed, so a failed commit leaves both untouched.
func (t *Txn) commitLocal(commit func() (uint64, error)) (uint64, error) {
	rec := t.splitLocal(false)
	if rec == nil {
		return commit()
	}
	if t.loc.closed {
		// The session's temporary tables are gone (dropped with it): so are the writes to them.
		return commit()
	}
	if err := t.loc.admit(rec); err != nil {
		t.Rollback()
		return 0, err
	}
	pos, err := commit()
	if err != nil {
		return pos, err
	}
	if err := t.loc.apply(rec); err != nil {
		return pos, fmt.Errorf("txn %d: apply temporary rows: %w", t.ID, err)
	}
	return pos, nil
}

// ApplyLocal ends a transaction that changed only its Local's span and catalog keys: the DDL of a
// temporary table. The writes in the span and the logical operations (an index build, run here
// against the Local) are applied to the Local; everything else (the table definition's catalog
// keys, which live in the session's memory instead) is discarded. Nothing reaches the log.
func (t *Txn) ApplyLocal() error {
	if t.loc == nil {
		t.Rollback()
		return errors.New("txn: ApplyLocal without a Local")
	}
	rec := t.splitLocal(true)
	t.Rollback()
	if rec == nil {
		return nil
	}
	if err := t.loc.admit(rec); err != nil {
		return err
	}
	return t.loc.apply(rec)
}
