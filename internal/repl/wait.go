package repl

import (
	"context"
	"sync/atomic"
)

// appliedSignal wakes the goroutines waiting for the applied index to pass some index
// (WaitApplied). It costs the apply goroutine one atomic swap per batch, and nothing more while
// nobody waits: a waiter installs the channel, the next advance closes it.
type appliedSignal struct {
	ch atomic.Pointer[chan struct{}]
}

// wait returns a channel closed at the next advance of the applied index.
func (s *appliedSignal) wait() <-chan struct{} {
	for {
		if p := s.ch.Load(); p != nil {
			return *p
		}
		c := make(chan struct{})
		if s.ch.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

// advanced wakes every waiter.
func (s *appliedSignal) advanced() {
	if p := s.ch.Swap(nil); p != nil {
		close(*p)
	}
}

// setApplied records the applied index and wakes WaitApplied's waiters. The store comes first:
// a waiter that installed its channel after the swap sees the new index when it checks again.
func (n *Node) setApplied(idx uint64) {
	n.applied.Store(idx)
	n.appliedSig.advanced()
}

// WaitApplied returns once this node has applied every entry up to index (nil), when ctx ends
// (ctx's error), or when the node stops (ErrStopped). It is how a read waits for a log position
// (read-your-writes on any member: WAIT_FOR_EXECUTED_GTID_SET, kiln_read_after_gtid). An index
// the log never reaches waits until ctx ends.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		if n.applied.Load() >= index {
			return nil
		}
		ch := n.appliedSig.wait()
		if n.applied.Load() >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stopc:
			if n.applied.Load() >= index {
				return nil
			}
			return ErrStopped
		}
	}
}
