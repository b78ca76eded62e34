package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/repl/repltest"
)

// fakePlacer places records and lets the test decide when (and how) each one ends. Nothing is
// applied to the engine: a pending version is all a successor can see of it.
type fakePlacer struct {
	mu     sync.Mutex
	placed []*fakePlaced
	ch     chan *fakePlaced
}

type fakePlaced struct {
	after []Placed
	done  chan struct{}
	idx   uint64
	err   error
}

func (f *fakePlaced) Wait(context.Context) (uint64, error) { <-f.done; return f.idx, f.err }
func (f *fakePlaced) end(err error)                        { f.err = err; close(f.done) }

func (f *fakePlacer) Epoch() uint64 { return 1 }
func (f *fakePlacer) Commit(context.Context, []byte, bool, uint64) (uint64, error) {
	panic("a Placer's records go through Place")
}
func (f *fakePlacer) Place(_ context.Context, _ []byte, _ bool, _ uint64, after []Placed) (Placed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := &fakePlaced{after: append([]Placed(nil), after...), done: make(chan struct{}), idx: uint64(len(f.placed) + 1)}
	f.placed = append(f.placed, p)
	f.ch <- p
	return p, nil
}

// commitAsync commits tx on its own goroutine; the result arrives on the channel.
func commitAsync(tx *Txn) chan error {
	c := make(chan error, 1)
	go func() { _, err := tx.Commit(context.Background()); c <- err }()
	return c
}

