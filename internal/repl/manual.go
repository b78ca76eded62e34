package repl

import (
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Manual mode (Config.Manual) runs the commit path without a goroutine of its own: whoever started
// the node calls the methods below, from one goroutine, for everything the raft loop, the apply
// goroutine and the background fsync would do. The deterministic cluster simulation (sim_test.go)
// drives every node of a cluster this way from one thread, with a virtual clock and a simulated
// network, so a seed replays exactly.
//
// The methods are thin: they call the same code the goroutines call (propose, step, drainReady,
// handOff through the apply queue, apply, syncLog), so what the simulation exercises is the real
// commit path, only scheduled by the caller:
//
//	run loop, ticker case      ManualTick, then ManualReady
//	run loop, recvc case       ManualDeliver (any number), then ManualReady
//	run loop, propc case       ManualPropose (any number: one group), then ManualReady
//	run loop, ctlc case        ManualReady runs queued control functions first
//	apply goroutine            ManualApply (as late as the caller likes: apply may lag)
//	syncLoop                   ManualSync
//
// ManualProcess is ManualReady then ManualApply. Commit, Status and ChangeMembership wait for the
// loop and must not be called in manual mode (ManualPropose and ManualStatus replace the first two).
// The log is never purged (no purgeLoop), so members of the initial cluster never need an engine
// snapshot; fetching one (maybeFetch) would run on goroutines of its own, outside the caller's
// control.

// Pending is a commit proposed with ManualPropose: a future that ManualApply (success),
// ManualReady (a superseded entry, a lost leadership) or Stop completes.
type Pending struct {
	p   *proposal // nil when refused before reaching raft
	err error     // the refusal
}

// Done reports whether the commit has an outcome.
func (f *Pending) Done() bool {
	if f.p == nil {
		return true
	}
	select {
	case <-f.p.done:
		return true
	default:
		return false
	}
}

// Index is the commit's log index once raft appended it (0 before, or if it never was).
func (f *Pending) Index() uint64 {
	if f.p == nil {
		return 0
	}
	return f.p.index
}

// Term is the term of the commit's log entry once appended (0 before).
func (f *Pending) Term() uint64 {
	if f.p == nil {
		return 0
	}
	return f.p.term
}

// Err is the outcome once Done: nil when the commit is durable on a majority and applied here,
// otherwise one of the errors of errors.go (which say whether it may have committed).
func (f *Pending) Err() error {
	if f.p == nil {
		return f.err
	}
	if !f.Done() {
		return nil
	}
	return f.p.err
}

// startManual finishes Start in manual mode: everything committed by this node's log is applied and
// a single voter leads before it returns, as Start promises, without starting any goroutine.
func (n *Node) startManual(target uint64, start time.Time) (*Node, error) {
	if err := n.ManualProcess(); err != nil {
		n.Stop()
		return nil, err
	}
	n.noteMembership(confStateOf(n.rn.Status().Config))
	if n.solo.Load() {
		_ = n.rn.Campaign()
		if err := n.ManualProcess(); err != nil {
			n.Stop()
			return nil, err
		}
	}
	if a := n.applied.Load(); a < target {
		n.Stop()
		return nil, fmt.Errorf("repl: manual start applied %d, the log's commit index is %d", a, target)
	}
	n.RecoveryTime = time.Since(start)
	n.log.Info("recovery done", "node", n.id, "replayed_to", n.applied.Load(), "log_last", n.lg.LastIndex(), "manual", true)
	return n, nil
}

// stopManual does, on the caller's goroutine, what the loop and the apply goroutine do when they stop:
// the loop fails the commits it tracks, the apply goroutine applies what was already handed to it.
func (n *Node) stopManual() {
	n.failWaiters(ErrStopped)
	close(n.donec)
	if jobs := n.aq.takeNow(); len(jobs) > 0 {
		_ = n.manualApplyJobs(jobs)
	}
	n.aq.close()
	close(n.alldc)
}

// usableManual refuses to drive a node that stopped or failed.
func (n *Node) usableManual() error {
	if !n.cfg.Manual {
		return fmt.Errorf("repl: Manual* methods need Config.Manual")
	}
	if err := n.fatal(); err != nil {
		return fmt.Errorf("%w: %v", ErrStopped, err)
	}
	select {
	case <-n.stopc:
		return ErrStopped
	default:
	}
	return nil
}

// ManualTick advances raft's logical clock by one tick (the loop's ticker case).
func (n *Node) ManualTick() {
	if n.usableManual() != nil {
		return
	}
	n.tick()
}

// ManualDeliver steps a message from another member (the transport's Step, as the loop takes it).
func (n *Node) ManualDeliver(m pb.Message) {
	if n.usableManual() != nil {
		return
	}
	n.step(m)
}

// ManualPropose proposes a record as Commit would (same admission checks, same proposal framing) and
// returns its future. The entry is appended and sent by the next ManualReady; proposals made before
// one ManualReady form one group.
func (n *Node) ManualPropose(rec []byte, async bool, epoch uint64) *Pending {
	if err := n.usableManual(); err != nil {
		return &Pending{err: err}
	}
	p, err := n.newProposal(frame(rec), async, epoch)
	if err != nil {
		return &Pending{err: err}
	}
	n.propose(p)
	return &Pending{p: p}
}

// ManualReady runs queued control functions (ReportUnreachable, ReportSnapshot) and then handles
// every pending Ready (duties 2-5: append, send, fsync, hand committed entries to the apply queue).
// An error is fatal for the node, as in the loop: its waiting commits end with ErrStopped.
func (n *Node) ManualReady() error {
	if err := n.usableManual(); err != nil {
		return err
	}
	for {
		select {
		case f := <-n.ctlc:
			f()
			continue
		default:
		}
		break
	}
	if err := n.drainReady(); err != nil {
		n.fail(err)
		n.failWaiters(ErrStopped)
		return err
	}
	return nil
}

// ManualApply applies every job in the apply queue (duty 6) and wakes their commits.
func (n *Node) ManualApply() error {
	if err := n.usableManual(); err != nil {
		return err
	}
	return n.manualApplyJobs(n.aq.takeNow())
}

// manualApplyJobs is one turn of applyLoop.
func (n *Node) manualApplyJobs(jobs []*applyJob) error {
	if len(jobs) == 0 {
		return nil
	}
	if err := n.fatal(); err != nil {
		n.failJobs(jobs)
		return err
	}
	if err := n.apply(jobs); err != nil {
		n.fail(err)
		n.aq.failOne.Do(func() { close(n.aq.failed) })
		n.failJobs(jobs)
		n.failWaiters(ErrStopped) // what the loop does when it sees aq.failed
		return err
	}
	return nil
}

// ManualApplyPending reports whether committed entries wait in the apply queue.
func (n *Node) ManualApplyPending() bool {
	n.aq.mu.Lock()
	defer n.aq.mu.Unlock()
	return len(n.aq.jobs) > 0
}

// ManualProcess is ManualReady then ManualApply.
func (n *Node) ManualProcess() error {
	if err := n.ManualReady(); err != nil {
		return err
	}
	return n.ManualApply()
}

// ManualSync is one turn of the background fsync (syncLoop): it fsyncs the log if it holds entries
// nothing has synced yet (async commits). A failed fsync is fatal.
func (n *Node) ManualSync() error {
	if err := n.usableManual(); err != nil {
		return err
	}
	return n.syncBehind()
}

// ManualStatus is raft's status (Status asks the loop, which manual mode does not run).
func (n *Node) ManualStatus() raft.Status { return n.rn.Status() }

// takeNow returns every queued job without waiting.
func (q *applyQueue) takeNow() []*applyJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	jobs := q.jobs
	q.jobs = nil
	return jobs
}
