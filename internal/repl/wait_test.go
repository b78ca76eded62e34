package repl

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// WaitApplied returns at once for an applied index, wakes when a later commit is applied, ends with
// its context for an index the log never reaches, and with ErrStopped when the node stops.
func TestWaitApplied(t *testing.T) {
	n, eng, lg, m := startNode(t, vfs.NewMem(), nil)
	defer func() { eng.Close(); lg.Close() }()
	ctx := context.Background()
	idx, err := put(t, m, ctx, "a", "1")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.WaitApplied(ctx, idx); err != nil {
		t.Fatalf("applied index: %v", err)
	}
	// Several waiters for the next indexes, woken by commits made after they began waiting.
	done := make(chan error, 3)
	for i := uint64(1); i <= 3; i++ {
		go func() { done <- n.WaitApplied(ctx, idx+i) }()
	}
	time.Sleep(20 * time.Millisecond) // let them wait (not a timing assertion: they must wait anyway)
	select {
	case err := <-done:
		t.Fatalf("a waiter returned before its index was committed: %v", err)
	default:
	}
	for i := 0; i < 3; i++ {
		if _, err := put(t, m, ctx, "b", "2"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a waiter was not woken by the commits")
		}
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := n.WaitApplied(tctx, n.Applied()+1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an index never reached: %v, want the context's deadline", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- n.WaitApplied(ctx, n.Applied()+1000) }()
	time.Sleep(10 * time.Millisecond)
	n.Stop()
	select {
	case err := <-stopped:
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("after Stop: %v, want ErrStopped", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not end the wait")
	}
}

// A read on the leader waits until the leader has applied everything it knows committed: another
// member may already have applied and shown those entries. The only member never waits.
func TestWaitCommittedApplied(t *testing.T) {
	n := &Node{stopc: make(chan struct{})}
	n.commitIdx.Store(7)
	n.applied.Store(5)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := n.WaitCommittedApplied(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("behind the commit index: %v, want the context's deadline", err)
	}
	done := make(chan error, 1)
	go func() { done <- n.WaitCommittedApplied(context.Background()) }()
	n.setApplied(6)
	select {
	case err := <-done:
		t.Fatalf("returned at applied 6 of 7: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	n.setApplied(7)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting with everything applied")
	}
	n.alone.Store(true)
	n.commitIdx.Store(9)
	if err := n.WaitCommittedApplied(context.Background()); err != nil {
		t.Fatalf("the only member: %v", err)
	}
}
