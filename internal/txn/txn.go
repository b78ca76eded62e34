// Package txn owns transactions: snapshot reads overlaid with the transaction's own writes, current
// (latest committed) reads for locking statements, row locks held until commit or rollback, the write
// set, savepoints and statement rollback, and handing the write set to the commit path.
//
// The contract with callers, as numbered duties:
//  1. Take a row lock (Lock) before writing a row or reading it for a write, and read what was locked with
//     GetLatest or a latest iterator: that is InnoDB's "current read" and is what makes `n = n + 1` safe.
//  2. Plain reads (Get, snapshot iterators) see the snapshot taken at the transaction's first read
//     (REPEATABLE READ) or at each statement's start (READ COMMITTED, via NewStatement), plus own writes.
//  3. Commit hands the write set to the Committer, which returns only once the writes are durable and
//     applied, so a commit is never acknowledged before it is durable. Its locks are released then, or,
//     with early lock release (pending.go, on by default in the server), as soon as its record has its
//     place in the log: the lock holder's successor then reads the holder's pending row through a
//     current read, is placed after it in the log and acknowledged only after it. Plain reads never
//     see a version that is not durable and applied.
//  4. Locks taken by a failed statement or undone by ROLLBACK TO SAVEPOINT stay held to the end of the
//     transaction, as in InnoDB.
//
// There are no gap locks: a range read FOR UPDATE does not stop another transaction inserting a new row
// into the range (phantoms are possible under locking reads), which InnoDB's next-key locks would prevent.
package txn

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kiln-db/kiln/internal/engine"
)

// Committer makes a record durable and applied, in one total order, and returns its position in
// that order (internal/repl's Node; tests may use a fake). Epoch names the leadership a transaction
// begins under: a commit is taken only under the epoch its transaction began in, because its reads
// (current reads under locks) are only current while that leadership lasts. 0 means this node takes
// no commits now.
type Committer interface {
	Commit(ctx context.Context, rec []byte, async bool, epoch uint64) (pos uint64, err error)
	Epoch() uint64
}

// RecordFramer is a Committer (and Placer) that frames each record with a header of its own: it
// receives every record with RecordHeadroom bytes before it, which it may overwrite, so that the
// record is not copied into a framed buffer (a bulk INSERT's record is hundreds of KiB).
type RecordFramer interface {
	RecordHeadroom() int
}

// Manager creates transactions over one engine.
type Manager struct {
	eng       Engine
	Locks     *LockManager
	committer Committer
	placer    Placer // the committer, when it can place records before they are durable
	headroom  int    // RecordFramer's headroom: the bytes before each record given to the committer
	early     atomic.Bool
	pending   *pendingWrites
	placeMu   sync.Mutex // orders Place and pending.add of early-released commits
	// pendingReads counts current reads served from pending versions (PendingReads).
	pendingReads atomic.Uint64
	nextID       atomic.Uint64
	// committing counts the commits handed to the committer and not yet answered (Committing).
	committing atomic.Int64
}

// Committing is the number of commits handed to the committer whose outcome their sessions still
// wait for.
func (m *Manager) Committing() int64 { return m.committing.Load() }

// NewManager returns a transaction manager. Early lock release (pending.go) starts off.
func NewManager(eng Engine, locks *LockManager, c Committer) *Manager {
	m := &Manager{eng: eng, Locks: locks, committer: c, pending: newPendingWrites()}
	m.placer, _ = c.(Placer)
	if f, ok := c.(RecordFramer); ok {
		m.headroom = f.RecordHeadroom()
	}
	return m
}

// Engine returns the underlying engine (for DDL scans and catalog loads).
func (m *Manager) Engine() Engine { return m.eng }

// Isolation levels supported.
type Isolation uint8

const (
	RepeatableRead Isolation = iota
	ReadCommitted
)

