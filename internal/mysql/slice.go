package mysql

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname runtime.goyield
)

// A connection's goroutine gives up its processor at a command boundary once it has served commands
// for a time slice without waiting for its client, if other goroutines are waiting to run.
//
// Why: Go preempts a running goroutine only after 10 ms, and puts it on the global run queue, which
// a busy processor looks at once every 61 schedules. A connection whose client answers before the
// server reads again (the client runs on another core) never blocks on its socket, so it keeps its
// processor for those 10 ms while the connections queued behind it wait: with 16 sysbench threads on
// 2 cores, oltp_read_only's p99 was 20 times its mean (docs/benchmarks.md). A thread-per-connection
// server leaves this to the kernel, whose slices are a few milliseconds and fair between threads.
// Yielding at a command boundary costs no locks held and no half-written result.
//
// Nothing is yielded when nothing else is runnable: a lone busy connection keeps its processor. Even
// the local yield costs it a trip through the scheduler: yielding at every slice's end regardless
// cost a lone read_only connection 7% of its throughput (docs/benchmarks.md).

// defaultTimeSlice is Config.TimeSlice's default: with yields to the processor's own queue, 30µs
// brought sysbench's p99 at 4-64 threads to MariaDB's or below for about the throughput that 200µs
// slices through the global queue had (docs/benchmarks.md, "Yielding to the processor's own
// queue"); 20µs cost 5-10% of it for little more. 10 ms is what Go's own preemption gives.
const defaultTimeSlice = 30 * time.Microsecond

// parkedRead is how long a packet read must take to count as having waited for the client (the
// goroutine parked, and others ran): a read that finds its data already there takes a few µs.
const parkedRead = 20 * time.Microsecond

// timeSlice tracks one connection's run since it last waited for its client or yielded.
type timeSlice struct {
	limit time.Duration // <= 0: never yield
	start time.Time
	ready *readyPoller // wakes parked connections whose command arrived; nil: none
}

// readDone is called after each packet read that began at began.
func (s *timeSlice) readDone(began time.Time) {
	if s.limit <= 0 {
		return
	}
	if now := time.Now(); now.Sub(began) >= parkedRead || s.start.IsZero() {
		s.start = now
	}
}

// commandDone is called after a command's result is flushed: once the slice is used up, it wakes
// the parked connections whose command has arrived (ready_linux.go) and yields if it woke any or
// other goroutines are runnable. The woken ones wait on this processor's queue, and the yield puts
// this goroutine behind them (goyield).
func (s *timeSlice) commandDone() {
	if s.limit <= 0 {
		return
	}
	now := time.Now()
	if now.Sub(s.start) < s.limit {
		return
	}
	if s.ready.kickReady(now) == 0 && !runnableNow(now) {
		return
	}
	goyield()
	s.start = time.Now()
}

// goyield puts the calling goroutine at the tail of its processor's run queue and runs the next
// one: the runtime's own yield for spinning waiters (sync's semaphores use it), which the runtime
// keeps for linkname callers (go.dev/issue/67401).
//
// Why not runtime.Gosched: it puts the goroutine on the global run queue, under the scheduler's
// lock, and wakes an idle thread to look for work (a futex wake-up, ~10µs of CPU on this VM, for a
// thread that usually finds nothing). A busy processor serves the global queue once every 61
// schedules, so a yielded connection also waited behind the connections its processor kept waking.
// Yielding locally made the yield cheap enough for 30µs slices (docs/benchmarks.md). An idle
// processor still steals from this queue.
//
//go:linkname goyield runtime.goyield
func goyield()

// runnableNow is othersRunnable; a variable for tests.
var runnableNow = othersRunnable

// runnableSampleAge bounds how often the scheduler's count of runnable goroutines is read: the
// read takes the scheduler's lock.
const runnableSampleAge = 100 * time.Microsecond

var runnable struct {
	mu     sync.Mutex // held while reading; a reader that cannot take it uses the last value
	at     atomic.Int64
	count  atomic.Uint64
	sample []metrics.Sample
}

// othersRunnable reports whether goroutines were waiting for a processor at most
// runnableSampleAge ago.
func othersRunnable(now time.Time) bool {
	if now.UnixNano()-runnable.at.Load() >= int64(runnableSampleAge) && runnable.mu.TryLock() {
		if runnable.sample == nil {
			runnable.sample = []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
		}
		metrics.Read(runnable.sample)
		var n uint64
		if v := runnable.sample[0].Value; v.Kind() == metrics.KindUint64 {
			n = v.Uint64()
		}
		runnable.count.Store(n)
		runnable.at.Store(now.UnixNano())
		runnable.mu.Unlock()
	}
	return runnable.count.Load() > 0
}
