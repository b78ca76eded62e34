package engine

import (
	"fmt"
	"testing"
	"time"
)

// writeVersions applies rounds batches, each writing every one of keys keys once (value size
// bytes), so that the memtable holds rounds versions of each key.
func writeVersions(t *testing.T, e *Engine, keys, rounds, size int, pos *uint64) {
	t.Helper()
	val := make([]byte, size)
	for r := 0; r < rounds; r++ {
		b := e.NewBatch()
		for k := 0; k < keys; k++ {
			if size > 0 {
				val[0] = byte(r)
			}
			if err := b.Set(fmt.Appendf(nil, "k%06d", k), val); err != nil {
				t.Fatal(err)
			}
		}
		*pos++
		if err := e.Apply(b, *pos, false); err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
	}
}

// scan reads every key once with a fresh iterator and returns the internal steps the iterator
// took beyond the ones asked for (read before Close, which counts them).
func scan(t *testing.T, e *Engine, keys int) int64 {
	t.Helper()
	it, err := e.NewIter([]byte("k"), []byte("l"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if n != keys {
		t.Fatalf("scan saw %d keys, want %d", n, keys)
	}
	_, extra := forwardSteps(it.p)
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return extra
}

func flushCount(e *Engine) int64 { return e.Metrics().Flush.Count }

// TestVersionFlush checks the flush started for reads that step over old versions (versions.go):
// scans over keys with 100 versions each in the memtable start one flush, after which a scan takes
// no extra steps; scans of keys with one version each, or of many versions in a memtable too small
// to pay for a flush, start none.
func TestVersionFlush(t *testing.T) {
	// 500 keys x 100 versions x 32-byte values: about 2 MB of batches, 5 MB of memtable (a memtable
	// flushes by itself at 32 MB); with empty values, under versionFlushBytes.
	const keys = 500
	cases := []struct {
		name      string
		rounds    int
		size      int
		wantFlush bool
	}{
		{"hundred versions", 100, 32, true},
		{"one version", 1, 32, false},
		{"small memtable", 100, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := openTest(t)
			defer e.Close()
			var pos uint64
			writeVersions(t, e, keys, c.rounds, c.size, &pos)
			before := flushCount(e)
			// Enough scans for versionFlushSteps extra steps had every key 100 versions.
			for i := 0; i < versionFlushSteps/(keys*99)+2; i++ {
				scan(t, e, keys)
			}
			if !c.wantFlush {
				time.Sleep(100 * time.Millisecond) // a flush would have been started by now
				if n := e.VersionFlushes(); n != 0 {
					t.Fatalf("%d version flushes, want 0", n)
				}
				if flushCount(e) != before {
					t.Fatal("the memtable was flushed")
				}
				return
			}
			deadline := time.Now().Add(10 * time.Second)
			for flushCount(e) == before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := e.VersionFlushes(); n != 1 {
				t.Fatalf("%d version flushes, want 1", n)
			}
			if flushCount(e) == before {
				t.Fatal("no flush within 10 s")
			}
			if extra := scan(t, e, keys); extra > keys/100 {
				t.Fatalf("after the flush a scan of %d keys took %d extra steps", keys, extra)
			}
		})
	}
}
