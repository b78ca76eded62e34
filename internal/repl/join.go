package repl

import (
	"encoding/binary"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// A member restored from a backup that joins its source cluster (kiln restore --join): its engine
// is the source member's at the backup's engine index N and its log holds the source's committed
// entries N+1..E with their own indexes and terms (membership changes included), all committed, so
// the leader finds its log matching at E and sends only the entries after E (raft's log matching),
// or an engine snapshot when it no longer holds them. The history is the cluster's by construction
// (a backup holds only committed entries), but a backup of another cluster that happens to carry
// the same cluster id would not be, and raft takes a follower's committed entries on trust: a
// leader whose probes reach below the follower's commit index is answered "I have them". So until
// the leader's log is seen to agree at E, every append the node receives is checked against the
// restored log's terms (checkJoin); a disagreement stops the node before it takes anything.

// joinKey records, in a restored joining member's engine, the end of the history it was restored
// with: index(8) term(8). An installed engine snapshot replaces the whole engine, this key too.
var joinKey = []byte{0x00, 'j', 'o', 'i', 'n'}

// joinCheck is a restored member's check of its history against the leader's (loop-owned).
type joinCheck struct {
	end, term uint64 // the restored history's last index and its term; end 0: not a restored member
	state     joinState
}

type joinState uint8

const (
	joinPending  joinState = iota // not confirmed yet: appends are checked
	joinMatched                   // the leader's log has the restored end with the same term
	joinDiverged                  // the leader's log disagrees: nothing is taken from it
)

// PrepareJoin makes eng, restored from a member's engine at applied index applied, the engine of a
// new member of the same cluster whose log will end at end (with term endTerm): the membership
// recorded with the data stays (the cluster's own, which the log's later membership changes
// continue), a snapshot-install marker is dropped, and the restored end is recorded for checkJoin.
// The batch keeps the applied index and is flushed (the engine runs without a WAL).
func PrepareJoin(eng *engine.Engine, applied, end, endTerm uint64) error {
	if end < applied {
		return fmt.Errorf("repl: restored log end %d is below the engine's index %d", end, applied)
	}
	b := eng.NewBatch()
	defer b.Close()
	if err := b.Delete(snapMarkerKey); err != nil {
		return err
	}
	v := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, end), endTerm)
	if err := b.Set(joinKey, v); err != nil {
		return err
	}
	if err := eng.Apply(b, applied, false); err != nil {
		return fmt.Errorf("repl: prepare a joining member: %w", err)
	}
	return eng.Flush()
}

// Members returns the ids of the members (voters and learners, either side of a joint
// configuration) that eng's recorded membership holds.
func Members(eng *engine.Engine) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	cs, _, err := readConfState(eng.Get)
	if err != nil {
		return nil, err
	}
	for _, l := range [][]uint64{cs.Voters, cs.Learners, cs.VotersOutgoing, cs.LearnersNext} {
		for _, id := range l {
			out[id] = true
		}
	}
	return out, nil
}

// ApplyMemberEntry updates members with entry e if it is a membership change (others are
// ignored): added voters and learners join it, removed members leave it.
func ApplyMemberEntry(members map[uint64]bool, e klog.Entry) error {
	t := pb.EntryType(e.Type)
	if t != pb.EntryConfChange && t != pb.EntryConfChangeV2 {
		return nil
	}
	cc, err := decodeConfChange(pb.Entry{Type: t, Data: e.Data})
	if err != nil {
		return fmt.Errorf("repl: entry %d: decode membership change: %w", e.Index, err)
	}
	changes, _ := confChangeMembers(cc.AsV2())
	for _, c := range changes {
		if c.remove {
			delete(members, c.id)
		} else {
			members[c.id] = true
		}
	}
	return nil
}

// readConfState reads the membership recorded with the applied data through get (an engine's or
// a snapshot's Get); ok is false when none is recorded (nothing applied yet).
func readConfState(get func(key []byte) ([]byte, bool, error)) (cs pb.ConfState, ok bool, err error) {
	b, ok, err := get(confStateKey)
	if err != nil || !ok {
		return cs, false, err
	}
	if err := cs.Unmarshal(b); err != nil {
		return cs, false, fmt.Errorf("repl: decode membership: %w", err)
	}
	return cs, true, nil
}

