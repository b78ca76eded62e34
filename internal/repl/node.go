// Package repl owns consensus on the binlog: it drives go.etcd.io/raft/v3 with the binlog
// (internal/log) as raft's log storage, turns commits into proposals, replicates them to the other
// members through a Transport, and applies committed records to the engine in log order. A single
// node is a cluster with one voter: the same code path.
//
// The commit path, as numbered duties. The raft loop (one goroutine, run) owns the RawNode:
//  1. Drain every proposal that arrived while the previous fsync ran and propose them all: that is
//     group commit. On a node that is the only voter the group may then be held open a little
//     (gather, Config.CommitWaitTime): while other client commands are in progress, for at most the
//     log's recent fsync time, so that the commits right behind share this group's fsync. A
//     proposal carries the leadership epoch its transaction began under; one from an ended epoch
//     is refused before it reaches raft (its reads may be stale).
//  2. For each Ready: append its entries and hard state to the binlog (no fsync yet).
//  3. Send messages. A leader whose term and vote did not change in this Ready sends its appends and
//     heartbeats before its own fsync (raft thesis 10.2.1), so a commit costs max(local fsync,
//     round trip + follower fsync), not their sum. Every other message, and above all the responses
//     that acknowledge appended entries or grant votes (MsgAppResp, MsgVoteResp, MsgPreVoteResp), is
//     sent only after step 4: an acknowledgement is a promise the log is durable.
//  4. Fsync once (rd.MustSync), and only then Advance. Raft counts the leader's own entries as
//     acknowledged on Advance, so advancing before the fsync would commit entries that are not durable
//     on a majority. One exception, the pipeline (Config.PipelineSync, off by default: it costs CPU
//     per commit, see there): on a leader that is the only voter, a Ready holding only its own
//     proposals (canPipeline) is advanced at once and its fsync is left to the syncer goroutine,
//     which fsyncs back to back whatever the loop appended. So group N+1 is appended,
//     committed in raft's memory and fsynced while group N is applied and its commits woken, and the
//     loop never waits for the disk. Raft's in-memory commit is observable by no one: step 6 waits.
//  5. Hand the Ready's committed entries, in log order, to the apply goroutine (apply.go; or apply
//     them on the spot when nothing else is queued: inlineApply), each job
//     with the index that must be durable before it is applied (syncTo), and apply membership changes
//     to raft at once (raft needs them before the next Ready; they are never pipelined, so they are
//     durable by then). Raft keeps ticking while a long apply (an index build) runs, so heartbeats
//     are never late because of it.
//  6. The apply goroutine applies each job once the log is durable up to its syncTo (at once for
//     jobs fsynced by the loop; pipelined jobs wait for the syncer, which wakes it), writing the
//     entries to the engine, many in one batch that also records the last applied index (the engine
//     never fsyncs), and only then wakes the waiting commits. So a commit is acknowledged, and
//     visible to plain reads, only once a majority holds it durably and it is applied here (log
//     order = apply order = visibility order). With early lock release (txn's pending.go) a
//     transaction's row locks go earlier, when Place has fixed its record's order; its successors
//     on those rows are placed after it (log order still decides) and the loop refuses one whose
//     predecessor never reached the log (propose).
//
// The invariant all of this keeps: nothing is applied, acknowledged or made visible before it is
// durable (a single node: fsynced here; a cluster: fsynced by a majority, this node included, since
// the leader advances only after its own fsync), and a follower acknowledges only fsynced entries
// (step 3). The only exception is what the client asked for: the only voter's async commits (below).
// apply checks it for every job (syncTo against the durable index) and stops the node if it breaks;
// test/crash (TestCrashRecovery, TestAsyncCrashPrefix) fails if it does not hold.
//
// A commit's outcome is exact whenever it can be. Its entry is identified by (index, term) once
// appended: when that index is applied with the same term it committed; with another term it did
// not (raft's log matching). If this node stops leading before that, the waiter gets
// ErrOutcomeUnknown: a majority may or may not hold it, and only the new leader's log says.
//
// Durability is per commit. A sync commit (the default) is fsynced before it is acknowledged, as
// above. An async commit is the leader's local shortcut: a Ready holding only async commits is
// advanced without an fsync (followers always fsync before they acknowledge), so it is applied and
// acknowledged at once; a background fsync every SyncInterval makes it durable, and so does the next
// sync commit's fsync. The shortcut is taken only by a node that is the only voter: in a cluster the
// leader's unsynced copy would count toward the quorum (see needsSync), so there an async commit is
// fsynced like a sync one. One more rule keeps the engine from getting ahead of the log: before pebble
// flushes a memtable (which may hold async entries not yet fsynced) the log is fsynced up to
// everything handed to the engine (flushBarrier).
//
// Recovery is the same loop: raft starts at the engine's applied index and hands the committed
// entries after it to step 5. A node that is the only voter campaigns at once; members of a larger
// cluster wait for an election as raft decides (PreVote and CheckQuorum on).
//
// Around the commit path: membership changes (membership.go: ConfChangeV2, applied to raft on the
// loop when committed, recorded in the engine by the apply goroutine), engine snapshots for members
// behind the purged log (snapshot.go, with its own numbered duties), and log-only voters
// (Config.LogOnly: they append, fsync and vote, apply nothing, and hand over any leadership raft gives
// them, handOffLeadership).
package repl

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// Applier turns a committed record into engine writes. The SQL layer's logical operations (index
// builds) live behind it, so repl knows nothing of record contents.
type Applier interface {
	// Apply decodes rec into b. eng is what logical operations read: when ReadsState(rec) is true,
	// every earlier record is already in the engine, not only in b.
	Apply(rec []byte, eng *engine.Engine, b *engine.Batch) error
	// ReadsState reports whether rec reads the engine at apply time.
	ReadsState(rec []byte) bool
}