// Txn is one transaction. It is used by one goroutine at a time.
type Txn struct {
	ID       uint64
	m        *Manager
	iso      Isolation
	snap     engine.Snapshot // the read view, taken at the first read; nil before
	ws       WriteSet
	undo     []undoRec
	ReadOnly bool
	epoch    uint64 // the committer's epoch at Begin
	locked   bool   // holds at least one lock
	done     bool
	// beforeFor selects the written keys whose before-images the record carries (nil: none).
	beforeFor func(key []byte) bool
	// deps are the placed records whose pending versions current reads returned (pending.go).
	deps []Placed
	// loc is the session's private store (temporary tables, local.go): nil for most transactions.
	loc *Local
	// writes counts changes to the write set (writes, range deletions, rollbacks to a savepoint):
	// a latest iterator compares it with its own count to know its merged own writes are current.
	writes uint64
}

type undoRec struct {
	key     string
	prev    []byte
	prevDel bool
	existed bool // key was in the write set before this write
	rangeN  int  // for range deletions: length of ranges before
	isRange bool
}

// Begin starts a transaction.
func (m *Manager) Begin(iso Isolation, readOnly bool) *Txn {
	return &Txn{ID: m.nextID.Add(1), m: m, iso: iso, ReadOnly: readOnly, epoch: m.committer.Epoch()}
}

// TakeSnapshot fixes the read view now (START TRANSACTION WITH CONSISTENT SNAPSHOT).
func (t *Txn) TakeSnapshot() { t.snapshot() }

func (t *Txn) snapshot() engine.Snapshot {
	if t.snap == nil {
		t.snap = t.m.eng.NewSnapshot()
	}
	return t.snap
}

// NewStatement is called at the start of each statement: READ COMMITTED takes a fresh read view.
func (t *Txn) NewStatement() {
	if t.iso == ReadCommitted && t.snap != nil {
		_ = t.snap.Close()
		t.snap = nil
	}
}

// Get reads key from the read view overlaid with own writes.
func (t *Txn) Get(key []byte) ([]byte, bool, error) {
	if v, del, ok := t.ws.get(key); ok {
		if del {
			return nil, false, nil
		}
		return v, true, nil
	}
	if t.ws.rangeDeleted(key) {
		return nil, false, nil
	}
	if t.loc != nil && t.loc.Owns(key) {
		return t.loc.eng.Get(key)
	}
	return t.snapshot().Get(key)
}

// GetLatest reads key's latest committed version overlaid with own writes (a current read). Call it
// after Lock on the key.
func (t *Txn) GetLatest(key []byte) ([]byte, bool, error) {
	if v, del, ok := t.ws.get(key); ok {
		if del {
			return nil, false, nil
		}
		return v, true, nil
	}
	if t.ws.rangeDeleted(key) {
		return nil, false, nil
	}
	if t.loc != nil && t.loc.Owns(key) {
		return t.loc.eng.Get(key)
	}
	if e, ok := t.m.pending.get(key); ok {
		t.dependOn(e.tk)
		if e.del {
			return nil, false, nil
		}
		return e.val, true, nil
	}
	return t.m.eng.Get(key)
}

// Lock takes a row lock on key, waiting at most wait.
func (t *Txn) Lock(ctx context.Context, key []byte, mode LockMode, wait time.Duration) error {
	t.locked = true
	return t.m.Locks.Lock(ctx, t.ID, key, mode, wait)
}

// Set writes key=val in the write set.
func (t *Txn) Set(key, val []byte) { t.write(string(key), val, false) }

// Delete deletes key in the write set.
func (t *Txn) Delete(key []byte) { t.write(string(key), nil, true) }

// SetOwned is Set for a key the caller hands over: the write set keeps key itself instead of a
// copy, so the caller must never modify it afterwards (a key built for this write alone; a bulk
// INSERT builds two or more per row, and copying each again cost 1-2% of a LinkBench load).
func (t *Txn) SetOwned(key, val []byte) {
	t.write(unsafe.String(unsafe.SliceData(key), len(key)), val, false)
}

// DeleteOwned is Delete for a key the caller hands over (SetOwned).
func (t *Txn) DeleteOwned(key []byte) {
	t.write(unsafe.String(unsafe.SliceData(key), len(key)), nil, true)
}

// Grow makes room for n more writes without growing the undo log write by write (a multi-row
// INSERT knows how many it will make).
func (t *Txn) Grow(n int) {
	t.undo = slices.Grow(t.undo, n)
	t.ws.pts.grow(n)
}

