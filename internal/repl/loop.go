package repl

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	klog "github.com/kiln-db/kiln/internal/log"
)

// run is the raft loop: the only goroutine that touches the RawNode after Start.
func (n *Node) run() {
	defer close(n.donec)
	ticker := time.NewTicker(n.cfg.TickInterval)
	defer ticker.Stop()
	for {
		// Backpressure: while the apply goroutine is far behind, take no new proposals (messages,
		// ticks and control keep flowing, so leadership is not lost over a slow apply).
		propc := n.propc
		if n.aq.backlog() > n.cfg.MaxApplyBacklogBytes {
			propc = nil
		}
		select {
		case p := <-propc:
			n.propose(p)
			// Group commit: take everything else already waiting.
			taken := n.takeQueued(1)
			if n.cfg.CommitWaitTime > 0 && !p.async {
				n.gather(taken)
			}
		case m := <-n.recvc:
			n.step(m)
			for i := 1; i < 1024; i++ {
				select {
				case m := <-n.recvc:
					n.step(m)
					continue
				default:
				}
				break
			}
		case f := <-n.ctlc:
			f()
		case <-ticker.C:
			n.tick()
		case <-n.aq.failed:
			n.failWaiters(ErrStopped)
			return
		case <-n.stopc:
			n.failWaiters(ErrStopped)
			return
		}
		if err := n.drainReady(); err != nil {
			n.fail(err)
			n.failWaiters(ErrStopped)
			return
		}
	}
}

// gather holds a group of sync commits open for the commits still on their way (Config.CommitWaitTime):
// while other commands are being served (PendingCommits), it takes proposals as they arrive, for at
// most the shorter of CommitWaitTime and the log's recent fsync time, or until the group has
// CommitWaitCount commits. A commit that waits a fraction of an fsync for its neighbours saves them
// an fsync of their own: fewer fsyncs and loop turns per commit when many sessions commit at once,
// and no wait when no other command is in progress (one session, or every other one already in the
// group). When the commands in progress are not commits (reads beside one writer), waits end by
// the bound with nothing gained: after each such wait the loop skips waiting for twice as many
// groups as before (up to maxGatherSkip), so a writer among readers rarely waits.
func (n *Node) gather(taken int) {
	if n.cfg.PendingCommits == nil || n.aq.backlog() > n.cfg.MaxApplyBacklogBytes || !n.soloVoter() {
		return
	}
	wait := min(n.cfg.CommitWaitTime, time.Duration(n.syncNanos.Load()))
	if wait < minCommitWait || n.cfg.PendingCommits() <= 0 {
		return
	}
	if n.gatherSkip > 0 {
		n.gatherSkip--
		return
	}
	if n.waitTimer == nil {
		n.waitTimer = time.NewTimer(wait)
	} else {
		n.waitTimer.Reset(wait)
	}
	defer n.waitTimer.Stop()
	limit := n.cfg.MaxBatchProposals
	if n.cfg.CommitWaitCount > 0 {
		limit = min(limit, n.cfg.CommitWaitCount)
	}
	first := taken
	for taken < limit {
		select {
		case p := <-n.propc:
			n.propose(p)
			taken++
			if n.cfg.PendingCommits() <= 0 {
				// Every other command has handed over its commit or ended: take what is queued.
				n.takeQueued(taken)
				n.gatherBackoff = 0
				return
			}
		case <-n.waitTimer.C:
			n.Stats.CommitWaitTimeouts.Add(1)
			if taken > first {
				n.gatherBackoff = 0
			} else {
				n.gatherBackoff = min(max(2*n.gatherBackoff, 1), maxGatherSkip)
				n.gatherSkip = n.gatherBackoff
			}
			return
		case <-n.stopc:
			return
		}
	}
	n.gatherBackoff = 0
}

