package log

import (
	"fmt"
	"testing"
)

// BenchmarkAppendSync measures the durable write path on the real filesystem (b.TempDir): per op, one
// Append of n entries of 200 bytes, a HardState (as every raft Ready has one) and one Sync, so one write
// and one fsync. ns/op is the cost of one group commit; ns/entry divides it by the group size.
func BenchmarkAppendSync(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			l, err := Open(b.TempDir(), Options{Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			data := make([]byte, 200)
			batch := make([]Entry, n)
			next := uint64(1)
			b.SetBytes(int64(n * len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k := range batch {
					batch[k] = Entry{Index: next, Term: 1, Data: data}
					next++
				}
				if err := l.Append(batch); err != nil {
					b.Fatal(err)
				}
				if err := l.SetHardState(HardState{Term: 1, Vote: 1, Commit: next - 1}); err != nil {
					b.Fatal(err)
				}
				if err := l.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
			st := l.Stats()
			b.ReportMetric(float64(st.Syncs)/float64(b.N), "fsyncs/op")
		})
	}
}

// BenchmarkAppend measures Append alone (encoding and caching, no I/O), with a Sync every 64 appends.
func BenchmarkAppend(b *testing.B) {
	l, err := Open(b.TempDir(), Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data := make([]byte, 200)
	e := []Entry{{Term: 1, Data: data}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e[0].Index = uint64(i + 1)
		if err := l.Append(e); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			b.StopTimer()
			if err := l.SetHardState(HardState{Term: 1, Commit: uint64(i + 1)}); err != nil {
				b.Fatal(err)
			}
			if err := l.Sync(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
}

// BenchmarkEntries measures reading 16 recent entries (the cache path raft and the applier use).
func BenchmarkEntries(b *testing.B) {
	l, err := Open(b.TempDir(), Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(ents(1, 1025, 1, 200)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lo := uint64(i%1000 + 1)
		if _, err := l.Entries(lo, lo+16, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