// Transport carries raft messages to the other members. Send must not block on the network: raft
// retransmits what is lost, and the loop must keep ticking.
type Transport interface {
	Send(msgs []pb.Message)
	AddPeer(id uint64, addr string)
	RemovePeer(id uint64)
}

// Peer is a member of the initial cluster: its raft id and the address of its raft listener.
type Peer struct {
	ID      uint64
	Addr    string
	LogOnly bool // a log-only voter (see Config.LogOnly)
}

// Config configures a node.
type Config struct {
	Log     *klog.Log
	Engine  *engine.Engine
	Applier Applier
	Logger  *slog.Logger
	// ID is this node's raft id (default 1). Peers, for a new cluster (an empty log), lists every
	// initial member including this one; empty means a cluster of one. It is ignored once the log
	// holds the membership: the member list lives in the log and the engine.
	ID    uint64
	Peers []Peer
	// Join starts a node with an empty log as a new member of a running cluster: it does not
	// bootstrap, and waits for the leader (which must have added it, see ChangeMembership) to send
	// it the log. Peers then only tell the transport where the members are.
	Join bool
	// LogOnly makes this node a log-only voter: it keeps and fsyncs the log, votes and acknowledges
	// (a cheap third vote, like a binlog server), but applies nothing to an engine and never takes
	// commits. Raft may still elect it (its log can be the only complete one after a failure); it
	// then only brings a full voter up to date and hands leadership to it at once.
	LogOnly bool
	// Transport is required when the cluster has other members; a single node needs none.
	Transport Transport
	// TickInterval is raft's tick (default 100 ms); ElectionTicks ticks without a leader's heartbeat
	// start an election (default 10; raft randomises it within [1x, 2x)). Heartbeats go every tick.
	TickInterval  time.Duration
	ElectionTicks int
	// MaxBatchProposals bounds the proposals taken into one group (default 4096).
	MaxBatchProposals int
	// MaxApplyBacklogBytes: while more committed bytes than this wait for the apply goroutine, the
	// loop takes no new proposals (default 64 MiB). Followers cannot refuse entries, so theirs is not
	// bounded here; raft's MaxCommittedSizePerReady bounds each step.
	MaxApplyBacklogBytes uint64
	// DiskFree reports the free bytes of the log's filesystem; commits fail with DiskFullError below
	// ReserveBytes. nil disables the check.
	DiskFree     func() (uint64, error)
	ReserveBytes uint64
	// PurgeInterval is how often the log is trimmed (default 30 s; <0 disables): the engine is
	// flushed, then sealed log segments wholly below its applied index minus RetainEntries are removed,
	// and on a leader never above what every follower has (until snapshots exist, a follower can only
	// catch up from the log).
	PurgeInterval time.Duration
	// RetainEntries keeps at least this many entries below the engine's flushed index (default 10000).
	RetainEntries uint64
	// FollowerRetainEntries: the leader keeps up to this many more entries for a member that lags
	// (default 100000); a member further behind gets an engine snapshot instead.
	FollowerRetainEntries uint64
	// FetchSnapshot opens a leader's engine snapshot stream (a member that needs one cannot catch up
	// without it).
	FetchSnapshot SnapshotFetcher
	// SyncInterval is how often the log is fsynced in the background while it holds entries of async
	// commits that nothing has synced yet (default 100 ms).
	SyncInterval time.Duration
	// AfterSync, if set, runs after each log fsync that the commit loop or its fsync goroutine (syncer)
	// made for entries and before they are applied (crash tests use it to crash exactly between fsync
	// and apply).
	AfterSync func()
	// Now, if set, is the clock commit times are read from (entry.go; default time.Now): the
	// deterministic simulation's virtual clock.
	Now func() time.Time
	// PipelineSync lets a node that is the only voter advance a group of its own commits before
	// the group's fsync, which a goroutine of its own (syncer) then does back to back while the loop
	// appends the next group; the apply goroutine still waits for it (duty 4). It saves the loop's
	// turn between fsyncs but costs a raft Ready per arriving commit instead of per group: more CPU
	// per commit, so it is off by default (docs/benchmarks.md has the measurements). Ignored in a
	// cluster and in Manual mode.
	PipelineSync bool
	// CommitWaitTime holds a single node's group of sync commits open for the commits right behind it
	// (gather): while PendingCommits is above zero, the loop takes arriving commits for at most
	// CommitWaitTime and the log's recent fsync time, or until the group has CommitWaitCount commits
	// (0: no count). 0 never waits. MariaDB's binlog_commit_wait_usec and binlog_commit_wait_count,
	// but without a wait when no other commit can come.
	CommitWaitTime  time.Duration
	CommitWaitCount int
	// PendingCommits reports the client commands in progress that are not commits already handed to
	// the loop (the server: Threads_running less txn.Manager.Committing); nil never waits.
	PendingCommits func() int64
	// Manual starts no goroutine at all (no raft loop, apply goroutine, background fsync or purge):
	// the caller drives the node through the Manual* methods (manual.go), one thread for everything,
	// which is what a deterministic simulation needs. Commit must not be used in this mode.
	Manual bool
}