func blocked(t *testing.T, c chan error, what string) {
	t.Helper()
	select {
	case err := <-c:
		t.Fatalf("%s returned (%v) before what it waits for ended", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

func returns(t *testing.T, c chan error, what string) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits", what)
		return nil
	}
}

// The early-release contract, step by step (pending.go's numbered invariants).
func TestEarlyLockRelease(t *testing.T) {
	s := repltest.Start(t, nil, NewApplier(nil), nil)
	fp := &fakePlacer{ch: make(chan *fakePlaced, 16)}
	m := NewManager(s.Engine, NewLockManager(DefaultLockConfig()), fp)
	m.SetEarlyRelease(true)
	ctx := context.Background()
	const wait = 200 * time.Millisecond

	// T1 writes k and j; its commit is placed and then waits for durability.
	t1 := m.Begin(RepeatableRead, false)
	for _, k := range []string{"k", "j"} {
		if err := t1.Lock(ctx, []byte(k), LockExclusive, wait); err != nil {
			t.Fatal(err)
		}
	}
	t1.Set([]byte("k"), []byte("1"))
	t1.Set([]byte("j"), []byte("x"))
	c1 := commitAsync(t1)
	p1 := <-fp.ch
	blocked(t, c1, "T1's commit (1: no acknowledgement before durable)")

	// T2 gets k's lock at once and reads the pending version with a current read only (2).
	t2 := m.Begin(RepeatableRead, false)
	if err := t2.Lock(ctx, []byte("k"), LockExclusive, wait); err != nil {
		t.Fatalf("k still locked after T1 was placed: %v", err)
	}
	if v, ok, _ := t2.GetLatest([]byte("k")); !ok || string(v) != "1" {
		t.Fatalf("current read of k: %q %v, want the pending 1", v, ok)
	}
	if _, ok, _ := t2.Get([]byte("k")); ok {
		t.Fatal("a snapshot read saw a pending version")
	}
	lr := t2.NewLatestReader([]byte("a"), []byte("z"))
	if v, ok, _ := lr.Get([]byte("j")); !ok || string(v) != "x" {
		t.Fatalf("LatestReader read of j: %q %v, want the pending x", v, ok)
	}
	lr.Close()
	if got := scan(t, t2, "a", "z", false, true); got != "j=x k=1 " {
		t.Fatalf("current scan: %q, want the pending versions", got)
	}
	if got := scan(t, t2, "a", "z", true, true); got != "k=1 j=x " {
		t.Fatalf("current reverse scan: %q", got)
	}
	if got := scan(t, t2, "a", "z", false, false); got != "" {
		t.Fatalf("snapshot scan: %q, want nothing pending", got)
	}
	t2.Set([]byte("k"), []byte("2"))
	c2 := commitAsync(t2)
	p2 := <-fp.ch
	if len(p2.after) != 1 || p2.after[0] != Placed(p1) {
		t.Fatalf("T2 placed after %v, want T1's record (3)", p2.after)
	}

	// T3 reads k's newest pending version under a lock, writes nothing, and commits: its COMMIT
	// waits for what it read (4), and fails with it.
	t3 := m.Begin(RepeatableRead, false)
	if err := t3.Lock(ctx, []byte("k"), LockShared, wait); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := t3.GetLatest([]byte("k")); string(v) != "2" {
		t.Fatalf("T3 read k=%q, want 2", v)
	}
	c3 := commitAsync(t3)
	blocked(t, c3, "T3's read-only commit")
	lost := errors.New("lost")
	p2.end(lost)
	if err := returns(t, c3, "T3's commit"); !errors.Is(err, lost) {
		t.Fatalf("T3's commit after its read dependency failed: %v", err)
	}
	if err := returns(t, c2, "T2's commit"); !errors.Is(err, lost) {
		t.Fatalf("T2's commit: %v", err)
	}
	// T2's version is gone with it; T1's versions of j (and of k, replaced by T2's) stay until T1 ends.
	tr := m.Begin(RepeatableRead, false)
	if _, ok, _ := tr.GetLatest([]byte("k")); ok {
		t.Fatal("k still shows the failed T2's version")
	}
	if v, _, _ := tr.GetLatest([]byte("j")); string(v) != "x" {
		t.Fatalf("j=%q, want T1's pending x", v)
	}
	p1.end(nil)
	if err := returns(t, c1, "T1's commit"); err != nil {
		t.Fatal(err)
	}
	if m.Pending() != 0 {
		t.Fatalf("%d pending versions after every record ended", m.Pending())
	}
	tr.Rollback()

	// Switched off, the lock is held until the commit ends, as before.
	m.SetEarlyRelease(false)
	t4 := m.Begin(RepeatableRead, false)
	_ = t4.Lock(ctx, []byte("k"), LockExclusive, wait)
	t4.Set([]byte("k"), []byte("4"))
	c4 := commitAsync(t4)
	p4 := <-fp.ch
	t5 := m.Begin(RepeatableRead, false)
	if err := t5.Lock(ctx, []byte("k"), LockExclusive, wait); err == nil {
		t.Fatal("k's lock was released early with early release off")
	}
	p4.end(nil)
	_ = returns(t, c4, "T4's commit")
	t5.Rollback()

	// Range deletions and logical operations keep their locks to the end (5).
	m.SetEarlyRelease(true)
	t6 := m.Begin(RepeatableRead, false)
	_ = t6.Lock(ctx, []byte("k"), LockExclusive, wait)
	t6.Set([]byte("k"), []byte("6"))
	t6.DeleteRange([]byte("m"), []byte("n"))
	c6 := commitAsync(t6)
	p6 := <-fp.ch
	t7 := m.Begin(RepeatableRead, false)
	if err := t7.Lock(ctx, []byte("k"), LockExclusive, wait); err == nil {
		t.Fatal("a record with a range deletion released its locks early")
	}
	p6.end(nil)
	_ = returns(t, c6, "T6's commit")
	t7.Rollback()

	// So do write sets of more than MaxEarlyReleaseKeys point writes (a bulk INSERT), and they
	// add nothing to the pending set; one of exactly that many is released early.
	for _, n := range []int{MaxEarlyReleaseKeys + 1, MaxEarlyReleaseKeys} {
		tb := m.Begin(RepeatableRead, false)
		_ = tb.Lock(ctx, []byte("k"), LockExclusive, wait)
		tb.Set([]byte("k"), []byte("b"))
		for i := 1; i < n; i++ {
			tb.Set([]byte(fmt.Sprintf("bulk%05d", i)), []byte("b"))
		}
		cb := commitAsync(tb)
		pb := <-fp.ch
		tw := m.Begin(RepeatableRead, false)
		err := tw.Lock(ctx, []byte("k"), LockExclusive, wait)
		if big := n > MaxEarlyReleaseKeys; big != (err != nil) || big != (m.Pending() == 0) {
			t.Errorf("%d writes: lock error %v with %d pending versions", n, err, m.Pending())
		}
		tw.Rollback()
		pb.end(nil)
		_ = returns(t, cb, "the bulk commit")
	}
}

// A hot row on the real commit path: concurrent increments under early release lose nothing, each
// acknowledged commit is durable and applied when it returns, and successors did read pending
// versions (the lock was released before durability). Each fsync takes a millisecond, as a slow
// disk's would, so that successors do arrive while a record is pending.
func TestEarlyReleaseHotRow(t *testing.T) {
	s := repltest.Start(t, nil, NewApplier(nil), func(c *repl.Config) {
		c.AfterSync = func() { time.Sleep(time.Millisecond) }
	})
	m := NewManager(s.Engine, NewLockManager(DefaultLockConfig()), s.Node)
	m.SetEarlyRelease(true)
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; i < each; i++ {
				tx := m.Begin(RepeatableRead, false)
				if err := tx.Lock(ctx, []byte("ctr"), LockExclusive, 10*time.Second); err != nil {
					errc <- err
					return
				}
				v, _, err := tx.GetLatest([]byte("ctr"))
				if err != nil {
					errc <- err
					return
				}
				var n int
				if len(v) > 0 {
					fmt.Sscan(string(v), &n)
				}
				tx.Set([]byte("ctr"), []byte(fmt.Sprint(n+1)))
				pos, err := tx.Commit(ctx)
				if err != nil {
					errc <- err
					return
				}
				if d, a := s.Node.Durable(), s.Node.Applied(); d < pos || a < pos {
					errc <- fmt.Errorf("commit %d acknowledged with durable %d, applied %d", pos, d, a)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	v, _, _ := s.Engine.Get([]byte("ctr"))
	if string(v) != fmt.Sprint(workers*each) {
		t.Fatalf("counter %s after %d acknowledged increments", v, workers*each)
	}
	if m.Pending() != 0 {
		t.Fatalf("%d pending versions left", m.Pending())
	}
	if m.PendingReads() == 0 {
		t.Fatal("no increment read a pending version: the locks were not released before durability")
	}
	t.Logf("%d of %d increments read a pending version", m.PendingReads(), workers*each)
}
