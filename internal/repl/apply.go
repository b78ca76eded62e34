package repl

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
)

// applyJob is one Ready's committed entries with the commits waiting on them. The loop hands jobs
// over in log order; the apply goroutine owns a job once pushed.
type applyJob struct {
	barrier chan struct{} // closed once every job before it is applied (no entries)
	ents    []pb.Entry
	waiters []*proposal // this node's proposals among ents, in log order
	confs   []confApply
	bytes   uint64
	// syncTo is the highest index among ents that must be durable before the job is applied (every
	// entry but the only voter's own async commits); 0 if none.
	syncTo uint64
}

// confApply is a membership change raft has already applied: the engine records the resulting
// configuration at the entry's index, and the member addresses.
type confApply struct {
	index   uint64
	state   []byte // marshaled pb.ConfState
	changes []memberChange
}

// applyQueue is the hand-off from the raft loop to the apply goroutine: unbounded in jobs, so the
// loop never blocks on a slow apply; the loop reads backlog to stop taking proposals instead.
type applyQueue struct {
	mu      sync.Mutex
	jobs    []*applyJob
	pending uint64 // bytes of entries queued
	closed  bool
	// busy: someone is applying jobs (the apply goroutine, between take and release, or the loop
	// applying one inline, between claim and release). Jobs are applied by one party at a time,
	// in log order: take waits while the loop holds it, and the loop claims only an idle queue.
	busy bool
	wake chan struct{} // one token: jobs arrived or the queue closed
	// wantDurable: the apply goroutine needs a wake-up when the durable index moves (durableMoved).
	wantDurable atomic.Bool
	failed      chan struct{} // closed when apply fails: the loop stops
	failOne     sync.Once
}

func newApplyQueue() *applyQueue {
	return &applyQueue{wake: make(chan struct{}, 1), failed: make(chan struct{})}
}

// push queues a job. It wakes the apply goroutine only if the job can be applied now: a pipelined job
// waiting for its fsync is woken by the syncer instead (syncLog pokes the queue once durable moved,
// wantDurable), which saves a goroutine hand-off per group. durable nil: wake it in any case.
func (q *applyQueue) push(j *applyJob, durable *atomic.Uint64) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.pending += j.bytes
	q.mu.Unlock()
	if durable != nil && j.syncTo > durable.Load() {
		// Flag first, then look again: either syncLog sees the flag or this sees its durable.
		q.wantDurable.Store(true)
		if j.syncTo > durable.Load() {
			return
		}
	}
	q.poke()
}

// durableMoved is syncLog's wake-up after it advanced the durable index: only if the apply goroutine
// waits for it (a job pushed ahead of its fsync, or waitDurable). An fsync used to poke the queue
// every time, waking the parked apply goroutine for nothing once per group.
func (q *applyQueue) durableMoved() {
	if q.wantDurable.Swap(false) {
		q.poke()
	}
}

// poke wakes the apply goroutine (jobs arrived, durable advanced, or the queue closed).
func (q *applyQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// barrier waits until every job queued before it has been applied.
func (q *applyQueue) barrier() {
	j := &applyJob{barrier: make(chan struct{})}
	q.push(j, nil)
	select {
	case <-j.barrier:
	case <-q.failed:
	}
}

func (q *applyQueue) backlog() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}

func (q *applyQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.poke()
}

// take returns every queued job, waiting for one; nil once the queue is closed and empty. The
// caller applies them and then calls release.
func (q *applyQueue) take() []*applyJob {
	for {
		q.mu.Lock()
		if len(q.jobs) > 0 && !q.busy {
			jobs := q.jobs
			q.jobs = nil
			q.busy = true
			q.mu.Unlock()
			return jobs
		}
		closed := q.closed && len(q.jobs) == 0
		q.mu.Unlock()
		if closed {
			return nil
		}
		<-q.wake
	}
}

// claim lets the loop apply a job itself (applyInline): only when nothing is queued or being
// applied, so the job is next in log order. It counts the job's bytes as queued, as push does.
func (q *applyQueue) claim(j *applyJob) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy || len(q.jobs) > 0 || q.closed {
		return false
	}
	q.busy = true
	q.pending += j.bytes
	return true
}

// release ends a take's or a claim's turn; jobs queued meanwhile get the apply goroutine going.
func (q *applyQueue) release() {
	q.mu.Lock()
	q.busy = false
	more := len(q.jobs) > 0
	q.mu.Unlock()
	if more {
		q.poke()
	}
}

func (q *applyQueue) done(bytes uint64) {
	q.mu.Lock()
	q.pending -= bytes
	q.mu.Unlock()
}

