package repl

import (
	"fmt"
	"math"
	"sync"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// What an online backup (internal/backup) needs from the raft node, and what a restore needs to turn
// a member's engine and log into those of a new single-node cluster.

// logHolds keeps log purge below the lowest index a running backup still has to read.
type logHolds struct {
	mu   sync.Mutex
	next uint64
	from map[uint64]uint64 // hold id -> first index it needs
}

// floor is the lowest index some hold needs (MaxUint64 without holds).
func (h *logHolds) floor() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := uint64(math.MaxUint64)
	for _, i := range h.from {
		f = min(f, i)
	}
	return f
}

// HoldLog keeps every entry from index from on out of log purge until release is called (a backup
// holds the entries after its engine snapshot while it streams the engine, which can take longer
// than the retention lasts under writes). A purge that was already running when HoldLog was called
// removes only entries at or below the applied index it started with; callers hold from above an
// index they read after calling (see backup.Serve). release may be called more than once.
func (n *Node) HoldLog(from uint64) (release func()) {
	h := &n.holds
	h.mu.Lock()
	if h.from == nil {
		h.from = map[uint64]uint64{}
	}
	h.next++
	id := h.next
	h.from[id] = from
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.from, id)
		h.mu.Unlock()
	}
}

// RestoreEntry is entry e as a restored single-node cluster replays it: a membership change of the
// old cluster becomes an empty normal entry (raft's own no-op, skipped by apply), so the restored
// node stays the only voter while every index keeps its place (GTIDs and --to-index stay valid).
func RestoreEntry(e klog.Entry) klog.Entry {
	switch pb.EntryType(e.Type) {
	case pb.EntryConfChange, pb.EntryConfChangeV2:
		return klog.Entry{Index: e.Index, Term: e.Term, Type: uint8(pb.EntryNormal)}
	}
	return e
}

// ResetMembership makes eng, restored from another cluster's engine at applied index applied, the
// engine of a new cluster whose only voter is id: the membership recorded with the data becomes
// {id}, the old members' addresses and any snapshot-install marker are dropped. The batch keeps the
// applied index and is flushed (the engine runs without a WAL).
func ResetMembership(eng *engine.Engine, id, applied uint64) error {
	cs := pb.ConfState{Voters: []uint64{id}}
	v, err := cs.Marshal()
	if err != nil {
		return err
	}
	b := eng.NewBatch()
	defer b.Close()
	end := append([]byte(nil), memberKeyPrefix...)
	end[len(end)-1]++ // the first key after every member key
	if err := b.DeleteRange(memberKeyPrefix, end); err != nil {
		return err
	}
	if err := b.Delete(snapMarkerKey); err != nil {
		return err
	}
	if err := b.Set(confStateKey, v); err != nil {
		return err
	}
	if err := eng.Apply(b, applied, false); err != nil {
		return fmt.Errorf("repl: reset membership: %w", err)
	}
	return eng.Flush()
}