// Node is a running raft member over the binlog.
type Node struct {
	cfg   Config
	id    uint64
	log   *slog.Logger
	lg    *klog.Log
	eng   *engine.Engine
	rn    *raft.RawNode // loop-owned after Start
	propc chan *proposal
	recvc chan pb.Message
	ctlc  chan func() // runs on the loop: reports, status, membership
	reads readWaiters // linearizable read requests waiting for their read index (readindex.go)
	stopc chan struct{}
	donec chan struct{} // the loop has exited
	alldc chan struct{} // the loop and the apply goroutine have exited
	aq    *applyQueue

	bootID  uint64 // random per process: proposal ids never repeat across restarts
	nextID  atomic.Uint64
	byID    map[uint64]*proposal // loop-owned: proposed, not yet appended
	byIndex map[uint64]*proposal // loop-owned: appended, not yet committed or superseded
	// lastStamp is the latest commit time (Unix nanoseconds) proposed or seen in the log (loop-owned;
	// entry.go): commit times never decrease along the log.
	lastStamp int64
	// confWaiters are ChangeMembership calls waiting for their entry (loop-owned; by request id).
	confWaiters map[uint64]chan error

	applied    atomic.Uint64
	appliedSig appliedSignal // wakes WaitApplied (wait.go)
	// inEngine is the highest index handed to the engine (stored before the engine batch is applied):
	// what a memtable flush can persist. The flush barrier keeps it at or below the durable index.
	inEngine  atomic.Uint64
	durable   atomic.Uint64 // last index known fsynced in the log
	commitIdx atomic.Uint64 // raft's commit index as last seen by the loop
	syncMu    sync.Mutex    // serialises syncLog, so durable and the group counters stay exact
	lead      atomic.Uint64 // current leader's id, 0 if none known
	state     atomic.Int32  // raft.StateType
	term      atomic.Uint64
	lship     atomic.Pointer[leadership] // non-nil while this node leads
	started   time.Time                  // the monotonic clock's origin for the read lease
	leaseFrom atomic.Int64               // mono() of the latest lease request a quorum confirmed (lease.go)
	// solo: this node is the only voter. alone: the only member at all (no other voter, no
	// learner): no one else can show a commit. Both follow the membership (noteMembership).
	solo  atomic.Bool
	alone atomic.Bool
	// purgeFloor is the lowest index some follower still needs (leader only; MaxUint64 otherwise).
	purgeFloor atomic.Uint64
	caughtUp   atomic.Int64 // unix nanos when applied last reached the commit index
	holds      logHolds     // running backups: purge stays below what they still read (backup.go)
	acks       ackState     // leader: members' reported applied indexes (ackapplied.go)

	// syncWant is the highest index the loop handed to the fsync goroutine (syncer, duty 4); syncc
	// wakes that goroutine.
	syncWant atomic.Uint64
	syncc    chan struct{}
	// diskAmpleUntil: unix nanos until which commits skip the free-space check (checkDiskFree).
	diskAmpleUntil atomic.Int64
	diskSince      atomic.Uint64 // record bytes proposed since the last ample reading

	snaps     snapshots    // leader: pinned engine snapshots for followers
	staged    *staged      // loop-owned: a fetched engine snapshot waiting for raft
	fetching  bool         // loop-owned: a snapshot fetch is running
	lastConf  uint64       // loop-owned: index of the last membership change handed to apply
	join      joinCheck    // loop-owned: a restored member's check of its history (join.go)
	entBuf    []klog.Entry // loop-owned: drainReady's buffer of entries to append
	waitTimer *time.Timer  // loop-owned: gather's timer
	// gatherSkip and gatherBackoff are loop-owned: groups gather will not hold open, and the
	// length of the last such run (doubled after each wait that gained nothing).
	gatherSkip, gatherBackoff int
	syncNanos                 atomic.Int64 // the log's recent fsync time (a moving average), for gather

	// joinPending mirrors join.state == joinPending on a restored member, for RestoredPending.
	joinPending atomic.Bool

	membersMu sync.Mutex
	members   map[uint64]string // raft id -> raft address, as applied
	logOnly   map[uint64]bool   // members that are log-only voters

	bg       sync.WaitGroup // syncLoop, purgeLoop, snapshot fetches: Stop waits for them
	stopOnce sync.Once
	failed   atomic.Pointer[error] // a fatal apply or log error stops the node

	Stats Stats
	// RecoveryTime is how long start-up replay took.
	RecoveryTime time.Duration
}

// leadership is this node's current term as leader: commits are taken once every entry before the
// term's first entry (start) is applied, so the SQL layer's caches and locks start from the
// complete history.
type leadership struct {
	term  uint64
	start uint64
}