// write puts the entry and records what it replaced for RollbackTo, with one search of the set (a
// bulk INSERT writes two or more keys per row).
func (t *Txn) write(k string, val []byte, del bool) {
	t.writes++
	prev, ok := t.ws.set(k, val, del)
	t.undo = append(t.undo, undoRec{key: k, prev: prev.val, prevDel: prev.del, existed: ok})
}

// DeleteRange deletes [lo, hi) (DROP/TRUNCATE TABLE, DROP INDEX): constant size whatever the range holds.
func (t *Txn) DeleteRange(lo, hi []byte) {
	t.writes++
	t.undo = append(t.undo, undoRec{isRange: true, rangeN: len(t.ws.ranges)})
	t.ws.ranges = append(t.ws.ranges, keyRange{lo: append([]byte(nil), lo...), hi: append([]byte(nil), hi...)})
	// Writes already in the set inside the range are superseded by the deletion only if they came
	// before it; later writes win. Record order keeps that: see WriteSet.
	t.ws.seq++
	t.ws.ranges[len(t.ws.ranges)-1].seq = t.ws.seq
}

// Savepoint returns a marker for RollbackTo.
func (t *Txn) Savepoint() int { return len(t.undo) }

// RollbackTo undoes every write made after sp. Locks stay held.
func (t *Txn) RollbackTo(sp int) {
	t.writes++
	for i := len(t.undo) - 1; i >= sp; i-- {
		u := t.undo[i]
		switch {
		case u.isRange:
			t.ws.ranges = t.ws.ranges[:u.rangeN]
		case u.existed:
			t.ws.set(u.key, u.prev, u.prevDel)
		default:
			t.ws.remove(u.key)
		}
	}
	t.undo = t.undo[:sp]
}

// SetBeforeImages makes the commit record carry, for every written key for which want returns true,
// its committed value before this transaction (or that it did not exist), for change data capture.
// The images are read at commit: the caller must hold the row locks of those keys (every SQL write
// does), so no other commit can change them before this one is applied.
func (t *Txn) SetBeforeImages(want func(key []byte) bool) { t.beforeFor = want }

// SetAsync chooses the commit's durability: async commits are acknowledged (and visible) once applied,
// before the log is fsynced; a crash may lose the last sync interval of them, never a part of one.
func (t *Txn) SetAsync(async bool) { t.ws.Async = async }

// HasWrites reports whether the transaction wrote anything.
func (t *Txn) HasWrites() bool {
	return t.ws.pts.Len() > 0 || len(t.ws.ranges) > 0 || len(t.ws.logical) > 0
}

// Commit makes the writes durable and visible, then releases the locks. It returns the commit position
// (0 for a transaction without writes). Writes to a Local's span (SetLocal) go to the Local only.
func (t *Txn) Commit(ctx context.Context) (uint64, error) {
	if t.loc != nil && !t.done {
		return t.commitLocal(func() (uint64, error) { return t.commitShared(ctx) })
	}
	return t.commitShared(ctx)
}

// commitShared is Commit of what goes to the log.
func (t *Txn) commitShared(ctx context.Context) (uint64, error) {
	if t.done {
		return 0, fmt.Errorf("txn %d: commit after end", t.ID)
	}
	if !t.HasWrites() {
		t.releaseLocks()
		err := t.waitDeps(ctx)
		t.finish()
		return 0, err
	}
	if t.beforeFor != nil {
		if err := t.captureBefore(); err != nil {
			t.finish()
			return 0, err
		}
	}
	t.m.committing.Add(1)
	defer t.m.committing.Add(-1)
	if t.m.placer == nil {
		pos, err := t.m.committer.Commit(ctx, t.ws.encode(t.m.headroom), t.ws.Async, t.epoch)
		t.finish()
		return pos, err
	}
	if !t.m.early.Load() || !t.ws.earlyReleasable() {
		tk, err := t.m.placer.Place(ctx, t.ws.encode(t.m.headroom), t.ws.Async, t.epoch, t.deps)
		if err != nil {
			t.finish()
			return 0, err
		}
		pos, err := tk.Wait(ctx)
		t.finish()
		return pos, err
	}
	// Early release: once the record's place is fixed its writes become the rows' pending versions
	// and the locks go; the client is still acknowledged only once it is durable (pending.go).
	// placeMu makes the pending set's order the log's for keys written without a row lock too (the
	// auto-increment high-water mark).
	rec := t.ws.encode(t.m.headroom)
	t.m.placeMu.Lock()
	tk, err := t.m.placer.Place(ctx, rec, t.ws.Async, t.epoch, t.deps)
	if err == nil {
		t.m.pending.add(&t.ws, tk)
	}
	t.m.placeMu.Unlock()
	if err != nil {
		t.finish()
		return 0, err
	}
	t.releaseLocks()
	pos, err := tk.Wait(ctx)
	t.m.pending.remove(&t.ws, tk)
	t.finish()
	return pos, err
}

