// Package repl owns consensus on the binlog: it drives go.etcd.io/raft/v3 with the binlog
// (internal/log) as raft's log storage, turns commits into proposals, and applies committed records to
// the engine in log order. A single node is a cluster with one voter: the same code path.
//
// The commit path, as numbered duties of the loop (one goroutine owns the RawNode):
//  1. Drain every proposal that arrived while the previous fsync ran and propose them all: that is
//     group commit. No artificial wait.
//  2. For each Ready: append its entries and hard state to the binlog and fsync once (rd.MustSync),
//     and only then Advance. With one voter raft acknowledges its own entries on Advance, so
//     advancing before the fsync would commit entries that are not durable.
//  3. Apply committed entries in log order to the engine, all of a Ready's entries in one engine batch
//     that also records the last applied index; the engine never fsyncs.
//  4. Wake the waiting commits only after the apply: their locks are released after this, so a commit
//     is visible to others only once it is durable and applied (log order = apply order = visibility
//     order).
//
// Durability is per commit. A sync commit (the default) is fsynced before it is applied, as above. An
// async commit (txn.WriteSet.Async) is appended and advanced without an fsync, so it is applied and
// acknowledged at once; a background fsync every SyncInterval makes it durable, and so does the next
// sync commit's fsync (the log is a prefix: one fsync covers everything before it). Because the log is
// written only by fsynced batches, a crash leaves a prefix of the commit history. One more rule keeps
// the engine from getting ahead of the log: before pebble flushes a memtable (which may hold async
// entries not yet fsynced) the log is fsynced up to everything handed to the engine (flushBarrier).
//
// Recovery is the same loop: raft starts at the engine's applied index (Config.Applied) and hands the
// committed entries after it to step 3. The node campaigns at once, so a single voter does not wait
// out an election timeout.
package repl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Config configures a node.
type Config struct {
	Log          *klog.Log
	Engine       *engine.Engine
	Logger       *slog.Logger
	TickInterval time.Duration // raft tick (default 100 ms)
	// MaxBatchProposals bounds the proposals taken into one group (default 4096).
	MaxBatchProposals int
	// DiskFree reports the free bytes of the log's filesystem; commits fail with 1021 below
	// ReserveBytes. nil disables the check.
	DiskFree     func() (uint64, error)
	ReserveBytes uint64
	// PurgeInterval is how often the log is trimmed (default 30 s; <0 disables): the engine is
	// flushed, then sealed log segments wholly below its applied index minus RetainEntries are removed.
	PurgeInterval time.Duration
	// RetainEntries keeps at least this many entries below the engine's flushed index (default 10000).
	RetainEntries uint64
	// SyncInterval is how often the log is fsynced in the background while it holds entries of async
	// commits (durability=async) that nothing has synced yet (default 100 ms).
	SyncInterval time.Duration
	// AfterSync, if set, runs after each log fsync that the commit loop made for entries and before they
	// are applied (crash tests use it to crash exactly between fsync and apply).
	AfterSync func()
}

// Node is a running raft member over the binlog.
type Node struct {
	cfg   Config
	log   *slog.Logger
	lg    *klog.Log
	eng   *engine.Engine
	rn    *raft.RawNode
	propc chan *proposal
	stopc chan struct{}
	donec chan struct{}

	nextID  atomic.Uint64
	waiters map[uint64]*proposal // loop-owned
	applied atomic.Uint64
	// inEngine is the highest index handed to the engine (stored before the engine batch is applied):
	// what a memtable flush can persist. The flush barrier keeps it at or below the durable index.
	inEngine atomic.Uint64
	durable  atomic.Uint64 // last index known fsynced in the log
	syncMu   sync.Mutex    // serialises syncLog, so durable and the group counters stay exact
	leader   atomic.Bool

	stopOnce sync.Once
	failed   atomic.Pointer[error] // a fatal apply or log error stops the node

	Stats Stats
	// RecoveryTime is how long start-up replay took.
	RecoveryTime time.Duration
}