// loadJoin reads the restored end recorded by PrepareJoin (none: not a restored member).
func (n *Node) loadJoin() error {
	v, ok, err := n.eng.Get(joinKey)
	if err != nil || !ok {
		return err
	}
	if len(v) != 16 {
		return fmt.Errorf("repl: restored-member record of %d bytes, want 16", len(v))
	}
	n.join = joinCheck{end: binary.BigEndian.Uint64(v), term: binary.BigEndian.Uint64(v[8:])}
	if n.lg.LastIndex() > n.join.end {
		// Raft appended past the restored end, which it does only after an append that matched
		// it, and checkJoin let that through only with the restored terms: confirmed before a
		// restart.
		n.join.state = joinMatched
		return nil
	}
	n.joinPending.Store(true)
	n.log.Info("restored member: its history is checked against the leader's before it takes entries", "restored_end", n.join.end, "term", n.join.term)
	return nil
}

// checkJoin reports whether message m may be stepped on a restored member (on the loop). While the
// restored history is unconfirmed, an append's previous entry and its entries at or below the
// restored end must carry the terms this node's log has there; the first disagreement stops the
// node (it keeps its data and takes nothing more: no damage on either side), and reaching the
// restored end with the leader's term confirms it. Entries outside the restored log (below its
// start, past its end) are raft's to judge; an engine snapshot replaces the restored history, so it
// passes.
func (n *Node) checkJoin(m pb.Message) bool {
	j := &n.join
	switch {
	case j.state == joinDiverged:
		return m.Type != pb.MsgApp && m.Type != pb.MsgSnap
	case j.state == joinMatched || m.Type != pb.MsgApp || n.Stats.SnapshotsInstalled.Load() > 0:
		return true
	}
	check := func(i, t uint64) bool {
		if i > j.end || i == 0 {
			return true
		}
		mine, err := n.lg.Term(i)
		if err != nil {
			return true // not in this log: raft decides
		}
		if mine != t {
			j.state = joinDiverged
			n.joinPending.Store(false)
			n.fail(fmt.Errorf("repl: this node was restored from a backup whose history is not the cluster's: the leader (node %d) has term %d at index %d, the restored log term %d; it takes nothing from the leader (restore a backup of this cluster, or join with an empty data directory)", m.From, t, i, mine))
			return false
		}
		if i == j.end {
			j.state = joinMatched
			n.joinPending.Store(false)
			n.log.Info("restored member: the leader's log matches the restored history; catching up from the leader's log", "leader", m.From, "index", i, "term", t)
		}
		return true
	}
	if !check(m.Index, m.LogTerm) {
		return false
	}
	for _, e := range m.Entries {
		if e.Index > j.end {
			break
		}
		if !check(e.Index, e.Term) {
			return false
		}
	}
	return true
}

// RestoredPending reports whether this node was restored from a backup to join its cluster and
// its history has not been confirmed yet: neither has an append from the leader matched the
// restored end nor has an engine snapshot replaced it. Until then its data may be another
// cluster's (checkJoin), so it is not offered as a replica.
func (n *Node) RestoredPending() bool {
	return n.joinPending.Load() && n.Stats.SnapshotsInstalled.Load() == 0
}

// restoredCheck is a restored member's state for Status: "" (not a restored member), "pending",
// "matched" (catching up from the leader's log), "replaced" (an engine snapshot replaced the
// restored history: the leader no longer held the log after it) or "diverged".
func (n *Node) restoredCheck() string {
	if n.join.end == 0 {
		return ""
	}
	switch {
	case n.join.state == joinDiverged:
		return "diverged"
	case n.Stats.SnapshotsInstalled.Load() > 0:
		return "replaced"
	case n.join.state == joinMatched:
		return "matched"
	}
	return "pending"
}
