package repl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	randv2 "math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

type asyncStack struct {
	n   *Node
	eng *engine.Engine
	lg  *klog.Log
	m   *txn.Manager
}

// testOps are the logical operations the tests' applier knows.
var testOps = map[string]txn.LogicalFunc{}

func testApplier() *txn.Applier { return txn.NewApplier(testOps) }

func startAsync(t *testing.T, fs vfs.FS, syncInterval time.Duration) *asyncStack {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lg, err := klog.Open("/log", klog.Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(), SyncInterval: syncInterval, PurgeInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return &asyncStack{n: n, eng: eng, lg: lg, m: txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)}
}

func (s *asyncStack) close() {
	s.n.Stop()
	s.eng.Close()
	s.lg.Close()
}

func (s *asyncStack) put(t *testing.T, k string, async bool) uint64 {
	t.Helper()
	tx := s.m.Begin(txn.RepeatableRead, false)
	tx.Set([]byte(k), []byte("v"))
	tx.SetAsync(async)
	idx, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatalf("commit %s: %v", k, err)
	}
	return idx
}

func (s *asyncStack) has(t *testing.T, k string) bool {
	t.Helper()
	_, ok, err := s.eng.Get([]byte(k))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// powerLoss restarts on a copy of fs that kept only synced data.
func powerLoss(t *testing.T, fs *vfs.MemFS) (*asyncStack, *vfs.MemFS) {
	t.Helper()
	c := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0, RNG: randv2.New(randv2.NewPCG(1, 2))})
	return startAsync(t, c, time.Hour), c
}

// An async commit is applied and acknowledged without an fsync; a power loss before any fsync loses it
// (and nothing else), and a later sync commit's fsync makes it durable with the sync one.
func TestAsyncCommitDurability(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := startAsync(t, fs, time.Hour) // no background fsync during the test
	defer s.close()
	s.put(t, "base", false)
	syncs := s.n.Stats.Syncs.Load()
	a := s.put(t, "a1", true)
	if !s.has(t, "a1") || s.n.Applied() < a {
		t.Fatal("async commit not applied when acknowledged")
	}
	if s.n.Stats.Syncs.Load() != syncs || s.n.Durable() >= a {
		t.Fatalf("async commit fsynced: syncs %d -> %d, durable %d, index %d", syncs, s.n.Stats.Syncs.Load(), s.n.Durable(), a)
	}
	r, _ := powerLoss(t, fs)
	if !r.has(t, "base") || r.has(t, "a1") {
		t.Fatalf("after power loss: base %v (want true), a1 %v (want false: never fsynced)", r.has(t, "base"), r.has(t, "a1"))
	}
	r.close()

	b := s.put(t, "s2", false)
	if s.n.Durable() < b {
		t.Fatalf("sync commit acknowledged at %d with durable %d", b, s.n.Durable())
	}
	r, _ = powerLoss(t, fs)
	defer r.close()
	for _, k := range []string{"base", "a1", "s2"} {
		if !r.has(t, k) {
			t.Fatalf("%s lost: the sync commit's fsync covers every earlier entry", k)
		}
	}
}

// The engine never persists what the log has not: a memtable flush first fsyncs the log, so a power
// loss right after the flush recovers (without the barrier the engine's applied index would be past
// the log's end and start-up would refuse).
func TestAsyncFlushBarrier(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := startAsync(t, fs, time.Hour)
	defer s.close()
	var last uint64
	for _, k := range []string{"x1", "x2", "x3"} {
		last = s.put(t, k, true)
	}
	if s.n.Durable() >= last {
		t.Fatalf("durable %d before the flush, want < %d", s.n.Durable(), last)
	}
	if err := s.eng.Flush(); err != nil {
		t.Fatal(err)
	}
	if s.n.Durable() < last {
		t.Fatalf("engine flushed entries up to %d with the log durable to %d", last, s.n.Durable())
	}
	r, _ := powerLoss(t, fs)
	defer r.close()
	for _, k := range []string{"x1", "x2", "x3"} {
		if !r.has(t, k) {
			t.Fatalf("%s lost after a flush", k)
		}
	}
}

// The background fsync makes async commits durable within the interval, and a clean stop fsyncs what
// is left.
func TestAsyncBackgroundSyncAndStop(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := startAsync(t, fs, 5*time.Millisecond)
	i := s.put(t, "bg", true)
	deadline := time.Now().Add(5 * time.Second)
	for s.n.Durable() < i {
		if time.Now().After(deadline) {
			t.Fatalf("durable %d, async commit %d not fsynced by the background loop", s.n.Durable(), i)
		}
		time.Sleep(time.Millisecond)
	}
	s.close()

	s = startAsync(t, fs, time.Hour)
	j := s.put(t, "atstop", true)
	if s.n.Durable() >= j {
		t.Fatal("async commit fsynced before the stop")
	}
	s.close()
	r, _ := powerLoss(t, fs)
	defer r.close()
	if !r.has(t, "bg") || !r.has(t, "atstop") {
		t.Fatalf("bg %v atstop %v: want both after a clean stop", r.has(t, "bg"), r.has(t, "atstop"))
	}
}

// A record with a logical operation reads the engine at apply: it must see every entry before it in
// log order, even when those entries were committed in the same group (same Ready), and none after it.
func TestLogicalRecordSeesEarlierEntries(t *testing.T) {
	testOps["test.count"] = func(payload []byte, eng txn.Reader, b txn.Batch) error {
		it, err := eng.NewIter([]byte("p/"), []byte("p0"))
		if err != nil {
			return err
		}
		defer it.Close()
		n := 0
		for it.First(); it.Valid(); it.Next() {
			n++
		}
		return b.Set(payload, []byte(strconv.Itoa(n)))
	}
	fs := vfs.NewMem()
	s := startAsync(t, fs, time.Hour)
	defer s.close()
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		idx := make([]uint64, 16)
		var countIdx uint64
		countKey := fmt.Sprintf("count/%02d", round)
		for i := range idx {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				tx := s.m.Begin(txn.RepeatableRead, false)
				tx.Set([]byte(fmt.Sprintf("p/%02d/%02d", round, i)), []byte("v"))
				tx.SetAsync(i%2 == 0)
				var err error
				if idx[i], err = tx.Commit(context.Background()); err != nil {
					t.Error(err)
				}
			}(i)
			if i == 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tx := s.m.Begin(txn.RepeatableRead, false)
					tx.Logical("test.count", []byte(countKey))
					var err error
					if countIdx, err = tx.Commit(context.Background()); err != nil {
						t.Error(err)
					}
				}()
			}
		}
		wg.Wait()
		want := round * 16
		for _, i := range idx {
			if i < countIdx {
				want++
			}
		}
		v, ok, err := s.eng.Get([]byte(countKey))
		if err != nil || !ok || string(v) != strconv.Itoa(want) {
			t.Fatalf("round %d: logical record at %d counted %q (%v %v), want %d", round, countIdx, v, ok, err, want)
		}
	}
}