// Stats are the commit path's counters (read with atomic loads).
type Stats struct {
	Commits      atomic.Uint64 // proposals applied
	Groups       atomic.Uint64 // log fsyncs that carried entries
	Syncs        atomic.Uint64
	AppliedBytes atomic.Uint64
	GroupSizes   Histogram // entries per fsync
	CommitNanos  Histogram // commit latency
	ApplyBatches atomic.Uint64
	// InlineApplies counts groups the raft loop applied itself instead of handing them to the apply
	// goroutine (inlineApply: an idle single node).
	InlineApplies atomic.Uint64
	// SnapshotsInstalled counts engine snapshots this node installed (it was too far behind).
	SnapshotsInstalled atomic.Uint64
	// Handoffs counts leaderships a log-only voter passed to a full voter.
	Handoffs atomic.Uint64
	// CommitWaitTimeouts counts groups closed by CommitWaitTime before CommitWaitCount commits.
	CommitWaitTimeouts atomic.Uint64
}

type proposal struct {
	id    uint64
	epoch uint64
	async bool // acknowledged once applied, before the log is fsynced
	data  []byte
	start time.Time
	index uint64 // set once appended
	term  uint64
	err   error
	done  chan struct{}
	// after: placed records this one read from (Place); refused unless all of them were proposed.
	after []*proposal
	// refused is set on the loop when the proposal never reached raft's log (propose failed).
	refused bool
}

// Keys repl keeps in the engine beside the applied index (all under 0x00, below every SQL key).
var (
	confStateKey    = []byte{0x00, 'c', 'o', 'n', 'f'}
	memberKeyPrefix = []byte{0x00, 'm', 'e', 'm', 'b'}
)

func memberKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), memberKeyPrefix...), id)
}

// memberContext is a membership change's Context: the member's raft address (and a request id for
// changes proposed through ChangeMembership).
type memberContext struct {
	Addr    string `json:"raft"`
	Req     uint64 `json:"req,omitempty"`
	LogOnly bool   `json:"log_only,omitempty"`
}

