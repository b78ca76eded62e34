package repl

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
)

// Linearizable reads through raft's ReadIndex (the read concern "linearizable", issue 10).
//
// A read that must reflect every commit acknowledged before it started, on any member:
//  1. ReadIndex asks raft, on the loop, for a read index tagged with a request id. The leader
//     records its commit index, confirms it still leads with a heartbeat round a quorum answers
//     (raft's ReadOnlySafe: no clock assumption), and answers with that index; a follower
//     forwards the request to the leader and gets the same answer.
//  2. The loop hands each ReadState whose tag is a read request to its waiter (readAnswered).
//  3. The caller waits until this node has applied that index (WaitApplied) and then reads its
//     engine: every commit acknowledged before step 1 has an index at or below it.
// A leader cut off from its quorum gets no answer (its heartbeats go unacknowledged) and a member
// without a leader drops the request, so no stale read is ever served: the request is sent again
// every election timeout until the caller's context ends, and the caller reports the failure.

var readCtxTag = []byte("read:")

// readWaiters maps a request id to the channel its read index is delivered on.
type readWaiters struct {
	mu sync.Mutex
	m  map[uint64]chan uint64
}

func (r *readWaiters) add(id uint64) chan uint64 {
	ch := make(chan uint64, 1)
	r.mu.Lock()
	if r.m == nil {
		r.m = map[uint64]chan uint64{}
	}
	r.m[id] = ch
	r.mu.Unlock()
	return ch
}

func (r *readWaiters) remove(id uint64) {
	r.mu.Lock()
	delete(r.m, id)
	r.mu.Unlock()
}

// deliver hands index to request id's waiter, if it still waits; a second answer (to a request
// sent again) is dropped.
func (r *readWaiters) deliver(id, index uint64) {
	r.mu.Lock()
	ch := r.m[id]
	r.mu.Unlock()
	if ch != nil {
		select {
		case ch <- index:
		default:
		}
	}
}

// ReadIndex returns a log index such that every commit acknowledged anywhere in the cluster before
// the call is at or below it (steps 1-2 above): once this node has applied it, its engine reflects
// them all. It ends with ctx's error when no quorum-confirmed answer came (no leader, a partition),
// or ErrStopped.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	id := n.newID()
	ch := n.reads.add(id)
	defer n.reads.remove(id)
	rctx := binary.BigEndian.AppendUint64(append([]byte(nil), readCtxTag...), id)
	retry := time.Duration(n.cfg.ElectionTicks) * n.cfg.TickInterval
	for {
		n.control(func() { n.rn.ReadIndex(rctx) })
		t := time.NewTimer(retry)
		select {
		case idx := <-ch:
			t.Stop()
			return idx, nil
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-n.stopc:
			t.Stop()
			return 0, ErrStopped
		case <-t.C:
			// Dropped (no leader yet, a full control queue) or unanswered (no quorum): ask again.
		}
	}
}

// readAnswered handles a ReadState on the loop: a read request's answer goes to its waiter.
func (n *Node) readAnswered(rs raft.ReadState) {
	c := rs.RequestCtx
	if len(c) != len(readCtxTag)+8 || string(c[:len(readCtxTag)]) != string(readCtxTag) {
		return
	}
	n.reads.deliver(binary.BigEndian.Uint64(c[len(readCtxTag):]), rs.Index)
}
