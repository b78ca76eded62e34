package engine

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"
)

// Compactions run under Kiln's scheduler (compactsched.go): overlapping flushes past the L0
// threshold are compacted out of L0, every key stays readable, and a compaction long enough to
// outlast compactionSlice yields on its way.
func TestCompactionsRunAndYield(t *testing.T) {
	var yields atomic.Int64
	old := yieldHook
	yieldHook = func() { yields.Add(1) }
	defer func() { yieldHook = old }()
	e := openTest(t)
	defer e.Close()
	const keys, flushes = 20000, 10
	val := make([]byte, 100)
	var pos uint64
	for f := 0; f < flushes; f++ {
		b := e.NewBatch()
		for k := 0; k < keys; k++ {
			binary.BigEndian.PutUint32(val, uint32(f))
			if err := b.Set(binary.BigEndian.AppendUint64([]byte("k"), uint64(k)), val); err != nil {
				t.Fatal(err)
			}
		}
		pos++
		if err := e.Apply(b, pos, false); err != nil {
			t.Fatal(err)
		}
		if err := e.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := e.Metrics()
		if m.Compact.Count > 0 && m.Levels[0].TablesCount < flushes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no compaction after %d overlapping flushes: %d compactions, %d L0 tables",
				flushes, m.Compact.Count, m.Levels[0].TablesCount)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for k := 0; k < keys; k += 997 {
		v, ok, err := e.Get(binary.BigEndian.AppendUint64([]byte("k"), uint64(k)))
		if err != nil || !ok || binary.BigEndian.Uint32(v) != flushes-1 {
			t.Fatalf("key %d after compactions: %v %v %x", k, ok, err, v)
		}
	}
	if yields.Load() == 0 {
		t.Fatalf("compactions of %d keys never yielded", keys*flushes)
	}
}