// Start opens the raft node over the log and engine and starts replaying what the engine has not
// applied. It returns once everything committed before the start (by this node's log) is applied,
// and, for a node that is the only voter, once it leads.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Applier == nil {
		return nil, fmt.Errorf("repl: Config.Applier is required")
	}
	if cfg.ID == 0 {
		cfg.ID = 1
	}
	if cfg.TickInterval == 0 {
		cfg.TickInterval = 100 * time.Millisecond
	}
	if cfg.ElectionTicks == 0 {
		cfg.ElectionTicks = 10
	}
	if cfg.MaxBatchProposals == 0 {
		cfg.MaxBatchProposals = 4096
	}
	if cfg.MaxApplyBacklogBytes == 0 {
		cfg.MaxApplyBacklogBytes = 64 << 20
	}
	if cfg.PurgeInterval == 0 {
		cfg.PurgeInterval = 30 * time.Second
	}
	if cfg.RetainEntries == 0 {
		cfg.RetainEntries = 10000
	}
	if cfg.FollowerRetainEntries == 0 {
		cfg.FollowerRetainEntries = 100000
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = 100 * time.Millisecond
	}
	start := time.Now()
	if err := recoverSnapshotInstall(cfg.Log, cfg.Engine); err != nil {
		return nil, fmt.Errorf("repl: finish an interrupted snapshot install: %w", err)
	}
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
	if st.cs, _, err = readConfState(cfg.Engine.Get); err != nil {
		return nil, err
	}
	// With nothing applied the membership is empty; raft rebuilds it from the log's first
	// (committed) membership entries as it hands them to apply.
	rcfg := &raft.Config{
		ID:                        cfg.ID,
		ElectionTick:              cfg.ElectionTicks,
		HeartbeatTick:             1,
		Storage:                   st,
		Applied:                   applied,
		MaxSizePerMsg:             1 << 20,
		MaxCommittedSizePerReady:  64 << 20,
		MaxInflightMsgs:           256,
		MaxUncommittedEntriesSize: 1 << 30,
		CheckQuorum:               true,
		PreVote:                   true,
		// A follower never forwards proposals: a commit is taken by the leader or refused, so the
		// client learns at once where to go (1290 naming the leader).
		DisableProposalForwarding: true,
		// A leader that removes itself hands over at once instead of leading a cluster it left.
		StepDownOnRemoval: true,
		Logger:            raftLogger{cfg.Logger},
	}
	rn, err := raft.NewRawNode(rcfg)
	if err != nil {
		return nil, fmt.Errorf("repl: start raft: %w", err)
	}
	if cfg.Log.LastIndex() == 0 && !cfg.Join {
		peers := cfg.Peers
		if len(peers) == 0 {
			peers = []Peer{{ID: cfg.ID}}
		}
		rp := make([]raft.Peer, len(peers))
		self := false
		for i, p := range peers {
			ctx, err := json.Marshal(memberContext{Addr: p.Addr, LogOnly: p.LogOnly})
			if err != nil {
				return nil, err
			}
			rp[i] = raft.Peer{ID: p.ID, Context: ctx}
			self = self || p.ID == cfg.ID
		}
		if !self {
			return nil, fmt.Errorf("repl: the initial members %v do not include this node (id %d)", peers, cfg.ID)
		}
		if err := rn.Bootstrap(rp); err != nil {
			return nil, fmt.Errorf("repl: bootstrap: %w", err)
		}
	}
	var boot [8]byte
	_, _ = rand.Read(boot[:])
	n := &Node{cfg: cfg, id: cfg.ID, log: cfg.Logger, lg: cfg.Log, eng: cfg.Engine, rn: rn,
		propc: make(chan *proposal, cfg.MaxBatchProposals), recvc: make(chan pb.Message, 4096),
		ctlc: make(chan func(), 64), stopc: make(chan struct{}), donec: make(chan struct{}), alldc: make(chan struct{}),
		aq: newApplyQueue(), syncc: make(chan struct{}, 1), bootID: binary.BigEndian.Uint64(boot[:]) &^ (1<<32 - 1),
		byID: map[uint64]*proposal{}, byIndex: map[uint64]*proposal{}, confWaiters: map[uint64]chan error{}, members: map[uint64]string{}, logOnly: map[uint64]bool{}}
	n.started = time.Now()
	n.applied.Store(applied)
	n.inEngine.Store(applied)
	n.durable.Store(cfg.Log.LastIndex()) // recovery left only synced entries
	n.purgeFloor.Store(math.MaxUint64)
	n.caughtUp.Store(time.Now().UnixNano())
	n.loadLastStamp()
	if err := n.loadMembers(); err != nil {
		return nil, err
	}
	if err := n.loadJoin(); err != nil {
		return nil, err
	}
	for _, p := range cfg.Peers {
		if _, known := n.memberAddr(p.ID); !known && p.Addr != "" {
			n.setMember(p.ID, p.Addr, p.LogOnly)
		}
	}
	st.snap = n.snapshotForRaft
	cfg.Engine.SetBeforeFlush(n.flushBarrier)
	if cfg.Manual {
		return n.startManual(hs.Commit, start)
	}
	applyDone := make(chan struct{})
	go func() { defer close(applyDone); n.applyLoop() }()
	go func() { <-n.donec; n.aq.close(); <-applyDone; close(n.alldc) }()
	// The fsync goroutine outlives the loop until the apply goroutine is done: entries handed to apply
	// before a stop may still wait for their fsync.
	n.bg.Go(n.syncer)
	// Hand what is already committed to apply (a fresh node's membership entries are applied to raft
	// here), then, if this node is the only voter, campaign at once: it need not wait out an
	// election timeout.
	if err := n.drainReady(); err != nil {
		close(n.donec)
		return nil, err
	}
	n.noteMembership(confStateOf(rn.Status().Config))
	if n.solo.Load() {
		_ = rn.Campaign()
		if err := n.drainReady(); err != nil {
			close(n.donec)
			return nil, err
		}
	}
	go n.run()
	n.bg.Go(n.syncLoop)
	if cfg.PurgeInterval > 0 {
		n.bg.Go(n.purgeLoop)
	}
	// Wait until caught up with everything committed before this start (and leading, when alone).
	target := hs.Commit
	for {
		if err := n.fatal(); err != nil {
			n.Stop()
			return nil, err
		}
		if n.applied.Load() >= target && (!n.solo.Load() || n.Epoch() != 0) {
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
	n.log.Info("recovery done", "node", cfg.ID, "engine_applied_at_start", applied, "replayed_to", n.applied.Load(), "log_last", cfg.Log.LastIndex(), "took", n.RecoveryTime)
	return n, nil
}

// ID is this node's raft id.
func (n *Node) ID() uint64 { return n.id }

// Epoch identifies this node's current leadership: the raft term in which it leads, once every entry
// of earlier terms is applied here; 0 while it does not lead or is still catching up. A transaction
// records it when it begins and its commit is refused under another epoch (ErrStaleEpoch).
func (n *Node) Epoch() uint64 {
	if n.cfg.LogOnly {
		return 0
	}
	l := n.lship.Load()
	if l == nil || n.applied.Load() < l.start {
		return 0
	}
	return l.term
}

// IsLeader reports whether this node leads and takes commits (Epoch() != 0).
func (n *Node) IsLeader() bool { return n.Epoch() != 0 }

// Leader is the current leader's raft id as this node knows it (0: none known).
func (n *Node) Leader() uint64 { return n.lead.Load() }

// Term is the current raft term as this node last saw it.
func (n *Node) Term() uint64 { return n.term.Load() }

// Commit proposes a record and waits until a majority holds it durably and it is applied here.
// epoch is the Epoch() the transaction began under. The wait does not end on ctx: the caller's locks
// must stay held until the apply, whatever happens to the client; if ctx ended meanwhile, the
// outcome is still reported, as an *InterruptedError when it committed.
func (n *Node) Commit(ctx context.Context, rec []byte, async bool, epoch uint64) (uint64, error) {
	t, err := n.Place(ctx, rec, async, epoch, nil)
	if err != nil {
		return 0, err
	}
	return t.Wait(ctx)
}

// Waiter is what Place returns: a *Ticket. It is an alias of a type literal, identical to
// txn.Placed, so that the Node is a txn.Placer although neither package imports the other.
type Waiter = interface {
	Wait(ctx context.Context) (uint64, error)
}

// Ticket is a record whose place in the log is fixed: every record placed after it gets a later
// index (or none). It may not be durable yet; Wait says when it is, or how it failed.
type Ticket struct {
	n *Node
	p *proposal
}

// Place queues a record for the log and returns as soon as its order is fixed, before it is durable:
// the loop takes proposals in the order they are placed, and raft gives them indexes in that order.
// This is what early lock release needs (txn): a transaction's successor on a row may read its
// pending writes and place its own record after it, because a later record can only become durable
// together with or after every record before it, and is lost with it.
//
// after lists the placed records the new one read from. The loop refuses the new record
// (ErrNotCommitted) when one of them never made it into the log (raft dropped it, or it was
// refused), so a record never enters the log after a write it depends on that is not there. Once both
// are in the log, log matching does the rest: a leader change that truncates the earlier one
// truncates every later one, which then fails too.
func (n *Node) Place(ctx context.Context, rec []byte, async bool, epoch uint64, after []Waiter) (Waiter, error) {
	return n.PlaceFramed(ctx, frame(rec), async, epoch, after)
}

// RecordHeadroom is the bytes CommitFramed and PlaceFramed want before a record: the entry's header.
const RecordHeadroom = entryIDBytes + entryTimeBytes

// frame returns rec after RecordHeadroom bytes, in a new buffer.
func frame(rec []byte) []byte {
	buf := make([]byte, RecordHeadroom+len(rec))
	copy(buf[RecordHeadroom:], rec)
	return buf
}

// CommitFramed is Commit of the record buf[RecordHeadroom:]; the bytes before it become the entry's
// header, and buf becomes the entry (the caller must not touch it again).
func (n *Node) CommitFramed(ctx context.Context, buf []byte, async bool, epoch uint64) (uint64, error) {
	t, err := n.PlaceFramed(ctx, buf, async, epoch, nil)
	if err != nil {
		return 0, err
	}
	return t.Wait(ctx)
}

// PlaceFramed is Place of the record buf[RecordHeadroom:], framed in place as CommitFramed does.
func (n *Node) PlaceFramed(ctx context.Context, buf []byte, async bool, epoch uint64, after []Waiter) (Waiter, error) {
	p, err := n.newProposal(buf, async, epoch)
	if err != nil {
		return nil, err
	}
	for _, w := range after {
		if t, ok := w.(*Ticket); ok && t.n == n {
			p.after = append(p.after, t.p)
		}
	}
	select {
	case n.propc <- p:
	case <-n.stopc:
		return nil, ErrStopped
	}
	return &Ticket{n: n, p: p}, nil
}

// Wait waits until the record is durable on a majority and applied here, and returns its log
// index; or its failure. Like Commit, the wait does not end on ctx (see Commit). Any number of
// goroutines may wait on one ticket.
func (t *Ticket) Wait(ctx context.Context) (uint64, error) {
	n, p := t.n, t.p
	select {
	case <-p.done:
	case <-n.alldc:
		select {
		case <-p.done:
		default:
			return 0, ErrStopped
		}
	}
	n.Stats.CommitNanos.Observe(uint64(time.Since(p.start)))
	if p.err == nil && ctx.Err() != nil {
		// The client was killed or went away while waiting: it gets an error, and the commit stands
		// as the log says (it was durable and applied before its locks were released).
		return p.index, &InterruptedError{Index: p.index}
	}
	return p.index, p.err
}

// newProposal admits a commit (the node runs, leads in the transaction's epoch, has disk space) and
// frames its record buf[RecordHeadroom:] with a proposal id, in place.
func (n *Node) newProposal(buf []byte, async bool, epoch uint64) (*proposal, error) {
	if len(buf) < RecordHeadroom {
		return nil, fmt.Errorf("repl: a framed record of %d bytes, shorter than its header", len(buf))
	}
	if err := n.fatal(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStopped, err)
	}
	if cur := n.Epoch(); epoch == 0 || cur != epoch {
		if cur == 0 {
			return nil, &NotLeaderError{Leader: n.otherLeader()}
		}
		return nil, ErrStaleEpoch
	}
	if err := n.checkDiskFree(len(buf) - RecordHeadroom); err != nil {
		return nil, err
	}
	p := &proposal{id: n.newID(), epoch: epoch, async: async, start: time.Now(), done: make(chan struct{})}
	// Entry data format 2 (entry.go): the commit time is filled in by propose, on the loop.
	p.data = buf
	binary.BigEndian.PutUint64(p.data, p.id)
	p.data[entryIDBytes] = entryTimeTag
	return p, nil
}