// Stats are the commit path's counters (read with atomic loads).
type Stats struct {
	Commits      atomic.Uint64 // proposals applied
	Groups       atomic.Uint64 // log fsyncs that carried entries
	Syncs        atomic.Uint64
	AppliedBytes atomic.Uint64
	GroupSizes   Histogram // proposals per fsync
	CommitNanos  Histogram // commit latency
}

type proposal struct {
	id    uint64
	async bool // acknowledged once applied, before the log is fsynced
	data  []byte
	start time.Time
	index uint64
	err   error
	done  chan struct{}
}

// ErrStopped is returned by commits after Stop.
var ErrStopped = errors.New("repl: node stopped")

const nodeID = 1

// confStateKey stores the applied membership in the engine, beside the applied index.
var confStateKey = []byte{0x00, 'c', 'o', 'n', 'f'}

// Start opens the raft node over the log and engine, replays what the engine has not applied, and
// returns once the node leads and has applied everything committed before the start.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TickInterval == 0 {
		cfg.TickInterval = 100 * time.Millisecond
	}
	if cfg.MaxBatchProposals == 0 {
		cfg.MaxBatchProposals = 4096
	}
	if cfg.PurgeInterval == 0 {
		cfg.PurgeInterval = 30 * time.Second
	}
	if cfg.RetainEntries == 0 {
		cfg.RetainEntries = 10000
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = 100 * time.Millisecond
	}
	start := time.Now()
	applied, err := cfg.Engine.AppliedPosition()
	if err != nil {
		return nil, err
	}
	hs := cfg.Log.HardState()
	if applied > cfg.Log.LastIndex() {
		return nil, fmt.Errorf("repl: engine applied index %d is beyond the log (last index %d, commit %d): the log is missing records the engine has", applied, cfg.Log.LastIndex(), hs.Commit)
	}
	if applied > hs.Commit {
		// Entries are applied only once committed, but a change of the commit index alone is not
		// fsynced: after a power loss the durable hard state can lag what the engine flushed. The
		// engine proves those entries committed, so record that before raft starts.
		hs.Commit = applied
		if err := cfg.Log.SetHardState(hs); err != nil {
			return nil, err
		}
		if err := cfg.Log.Sync(); err != nil {
			return nil, err
		}
	}
	st := &storage{lg: cfg.Log}
	if cs, ok, err := cfg.Engine.Get(confStateKey); err != nil {
		return nil, err
	} else if ok {
		if err := st.cs.Unmarshal(cs); err != nil {
			return nil, fmt.Errorf("repl: decode membership: %w", err)
		}
	} else if cfg.Log.LastIndex() > 0 {
		// The membership entry is in the log but not applied yet: this node is the only voter.
		st.cs = pb.ConfState{Voters: []uint64{nodeID}}
	}
	rcfg := &raft.Config{
		ID:                        nodeID,
		ElectionTick:              10,
		HeartbeatTick:             1,
		Storage:                   st,
		Applied:                   applied,
		MaxSizePerMsg:             4 << 20,
		MaxCommittedSizePerReady:  64 << 20,
		MaxInflightMsgs:           256,
		MaxUncommittedEntriesSize: 1 << 30,
		CheckQuorum:               false,
		PreVote:                   true,
		Logger:                    raftLogger{cfg.Logger},
	}
	rn, err := raft.NewRawNode(rcfg)
	if err != nil {
		return nil, fmt.Errorf("repl: start raft: %w", err)
	}
	if cfg.Log.LastIndex() == 0 {
		if err := rn.Bootstrap([]raft.Peer{{ID: nodeID}}); err != nil {
			return nil, fmt.Errorf("repl: bootstrap: %w", err)
		}
	}
	n := &Node{cfg: cfg, log: cfg.Logger, lg: cfg.Log, eng: cfg.Engine, rn: rn,
		propc: make(chan *proposal, cfg.MaxBatchProposals), stopc: make(chan struct{}), donec: make(chan struct{}),
		waiters: map[uint64]*proposal{}}
	n.applied.Store(applied)
	n.inEngine.Store(applied)
	n.durable.Store(cfg.Log.LastIndex()) // recovery left only synced entries
	cfg.Engine.SetBeforeFlush(n.flushBarrier)
	// Apply what is already committed (a fresh node's membership entry), then campaign at once: a
	// single voter need not wait out an election timeout.
	if err := n.drainReady(); err != nil {
		return nil, err
	}
	_ = rn.Campaign()
	if err := n.drainReady(); err != nil {
		return nil, err
	}
	go n.run()
	go n.syncLoop()
	if cfg.PurgeInterval > 0 {
		go n.purgeLoop()
	}
	// Wait until leading and caught up with everything committed before this start.
	target := hs.Commit
	for {
		if err := n.fatal(); err != nil {
			return nil, err
		}
		if n.leader.Load() && n.applied.Load() >= target {
			break
		}
		select {
		case <-ctx.Done():
			n.Stop()
			return nil, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	n.RecoveryTime = time.Since(start)
	n.log.Info("recovery done", "engine_applied_at_start", applied, "replayed_to", n.applied.Load(), "log_last", cfg.Log.LastIndex(), "took", n.RecoveryTime)
	return n, nil
}

// Commit proposes a write set and waits until it is durable in the log and applied to the engine.
// The wait does not end on ctx: the caller's locks must stay held until the apply, whatever happens
// to the client. If ctx ended meanwhile, the commit's outcome (which follows the log) is still
// reported, with an interrupted error beside it.
func (n *Node) Commit(ctx context.Context, ws *txn.WriteSet) (uint64, error) {
	if err := n.fatal(); err != nil {
		return 0, sqlerr.New(sqlerr.ErrUnknownError, "commit path stopped: %v", err)
	}
	if n.cfg.DiskFree != nil {
		free, err := n.cfg.DiskFree()
		if err == nil && free < n.cfg.ReserveBytes {
			return 0, sqlerr.New(sqlerr.ErrDiskFull, "Disk full (%d bytes free, reserve %d); commits resume when space returns", free, n.cfg.ReserveBytes)
		}
	}
	rec := ws.Encode()
	p := &proposal{id: n.nextID.Add(1), async: ws.Async, start: time.Now(), done: make(chan struct{})}
	p.data = make([]byte, 8+len(rec))
	binary.BigEndian.PutUint64(p.data, p.id)
	copy(p.data[8:], rec)
	select {
	case n.propc <- p:
	case <-n.stopc:
		return 0, ErrStopped
	}
	select {
	case <-p.done:
	case <-n.donec:
		// The loop stopped: the outcome is unknown to us and decided by the log on restart.
		return 0, sqlerr.New(sqlerr.ErrUnknownError, "server shutting down: commit outcome follows the log")
	}
	n.Stats.CommitNanos.Observe(uint64(time.Since(p.start)))
	if p.err == nil && ctx.Err() != nil {
		// The client was killed or went away while waiting: it gets an error, and the commit stands
		// as the log says (it was durable and applied before its locks were released).
		return p.index, sqlerr.New(sqlerr.ErrQueryInterrupted, "Query execution was interrupted while waiting for COMMIT; the transaction is committed (log index %d)", p.index)
	}
	return p.index, p.err
}

// purgeLoop trims the log below what the engine has flushed: log segments are the only copy of
// anything the engine holds only in its memtable, so the engine is flushed first and the purge stays
// below the index applied before that flush.
func (n *Node) purgeLoop() {
	t := time.NewTicker(n.cfg.PurgeInterval)
	defer t.Stop()
	for {
		select {
		case <-n.stopc:
			return
		case <-n.donec:
			return
		case <-t.C:
		}
		if n.lg.Stats().Segments < 2 {
			continue // only sealed segments can go
		}
		applied := n.applied.Load()
		if err := n.eng.Flush(); err != nil {
			n.log.Warn("log purge: engine flush failed", "err", err)
			continue
		}
		if applied <= n.cfg.RetainEntries {
			continue
		}
		below := applied - n.cfg.RetainEntries + 1
		if err := n.lg.Purge(below); err != nil {
			n.log.Warn("log purge failed", "below", below, "err", err)
		}
	}
}

// Applied is the last applied log index.
func (n *Node) Applied() uint64 { return n.applied.Load() }

// Durable is the last log index known fsynced.
func (n *Node) Durable() uint64 { return n.durable.Load() }

// Stop ends the loop. Commits waiting get an error; the log decides their outcome. Entries of async
// commits that are still unsynced are fsynced, so a clean stop loses nothing.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		close(n.stopc)
		<-n.donec
		if n.fatal() == nil && n.lg.LastIndex() > n.durable.Load() {
			if err := n.syncLog(); err != nil {
				n.log.Error("final log fsync failed: async commits since the last fsync are lost", "err", err)
			}
		}
	})
	<-n.donec
}