// applyLoop applies jobs in order until the queue closes (duty 6). Jobs queued before a stop are
// still applied: they are committed. An apply error is fatal: the engine must never skip a record.
func (n *Node) applyLoop() {
	for {
		jobs := n.aq.take()
		if jobs == nil {
			return
		}
		for len(jobs) > 0 {
			if n.fatal() != nil {
				n.failJobs(jobs)
				break
			}
			// Apply the jobs the log already holds durably now, so their commits are woken while the
			// syncer fsyncs the next group; then wait for the rest.
			k, d := 0, n.durable.Load()
			for k < len(jobs) && jobs[k].syncTo <= d {
				k++
			}
			var err error
			if k == 0 {
				err = n.waitDurable(jobs[0].syncTo)
			} else if err = n.apply(jobs[:k]); err == nil {
				n.reportApplied() // the leader may wait for it (ackapplied.go)
			}
			if err != nil {
				n.fail(err)
				n.aq.failOne.Do(func() { close(n.aq.failed) })
				n.failJobs(jobs)
				break
			}
			jobs = jobs[k:]
		}
		n.aq.release()
	}
}

func (n *Node) failJobs(jobs []*applyJob) {
	for _, j := range jobs {
		for _, p := range j.waiters {
			select {
			case <-p.done:
			default:
				p.err = ErrStopped
				close(p.done)
			}
		}
		n.aq.done(j.bytes)
		if j.barrier != nil {
			close(j.barrier) // the waiter finds the node failed (installSnapshot checks)
		}
	}
}

// apply writes the jobs' entries to the engine, as few batches as possible, each recording the last
// index it holds, then wakes their waiters. A record that reads the engine (a logical operation) gets
// every entry before it applied first, in its own batch.
func (n *Node) apply(jobs []*applyJob) error {
	b := n.eng.NewBatch()
	defer func() { b.Close() }()
	last := n.applied.Load()
	pending := false // b holds entries not yet in the engine
	for _, j := range jobs {
		// The commit path's invariant: nothing is applied (so acknowledged or made visible) before
		// it is durable; pipelined groups are fsynced by the syncer goroutine, so check it here.
		if d := n.durable.Load(); j.syncTo > d {
			return fmt.Errorf("repl: entry %d would be applied before it is durable (log fsynced to %d)", j.syncTo, d)
		}
		ci := 0
		for _, e := range j.ents {
			if e.Index <= last {
				continue // already in the engine (replay after a restart)
			}
			if e.Index != last+1 {
				// Invariant: the applied index advances by exactly one entry at a time.
				return fmt.Errorf("repl: apply gap: entry %d after applied %d", e.Index, last)
			}
			switch e.Type {
			case pb.EntryNormal:
				if len(e.Data) >= entryIDBytes && !n.cfg.LogOnly {
					rec, _, _, err := EntryRecord(e.Data)
					if err != nil {
						return fmt.Errorf("repl: apply entry %d: %w", e.Index, err)
					}
					if pending && n.cfg.Applier.ReadsState(rec) {
						if err := n.applyBatch(b, last); err != nil {
							return err
						}
						b.Close()
						b = n.eng.NewBatch()
					}
					if err := n.cfg.Applier.Apply(rec, n.eng, b); err != nil {
						return fmt.Errorf("repl: apply entry %d: %w", e.Index, err)
					}
					n.Stats.AppliedBytes.Add(uint64(len(e.Data)))
				}
			case pb.EntryConfChange, pb.EntryConfChangeV2:
				for ci < len(j.confs) && j.confs[ci].index < e.Index {
					ci++
				}
				if ci == len(j.confs) || j.confs[ci].index != e.Index {
					return fmt.Errorf("repl: membership entry %d was not applied to raft", e.Index)
				}
				c := j.confs[ci]
				if err := b.Set(confStateKey, c.state); err != nil {
					return err
				}
				for _, mc := range c.changes {
					var err error
					if mc.remove {
						err = b.Delete(memberKey(mc.id))
					} else if mc.addr != "" {
						v := mc.addr
						if mc.logOnly {
							v += "\nlog-only"
						}
						err = b.Set(memberKey(mc.id), []byte(v))
					}
					if err != nil {
						return err
					}
				}
			}
			last = e.Index
			pending = true
		}
	}
	if pending {
		if err := n.applyBatch(b, last); err != nil {
			return err
		}
	}
	if last >= n.commitIdx.Load() {
		n.caughtUp.Store(time.Now().UnixNano())
	}
	for _, j := range jobs {
		for _, p := range j.waiters {
			n.Stats.Commits.Add(1)
			close(p.done)
		}
		n.aq.done(j.bytes)
		if j.barrier != nil {
			close(j.barrier)
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
	n.Stats.ApplyBatches.Add(1)
	n.setApplied(last)
	return nil
}
