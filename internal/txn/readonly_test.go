package txn

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kiln-db/kiln/internal/engine"
)

// An autocommit read's transaction (Begin, one read, Commit) allocates the transaction and the value
// read, nothing for a write set it never uses; one transaction's writes never show in another's.
func TestReadOnlyTxnAllocations(t *testing.T) {
	e, err := engine.Open(filepath.Join(t.TempDir(), "e"), engine.Options{DisableWAL: true, CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	bt := e.NewBatch()
	if err := bt.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(bt, 1, false); err != nil {
		t.Fatal(err)
	}
	m := NewManager(e, NewLockManager(DefaultLockConfig()), noCommit{})
	ctx := context.Background()

	w1, w2 := m.Begin(RepeatableRead, false), m.Begin(RepeatableRead, false)
	w1.Set([]byte("a"), []byte("1"))
	w1.Delete([]byte("k"))
	if _, ok, _ := w2.Get([]byte("a")); ok {
		t.Fatal("one transaction's write shows in another's write set")
	}
	if v, ok, _ := w2.Get([]byte("k")); !ok || string(v) != "v" {
		t.Fatalf("another transaction's delete shows: %q %v", v, ok)
	}
	if v, ok, _ := w1.Get([]byte("a")); !ok || string(v) != "1" {
		t.Fatalf("own write: %q %v", v, ok)
	}
	if _, ok, _ := w1.Get([]byte("k")); ok {
		t.Fatal("own delete not seen")
	}
	w1.Rollback()
	w2.Rollback()

	n := testing.AllocsPerRun(100, func() {
		tx := m.Begin(RepeatableRead, false)
		if _, ok, err := tx.Get([]byte("k")); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if n > 3 {
		t.Errorf("read-only transaction: %.0f allocations, want at most 3 (the transaction, the value, the commit)", n)
	}
}