// Disk space checks: a statfs per commit was 2% of the server's CPU in a 64-thread write profile. While
// the last reading left ample room above the reserve (diskAmpleBytes more), commits skip the check for
// diskAmpleFor or until they proposed half that room; near the reserve every commit checks, so the
// limit itself is exact and a disk that was full is seen to have room again at once.
const (
	diskAmpleBytes = 256 << 20
	diskAmpleFor   = 100 * time.Millisecond
)

// checkDiskFree refuses a commit while the log's filesystem has less than ReserveBytes free.
func (n *Node) checkDiskFree(size int) error {
	if n.cfg.DiskFree == nil {
		return nil
	}
	now := time.Now().UnixNano()
	if now < n.diskAmpleUntil.Load() && n.diskSince.Add(uint64(size)) < diskAmpleBytes/2 {
		return nil
	}
	free, err := n.cfg.DiskFree()
	if err != nil {
		return nil // as before: an unreadable filesystem does not stop commits
	}
	if free < n.cfg.ReserveBytes {
		return &DiskFullError{Free: free, Reserve: n.cfg.ReserveBytes}
	}
	if free-n.cfg.ReserveBytes >= diskAmpleBytes {
		n.diskSince.Store(0)
		n.diskAmpleUntil.Store(now + int64(diskAmpleFor))
	} else {
		n.diskAmpleUntil.Store(0)
	}
	return nil
}

