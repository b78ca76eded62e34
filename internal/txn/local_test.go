package txn

import (
	"context"
	"errors"
	"testing"
)

// A transaction with a Local reads and commits the Local's span there: the shared engine and the
// log never see those keys, a commit applies them to the Local only after the rest committed,
// and a rollback (or a refused reservation) leaves the Local as it was.
func TestLocalSpan(t *testing.T) {
	m, st := newManager(t)
	l, err := NewLocal([]byte("t"), []byte("u"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	applied := func() uint64 {
		t.Helper()
		p, err := st.Engine.AppliedPosition()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	commit(t, m, "a", "shared")
	before := applied()

	// Only local writes: no record at all.
	tx := m.Begin(RepeatableRead, false)
	tx.SetLocal(l)
	tx.Set([]byte("t1"), []byte("x"))
	tx.Set([]byte("t2"), []byte("y"))
	if pos, err := tx.Commit(context.Background()); err != nil || pos != 0 {
		t.Fatalf("local-only commit: pos %d, %v; want no record", pos, err)
	}
	if applied() != before {
		t.Error("a local-only commit reached the log")
	}
	if _, ok, _ := st.Engine.Get([]byte("t1")); ok {
		t.Error("a local key reached the shared engine")
	}

	// Mixed: the shared part is logged, the local part applied to the Local.
	tx = m.Begin(RepeatableRead, false)
	tx.SetLocal(l)
	if got := scan(t, tx, "t", "u", false, false); got != "t1=x t2=y " {
		t.Errorf("local scan: %q", got)
	}
	tx.Set([]byte("b"), []byte("shared"))
	tx.Delete([]byte("t1"))
	tx.Set([]byte("t3"), []byte("z"))
	if got := scan(t, tx, "t", "u", true, true); got != "t3=z t2=y " {
		t.Errorf("local scan over own writes, reverse: %q", got)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if applied() == before {
		t.Error("the shared write was not logged")
	}
	if _, ok, _ := st.Engine.Get([]byte("t3")); ok {
		t.Error("a local key of a mixed commit reached the shared engine")
	}

	// Rollback and savepoints undo local writes like any other.
	tx = m.Begin(RepeatableRead, false)
	tx.SetLocal(l)
	tx.Set([]byte("t4"), []byte("w"))
	sp := tx.Savepoint()
	tx.Set([]byte("t5"), []byte("v"))
	tx.RollbackTo(sp)
	if v, ok, _ := tx.Get([]byte("t5")); ok {
		t.Errorf("rolled back to savepoint, still read %q", v)
	}
	tx.Rollback()

	// A refused reservation fails the commit before anything is applied.
	l.Reserve = func(int64) error { return errors.New("full") }
	tx = m.Begin(RepeatableRead, false)
	tx.SetLocal(l)
	tx.Set([]byte("t6"), []byte("q"))
	tx.Set([]byte("c"), []byte("shared"))
	mark := applied()
	if _, err := tx.Commit(context.Background()); err == nil {
		t.Fatal("commit past the reservation succeeded")
	}
	if applied() != mark {
		t.Error("the shared part committed although the local part was refused")
	}
	l.Reserve = nil

	tx = m.Begin(RepeatableRead, false)
	tx.SetLocal(l)
	if got := scan(t, tx, "t", "u", false, true); got != "t2=y t3=z " {
		t.Errorf("local state: %q", got)
	}
	if v, _, _ := tx.GetLatest([]byte("t2")); string(v) != "y" {
		t.Errorf("GetLatest of a local key: %q", v)
	}
	r := tx.NewLatestReader([]byte("t"), []byte("u"))
	if v, ok, _ := r.Get([]byte("t3")); !ok || string(v) != "z" {
		t.Errorf("LatestReader of a local key: %q %v", v, ok)
	}
	r.Close()
	tx.Rollback()

	// Without the Local the span is the shared engine's (empty).
	tx = m.Begin(RepeatableRead, false)
	if got := scan(t, tx, "t", "u", false, false); got != "" {
		t.Errorf("a transaction without the Local sees %q", got)
	}
	tx.Rollback()
}

// BenchmarkNewLocal is what a session's first temporary table costs to open (and its end to close).
func BenchmarkNewLocal(b *testing.B) {
	for i := 0; i < b.N; i++ {
		l, err := NewLocal([]byte("t"), []byte("u"), nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = l.Close()
	}
}
