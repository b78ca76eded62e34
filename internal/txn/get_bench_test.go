package txn

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/kiln-db/kiln/internal/engine"
)

// BenchmarkPointGet measures the point-read path every primary-key lookup takes: Txn.Get (the
// transaction's snapshot), Txn.GetLatest (a current read of the latest state) and LatestReader.Get
// (current reads of one span through one iterator, as a multi-row INSERT's duplicate checks), on
// a key that is in the engine and not in the write set, over getRows rows (13-byte keys, 100-byte
// values).
// It is what the engine seam (engine.go) must not slow down.
//
//	go test ./internal/txn -run - -bench PointGet -benchmem -count 5
func BenchmarkPointGet(b *testing.B) {
	const getRows = 10000
	e, err := engine.Open(filepath.Join(b.TempDir(), "e"), engine.Options{DisableWAL: true, CacheBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	key := func(i int) []byte {
		k := make([]byte, 13)
		k[0] = 't'
		binary.BigEndian.PutUint64(k[5:], uint64(i))
		return k
	}
	bt := e.NewBatch()
	val := make([]byte, 100)
	for i := 0; i < getRows; i++ {
		if err := bt.Set(key(i), val); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Apply(bt, 1, false); err != nil {
		b.Fatal(err)
	}
	if err := e.Flush(); err != nil {
		b.Fatal(err)
	}
	m := NewManager(e, NewLockManager(DefaultLockConfig()), noCommit{})
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = key(i * 7 % getRows)
	}
	for _, bc := range []struct {
		name string
		// get returns the read to measure and what releases it.
		get func(t *Txn) (func(k []byte) ([]byte, bool, error), func())
	}{
		{"snapshot", func(t *Txn) (func([]byte) ([]byte, bool, error), func()) { return t.Get, func() {} }},
		{"latest", func(t *Txn) (func([]byte) ([]byte, bool, error), func()) { return t.GetLatest, func() {} }},
		{"latest-reader", func(t *Txn) (func([]byte) ([]byte, bool, error), func()) {
			r := t.NewLatestReader([]byte{'t'}, []byte{'u'})
			return r.Get, r.Close
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			t := m.Begin(RepeatableRead, false)
			defer t.Rollback()
			t.Set(key(getRows+1), val) // a write set that is not empty, as in a read-write transaction
			get, release := bc.get(t)
			defer release()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, ok, err := get(keys[i%len(keys)])
				if err != nil || !ok || len(v) != len(val) {
					b.Fatalf("get: %d bytes, %v, %v", len(v), ok, err)
				}
			}
		})
	}
}

// BenchmarkReadOnlyTxn is an autocommit point SELECT's transaction: Begin, one snapshot read,
// Commit (no writes). What it allocates besides the read itself is per-statement overhead.
//
//	go test ./internal/txn -run - -bench ReadOnlyTxn -benchmem
func BenchmarkReadOnlyTxn(b *testing.B) {
	e, err := engine.Open(filepath.Join(b.TempDir(), "e"), engine.Options{DisableWAL: true, CacheBytes: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	bt := e.NewBatch()
	if err := bt.Set([]byte("k"), make([]byte, 100)); err != nil {
		b.Fatal(err)
	}
	if err := e.Apply(bt, 1, false); err != nil {
		b.Fatal(err)
	}
	m := NewManager(e, NewLockManager(DefaultLockConfig()), noCommit{})
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		t := m.Begin(RepeatableRead, false)
		if _, ok, err := t.Get([]byte("k")); err != nil || !ok {
			b.Fatal(ok, err)
		}
		if _, err := t.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