// takeQueued proposes the proposals already queued, without waiting, until the group holds
// MaxBatchProposals; taken is how many it holds already. It returns the group's new size.
func (n *Node) takeQueued(taken int) int {
	for ; taken < n.cfg.MaxBatchProposals; taken++ {
		select {
		case p := <-n.propc:
			n.propose(p)
		default:
			return taken
		}
	}
	return taken
}

// maxGatherSkip bounds gather's back-off: at worst one group in this many waits for nothing.
const maxGatherSkip = 128

// minCommitWait: a wait shorter than this saves less than it costs in timer and loop turns.
const minCommitWait = 20 * time.Microsecond

// tick is one raft tick and the leader's periodic duties that ride on it (the loop's ticker and the
// simulation's ManualTick both call it, so they cannot drift apart).
func (n *Node) tick() {
	n.rn.Tick()
	n.updatePurgeFloor()
	n.handOffLeadership()
	n.requestLease()
	n.reportApplied()
}

func (n *Node) step(m pb.Message) {
	if m.Type == msgApplied { // a transport that bypasses Step (tests) delivers it here
		n.peerApplied(m.From, m.Index)
		return
	}
	if n.join.end != 0 && !n.checkJoin(m) {
		return // a restored member's history disagrees with the leader's (join.go)
	}
	if m.Type == pb.MsgSnap && !n.maybeFetch(m) {
		return // stepped once its engine snapshot is staged
	}
	if err := n.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) && !errors.Is(err, raft.ErrStepLocalMsg) {
		n.log.Debug("raft step", "err", err, "from", m.From, "type", m.Type)
	}
}

func (n *Node) propose(p *proposal) {
	// A record read from records placed before it (early lock release): if one of them did not
	// reach the log, this one must not either. They were queued before it, so the loop has
	// already handled them.
	for _, d := range p.after {
		if d.refused {
			n.refuse(p, fmt.Errorf("%w (a transaction it read from was not committed)", ErrNotCommitted))
			return
		}
	}
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		n.refuse(p, &NotLeaderError{Leader: n.otherLeader()})
		return
	}
	if st.Term != p.epoch {
		n.refuse(p, ErrStaleEpoch)
		return
	}
	n.stamp(p)
	if err := n.rn.Propose(p.data); err != nil {
		// ErrProposalDropped (a leadership transfer, the uncommitted-size limit): nothing was
		// appended, so the commit did not happen.
		n.refuse(p, fmt.Errorf("%w (%v)", ErrNotCommitted, err))
		return
	}
	p.after = nil // checked; do not keep the records it read from alive
	n.byID[p.id] = p
}

// refuse ends a proposal that did not reach raft's log.
func (n *Node) refuse(p *proposal, err error) {
	p.refused, p.after, p.err = true, nil, err
	close(p.done)
}

// failWaiters ends every commit the loop tracks: none of them is known to have committed.
func (n *Node) failWaiters(err error) {
	for id, p := range n.byID {
		p.err = err
		close(p.done)
		delete(n.byID, id)
	}
	for i, p := range n.byIndex {
		p.err = err
		close(p.done)
		delete(n.byIndex, i)
	}
}

// afterAppend reports whether raft requires m to wait until the state it acknowledges is durable.
func afterAppend(m pb.Message) bool {
	switch m.Type {
	case pb.MsgAppResp, pb.MsgVoteResp, pb.MsgPreVoteResp:
		return true
	}
	return false
}

