package txn

import (
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"
)

func ltBenchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64([]byte("t\x00\x00\x00\x2a_r"), uint64(i)*7919)
	}
	return keys
}

// BenchmarkLockUncontended is the hot path: one row lock on a free key, then commit.
func BenchmarkLockUncontended(b *testing.B) {
	m := NewLockManager(DefaultLockConfig())
	keys := ltBenchKeys(1024)
	ctx := context.Background()
	b.ReportAllocs()
	owner := uint64(0)
	for b.Loop() {
		owner++
		if err := m.Lock(ctx, owner, keys[owner&1023], LockExclusive, -1); err != nil {
			b.Fatal(err)
		}
		m.ReleaseAll(owner)
	}
}

// BenchmarkLockTxn10 takes ten row locks (a small transaction), re-locks one, then commits. The time is
// per transaction.
func BenchmarkLockTxn10(b *testing.B) {
	m := NewLockManager(DefaultLockConfig())
	keys := ltBenchKeys(4096)
	ctx := context.Background()
	b.ReportAllocs()
	owner := uint64(0)
	for b.Loop() {
		owner++
		base := int(owner*10) & 4095
		for i := range 10 {
			if err := m.Lock(ctx, owner, keys[(base+i)&4095], LockExclusive, -1); err != nil {
				b.Fatal(err)
			}
		}
		if err := m.Lock(ctx, owner, keys[base], LockShared, -1); err != nil { // re-entry
			b.Fatal(err)
		}
		m.ReleaseAll(owner)
	}
}

// BenchmarkLockSharedHot has every goroutine take a shared lock on the same row.
func BenchmarkLockSharedHot(b *testing.B) {
	m := NewLockManager(DefaultLockConfig())
	key := ltBenchKeys(1)[0]
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			owner := next.Add(1)
			if err := m.Lock(ctx, owner, key, LockShared, -1); err != nil {
				b.Fatal(err)
			}
			m.ReleaseAll(owner)
		}
	})
}

// BenchmarkLockParallel runs uncontended transactions (distinct rows) on all procs: shard scaling.
func BenchmarkLockParallel(b *testing.B) {
	m := NewLockManager(DefaultLockConfig())
	keys := ltBenchKeys(1 << 16)
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			owner := next.Add(1)
			if err := m.Lock(ctx, owner, keys[owner&(1<<16-1)], LockExclusive, -1); err != nil {
				b.Fatal(err)
			}
			m.ReleaseAll(owner)
		}
	})
}

// BenchmarkLockHandoff has every goroutine take an exclusive lock on one row: each grant is a wait
// and a wake-up (the contended path).
func BenchmarkLockHandoff(b *testing.B) {
	m := NewLockManager(DefaultLockConfig())
	key := ltBenchKeys(1)[0]
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			owner := next.Add(1)
			if err := m.Lock(ctx, owner, key, LockExclusive, -1); err != nil {
				b.Fatal(err)
			}
			m.ReleaseAll(owner)
		}
	})
}
