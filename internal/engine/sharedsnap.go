package engine

import (
	"sync"
	"sync/atomic"
)

// Shared snapshots. Every transaction that reads takes a snapshot, and an autocommit SELECT is a
// transaction of its own: at 16 threads of point selects that was a pebble NewSnapshot and a
// Snapshot.Close per query, each taking pebble's DB mutex (which flushes, compactions and the
// commit pipeline take too; Close may also schedule a compaction while holding it). A pebble
// snapshot is a sequence number registered with the DB and safe for concurrent readers, so
// NewSnapshot hands out one refcounted snapshot for as long as the engine's state has not moved,
// and takes a new one only when it has.
//
// Why a shared snapshot is exactly what a new one would be (duty 2, and DESIGN.md's promises: no
// commit visible before it is durable, read-your-writes once a commit is acknowledged):
//   - Every change to the latest state (Apply, an ingest) is bracketed by two counters: started
//     is incremented before the change becomes visible, gen (Generation) after. So started == gen means no
//     change is in flight, and the visible state holds exactly the first gen changes.
//   - A cached snapshot carries gen read just before it was taken: it holds at least those gen
//     changes (they were visible then).
//   - NewSnapshot reuses it only while started still equals that gen: then no change beyond
//     those gen has begun, so nothing visible is missing from the snapshot, and it holds exactly
//     the state a new snapshot would see at that moment. A commit is acknowledged only after
//     its engine.Apply returned (and counted it), so it is never missing either.
//   - Otherwise it takes a new pebble snapshot, as before.
//
// The cost: the cached snapshot stays open until NewSnapshot replaces it or the engine closes, so
// after writes stop it keeps at most one older version of each key they changed from being
// compacted away (a private snapshot of a long transaction pins the same).
type snapCache struct {
	cur atomic.Pointer[sharedSnapshot]
	mu  sync.Mutex // serialises taking a new snapshot (the path where the state moved)
}

// sharedSnapshot is one pebble snapshot shared by the readers that took it at one state. refs
// counts their references plus one for the cache while it is current; the last Close closes the
// pebble snapshot. Each NewSnapshot result must be closed exactly once, as before.
type sharedSnapshot struct {
	pebbleSnapshot
	gen  uint64
	refs atomic.Int64
}

// tryRef takes a reference unless the snapshot was already released (refs reached 0: closed or
// being closed).
func (s *sharedSnapshot) tryRef() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// Close releases one reference; the last one closes the pebble snapshot.
func (s *sharedSnapshot) Close() error {
	if s.refs.Add(-1) == 0 {
		return s.s.Close()
	}
	return nil
}

// NewSnapshot returns a snapshot of the latest applied state (duty 2), shared with other readers
// of the same state (see snapCache).
func (e *Engine) NewSnapshot() Snapshot {
	if s := e.snaps.cur.Load(); s != nil && s.gen == e.started.Load() && s.tryRef() {
		return s
	}
	e.snaps.mu.Lock()
	defer e.snaps.mu.Unlock()
	old := e.snaps.cur.Load()
	if old != nil && old.gen == e.started.Load() && old.tryRef() {
		return old // another reader took it meanwhile
	}
	g := e.gen.Load() // before the snapshot: it holds at least these changes
	s := &sharedSnapshot{pebbleSnapshot: pebbleSnapshot{s: e.db.NewSnapshot(), e: e}, gen: g}
	s.refs.Store(2) // the cache's and the caller's
	e.snaps.cur.Store(s)
	if old != nil {
		_ = old.Close() // the cache's reference; its readers keep it open until they finish
	}
	return s
}

// dropSnapshot releases the cache's reference (before the engine closes).
func (e *Engine) dropSnapshot() {
	e.snaps.mu.Lock()
	old := e.snaps.cur.Swap(nil)
	e.snaps.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
}

var _ Snapshot = (*sharedSnapshot)(nil)