// syncLog fsyncs everything appended to the log and advances the durable index. The commit loop calls
// it for groups that hold sync commits; syncLoop and flushBarrier call it for async ones.
func (n *Node) syncLog() error {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	last := n.lg.LastIndex() // appended before the Sync below starts, so covered by it
	prev := n.durable.Load()
	if err := n.lg.Sync(); err != nil {
		return fmt.Errorf("repl: fsync log: %w", err)
	}
	n.Stats.Syncs.Add(1)
	if last > prev {
		n.Stats.Groups.Add(1)
		n.Stats.GroupSizes.Observe(last - prev)
		n.durable.Store(last)
	}
	return nil
}

// syncLoop is the background fsync of async commits: every SyncInterval, if the log holds entries
// nothing has synced yet. With only sync commits it never finds any.
func (n *Node) syncLoop() {
	t := time.NewTicker(n.cfg.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-n.stopc:
			return
		case <-n.donec:
			return
		case <-t.C:
		}
		if n.lg.LastIndex() <= n.durable.Load() {
			continue
		}
		if err := n.syncLog(); err != nil {
			// The log is unusable from now on (a failed fsync is sticky); the loop stops at its next
			// append. Async commits since the last fsync are lost, as that mode allows.
			n.fail(err)
			return
		}
	}
}

