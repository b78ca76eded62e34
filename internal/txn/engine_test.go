package txn

import (
	"context"
	"testing"

	"github.com/kiln-db/kiln/internal/engine"
	"github.com/kiln-db/kiln/internal/repl/repltest"
)

// recordingEngine is another Engine under txn: pebble wrapped so that every read says where it
// went (the latest state or a snapshot) and every snapshot is counted open and closed.
type recordingEngine struct {
	e              *engine.Engine
	latestGets     int
	latestIters    int
	opened, closed int
}

func (r *recordingEngine) Get(key []byte) ([]byte, bool, error) {
	r.latestGets++
	return r.e.Get(key)
}

func (r *recordingEngine) NewIter(lo, hi []byte) (engine.Iterator, error) {
	r.latestIters++
	return r.e.NewIter(lo, hi)
}

func (r *recordingEngine) Generation() uint64 { return r.e.Generation() }

func (r *recordingEngine) NewSnapshot() engine.Snapshot {
	r.opened++
	return &recordingSnapshot{Snapshot: r.e.NewSnapshot(), r: r}
}

type recordingSnapshot struct {
	engine.Snapshot
	r     *recordingEngine
	gets  int
	iters int
}

func (s *recordingSnapshot) Get(key []byte) ([]byte, bool, error) {
	s.gets++
	return s.Snapshot.Get(key)
}

func (s *recordingSnapshot) NewIter(lo, hi []byte) (engine.Iterator, error) {
	s.iters++
	return s.Snapshot.NewIter(lo, hi)
}

func (s *recordingSnapshot) Close() error {
	s.r.closed++
	return s.Snapshot.Close()
}

// TestEngineSeam runs transactions over an Engine that is not *engine.Engine: plain reads go to
// the transaction's snapshot (one per transaction under REPEATABLE READ, one per statement under
// READ COMMITTED), current reads to the latest state, and every snapshot taken is closed by the
// end of its transaction.
func TestEngineSeam(t *testing.T) {
	ctx := context.Background()
	s := repltest.Start(t, nil, NewApplier(nil), nil)
	r := &recordingEngine{e: s.Engine}
	m := NewManager(r, NewLockManager(DefaultLockConfig()), s.Node)
	w := m.Begin(RepeatableRead, false)
	w.Set([]byte("k"), []byte("1"))
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r.opened != 0 || r.latestGets != 0 {
		t.Fatalf("a blind write read the engine: %d snapshots, %d latest reads", r.opened, r.latestGets)
	}

	rr := m.Begin(RepeatableRead, false)
	for range 2 {
		if v, ok, err := rr.Get([]byte("k")); err != nil || !ok || string(v) != "1" {
			t.Fatalf("Get = %q %v %v", v, ok, err)
		}
	}
	snap, ok := rr.snap.(*recordingSnapshot)
	if !ok || r.opened != 1 || snap.gets != 2 || r.latestGets != 0 {
		t.Fatalf("REPEATABLE READ: %d snapshots, %d snapshot reads, %d latest reads; want one snapshot read twice", r.opened, snap.gets, r.latestGets)
	}
	if _, _, err := rr.GetLatest([]byte("k")); err != nil || r.latestGets != 1 || snap.gets != 2 {
		t.Fatalf("GetLatest went to the snapshot (%d latest reads, %v)", r.latestGets, err)
	}
	for _, latest := range []bool{false, true} {
		it, err := rr.NewIter([]byte("a"), []byte("z"), false, latest)
		if err != nil {
			t.Fatal(err)
		}
		if !it.Valid() || string(it.Key()) != "k" {
			t.Fatalf("iterator (latest=%v) not on k", latest)
		}
		it.Close()
	}
	if snap.iters != 1 || r.latestIters != 1 {
		t.Fatalf("iterators: %d on the snapshot, %d on the latest state; want one each", snap.iters, r.latestIters)
	}
	if _, err := rr.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r.closed != 1 {
		t.Fatalf("commit left %d of %d snapshots open", r.opened-r.closed, r.opened)
	}

	rc := m.Begin(ReadCommitted, false)
	for range 3 {
		rc.NewStatement()
		if _, _, err := rc.Get([]byte("k")); err != nil {
			t.Fatal(err)
		}
	}
	if r.opened != 4 || r.closed != 3 {
		t.Fatalf("READ COMMITTED over 3 statements: %d snapshots opened, %d closed; want 4 and 3", r.opened, r.closed)
	}
	rc.Rollback()
	if r.closed != r.opened {
		t.Fatalf("rollback left %d of %d snapshots open", r.opened-r.closed, r.opened)
	}
}
