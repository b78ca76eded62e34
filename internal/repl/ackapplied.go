package repl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.etcd.io/raft/v3/quorum"
	pb "go.etcd.io/raft/v3/raftpb"
)

// The commit ack level "applied" (kiln_commit_ack, issue 10; PostgreSQL's remote_apply): a commit is
// acknowledged only once a majority of the engine-bearing voters has applied it, so a plain read on
// any of them right after the acknowledgement sees it.
//
//  1. Every member with an engine reports its applied index to the leader it knows: from the apply
//     goroutine after each applied batch (so the report follows the apply at once, with no tick to
//     wait for) and again on every raft tick (so a lost report, or a leader that started leading
//     after the last apply, is repaired within a tick). The report is msgApplied, a raft message
//     type raft does not have: the transport carries it on the stream it keeps to the leader anyway
//     (one ~20 byte frame, coalesced with whatever else is queued), and Node.Step takes it before
//     raft sees it. A field in raft's own responses cannot carry it: a follower's MsgAppResp for an
//     entry goes out before it even knows the entry is committed, and so before it applies it;
//     waiting for the next heartbeat response would add up to a tick to every applied commit.
//  2. The leader keeps the latest report per member (peerApplied) and wakes the waiters.
//  3. WaitMajorityApplied waits until the engine-bearing voters' applied indexes, counted with
//     raft's own quorum rules (a joint configuration needs a majority of both halves), reach the
//     commit's index. Log-only voters and learners do not count: they cannot serve the read the
//     level promises. The leader's own applied index counts; the commit was applied here already.
//
// This only ever adds a wait after a commit that is already durable on a majority and applied here
// (Commit's own promise): no level acknowledges before a majority fsynced. An applied index is a
// fact that never needs a term: only committed entries are applied, and by log matching the entry
// a member applied at index i is the one committed there.
//
// When this node stops leading (or its term changes) while a commit waits for the level, the wait
// ends with ErrAppliedUnconfirmed: the commit itself stands (it was durable on a majority and
// applied here), but reports now go to the new leader, so "a majority applied it" can no longer be
// confirmed from here. The client gets an error rather than an acknowledgement the level did not
// earn; the error says the transaction is committed.

// msgApplied is Kiln's own message type: From has applied every entry up to Index. Raft never sees
// it (Node.Step takes it), and raft's own types end far below this number.
const msgApplied pb.MessageType = 1000

// ErrAppliedUnconfirmed: a commit under kiln_commit_ack = applied completed (durable on a majority,
// applied on this node) but this node stopped leading before a majority of the engine-bearing
// voters was known to have applied it.
var ErrAppliedUnconfirmed = errors.New("repl: committed, but this node stopped leading before a majority of voters confirmed applying it")

// ackState is the leader's view of the members' applied indexes (step 2) and the voter
// configuration they are counted against.
type ackState struct {
	mu      sync.Mutex
	applied map[uint64]uint64 // member id -> highest applied index it reported
	voters  [2][]uint64       // incoming and outgoing voters (outgoing empty outside a joint change)
	sig     appliedSignal     // wakes WaitMajorityApplied on a report, a configuration or a step down
}

// setVoters records the voter configuration (from the loop: at start, on a membership change, on
// becoming leader).
func (a *ackState) setVoters(in, out []uint64) {
	a.mu.Lock()
	a.voters = [2][]uint64{append([]uint64(nil), in...), append([]uint64(nil), out...)}
	a.mu.Unlock()
	a.sig.advanced()
}

// peerApplied records member id's report (step 2).
func (n *Node) peerApplied(id, index uint64) {
	a := &n.acks
	a.mu.Lock()
	if a.applied == nil {
		a.applied = map[uint64]uint64{}
	}
	moved := index > a.applied[id]
	if moved {
		a.applied[id] = index
	}
	a.mu.Unlock()
	if moved {
		a.sig.advanced()
	}
}

// reportedApplied is member id's last reported applied index (this node's own for itself).
func (n *Node) reportedApplied(id uint64) uint64 {
	if id == n.id {
		return n.applied.Load()
	}
	n.acks.mu.Lock()
	defer n.acks.mu.Unlock()
	return n.acks.applied[id]
}

// reportApplied sends this node's applied index to the leader it knows (step 1). A leader, a
// log-only voter (no engine) and a node without a transport or leader send nothing; neither does
// Manual mode, whose simulation drives every message itself.
func (n *Node) reportApplied() {
	if n.cfg.Manual || n.cfg.LogOnly || n.cfg.Transport == nil {
		return
	}
	lead := n.lead.Load()
	if lead == 0 || lead == n.id {
		return
	}
	n.cfg.Transport.Send([]pb.Message{{Type: msgApplied, From: n.id, To: lead, Term: n.term.Load(), Index: n.applied.Load()}})
}

// ackIndexer is quorum.AckedIndexer over the reported applied indexes: log-only voters have none.
type ackIndexer struct {
	n       *Node
	applied map[uint64]uint64
}

func (x ackIndexer) AckedIndex(id uint64) (quorum.Index, bool) {
	if id == x.n.id {
		return quorum.Index(x.n.applied.Load()), true
	}
	if x.n.IsLogOnly(id) {
		return 0, false
	}
	v, ok := x.applied[id]
	return quorum.Index(v), ok
}

// majorityApplied is the highest index a majority of the engine-bearing voters has applied
// (both halves of a joint configuration).
func (n *Node) majorityApplied() uint64 {
	a := &n.acks
	a.mu.Lock()
	defer a.mu.Unlock()
	var jc quorum.JointConfig
	for half, ids := range a.voters {
		if len(ids) == 0 {
			continue
		}
		jc[half] = quorum.MajorityConfig{}
		for _, id := range ids {
			if !n.IsLogOnly(id) {
				jc[half][id] = struct{}{}
			}
		}
	}
	if len(jc[0]) == 0 && len(jc[1]) == 0 {
		return 0 // no configuration known yet: nothing is confirmed
	}
	return uint64(jc.CommittedIndex(ackIndexer{n: n, applied: a.applied}))
}

// WaitMajorityApplied returns once a majority of the engine-bearing voters has applied index
// (nil). It ends with ErrAppliedUnconfirmed when this node stops leading, or its leadership's term
// changes, before that; with an *InterruptedError when ctx ends (the commit stands either way); and
// with ErrStopped when the node stops. It is meant for an index this node committed as leader.
func (n *Node) WaitMajorityApplied(ctx context.Context, index uint64) error {
	epoch := n.Epoch()
	for {
		ch := n.acks.sig.wait()
		if n.majorityApplied() >= index {
			return nil
		}
		if epoch == 0 || n.Epoch() != epoch {
			return fmt.Errorf("%w (log index %d)", ErrAppliedUnconfirmed, index)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return &InterruptedError{Index: index}
		case <-n.stopc:
			return ErrStopped
		}
	}
}