func (t *Txn) captureBefore() error {
	t.ws.before = t.ws.before[:0]
	var err error
	t.ws.pts.ascend(func(e wsEntry) bool {
		k := []byte(e.key)
		if !t.beforeFor(k) {
			return true
		}
		var v []byte
		var ok bool
		if pe, pending := t.m.pending.get(k); pending {
			// The row's latest version is a pending one (early lock release): it is what this
			// transaction changed, and its record depends on it anyway.
			t.dependOn(pe.tk)
			v, ok = pe.val, !pe.del
		} else if v, ok, err = t.m.eng.Get(k); err != nil {
			err = fmt.Errorf("txn %d: read before-image: %w", t.ID, err)
			return false
		}
		t.ws.before = append(t.ws.before, beforeImage{key: e.key, val: v, exists: ok})
		return true
	})
	return err
}

// Rollback discards the writes and releases the locks.
func (t *Txn) Rollback() {
	if !t.done {
		t.finish()
	}
}

func (t *Txn) finish() {
	t.done = true
	if t.snap != nil {
		_ = t.snap.Close()
		t.snap = nil
	}
	t.releaseLocks()
	t.deps = nil
}

func (t *Txn) releaseLocks() {
	if t.locked {
		t.m.Locks.ReleaseAll(t.ID)
		t.locked = false
	}
}

// Done reports whether the transaction has ended.
func (t *Txn) Done() bool { return t.done }

// Iterator walks keys in a range in one direction over a merged view.
type Iterator struct {
	it      engine.Iterator
	ws      []wsEntry // own writes in range, in iteration order
	ranges  []keyRange
	wi      int
	reverse bool
	key     []byte
	val     []byte
	valid   bool
	err     error
	fromWS  bool
	// A latest iterator over the shared store (not a temporary table's) remembers the engine's
	// Generation read before it was opened and the transaction's write count (Fresh).
	t      *Txn
	gen    uint64
	writes uint64
}

// NewIter iterates [lo, hi) over the read view (latest=false) or the latest committed state
// (latest=true), overlaid with own writes, ascending or descending.
func (t *Txn) NewIter(lo, hi []byte, reverse, latest bool) (*Iterator, error) {
	var pit engine.Iterator
	var err error
	var gen uint64
	local := t.loc != nil && t.loc.Owns(lo)
	if local {
		// A temporary table's span (local.go): its latest state is every read view's.
		pit, err = t.loc.eng.NewIter(lo, hi)
	} else if latest {
		// Read before opening: a change made visible in between moves it again (Fresh).
		gen = t.m.eng.Generation()
		pit, err = t.m.eng.NewIter(lo, hi)
	} else {
		pit, err = t.snapshot().NewIter(lo, hi)
	}
	if err != nil {
		return nil, err
	}
	it := &Iterator{it: pit, reverse: reverse, ranges: t.ws.ranges}
	if latest && !local {
		it.t, it.gen, it.writes = t, gen, t.writes
	}
	if t.ws.pts.Len() > 0 {
		t.ws.pts.ascendRange(string(lo), string(hi), func(e wsEntry) bool {
			k := []byte(e.key)
			for _, r := range t.ws.ranges {
				if r.seq > e.seq && inRange(k, r) {
					e.del = true
				}
			}
			it.ws = append(it.ws, e)
			return true
		})
	}
	if latest && !local {
		// A current read sees the pending versions of early-released commits (pending.go) as the
		// latest committed state, under the transaction's own writes.
		if pend := t.m.pending.collect(lo, hi); len(pend) > 0 {
			it.ws = t.mergePending(it.ws, pend)
		}
	}
	if reverse {
		slices.Reverse(it.ws)
	}
	if reverse {
		pit.Last()
	} else {
		pit.First()
	}
	it.settle()
	return it, nil
}

