package txn

import (
	"context"
	"fmt"
	"sync"

	"github.com/kiln-db/kiln/internal/engine"
)

// BatchCommitter commits each group of concurrent commits as one synced pebble batch, without a log.
// The server commits through the binlog (internal/repl); this committer is what unit tests of the
// layers above use, on an in-memory engine. It keeps the same shape: a leader takes every request
// queued while the previous write+fsync ran, writes them as one group, and wakes each waiter with its
// position.
//
// Ordering: positions are assigned in queue order inside the group, and groups are written one at a
// time, so position order = apply order = visibility order.
type BatchCommitter struct {
	eng *engine.Engine

	mu      sync.Mutex
	queue   []*commitReq
	running bool // a leader is writing a group
	nextPos uint64

	// Stats.
	Groups  uint64
	Commits uint64
}

type commitReq struct {
	ws   *WriteSet
	pos  uint64
	err  error
	done chan struct{}
}

// NewBatchCommitter starts after the engine's applied position.
func NewBatchCommitter(eng *engine.Engine) (*BatchCommitter, error) {
	pos, err := eng.AppliedPosition()
	if err != nil {
		return nil, err
	}
	return &BatchCommitter{eng: eng, nextPos: pos + 1}, nil
}

// Commit queues ws and waits until its group is durable and applied. The wait ignores ctx on purpose:
// once queued, the outcome is decided by the group, and returning early would let the client believe a
// commit failed that becomes visible a moment later.
func (c *BatchCommitter) Commit(_ context.Context, ws *WriteSet) (uint64, error) {
	r := &commitReq{ws: ws, done: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, r)
	if c.running {
		c.mu.Unlock()
		<-r.done
		return r.pos, r.err
	}
	c.running = true
	for len(c.queue) > 0 {
		group := c.queue
		c.queue = nil
		first := c.nextPos
		c.nextPos += uint64(len(group))
		c.mu.Unlock()
		err := c.writeGroup(group, first)
		c.mu.Lock()
		if err != nil {
			// The batch did not commit: give the positions back so the sequence has no holes.
			c.nextPos = first
		}
		c.Groups++
		c.Commits += uint64(len(group))
		for i, g := range group {
			g.pos, g.err = first+uint64(i), err
			if g != r {
				close(g.done)
			}
		}
	}
	c.running = false
	c.mu.Unlock()
	return r.pos, r.err
}

func (c *BatchCommitter) writeGroup(group []*commitReq, first uint64) error {
	b := c.eng.NewBatch()
	defer func() { b.Close() }()
	for i, g := range group {
		rec := g.ws.Encode()
		if RecordReadsState(rec) && i > 0 {
			// A logical operation reads the engine: apply the records before it first.
			if err := c.eng.Apply(b, first+uint64(i)-1, true); err != nil {
				return err
			}
			b.Close()
			b = c.eng.NewBatch()
		}
		if err := ApplyRecord(rec, c.eng, b); err != nil {
			return fmt.Errorf("commit: build batch: %w", err)
		}
	}
	return c.eng.Apply(b, first+uint64(len(group))-1, true)
}

// Stats returns commits and groups so far.
func (c *BatchCommitter) Stats() (commits, groups uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Commits, c.Groups
}