// flushBarrier runs before the engine flushes a memtable. The engine has no WAL: what it flushes is
// recovered as is, with its applied index, and recovery replays the log only after that index. If the
// memtable held async entries the log had not fsynced, a power loss would leave the engine ahead of the
// log, with history the log no longer has. So the log is fsynced first. With only sync commits
// inEngine never passes durable and this does nothing.
func (n *Node) flushBarrier() {
	if n.inEngine.Load() <= n.durable.Load() {
		return
	}
	if err := n.syncLog(); err != nil {
		// Letting the flush go on could make the engine durable ahead of the log; stopping the
		// process keeps the node recoverable (the log decides, as after a crash).
		n.fail(err)
		panic(fmt.Sprintf("kiln: the engine is about to flush log entries up to %d but the log cannot be fsynced past %d (%v): stopping so the engine never gets ahead of the log",
			n.inEngine.Load(), n.durable.Load(), err))
	}
}

func (n *Node) fatal() error {
	if p := n.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func (n *Node) fail(err error) {
	n.failed.CompareAndSwap(nil, &err)
	n.log.Error("commit path stopped", "err", err)
}

func (n *Node) run() {
	defer close(n.donec)
	ticker := time.NewTicker(n.cfg.TickInterval)
	defer ticker.Stop()
	for {
		select {
		case p := <-n.propc:
			n.propose(p)
			// Group commit: take everything else already waiting.
			for i := 1; i < n.cfg.MaxBatchProposals; i++ {
				select {
				case p := <-n.propc:
					n.propose(p)
					continue
				default:
				}
				break
			}
		case <-ticker.C:
			n.rn.Tick()
		case <-n.stopc:
			n.failWaiters(ErrStopped)
			return
		}
		if err := n.drainReady(); err != nil {
			n.fail(err)
			n.failWaiters(err)
			return
		}
	}
}

func (n *Node) propose(p *proposal) {
	if err := n.rn.Propose(p.data); err != nil {
		p.err = sqlerr.New(sqlerr.ErrUnknownError, "commit not accepted: %v", err)
		close(p.done)
		return
	}
	n.waiters[p.id] = p
}

func (n *Node) failWaiters(err error) {
	for id, p := range n.waiters {
		p.err = sqlerr.New(sqlerr.ErrUnknownError, "commit outcome unknown (%v): it follows the log", err)
		close(p.done)
		delete(n.waiters, id)
	}
}

// drainReady handles every pending Ready: persist + fsync, then apply, then Advance.
func (n *Node) drainReady() error {
	for n.rn.HasReady() {
		rd := n.rn.Ready()
		if rd.SoftState != nil {
			n.leader.Store(rd.SoftState.RaftState == raft.StateLeader)
		}
		mustSync := n.needsSync(rd)
		if !raft.IsEmptyHardState(rd.HardState) {
			hs := rd.HardState
			if err := n.lg.SetHardState(klog.HardState{Term: hs.Term, Vote: hs.Vote, Commit: hs.Commit}); err != nil {
				return fmt.Errorf("repl: write hard state: %w", err)
			}
		}
		if len(rd.Entries) > 0 {
			ents := make([]klog.Entry, len(rd.Entries))
			for i, e := range rd.Entries {
				ents[i] = klog.Entry{Index: e.Index, Term: e.Term, Type: uint8(e.Type), Data: e.Data}
			}
			if err := n.lg.Append(ents); err != nil {
				return fmt.Errorf("repl: append to log: %w", err)
			}
		}
		if mustSync {
			if err := n.syncLog(); err != nil {
				return err
			}
			if len(rd.Entries) > 0 && n.cfg.AfterSync != nil {
				n.cfg.AfterSync()
			}
		}
		if len(rd.CommittedEntries) > 0 {
			if err := n.apply(rd.CommittedEntries); err != nil {
				return err
			}
		}
		n.rn.Advance(rd)
	}
	return nil
}

// needsSync says whether a Ready must be fsynced before Advance: a change of term or vote (raft's rule),
// or any entry that is not an async commit (sync commits, membership changes, a leader's empty entry).
// A Ready of async commits only is advanced unsynced: raft then commits them, they are applied and
// acknowledged, and syncLoop, the next sync group or the flush barrier makes them durable.
func (n *Node) needsSync(rd raft.Ready) bool {
	if !rd.MustSync {
		return false
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		prev := n.lg.HardState()
		if rd.HardState.Term != prev.Term || rd.HardState.Vote != prev.Vote {
			return true
		}
	}
	for _, e := range rd.Entries {
		if e.Type != pb.EntryNormal || len(e.Data) < 8 {
			return true
		}
		p, ok := n.waiters[binary.BigEndian.Uint64(e.Data)]
		if !ok || !p.async {
			return true
		}
	}
	return false
}

// apply writes committed entries to the engine in one batch with the last index, then wakes waiters.
// A record with logical operations (DDL) reads the engine, so the entries before it are applied first,
// in their own batch with their own last index.
func (n *Node) apply(ents []pb.Entry) error {
	b := n.eng.NewBatch()
	defer func() { b.Close() }()
	last := n.applied.Load()
	pending := false // b holds entries not yet in the engine
	for _, e := range ents {
		if e.Index <= last {
			continue // already in the engine
		}
		if e.Index != last+1 {
			// Invariant: the applied index advances by exactly one entry at a time.
			return fmt.Errorf("repl: apply gap: entry %d after applied %d", e.Index, last)
		}
		switch e.Type {
		case pb.EntryNormal:
			if len(e.Data) >= 8 {
				rec := e.Data[8:]
				if pending && txn.RecordReadsState(rec) {
					if err := n.applyBatch(b, last); err != nil {
						return err
					}
					b.Close()
					b = n.eng.NewBatch()
				}
				if err := txn.ApplyRecord(rec, n.eng, b); err != nil {
					return fmt.Errorf("repl: apply entry %d: %w", e.Index, err)
				}
				n.Stats.AppliedBytes.Add(uint64(len(e.Data)))
			}
		case pb.EntryConfChange, pb.EntryConfChangeV2:
			cc, err := decodeConfChange(e)
			if err != nil {
				return fmt.Errorf("repl: decode membership change %d: %w", e.Index, err)
			}
			csb, err := n.rn.ApplyConfChange(cc).Marshal()
			if err != nil {
				return err
			}
			if err := b.Set(confStateKey, csb); err != nil {
				return err
			}
		}
		last = e.Index
		pending = true
	}
	if pending {
		if err := n.applyBatch(b, last); err != nil {
			return err
		}
	}
	for _, e := range ents {
		if e.Type != pb.EntryNormal || len(e.Data) < 8 {
			continue
		}
		id := binary.BigEndian.Uint64(e.Data)
		if p, ok := n.waiters[id]; ok {
			delete(n.waiters, id)
			p.index = e.Index
			n.Stats.Commits.Add(1)
			close(p.done)
		}
	}
	return nil
}

// applyBatch commits b to the engine with last as its applied index.
func (n *Node) applyBatch(b *engine.Batch, last uint64) error {
	n.inEngine.Store(last)
	if err := n.eng.Apply(b, last, false); err != nil {
		return fmt.Errorf("repl: apply to engine at %d: %w", last, err)
	}
	n.applied.Store(last)
	return nil
}

func decodeConfChange(e pb.Entry) (pb.ConfChangeI, error) {
	if e.Type == pb.EntryConfChange {
		var cc pb.ConfChange
		err := cc.Unmarshal(e.Data)
		return cc, err
	}
	var cc pb.ConfChangeV2
	err := cc.Unmarshal(e.Data)
	return cc, err
}

// storage adapts the binlog to raft.Storage.
type storage struct {
	lg *klog.Log
	cs pb.ConfState
}

func (s *storage) InitialState() (pb.HardState, pb.ConfState, error) {
	hs := s.lg.HardState()
	return pb.HardState{Term: hs.Term, Vote: hs.Vote, Commit: hs.Commit}, s.cs, nil
}

func (s *storage) Entries(lo, hi, maxSize uint64) ([]pb.Entry, error) {
	ents, err := s.lg.Entries(lo, hi, maxSize)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]pb.Entry, len(ents))
	for i, e := range ents {
		out[i] = pb.Entry{Index: e.Index, Term: e.Term, Type: pb.EntryType(e.Type), Data: e.Data}
	}
	return out, nil
}

