package repl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

// startGatherNode starts a single node whose log fsyncs take fsync and whose loop holds groups open
// (gather) for at most wait, for up to count commits (0: no count). As the server wires it, the
// commits that may still come are the commands being served (running, which the test sets) less
// the commits already handed over.
func startGatherNode(t *testing.T, fsync, wait time.Duration, count int, running *atomic.Int64) (*Node, *txn.Manager) {
	t.Helper()
	mem := vfs.NewMem()
	// Every fsync under /log takes fsync, as a disk's does.
	slow := &syncHookFS{FS: mem, prefix: "/log", before: func(string) { time.Sleep(fsync) }}
	lg, err := klog.Open("/log", klog.Options{FS: slow})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: mem, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	var mref struct {
		sync.Mutex
		m *txn.Manager
	}
	pending := func() int64 {
		mref.Lock()
		defer mref.Unlock()
		if mref.m == nil {
			return 0
		}
		return running.Load() - mref.m.Committing()
	}
	n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(),
		CommitWaitTime: wait, CommitWaitCount: count, PendingCommits: pending})
	if err != nil {
		t.Fatal(err)
	}
	m := txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
	mref.Lock()
	mref.m = m
	mref.Unlock()
	t.Cleanup(func() {
		n.Stop()
		_ = eng.Close()
		_ = lg.Close()
	})
	// Warm the fsync average up to the disk's time (the first group's fsync).
	ctx := context.Background()
	for range 10 {
		if _, err := put(t, m, ctx, "warm", "v"); err != nil {
			t.Fatal(err)
		}
	}
	return n, m
}

// commitAsync commits tx on its own goroutine; the returned channel reports the outcome.
func commitAsync(tx *txn.Txn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := tx.Commit(context.Background())
		done <- err
	}()
	return done
}

// gatherCounts are the loop's counters a gather test compares before and after.
type gatherCounts struct{ groups, timeouts, commits uint64 }

func countsOf(n *Node) gatherCounts {
	return gatherCounts{n.Stats.Groups.Load(), n.Stats.CommitWaitTimeouts.Load(), n.Stats.Commits.Load()}
}

func (c gatherCounts) since(before gatherCounts) gatherCounts {
	return gatherCounts{c.groups - before.groups, c.timeouts - before.timeouts, c.commits - before.commits}
}

// A group of sync commits is held open while other commands are being served, and closes as soon as
// the last of them has handed its commit over (no timeout); with no other command it does not wait,
// and a command that does not commit holds it only for the bound.
func TestGatherHoldsGroupForPendingWriters(t *testing.T) {
	const fsync = 50 * time.Millisecond
	ctx := context.Background()
	write := func(m *txn.Manager, k string) *txn.Txn {
		tx := m.Begin(txn.RepeatableRead, false)
		tx.Set([]byte(k), []byte("v"))
		return tx
	}
	var running atomic.Int64 // the commands being served
	t.Run("waits for the pending writer", func(t *testing.T) {
		n, m := startGatherNode(t, fsync, time.Second, 0, &running)
		t1, t2 := write(m, "a"), write(m, "b")
		running.Store(2) // both sessions are in a command: t2's commit, and t1's statement
		defer running.Store(0)
		before := countsOf(n)
		d2 := commitAsync(t2)
		// t2's group waits for t1 (well within the fsync time the wait is bounded by). Without the
		// wait, t2's group would be fsyncing when t1 arrives, and t1 would take a second group.
		time.Sleep(5 * time.Millisecond)
		if _, err := t1.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-d2; err != nil {
			t.Fatal(err)
		}
		got := countsOf(n).since(before)
		if got.commits != 2 || got.groups != 1 || got.timeouts != 0 {
			t.Fatalf("two commits, the second arriving while the first's group waited for it: %+v, want 2 commits in 1 group, no timeout", got)
		}
	})
	t.Run("no wait without other commands", func(t *testing.T) {
		n, m := startGatherNode(t, fsync, time.Second, 0, &running)
		running.Store(1) // the commit's own command
		defer running.Store(0)
		before := countsOf(n)
		if _, err := put(t, m, ctx, "alone", "v"); err != nil {
			t.Fatal(err)
		}
		got := countsOf(n).since(before)
		if got.groups != 1 || got.timeouts != 0 {
			t.Fatalf("a lone commit: %+v, want 1 group and no timeout", got)
		}
	})
	t.Run("a command that does not commit ends the wait at the bound", func(t *testing.T) {
		n, m := startGatherNode(t, fsync, 2*time.Millisecond, 0, &running)
		running.Store(2) // the commit's command, and a long statement that does not commit
		defer running.Store(0)
		before := countsOf(n)
		if _, err := put(t, m, ctx, "c", "v"); err != nil {
			t.Fatal(err)
		}
		got := countsOf(n).since(before)
		if got.groups != 1 || got.timeouts != 1 {
			t.Fatalf("a commit beside a statement that does not commit: %+v, want 1 group closed by the timeout", got)
		}
		running.Store(1) // the long statement ended
		before = countsOf(n)
		if _, err := put(t, m, ctx, "d", "v"); err != nil {
			t.Fatal(err)
		}
		if got := countsOf(n).since(before); got.timeouts != 0 {
			t.Fatalf("a commit with no other command once the long statement ended: %+v, want no timeout", got)
		}
	})
	t.Run("waits that gain nothing back off", func(t *testing.T) {
		n, m := startGatherNode(t, fsync, 2*time.Millisecond, 0, &running)
		running.Store(2) // each commit's command, and a long statement that does not commit
		defer running.Store(0)
		before := countsOf(n)
		const commits = 20
		for i := range commits {
			if _, err := put(t, m, ctx, fmt.Sprintf("r%d", i), "v"); err != nil {
				t.Fatal(err)
			}
		}
		// Waits at commits 1, 3, 6, 11 and 20: each fruitless wait doubles the groups skipped.
		if got := countsOf(n).since(before); got.timeouts != 5 {
			t.Fatalf("%d commits beside a statement that never commits: %+v, want 5 waits (1 + 2 + 4 + 8 groups skipped between them)", commits, got)
		}
	})
	t.Run("the count closes the group", func(t *testing.T) {
		n, m := startGatherNode(t, fsync, time.Second, 2, &running)
		t1, t2 := write(m, "x"), write(m, "y")
		running.Store(3) // t1's and t2's commits, and a third session's statement
		defer running.Store(0)
		before := countsOf(n)
		d1 := commitAsync(t1)
		time.Sleep(5 * time.Millisecond)
		d2 := commitAsync(t2) // the group has 2: it closes without waiting for the third
		if err := <-d1; err != nil {
			t.Fatal(err)
		}
		if err := <-d2; err != nil {
			t.Fatal(err)
		}
		if got := countsOf(n).since(before); got.commits != 2 || got.groups != 1 || got.timeouts != 0 {
			t.Fatalf("count 2: %+v, want 2 commits in 1 group, no timeout", got)
		}
	})
}
