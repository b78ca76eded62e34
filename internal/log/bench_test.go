package log

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time so far (getrusage), to report CPU per operation: a
// fsync's cost is mostly kernel time in the calling thread (and the journal work it waits for is not
// ours at all, which is why wall time and CPU time are both reported).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// openBench opens a log in a temporary directory; with prealloc it first writes until the log has
// rolled into a preallocated segment (a new log's first segment is not preallocated), so the timed
// loop measures appends into preallocated space.
func openBench(b *testing.B, prealloc bool, segBytes int64) (*Log, uint64) {
	l, err := Open(b.TempDir(), Options{Logger: quiet, Preallocate: prealloc, SegmentBytes: segBytes})
	if err != nil {
		b.Fatal(err)
	}
	next := uint64(1)
	deadline := time.Now().Add(time.Minute)
	for prealloc && l.Stats().SpareRolls == 0 {
		if time.Now().After(deadline) {
			b.Fatalf("no roll into a preallocated segment: %+v", l.Stats())
		}
		if err := l.Append([]Entry{{Index: next, Term: 1, Data: make([]byte, 64<<10)}}); err != nil {
			b.Fatal(err)
		}
		if err := l.SetHardState(HardState{Term: 1, Vote: 1, Commit: next}); err != nil {
			b.Fatal(err)
		}
		if err := l.Sync(); err != nil {
			b.Fatal(err)
		}
		next++
		if next > 32 {
			time.Sleep(time.Millisecond) // the spare is being written in the background
		}
	}
	return l, next
}

// BenchmarkAppendSync measures the durable write path on the real filesystem (b.TempDir): per op, one
// Append of n entries of 200 bytes, a HardState (as every raft Ready has one) and one Sync, so one write
// and one fsync. ns/op is the cost of one group commit; ns/entry divides it by the group size;
// cpu-ns/op is the process's CPU time (getrusage) per op. prealloc=true writes into a preallocated
// segment (Options.Preallocate), prealloc=false appends to a growing file.
func BenchmarkAppendSync(b *testing.B) {
	for _, prealloc := range []bool{false, true} {
		for _, n := range []int{1, 64} {
			b.Run(fmt.Sprintf("prealloc=%v/entries=%d", prealloc, n), func(b *testing.B) {
				benchAppendSync(b, prealloc, n)
			})
		}
	}
}

func benchAppendSync(b *testing.B, prealloc bool, n int) {
	l, next := openBench(b, prealloc, 0)
	defer l.Close()
	data := make([]byte, 200)
	batch := make([]Entry, n)
	b.SetBytes(int64(n * len(data)))
	syncs0 := l.Stats().Syncs
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
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
		lat = append(lat, time.Since(t0))
	}
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	st := l.Stats()
	b.ReportMetric(float64(st.Syncs-syncs0)/float64(b.N), "fsyncs/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-us")
	b.ReportMetric(float64(st.Spares), "spares")
}

// BenchmarkRoll measures the pause a segment roll adds to the Sync that does it (Append, HardState and
// Sync of 16 KiB per op into 4 MiB segments): roll-us is the mean duration of the Syncs that rolled,
// sync-us that of the others. With prealloc the roll writes over a spare prepared in the background.
func BenchmarkRoll(b *testing.B) {
	for _, prealloc := range []bool{false, true} {
		b.Run(fmt.Sprintf("prealloc=%v", prealloc), func(b *testing.B) {
			l, next := openBench(b, prealloc, 4<<20)
			defer l.Close()
			data := make([]byte, 16<<10)
			var rollT, syncT time.Duration
			var rolls, syncs int
			var maxRoll time.Duration
			st0 := l.Stats()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := l.Append([]Entry{{Index: next, Term: 1, Data: data}}); err != nil {
					b.Fatal(err)
				}
				if err := l.SetHardState(HardState{Term: 1, Vote: 1, Commit: next}); err != nil {
					b.Fatal(err)
				}
				next++
				r0 := l.Stats().Rolls
				t0 := time.Now()
				if err := l.Sync(); err != nil {
					b.Fatal(err)
				}
				d := time.Since(t0)
				if l.Stats().Rolls != r0 {
					rollT += d
					rolls++
					maxRoll = max(maxRoll, d)
				} else {
					syncT += d
					syncs++
				}
			}
			b.StopTimer()
			st := l.Stats()
			if rolls > 0 {
				b.ReportMetric(float64(rollT.Microseconds())/float64(rolls), "roll-us")
				b.ReportMetric(float64(maxRoll.Microseconds()), "max-roll-us")
			}
			if syncs > 0 {
				b.ReportMetric(float64(syncT.Microseconds())/float64(syncs), "sync-us")
			}
			b.ReportMetric(float64(st.Rolls-st0.Rolls), "rolls")
			b.ReportMetric(float64(st.SpareRolls-st0.SpareRolls), "spare-rolls")
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