func (s *storage) Term(i uint64) (uint64, error) {
	t, err := s.lg.Term(i)
	return t, mapErr(err)
}

func (s *storage) LastIndex() (uint64, error)  { return s.lg.LastIndex(), nil }
func (s *storage) FirstIndex() (uint64, error) { return s.lg.FirstIndex(), nil }
func (s *storage) Snapshot() (pb.Snapshot, error) {
	// Snapshots for provisioning arrive with replication; a single node never needs one.
	return pb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
}

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, klog.ErrCompacted):
		return raft.ErrCompacted
	case errors.Is(err, klog.ErrUnavailable):
		return raft.ErrUnavailable
	}
	return err
}

// raftLogger routes raft's logging to slog, quietly.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)                 {}
func (r raftLogger) Debugf(format string, v ...any) {}
func (r raftLogger) Info(v ...any)                  {}
func (r raftLogger) Infof(format string, v ...any)  {}
func (r raftLogger) Warning(v ...any)               { r.l.Warn(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Warningf(format string, v ...any) {
	r.l.Warn(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Error(v ...any) { r.l.Error(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Errorf(format string, v ...any) {
	r.l.Error(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Fatal(v ...any) {
	r.l.Error(fmt.Sprint(v...), "component", "raft")
	panic(fmt.Sprint(v...))
}
func (r raftLogger) Fatalf(format string, v ...any) {
	r.l.Error(fmt.Sprintf(format, v...), "component", "raft")
	panic(fmt.Sprintf(format, v...))
}
func (r raftLogger) Panic(v ...any) { panic(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(format string, v ...any) {
	panic(fmt.Sprintf(format, v...))
}
