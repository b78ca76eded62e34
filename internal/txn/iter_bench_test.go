package txn

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kiln-db/kiln/internal/engine"
)

// noCommit is a Committer for read-only benchmarks.
type noCommit struct{}

func (noCommit) Commit(context.Context, []byte, bool, uint64) (uint64, error) { return 0, nil }
func (noCommit) Epoch() uint64                                                { return 1 }

// BenchmarkIterScan measures the transaction iterator, the path every range read and table scan
// takes: a full scan of iterRows rows (13-byte keys, 100-byte values) from the snapshot or the latest
// state, forwards or backwards, with and without the transaction's own writes overlaid. ns/row is
// what one row costs.
//
//	go test ./internal/txn -run - -bench IterScan -benchmem -count 5
func BenchmarkIterScan(b *testing.B) {
	const iterRows = 10000
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
	for i := 0; i < iterRows; i++ {
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
	lo, hi := []byte{'t'}, []byte{'u'}
	for _, bc := range []struct {
		reverse, latest bool
		ownWrites       int
	}{{false, false, 0}, {true, false, 0}, {false, true, 0}, {false, false, 100}} {
		b.Run(fmt.Sprintf("reverse=%v/latest=%v/own=%d", bc.reverse, bc.latest, bc.ownWrites), func(b *testing.B) {
			t := m.Begin(RepeatableRead, false)
			defer t.Rollback()
			for i := 0; i < bc.ownWrites; i++ {
				t.Set(key(i*(iterRows/bc.ownWrites)), val[:50])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				it, err := t.NewIter(lo, hi, bc.reverse, bc.latest)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for ; it.Valid(); it.Next() {
					n += len(it.Key()) + len(it.Value())
				}
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
				it.Close()
				if n == 0 {
					b.Fatal("empty scan")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/iterRows, "ns/row")
		})
	}
}
