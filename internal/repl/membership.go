package repl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// MemberChange is one membership operation, proposed through raft's ConfChangeV2 (joint consensus
// when a change needs it) and applied by every member at the same log position.
type MemberChange struct {
	Op   MemberOp
	ID   uint64
	Addr string // the member's raft address (add, add-learner)
}

// MemberOp names a membership operation.
type MemberOp string

const (
	AddVoter   MemberOp = "add"          // a new voting member (log + engine)
	AddLogOnly MemberOp = "add-log-only" // a new log-only voter (log, no engine; see Config.LogOnly)
	AddLearner MemberOp = "add-learner"  // a replica that does not vote: not in any quorum
	Promote    MemberOp = "promote"      // a learner becomes a voter
	Remove     MemberOp = "remove"       // a member leaves
)

// ChangeMembership proposes c on the leader and waits until it is applied here (then every later
// commit counts the new configuration). A node that does not lead returns NotLeaderError; raft
// refuses a change while another is still pending (the caller retries).
func (n *Node) ChangeMembership(ctx context.Context, c MemberChange) error {
	var t pb.ConfChangeType
	switch c.Op {
	case AddVoter, Promote, AddLogOnly:
		t = pb.ConfChangeAddNode
	case AddLearner:
		t = pb.ConfChangeAddLearnerNode
	case Remove:
		t = pb.ConfChangeRemoveNode
	default:
		return fmt.Errorf("repl: unknown membership operation %q", c.Op)
	}
	if c.ID == 0 {
		return errors.New("repl: a member id must be > 0")
	}
	if (c.Op == AddVoter || c.Op == AddLearner || c.Op == AddLogOnly) && c.Addr == "" {
		return errors.New("repl: a new member needs its raft address")
	}
	if c.Op == Promote || c.Op == Remove {
		// The address stays what the log recorded when the member was added.
		c.Addr, _ = n.memberAddr(c.ID)
	}
	req := n.newID()
	mctx, err := json.Marshal(memberContext{Addr: c.Addr, Req: req, LogOnly: c.Op == AddLogOnly || (c.Op == Promote && n.IsLogOnly(c.ID))})
	if err != nil {
		return err
	}
	cc := pb.ConfChangeV2{Changes: []pb.ConfChangeSingle{{Type: t, NodeID: c.ID}}, Context: mctx}
	done := make(chan error, 1)
	propose := func() {
		if raft.StateType(n.state.Load()) != raft.StateLeader {
			done <- &NotLeaderError{Leader: n.otherLeader()}
			return
		}
		if err := n.rn.ProposeConfChange(cc); err != nil {
			done <- fmt.Errorf("repl: membership change refused: %w", err)
			return
		}
		n.confWaiters[req] = done
	}
	select {
	case n.ctlc <- propose:
	case <-n.stopc:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-n.alldc:
		return ErrStopped
	case <-ctx.Done():
		// The change may still be applied; the caller checks the status.
		return fmt.Errorf("repl: waiting for the membership change: %w", ctx.Err())
	}
}

// confApplied wakes a ChangeMembership waiting for the change with this request id. Raft turns a
// refused change (another was pending) into an empty entry, which never gets here: such waiters end
// when leadership ends or their context does.
func (n *Node) confApplied(req uint64, err error) {
	if ch, ok := n.confWaiters[req]; ok {
		delete(n.confWaiters, req)
		ch <- err
	}
}