// drainReady handles every pending Ready: append, send, fsync, hand off to apply, Advance (duties 2-5).
func (n *Node) drainReady() error {
	for n.rn.HasReady() {
		rd := n.rn.Ready()
		stepDown := false
		becameLeader := false
		if rd.SoftState != nil {
			wasLeader := raft.StateType(n.state.Load()) == raft.StateLeader
			n.state.Store(int32(rd.SoftState.RaftState))
			n.lead.Store(rd.SoftState.Lead)
			isLeader := rd.SoftState.RaftState == raft.StateLeader
			stepDown = wasLeader && !isLeader
			becameLeader = !wasLeader && isLeader
		}
		prev := n.lg.HardState()
		hsChanged := false
		if !raft.IsEmptyHardState(rd.HardState) {
			hs := rd.HardState
			hsChanged = hs.Term != prev.Term || hs.Vote != prev.Vote
			if err := n.lg.SetHardState(klog.HardState{Term: hs.Term, Vote: hs.Vote, Commit: hs.Commit}); err != nil {
				return fmt.Errorf("repl: write hard state: %w", err)
			}
			n.term.Store(hs.Term)
			n.commitIdx.Store(hs.Commit)
		}
		for _, rs := range rd.ReadStates {
			n.leaseConfirmed(rs)
			n.readAnswered(rs)
		}
		if !raft.IsEmptySnap(rd.Snapshot) {
			if err := n.installSnapshot(rd.Snapshot, rd.HardState); err != nil {
				return err
			}
			// raft took the snapshot's membership as its own.
			n.noteMembership(rd.Snapshot.Metadata.ConfState)
		}
		if len(rd.Entries) > 0 {
			// The log keeps each entry's Data, not the slice: one buffer serves every Ready.
			ents := n.entBuf[:0]
			for _, e := range rd.Entries {
				ents = append(ents, klog.Entry{Index: e.Index, Term: e.Term, Type: uint8(e.Type), Data: e.Data})
				n.appended(e)
				n.sawEntry(e)
			}
			err := n.lg.Append(ents)
			clear(ents) // keep no entry's data alive in the buffer
			if cap(ents) <= 1024 {
				n.entBuf = ents[:0]
			}
			if err != nil {
				return fmt.Errorf("repl: append to log: %w", err)
			}
		}
		if becameLeader {
			// raft appended its term's empty entry on becoming leader: the last entry now. Commits
			// are taken once everything up to it is applied.
			n.lship.Store(&leadership{term: n.term.Load(), start: n.lg.LastIndex()})
			n.log.Info("leading", "node", n.id, "term", n.term.Load(), "from_index", n.lg.LastIndex())
			cfg := n.rn.Status().Config.Voters
			n.acks.setVoters(cfg[0].Slice(), cfg[1].Slice())
		} else if stepDown {
			n.lship.Store(nil)
			n.leaseFrom.Store(0)
			n.purgeFloor.Store(math.MaxUint64)
			n.log.Info("stopped leading", "node", n.id, "term", n.term.Load(), "leader", n.lead.Load())
			n.acks.sig.advanced() // applied-level waits end (ackapplied.go)
		}
		mustSync := n.needsSync(rd)
		// pipelined: the fsync goroutine makes these entries durable while the loop goes on; the
		// apply goroutine waits for it (duty 4).
		pipelined := mustSync && n.canPipeline(rd, hsChanged)
		var later []pb.Message
		if raft.StateType(n.state.Load()) == raft.StateLeader && !hsChanged {
			var now []pb.Message
			for _, m := range rd.Messages {
				if afterAppend(m) {
					later = append(later, m)
				} else {
					now = append(now, m)
				}
			}
			n.send(now)
		} else {
			later = rd.Messages
		}
		if pipelined {
			n.syncWant.Store(max(n.syncWant.Load(), n.lg.LastIndex()))
			select {
			case n.syncc <- struct{}{}:
			default: // the syncer is already woken; it reads syncWant after its fsync
			}
		} else if mustSync {
			if err := n.syncLog(); err != nil {
				return err
			}
			if len(rd.Entries) > 0 && n.cfg.AfterSync != nil {
				n.cfg.AfterSync()
			}
		}
		n.send(later)
		if len(rd.CommittedEntries) > 0 {
			if err := n.handOff(rd.CommittedEntries); err != nil {
				return err
			}
		}
		n.rn.Advance(rd)
		if stepDown {
			// Everything still tracked was appended under the ended leadership and not committed
			// as far as this node knows: only the new leader's log decides.
			n.failWaiters(ErrOutcomeUnknown)
			for req := range n.confWaiters {
				n.confApplied(req, ErrOutcomeUnknown)
			}
		}
	}
	return nil
}

