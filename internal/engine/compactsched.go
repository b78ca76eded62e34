package engine

import (
	"runtime"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Compactions give up their processor now and then. A compaction is a pebble goroutine that
// reads, merges and writes keys for milliseconds at a time without blocking (its writes go to the
// page cache), and Go preempts it only after 10 ms: on two cores, the connections queued behind
// it on its processor wait that long. oltp_read_write's p99 at 16 and 64 threads, where the
// writes keep a compaction running, was 10-20% over what it is when compactions yield
// (docs/benchmarks.md, "Compactions that yield").
//
// Pebble calls its compaction scheduler's grant handle every 128 keys a compaction writes
// (MeasureCPU, meant for CPU accounting). Kiln's scheduler is pebble's own concurrency-limit
// scheduler (a compaction runs while fewer are running than the DB allows, and a finished one
// grants the next waiting one), wrapped so that its grant handles yield from there once the
// compaction has run compactionSlice since its last yield. runtime.Gosched puts the compaction
// on the global run queue, behind every connection queued on a processor: the compaction is
// the work that can wait.
//
// Pebble's scheduler comes from NewConcurrencyLimitSchedulerWithNoPeriodicGrantingForTest, the
// only exported constructor: it lacks the default one's 100 ms re-check of the allowed count,
// which matters only when that count rises while a compaction waits and nothing else asks; pebble
// asks again (TrySchedule) after every flush and every finished compaction, and a finished one
// grants the next itself (Done).
const compactionSlice = 200 * time.Microsecond

// yieldHook is runtime.Gosched; a variable for tests.
var yieldHook = runtime.Gosched

func newCompactionScheduler() pebble.CompactionScheduler {
	return yieldingScheduler{pebble.NewConcurrencyLimitSchedulerWithNoPeriodicGrantingForTest()}
}

type yieldingScheduler struct{ pebble.CompactionScheduler }

// Register hands pebble's scheduler a DB whose Schedule wraps the grants it makes on its own
// (when a compaction finishes).
func (s yieldingScheduler) Register(n int, db pebble.DBForCompaction) {
	s.CompactionScheduler.Register(n, yieldingDB{db})
}

func (s yieldingScheduler) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	ok, h := s.CompactionScheduler.TrySchedule()
	if ok {
		h = &yieldingHandle{CompactionGrantHandle: h}
	}
	return ok, h
}

type yieldingDB struct{ pebble.DBForCompaction }

func (d yieldingDB) Schedule(h pebble.CompactionGrantHandle) bool {
	return d.DBForCompaction.Schedule(&yieldingHandle{CompactionGrantHandle: h})
}

// yieldingHandle yields from the compaction's primary goroutine (the one that iterates and
// writes; last is touched only there).
type yieldingHandle struct {
	pebble.CompactionGrantHandle
	last time.Time
}

func (h *yieldingHandle) MeasureCPU(k pebble.CompactionGoroutineKind) {
	h.CompactionGrantHandle.MeasureCPU(k)
	if k != pebble.CompactionGoroutinePrimary {
		return
	}
	now := time.Now()
	if h.last.IsZero() {
		h.last = now
		return
	}
	if now.Sub(h.last) >= compactionSlice {
		yieldHook()
		h.last = time.Now()
	}
}