// newID is a proposal or request id unique across this node's restarts: the process's random boot
// id in the high 32 bits, a counter in the low ones.
func (n *Node) newID() uint64 { return n.bootID | n.nextID.Add(1)&(1<<32-1) }

func (n *Node) otherLeader() uint64 {
	if l := n.lead.Load(); l != n.id {
		return l
	}
	return 0
}

// Applied is the last applied log index.
func (n *Node) Applied() uint64 { return n.applied.Load() }

// Durable is the last log index known fsynced.
func (n *Node) Durable() uint64 { return n.durable.Load() }

// CommitIndex is raft's commit index as this node last saw it.
func (n *Node) CommitIndex() uint64 { return n.commitIdx.Load() }

// Lag is how far this node's engine is behind what it knows committed: entries, and how long since
// it last had everything applied.
func (n *Node) Lag() (entries uint64, behind time.Duration) {
	c, a := n.commitIdx.Load(), n.applied.Load()
	if a >= c {
		return 0, 0
	}
	return c - a, time.Since(time.Unix(0, n.caughtUp.Load()))
}

// Step delivers a message from another member (called by the transport).
func (n *Node) Step(ctx context.Context, m pb.Message) error {
	if m.Type == msgApplied {
		n.peerApplied(m.From, m.Index) // Kiln's own report, not raft's (ackapplied.go)
		return nil
	}
	select {
	case n.recvc <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-n.stopc:
		return ErrStopped
	}
}

// ReportUnreachable tells raft a message to id was lost, so it probes instead of pipelining.
func (n *Node) ReportUnreachable(id uint64) {
	n.control(func() { n.rn.ReportUnreachable(id) })
}

// ReportSnapshot tells raft how sending a snapshot to id ended.
func (n *Node) ReportSnapshot(id uint64, status raft.SnapshotStatus) {
	n.control(func() { n.rn.ReportSnapshot(id, status) })
}

// control runs f on the loop without blocking the caller when the loop is busy or gone.
func (n *Node) control(f func()) {
	select {
	case n.ctlc <- f:
	case <-n.stopc:
	default:
		// A full control queue means the loop is far behind; a lost report is harmless (raft
		// probes again on its own).
	}
}

// Status is a member's view of the cluster.
type Status struct {
	ID, Leader, Term   uint64
	Role               string // leader, follower, candidate, pre-candidate
	Commit, Applied    uint64
	Durable, LastIndex uint64
	FirstIndex         uint64
	Members            []Member
	LagEntries         uint64
	LagSeconds         float64
	LeaderReady        bool
	// SnapshotsInstalled counts the engine snapshots this node installed since it started.
	SnapshotsInstalled uint64
	// Restored is, on a member restored from a backup to join its cluster (kiln restore --join),
	// how its history compares with the leader's: pending, matched (it catches up from the log),
	// replaced (an engine snapshot replaced it) or diverged (refused); empty on other nodes.
	Restored string `json:",omitempty"`
}

// Member is one member as seen from this node; Match and Progress only on the leader.
type Member struct {
	ID       uint64
	Addr     string
	Voter    bool
	LogOnly  bool
	Match    uint64
	Progress string // raft's replicate/probe/snapshot state (leader only)
	// Applied is the applied index the member last reported to this node (leader only; this
	// node's own on itself): what kiln_commit_ack = applied counts (ackapplied.go).
	Applied uint64
}