// appended notes a proposal's position once raft has placed it in the log. An entry that replaces
// another at the same index supersedes a proposal waiting there.
func (n *Node) appended(e pb.Entry) {
	if old, ok := n.byIndex[e.Index]; ok && old.term != e.Term {
		delete(n.byIndex, e.Index)
		old.err = ErrNotCommitted
		close(old.done)
	}
	if e.Type != pb.EntryNormal || len(e.Data) < 8 {
		return
	}
	id := binary.BigEndian.Uint64(e.Data)
	if p, ok := n.byID[id]; ok {
		delete(n.byID, id)
		p.index, p.term = e.Index, e.Term
		n.byIndex[e.Index] = p
	}
}

func (n *Node) send(msgs []pb.Message) {
	if len(msgs) == 0 {
		return
	}
	if n.cfg.Transport == nil {
		n.log.Warn("raft messages for other members but no transport", "count", len(msgs), "to", msgs[0].To)
		return
	}
	n.cfg.Transport.Send(msgs)
}

// handOff passes committed entries to the apply goroutine with the commits waiting on them, and
// applies membership changes to raft now (raft must see them before its next Ready).
func (n *Node) handOff(ents []pb.Entry) error {
	job := &applyJob{ents: ents}
	for _, e := range ents {
		// Every entry must be durable before it is applied, except this only voter's own async
		// commits (see needsSync).
		local := false
		switch e.Type {
		case pb.EntryNormal:
			if p, ok := n.byIndex[e.Index]; ok {
				delete(n.byIndex, e.Index)
				if p.term == e.Term {
					job.waiters = append(job.waiters, p)
					local = p.async
				} else {
					p.err = ErrNotCommitted
					close(p.done)
				}
			}
		case pb.EntryConfChange, pb.EntryConfChangeV2:
			cc, err := decodeConfChange(e)
			if err != nil {
				return fmt.Errorf("repl: decode membership change %d: %w", e.Index, err)
			}
			cs := n.rn.ApplyConfChange(cc)
			n.lastConf = e.Index
			n.noteMembership(*cs)
			n.acks.setVoters(cs.Voters, cs.VotersOutgoing)
			csb, err := cs.Marshal()
			if err != nil {
				return err
			}
			mc, req := confChangeMembers(cc.AsV2())
			job.confs = append(job.confs, confApply{index: e.Index, state: csb, changes: mc})
			for _, c := range mc {
				if c.remove {
					n.dropMember(c.id)
				} else if c.addr != "" {
					n.setMember(c.id, c.addr, c.logOnly)
				}
			}
			// Raft applied it: later commits count the new configuration. (The engine records it
			// when the apply goroutine reaches this entry.)
			n.confApplied(req, nil)
		}
		if !local {
			job.syncTo = e.Index
		}
		job.bytes += uint64(len(e.Data))
	}
	if n.inlineApply(job) {
		return n.applyInline(job)
	}
	n.aq.push(job, &n.durable)
	return nil
}

// inlineApplyMaxBytes and inlineApplyMaxEntries bound the jobs the loop applies itself: a bigger one
// goes to the apply goroutine, so the loop is never held up long. A group of many commits means
// commits arrive quickly, and the next one would wait for the loop while it applied.
const (
	inlineApplyMaxBytes   = 256 << 10
	inlineApplyMaxEntries = 8
)

