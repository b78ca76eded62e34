package txn

import (
	"context"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/repl/repltest"
)

// A LatestReader answers as GetLatest: own writes first, then the latest committed state, also
// for commits made visible after its iterator was opened (it reopens when the engine's generation
// moved), and for keys outside its span.
func TestLatestReaderMatchesGetLatest(t *testing.T) {
	m, _ := newManager(t)
	commit(t, m, "k1", "a", "k3", "c", "z9", "out")
	tx := m.Begin(RepeatableRead, false)
	defer tx.Rollback()
	r := tx.NewLatestReader([]byte("k"), []byte("l"))
	defer r.Close()
	check := func(step, key, want string) {
		t.Helper()
		v, ok, err := r.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		gv, gok, err := tx.GetLatest([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		got := "<absent>"
		if ok {
			got = string(v)
		}
		gl := "<absent>"
		if gok {
			gl = string(gv)
		}
		if got != want || gl != want {
			t.Fatalf("%s: Get(%s) = %s, GetLatest = %s, want %s", step, key, got, gl, want)
		}
	}
	check("committed", "k1", "a")
	check("absent", "k2", "<absent>")
	check("outside the span", "z9", "out")
	// Committed by another transaction after the reader's iterator was opened.
	commit(t, m, "k2", "b", "k1", "")
	check("committed later", "k2", "b")
	check("deleted later", "k1", "<absent>")
	// Own writes win over the engine.
	tx.Set([]byte("k3"), []byte("mine"))
	tx.Delete([]byte("k2"))
	check("own write", "k3", "mine")
	check("own delete", "k2", "<absent>")
	tx.DeleteRange([]byte("k0"), []byte("k4"))
	check("own range delete", "k3", "<absent>")
}

// Iterator.Fresh: a latest iterator's entry stands for GetLatest of its key only while nothing
// became visible since it was opened, the transaction wrote nothing since, and the key has no
// pending version; a read-view iterator never does.
func TestIteratorFresh(t *testing.T) {
	m, _ := newManager(t)
	commit(t, m, "k1", "a", "k2", "b")
	tx := m.Begin(RepeatableRead, false)
	defer tx.Rollback()
	open := func(latest bool) *Iterator {
		t.Helper()
		it, err := tx.NewIter([]byte("k"), []byte("l"), false, latest)
		if err != nil {
			t.Fatal(err)
		}
		if !it.Valid() || string(it.Key()) != "k1" {
			t.Fatalf("iterator on %q, want k1", it.Key())
		}
		return it
	}
	it := open(true)
	if !it.Fresh() {
		t.Fatal("a new latest iterator is not fresh")
	}
	snap := open(false)
	if snap.Fresh() {
		t.Fatal("a read-view iterator reports fresh")
	}
	_ = snap.Close()
	// Another transaction's commit became visible: the entry may be stale.
	commit(t, m, "k1", "new")
	if it.Fresh() {
		t.Fatal("fresh after another commit became visible")
	}
	if v, ok, _ := tx.GetLatest([]byte("k1")); !ok || string(v) != "new" || string(it.Value()) != "a" {
		t.Fatalf("GetLatest = %q, iterator %q: the test's premise (a stale entry) does not hold", v, it.Value())
	}
	_ = it.Close()
	// The transaction's own write after opening.
	it = open(true)
	tx.Set([]byte("k2"), []byte("mine"))
	if it.Fresh() {
		t.Fatal("fresh after an own write")
	}
	_ = it.Close()
	it = open(true)
	defer it.Close()
	it.Next()
	if !it.Fresh() || string(it.Value()) != "mine" {
		t.Fatalf("own write %q at open: fresh %v, want fresh", it.Value(), it.Fresh())
	}
	// Past the end.
	it.Next()
	if it.Valid() || it.Fresh() {
		t.Fatal("an exhausted iterator reports fresh")
	}
}

// A key with a pending version (an early-released commit placed after the iterator was opened) is
// not fresh: GetLatest reads the pending version and records the dependency.
func TestIteratorFreshPending(t *testing.T) {
	s := repltest.Start(t, nil, NewApplier(nil), nil)
	fp := &fakePlacer{ch: make(chan *fakePlaced, 16)}
	m := NewManager(s.Engine, NewLockManager(DefaultLockConfig()), fp)
	m.SetEarlyRelease(true)
	ctx := context.Background()
	t2 := m.Begin(RepeatableRead, false)
	defer t2.Rollback()
	t1 := m.Begin(RepeatableRead, false)
	if err := t1.Lock(ctx, []byte("k"), LockExclusive, time.Second); err != nil {
		t.Fatal(err)
	}
	t1.Set([]byte("k"), []byte("1"))
	t1.Set([]byte("j"), []byte("x"))
	c1 := commitAsync(t1)
	p1 := <-fp.ch
	defer func() { p1.end(nil); _ = returns(t, c1, "T1's commit") }()
	it, err := t2.NewIter([]byte("a"), []byte("z"), false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if !it.Valid() || string(it.Key()) != "j" {
		t.Fatalf("iterator on %q, want the pending j", it.Key())
	}
	if it.Fresh() {
		t.Fatal("an entry with a pending version reports fresh")
	}
}
