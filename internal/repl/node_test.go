package repl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

func startNode(t *testing.T, fs vfs.FS, afterSync func()) (*Node, *engine.Engine, *klog.Log, *txn.Manager) {
	t.Helper()
	lg, err := klog.Open("/log", klog.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(), AfterSync: afterSync})
	if err != nil {
		t.Fatal(err)
	}
	return n, eng, lg, txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
}

func put(t *testing.T, m *txn.Manager, ctx context.Context, k, v string) (uint64, error) {
	tx := m.Begin(txn.RepeatableRead, false)
	tx.Set([]byte(k), []byte(v))
	return tx.Commit(ctx)
}

// Concurrent commits get distinct increasing log indexes, share fsyncs, and survive a restart that
// replays the log into an engine that lost its memtable.
func TestCommitGroupAndReplay(t *testing.T) {
	fs := vfs.NewMem()
	n, eng, lg, m := startNode(t, fs, nil)
	var wg sync.WaitGroup
	idx := make([]uint64, 64)
	for i := range idx {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			p, err := put(t, m, context.Background(), fmt.Sprintf("k%02d", i), "v")
			if err != nil {
				t.Error(err)
			}
			idx[i] = p
		}(i)
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for _, p := range idx {
		if p == 0 || seen[p] {
			t.Fatalf("index %d zero or repeated", p)
		}
		seen[p] = true
	}
	if g, c := n.Stats.Groups.Load(), n.Stats.Commits.Load(); c != 64 || g >= c {
		t.Logf("groups %d for %d commits", g, c)
	}
	applied := n.Applied()
	n.Stop()
	eng.Close() // the memtable is gone: no WAL, no flush
	lg.Close()
	n2, eng2, _, _ := startNode(t, fs, nil)
	defer n2.Stop()
	if n2.Applied() < applied {
		t.Fatalf("replayed to %d, want >= %d", n2.Applied(), applied)
	}
	for i := range idx {
		if _, ok, _ := eng2.Get([]byte(fmt.Sprintf("k%02d", i))); !ok {
			t.Fatalf("k%02d lost across restart", i)
		}
	}
}

// A commit whose client is killed while it waits still commits (its locks are held until the apply)
// and reports an interrupted error.
func TestCommitInterruptedWhileWaiting(t *testing.T) {
	release := make(chan struct{})
	var block sync.Once
	blocking := false
	n, eng, _, m := startNode(t, vfs.NewMem(), func() {
		if blocking {
			block.Do(func() { <-release })
		}
	})
	defer n.Stop()
	blocking = true
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := put(t, m, ctx, "killed", "v")
		errc <- err
	}()
	cancel()
	close(release)
	err := <-errc
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("interrupted commit: %v, want InterruptedError", err)
	}
	if _, ok, _ := eng.Get([]byte("killed")); !ok {
		t.Fatal("the interrupted commit is not applied, though it was durable")
	}
}

// The log is purged below what the engine flushed, and a restart after a purge still has every row.
func TestPurgeBelowFlushed(t *testing.T) {
	fs := vfs.NewMem()
	open := func() (*Node, *engine.Engine, *klog.Log, *txn.Manager) {
		lg, err := klog.Open("/log", klog.Options{FS: fs, SegmentBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
		if err != nil {
			t.Fatal(err)
		}
		n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(), PurgeInterval: 5 * time.Millisecond, RetainEntries: 10})
		if err != nil {
			t.Fatal(err)
		}
		return n, eng, lg, txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
	}
	n, eng, lg, m := open()
	for i := 0; i < 400; i++ {
		if _, err := put(t, m, context.Background(), fmt.Sprintf("p%03d", i), "value-with-some-bytes"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for lg.FirstIndex() <= 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if lg.FirstIndex() <= 1 {
		t.Fatalf("log not purged: first index %d, last %d, segments %d", lg.FirstIndex(), lg.LastIndex(), lg.Stats().Segments)
	}
	first := lg.FirstIndex()
	n.Stop()
	eng.Close()
	lg.Close()
	n2, eng2, lg2, _ := open()
	defer func() { n2.Stop(); eng2.Close(); lg2.Close() }()
	for i := 0; i < 400; i++ {
		if _, ok, _ := eng2.Get([]byte(fmt.Sprintf("p%03d", i))); !ok {
			t.Fatalf("p%03d lost after purge (log first index %d) and restart", i, first)
		}
	}
}