// inlineApply says whether the loop applies job itself instead of handing it to the apply goroutine.
// A hand-off costs a goroutine wake-up per group (and, with an idle CPU, the runtime waking a thread
// that finds nothing to do): at low concurrency, where every group is one commit, that was a
// measurable share of a commit's CPU. The loop applies a job only when that cannot delay anything:
// no proposal is waiting for the next group (under load the apply goroutine still applies group N
// while the loop fsyncs group N+1), the job is durable already (never a pipelined or unsynced one),
// it is small (a few commits) and holds only ordinary records (no membership change; no logical
// operation such as an index build, which may run long), the node is the only voter (in a cluster
// the loop must keep ticking and answering followers), and the apply queue is idle (claim), so log
// order holds.
func (n *Node) inlineApply(job *applyJob) bool {
	if n.cfg.Manual || n.cfg.LogOnly || !n.solo.Load() || len(job.confs) > 0 || len(job.ents) > inlineApplyMaxEntries ||
		job.bytes > inlineApplyMaxBytes || job.syncTo > n.durable.Load() || len(n.propc) > 0 {
		return false
	}
	for _, e := range job.ents {
		if e.Type != pb.EntryNormal {
			return false
		}
		if rec, _, _, err := EntryRecord(e.Data); err != nil || n.cfg.Applier.ReadsState(rec) {
			return false
		}
	}
	return n.aq.claim(job)
}

// applyInline applies a job claimed by the loop (inlineApply), as the apply goroutine would.
func (n *Node) applyInline(job *applyJob) error {
	defer n.aq.release()
	if err := n.fatal(); err != nil {
		n.failJobs([]*applyJob{job})
		return err
	}
	if err := n.apply([]*applyJob{job}); err != nil {
		n.fail(err)
		n.aq.failOne.Do(func() { close(n.aq.failed) })
		n.failJobs([]*applyJob{job})
		return err
	}
	n.Stats.InlineApplies.Add(1)
	n.reportApplied()
	return nil
}

type memberChange struct {
	id      uint64
	addr    string
	remove  bool
	logOnly bool
}

func confChangeMembers(cc pb.ConfChangeV2) ([]memberChange, uint64) {
	var mc memberContext
	if len(cc.Context) > 0 {
		if err := json.Unmarshal(cc.Context, &mc); err != nil {
			// Bootstrap entries of other tools carry a raw address.
			mc.Addr = string(cc.Context)
		}
	}
	out := make([]memberChange, 0, len(cc.Changes))
	for _, c := range cc.Changes {
		switch c.Type {
		case pb.ConfChangeRemoveNode:
			out = append(out, memberChange{id: c.NodeID, remove: true})
		default:
			out = append(out, memberChange{id: c.NodeID, addr: mc.Addr, logOnly: mc.LogOnly})
		}
	}
	return out, mc.Req
}

// needsSync says whether a Ready must be fsynced before Advance: a change of term or vote (raft's rule),
// or any entry that is not this leader's own async commit (sync commits, membership changes, a
// leader's empty entry, and every entry on a follower: a follower's acknowledgement promises
// durability). A Ready of async commits only is advanced unsynced: raft then counts them, they are
// applied and acknowledged, and syncLoop, the next sync group or the flush barrier makes them durable.
// Only a node that is the only voter may do that. Raft counts the leader's own entries as acknowledged
// on Advance; with other voters, advancing unsynced would let an entry commit while only a minority
// holds it durably (in three nodes: the leader's unsynced copy and one follower's). A power loss of the
// leader then lets a node without the entry win an election with the restarted leader's vote and
// overwrite an entry that the follower has already applied: a committed entry replaced, nodes
// diverged, the follower stopped by the log's refusal to overwrite it. So in a cluster an async commit
// is fsynced by the leader like a sync one (the deterministic simulation, sim_test.go, found this).
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
	if raft.StateType(n.state.Load()) != raft.StateLeader {
		return true
	}
	for _, e := range rd.Entries {
		p, ok := n.byIndex[e.Index]
		if !ok || p.term != e.Term || !p.async {
			return true
		}
	}
	return !n.soloVoter()
}

