package repl

import (
	"context"
	"encoding/binary"
	"time"

	"go.etcd.io/raft/v3"
)

// The read lease: when may the leader answer a read from its own engine?
//
// A leader that was paused (SIGSTOP, a long GC or VM pause) or cut off may have been replaced
// without knowing it; until it hears from its successor it would still answer reads with state the
// new leader has already overwritten. So the leader renews a lease on the monotonic clock:
//  1. Every tick it asks raft for a ReadIndex whose context is the time of the request. Raft
//     answers once a quorum acknowledged a heartbeat sent after the request (raft's ReadOnlySafe).
//  2. A quorum that acknowledged a message sent at time S will not vote for another leader before
//     S + election timeout: each member ignores votes for an election timeout after hearing from
//     the leader (CheckQuorum), and any new quorum includes one of them. So reads are safe until
//     S + leaseFraction x election timeout (the margin covers tick jitter and clock rate drift).
//  3. Readers check the lease with one atomic load and one clock read; when it has lapsed they wait
//     for the next renewal, which comes within a round trip if this node still leads.
// A node that is the only voter needs no lease.

// leaseFraction of the election timeout is the lease: below 1 for margin.
const leaseFraction = 0.8

// requestLease runs on the loop at every tick of a leader.
func (n *Node) requestLease() {
	if raft.StateType(n.state.Load()) != raft.StateLeader || n.soloVoter() {
		return
	}
	ctx := binary.BigEndian.AppendUint64(append([]byte(nil), leaseCtxTag...), uint64(n.mono()))
	n.rn.ReadIndex(ctx)
}

var leaseCtxTag = []byte("lease:")

// leaseConfirmed handles a ReadState: a quorum confirmed leadership as of the request's time.
func (n *Node) leaseConfirmed(rs raft.ReadState) {
	c := rs.RequestCtx
	if len(c) != len(leaseCtxTag)+8 || string(c[:len(leaseCtxTag)]) != string(leaseCtxTag) {
		return
	}
	at := int64(binary.BigEndian.Uint64(c[len(leaseCtxTag):]))
	if at > n.leaseFrom.Load() {
		n.leaseFrom.Store(at)
	}
}

// mono is the monotonic time since the node started, in nanoseconds.
func (n *Node) mono() int64 { return int64(time.Since(n.started)) }

func (n *Node) leaseDur() time.Duration {
	return time.Duration(float64(n.cfg.TickInterval) * float64(n.cfg.ElectionTicks) * leaseFraction)
}

// soloVoter reports whether this node is the only voter (loop-owned view, kept in an atomic).
func (n *Node) soloVoter() bool { return n.solo.Load() }

// ReadLeaseValid reports whether this node leads and may answer reads from its engine now.
func (n *Node) ReadLeaseValid() bool {
	if !n.IsLeader() {
		return false
	}
	if n.solo.Load() {
		return true
	}
	return n.mono() < n.leaseFrom.Load()+int64(n.leaseDur())
}

// WaitCommittedApplied returns once this node has applied every entry it knows committed (nil),
// or with ctx's error, or ErrStopped. A leader's read needs it besides the lease: the leader sends
// its commit index to the other members as soon as it learns it (commitIdx is stored before), and a
// member may apply an entry and show it to a read before the leader's own apply has; a read on the
// leader that starts after that must not miss the entry (test/cluster TestLinearizablePartition
// caught a leader answering with the value before one a follower had already returned). A node
// that is the only member has no one to be behind.
func (n *Node) WaitCommittedApplied(ctx context.Context) error {
	if n.alone.Load() {
		return nil
	}
	idx := n.commitIdx.Load()
	if n.applied.Load() >= idx {
		return nil
	}
	return n.WaitApplied(ctx, idx)
}

// WaitReadLease waits until the read lease is valid (true) or this node no longer leads (false),
// at most about two election timeouts.
func (n *Node) WaitReadLease(ctx context.Context) bool {
	deadline := time.Now().Add(2 * time.Duration(n.cfg.ElectionTicks) * n.cfg.TickInterval)
	for {
		if n.ReadLeaseValid() {
			return true
		}
		if !n.IsLeader() || time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-n.stopc:
			return false
		case <-time.After(time.Millisecond):
		}
	}
}