// mergePending merges own writes (ascending, winning ties) with pending versions (ascending) and
// records the dependency on each pending version taken. A pending version under one of the
// transaction's own range deletions is hidden like the engine's rows there.
func (t *Txn) mergePending(own []wsEntry, pend []pendingEntry) []wsEntry {
	out := make([]wsEntry, 0, len(own)+len(pend))
	i := 0
	for _, p := range pend {
		for i < len(own) && own[i].key < p.key {
			out = append(out, own[i])
			i++
		}
		if i < len(own) && own[i].key == p.key {
			continue
		}
		if t.ws.rangeDeleted([]byte(p.key)) {
			continue
		}
		t.dependOn(p.tk)
		out = append(out, wsEntry{key: p.key, val: p.val, del: p.del})
	}
	return append(out, own[i:]...)
}

// settle positions on the next visible entry: the smaller (or larger, in reverse) of the engine's and
// the write set's current keys; the write set wins ties; deletions are skipped.
func (it *Iterator) settle() {
	for {
		pv := it.it.Valid()
		wv := it.wi < len(it.ws)
		if !pv && !wv {
			it.valid = false
			it.err = it.it.Error()
			return
		}
		var c int
		switch {
		case !pv:
			c = 1
		case !wv:
			c = -1
		default:
			c = bytes.Compare(it.it.Key(), []byte(it.ws[it.wi].key))
			if it.reverse {
				c = -c
			}
		}
		if c < 0 {
			// engine entry comes first
			k := it.it.Key()
			if it.coveredByRange(k) {
				it.advanceEngine()
				continue
			}
			it.key, it.fromWS = k, false
			v, err := it.it.ValueAndErr()
			if err != nil {
				it.valid, it.err = false, err
				return
			}
			it.val = v
			it.valid = true
			return
		}
		if c == 0 {
			it.advanceEngine()
		}
		e := it.ws[it.wi]
		if e.del {
			it.wi++
			continue
		}
		it.key, it.val, it.fromWS, it.valid = []byte(e.key), e.val, true, true
		return
	}
}

func (it *Iterator) coveredByRange(k []byte) bool {
	for _, r := range it.ranges {
		if inRange(k, r) {
			return true
		}
	}
	return false
}

func (it *Iterator) advanceEngine() {
	if it.reverse {
		it.it.Prev()
	} else {
		it.it.Next()
	}
}

// Valid reports whether the iterator is positioned on an entry.
func (it *Iterator) Valid() bool { return it.valid }

// Key is valid until the next Next.
func (it *Iterator) Key() []byte { return it.key }

// Value is valid until the next Next.
func (it *Iterator) Value() []byte { return it.val }

// Next moves to the next visible entry.
func (it *Iterator) Next() {
	if it.fromWS {
		it.wi++
	} else {
		it.advanceEngine()
	}
	it.settle()
}

// Err returns the first error met.
func (it *Iterator) Err() error { return it.err }

// Fresh reports whether the entry the iterator is on is what GetLatest of its key would read now,
// for a latest iterator (NewIter with latest) whose caller has just locked that key: a locking scan
// then uses the entry instead of reading the row again (a pebble Get per row, 40% of a bulk
// UPDATE's CPU). It is, while
//   - the engine's Generation is still the one read before the iterator was opened: no change
//     became visible since (the argument of LatestReader: a commit of this key still being applied
//     held its lock until it was visible, which the caller now holds, or released it early and
//     has a pending version);
//   - the key has no pending version (an early-released commit placed since the iterator merged
//     them; GetLatest also records the dependency on it, which this path must not skip);
//   - the transaction has not written since (the iterator merged its own writes at opening).
//
// Otherwise, or for a read-view or temporary-table iterator, it reports false and the caller reads
// with GetLatest.
func (it *Iterator) Fresh() bool {
	t := it.t
	if t == nil || !it.valid || t.writes != it.writes || t.m.eng.Generation() != it.gen {
		return false
	}
	_, pending := t.m.pending.get(it.key)
	return !pending
}

// Close releases the iterator.
func (it *Iterator) Close() error { return it.it.Close() }