// canPipeline says whether a Ready that must be fsynced may be advanced before its fsync, leaving
// the fsync to the syncer goroutine: only on a leader that is the only voter (raft counts the leader's
// entries as acknowledged on Advance, and with other voters that acknowledgement must be durable: see
// needsSync), only for this leader's own proposals in its current term (a membership change or the
// leader's empty entry is fsynced at once, before raft acts on it), with no change of term or vote, no
// snapshot and no messages. Raft then commits the entries in memory at once, which no one can observe:
// the apply goroutine applies them, and so acknowledges them and makes them visible, only once durable
// covers them (applyJob.syncTo). Manual mode has no syncer goroutine: it fsyncs at once.
func (n *Node) canPipeline(rd raft.Ready, hsChanged bool) bool {
	if !n.cfg.PipelineSync || n.cfg.Manual || hsChanged || len(rd.Entries) == 0 || len(rd.Messages) > 0 || !raft.IsEmptySnap(rd.Snapshot) {
		return false
	}
	if raft.StateType(n.state.Load()) != raft.StateLeader || !n.soloVoter() {
		return false
	}
	for _, e := range rd.Entries {
		p, ok := n.byIndex[e.Index]
		if !ok || p.term != e.Term || e.Type != pb.EntryNormal {
			return false
		}
	}
	return true
}

// syncer is the fsync goroutine of pipelined groups (duty 4): while the loop appends and commits group
// N+1 and the apply goroutine applies group N and wakes its commits, it fsyncs everything appended,
// back to back, until durable reaches what the loop asked for. It runs until the apply goroutine is
// done, since entries handed to apply before a stop may still wait for it.
func (n *Node) syncer() {
	for {
		select {
		case <-n.syncc:
		case <-n.alldc:
			return
		}
		for {
			d := n.durable.Load()
			if d >= n.syncWant.Load() || n.lg.LastIndex() <= d || n.fatal() != nil {
				break
			}
			if err := n.syncLogThen(n.cfg.AfterSync); err != nil {
				// The apply goroutine sees the failure (waitDurable) and stops the loop.
				n.fail(err)
				n.pokeDurable()
				return
			}
		}
	}
}

// pokeDurable wakes the apply goroutine if it waits for durable (or for a failure).
func (n *Node) pokeDurable() { n.aq.poke() }

