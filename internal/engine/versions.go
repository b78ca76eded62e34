package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Old versions under range scans.
//
// Every write of a key is a new version in the memtable, and the older ones stay there until a
// flush writes the memtable out with only the newest version of each key (older ones survive only
// for open snapshots). A range scan steps over every version of every key it passes. After a burst
// of updates on hot rows the memtable holds a hundred versions of each, and it is flushed only when
// it fills up: once the writes stop, never. Measured (sysbench, 100,000 rows, 4 threads):
// oltp_read_only ran at 44-54k QPS after 16 s of updates, and at 68-70k once the memtable was
// flushed, as on freshly loaded data (docs/benchmarks.md).
//
// So the engine counts, over the iterators it closes, the forward steps readers asked for and the
// steps pebble took beneath them to get there. When the extra steps reach versionFlushSteps and
// are at least as many as the asked-for ones, and the memtable holds versionFlushBytes written
// since the last flush, it flushes the memtable: at most once per versionFlushEvery, in the
// background (the flush runs the log's fsync first, as every flush does: SetBeforeFlush). The
// bound on extra steps is there so that reads have wasted about what a flush costs (tens of
// milliseconds of CPU either way) before one starts: a few scans over a few versions start none.
// Reverse steps are not counted: pebble's reverse iteration takes internal steps of its own to
// find each key's newest version, so its counts would say less about old versions.
const (
	versionFlushSteps = 1 << 20
	versionWindow     = 16 << 20 // asked-for steps after which the counts start again
	versionFlushBytes = 1 << 20
	versionFlushEvery = time.Second
)

// stepCounter is the engine's count of reads' steps, and the state of the flushes it starts.
type stepCounter struct {
	asked, extra atomic.Int64  // forward steps since the last decision
	unflushed    atomic.Int64  // bytes applied since the last flush began
	busy         atomic.Bool   // a flush decision is under way
	flushes      atomic.Uint64 // flushes started for old versions

	mu     sync.Mutex // held while deciding and starting a flush; Close takes it to stop them
	last   time.Time  // when the last one started
	closed bool
}

// noteSteps adds a closing iterator's steps to the engine's count, and starts a flush when reads
// step over old versions more than over the keys they want.
func (e *Engine) noteSteps(it *pebble.Iterator) {
	asked, extra := forwardSteps(it)
	if asked == 0 {
		return // point reads and seeks: the newest version is the first one met
	}
	c := &e.steps
	as := c.asked.Add(asked)
	ex := c.extra.Load()
	if extra > 0 {
		ex = c.extra.Add(extra)
	}
	if ex < versionFlushSteps || ex < as {
		if as > versionWindow {
			c.asked.Store(0)
			c.extra.Store(0)
		}
		return
	}
	if !c.busy.CompareAndSwap(false, true) {
		return
	}
	c.asked.Store(0)
	c.extra.Store(0)
	// Not on the reader's goroutine: starting a flush takes the store's lock and can wait for
	// room for a new memtable.
	go e.flushVersions()
}

// forwardSteps is what an iterator's forward steps cost so far: the steps its caller asked for,
// and the internal steps pebble took beyond them (over old versions and deletions).
func forwardSteps(it *pebble.Iterator) (asked, extra int64) {
	st := it.Stats()
	asked = int64(st.ForwardStepCount[pebble.InterfaceCall])
	return asked, int64(st.ForwardStepCount[pebble.InternalIterCall]) - asked
}

func (e *Engine) flushVersions() {
	c := &e.steps
	defer c.busy.Store(false)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || time.Since(c.last) < versionFlushEvery || c.unflushed.Load() < versionFlushBytes {
		return // the versions are in flushed tables, or too few to pay: compactions merge them
	}
	c.last = time.Now()
	if _, err := e.db.AsyncFlush(); err != nil {
		return // the memtable fills and flushes as usual
	}
	c.flushes.Add(1)
}

// stopVersionFlushes waits for a flush being started and starts no more (Close).
func (e *Engine) stopVersionFlushes() {
	e.steps.mu.Lock()
	e.steps.closed = true
	e.steps.mu.Unlock()
}

// VersionFlushes counts the memtable flushes started because reads stepped over old versions.
func (e *Engine) VersionFlushes() uint64 { return e.steps.flushes.Load() }