// Status returns this node's view; it asks the loop, and fails if the loop does not answer in time.
func (n *Node) Status(ctx context.Context) (Status, error) {
	ch := make(chan raft.Status, 1)
	var restored string // written before the send on ch, read after the receive
	select {
	case n.ctlc <- func() { restored = n.restoredCheck(); ch <- n.rn.Status() }:
	case <-n.stopc:
		return Status{}, ErrStopped
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
	var rs raft.Status
	select {
	case rs = <-ch:
	case <-n.alldc:
		return Status{}, ErrStopped
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
	le, lag := n.Lag()
	s := Status{ID: n.id, Leader: rs.Lead, Term: rs.Term, Role: roleName(rs.RaftState), Commit: rs.Commit,
		Applied: n.applied.Load(), Durable: n.durable.Load(), LastIndex: n.lg.LastIndex(), FirstIndex: n.lg.FirstIndex(),
		LagEntries: le, LagSeconds: lag.Seconds(), LeaderReady: n.IsLeader(),
		SnapshotsInstalled: n.Stats.SnapshotsInstalled.Load(), Restored: restored}
	voters := rs.Config.Voters.IDs()
	for id := range voters {
		s.Members = append(s.Members, n.member(id, true, rs))
	}
	for id := range rs.Config.Learners {
		s.Members = append(s.Members, n.member(id, false, rs))
	}
	slices.SortFunc(s.Members, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return s, nil
}

func (n *Node) member(id uint64, voter bool, rs raft.Status) Member {
	m := Member{ID: id, Voter: voter, LogOnly: n.IsLogOnly(id)}
	m.Addr, _ = n.memberAddr(id)
	if pr, ok := rs.Progress[id]; ok {
		m.Match = pr.Match
		m.Progress = pr.State.String()
	}
	if rs.RaftState == raft.StateLeader {
		m.Applied = n.reportedApplied(id)
	}
	return m
}

func roleName(s raft.StateType) string {
	switch s {
	case raft.StateLeader:
		return "leader"
	case raft.StateFollower:
		return "follower"
	case raft.StateCandidate:
		return "candidate"
	case raft.StatePreCandidate:
		return "pre-candidate"
	}
	return s.String()
}

// MemberAddr is the raft address of member id as applied from the log (or given at bootstrap).
func (n *Node) MemberAddr(id uint64) (string, bool) { return n.memberAddr(id) }

func (n *Node) memberAddr(id uint64) (string, bool) {
	n.membersMu.Lock()
	defer n.membersMu.Unlock()
	a, ok := n.members[id]
	return a, ok
}

func (n *Node) setMember(id uint64, addr string, logOnly bool) {
	n.membersMu.Lock()
	n.members[id] = addr
	n.logOnly[id] = logOnly
	n.membersMu.Unlock()
	if n.cfg.Transport != nil && id != n.id {
		n.cfg.Transport.AddPeer(id, addr)
	}
}

// IsLogOnly reports whether member id is a log-only voter.
func (n *Node) IsLogOnly(id uint64) bool {
	n.membersMu.Lock()
	defer n.membersMu.Unlock()
	return n.logOnly[id]
}

func (n *Node) dropMember(id uint64) {
	n.membersMu.Lock()
	delete(n.members, id)
	delete(n.logOnly, id)
	n.membersMu.Unlock()
	if n.cfg.Transport != nil && id != n.id {
		n.cfg.Transport.RemovePeer(id)
	}
}

// loadMembers reads the member addresses the engine holds (applied membership changes).
func (n *Node) loadMembers() error {
	hi := append(append([]byte(nil), memberKeyPrefix...), 0xff)
	it, err := n.eng.NewIter(memberKeyPrefix, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != len(memberKeyPrefix)+8 {
			continue
		}
		addr, flag, _ := strings.Cut(string(it.Value()), "\n")
		n.setMember(binary.BigEndian.Uint64(k[len(memberKeyPrefix):]), addr, flag == "log-only")
	}
	return nil
}

// Stop ends the loop and the apply goroutine (which first applies what was handed to it: those
// entries are committed). Commits waiting get ErrStopped; the log decides their outcome. Entries of
// async commits that are still unsynced are fsynced, so a clean stop loses nothing.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		close(n.stopc)
		if n.cfg.Manual {
			n.stopManual() // no goroutines to wait for
		}
		<-n.alldc
		// The background loops (a purge flushes the engine) and a snapshot fetch must be done before
		// the caller closes the engine.
		n.bg.Wait()
		n.snaps.mu.Lock()
		n.releasePins(true)
		n.snaps.mu.Unlock()
		if n.staged != nil {
			n.staged.loader.Abort()
		}
		if n.fatal() == nil && n.lg.LastIndex() > n.durable.Load() {
			if err := n.syncLog(); err != nil {
				n.log.Error("final log fsync failed: async commits since the last fsync are lost", "err", err)
			}
		}
	})
	<-n.alldc
}

// Failed is the error that stopped the commit path, nil while it runs.
func (n *Node) Failed() error { return n.fatal() }

func (n *Node) fatal() error {
	if p := n.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func (n *Node) fail(err error) {
	if n.failed.CompareAndSwap(nil, &err) {
		n.log.Error("commit path stopped", "err", err)
	}
}

// noteMembership records what the membership cs means for this node (solo, alone). It is called
// wherever raft's membership changes: at start, when a membership entry is applied to raft, and when
// a snapshot replaces the membership with its own.
func (n *Node) noteMembership(cs pb.ConfState) {
	solo := len(cs.Voters) == 1 && cs.Voters[0] == n.id && len(cs.VotersOutgoing) == 0
	n.solo.Store(solo)
	n.alone.Store(solo && len(cs.Learners) == 0 && len(cs.LearnersNext) == 0)
}

// confStateOf is raft's current membership as a ConfState.
func confStateOf(c tracker.Config) pb.ConfState {
	return pb.ConfState{
		Voters:         c.Voters[0].Slice(),
		VotersOutgoing: c.Voters[1].Slice(),
		Learners:       slices.Sorted(maps.Keys(c.Learners)),
		LearnersNext:   slices.Sorted(maps.Keys(c.LearnersNext)),
	}
}