// waitDurable blocks the apply goroutine until the log is durable up to idx, or the node failed. It
// waits on the apply queue's wake token, which syncLog pokes after advancing durable (a token meant
// for new jobs only makes it look again).
func (n *Node) waitDurable(idx uint64) error {
	for n.durable.Load() < idx {
		if err := n.fatal(); err != nil {
			return err
		}
		// Flag, then look again: either syncLog sees the flag and pokes, or this sees its durable.
		n.aq.wantDurable.Store(true)
		if n.durable.Load() >= idx {
			break
		}
		<-n.aq.wake
	}
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

// updatePurgeFloor records, on the leader, the lowest index a member still needs from the log.
func (n *Node) updatePurgeFloor() {
	if raft.StateType(n.state.Load()) != raft.StateLeader {
		return
	}
	st := n.rn.Status()
	floor := uint64(math.MaxUint64)
	for id, pr := range st.Progress {
		if id != n.id && pr.Match+1 < floor {
			floor = pr.Match + 1
		}
	}
	n.purgeFloor.Store(floor)
}

// syncLog fsyncs everything appended to the log and advances the durable index (waking the apply
// goroutine, which may wait for it). The commit loop calls it for groups that hold sync commits and
// the syncer for pipelined ones; syncLoop and flushBarrier call it for async ones.
func (n *Node) syncLog() error { return n.syncLogThen(nil) }

// syncLogThen is syncLog running after (if not nil) once entries became durable and before the apply
// goroutine is woken for them: the syncer's AfterSync hook keeps its place between fsync and apply.
func (n *Node) syncLogThen(after func()) error {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	last := n.lg.LastIndex() // appended before the Sync below starts, so covered by it
	prev := n.durable.Load()
	t0 := time.Now()
	if err := n.lg.Sync(); err != nil {
		return fmt.Errorf("repl: fsync log: %w", err)
	}
	// The recent fsync time bounds how long gather holds a group open: an eighth of each new sample.
	avg := n.syncNanos.Load() // written only here, under syncMu
	n.syncNanos.Store(avg + (int64(time.Since(t0))-avg)/8)
	n.Stats.Syncs.Add(1)
	if last > prev {
		n.Stats.Groups.Add(1)
		n.Stats.GroupSizes.Observe(last - prev)
		if after != nil {
			after() // before durable moves: nothing waiting for it can be applied yet
		}
		n.durable.Store(last)
		n.aq.durableMoved()
	} else if last < prev {
		// A follower's log was truncated (a deposed leader's unacknowledged tail replaced).
		n.durable.Store(last)
	}
	return nil
}

// syncLoop is the background fsync of async commits: every SyncInterval, if the log holds entries
// nothing has synced yet. With only sync commits it never finds any.
func (n *Node) syncLoop() {
	n.every(n.cfg.SyncInterval, func() bool { return n.syncBehind() == nil })
}

// syncBehind fsyncs the log if it holds entries nothing has synced yet (async commits). A failed
// fsync stops the node: the log is unusable from then on (a failed fsync is sticky), and async
// commits since the last fsync are lost, as that mode allows.
func (n *Node) syncBehind() error {
	if n.lg.LastIndex() <= n.durable.Load() {
		return nil
	}
	if err := n.syncLog(); err != nil {
		n.fail(err)
		return err
	}
	return nil
}

// every runs f every d until the node stops or f returns false.
func (n *Node) every(d time.Duration, f func() bool) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-n.stopc:
			return
		case <-n.alldc:
			return
		case <-t.C:
		}
		if !f() {
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

// purgeLoop trims the log below what the engine has flushed: log segments are the only copy of
// anything the engine holds only in its memtable, so the engine is flushed first and the purge stays
// below the index applied before that flush. On a leader it also keeps what lagging members need, within
// FollowerRetainEntries (purgeFloor); a member further behind gets an engine snapshot.
func (n *Node) purgeLoop() {
	n.every(n.cfg.PurgeInterval, func() bool { n.purge(); return true })
}

func (n *Node) purge() {
	n.snaps.mu.Lock()
	n.releasePins(false) // pins pin old versions in the engine: drop the unused ones
	n.snaps.mu.Unlock()
	if n.lg.Stats().Segments < 2 {
		return // only sealed segments can go
	}
	applied := n.applied.Load()
	if err := n.eng.Flush(); err != nil {
		n.log.Warn("log purge: engine flush failed", "err", err)
		return
	}
	if applied <= n.cfg.RetainEntries {
		return
	}
	below := applied - n.cfg.RetainEntries + 1
	// Keep what lagging members need, within FollowerRetainEntries: a member further behind gets
	// an engine snapshot.
	if f := n.purgeFloor.Load(); f < below {
		below = max(f, below-min(below-1, n.cfg.FollowerRetainEntries))
	}
	below = min(below, n.holds.floor()) // running backups (backup.go)
	if below <= n.lg.FirstIndex() {
		return
	}
	if err := n.lg.Purge(below); err != nil {
		n.log.Warn("log purge failed", "below", below, "err", err)
	}
}

// handOffLeadership: a log-only voter that was elected (its log may have been the only complete one)
// passes leadership to the first full voter whose log has caught up with its own, so the cluster has
// a primary again.
func (n *Node) handOffLeadership() {
	if !n.cfg.LogOnly || raft.StateType(n.state.Load()) != raft.StateLeader {
		return
	}
	st := n.rn.Status()
	if st.LeadTransferee != 0 {
		return
	}
	last := n.lg.LastIndex()
	for _, id := range slices.Sorted(maps.Keys(st.Config.Voters.IDs())) {
		if id == n.id || n.IsLogOnly(id) {
			continue
		}
		if pr, ok := st.Progress[id]; ok && pr.Match >= last {
			n.log.Info("log-only voter hands leadership to a full voter", "to", id, "index", last)
			n.rn.TransferLeader(id)
			n.Stats.Handoffs.Add(1)
			return
		}
	}
}
