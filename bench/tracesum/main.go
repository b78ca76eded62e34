// Command tracesum summarises a Go execution trace (runtime/trace, or a Kiln server's
// /debug/pprof/trace with --pprof) for scheduling questions: how long goroutines ran without a
// break, and how long they waited in a run queue before running again, grouped by the function each
// goroutine started in and by how the wait began (yielded, woken, woken by a goroutine that then
// went into a system call, back from a system call); with -tx, how each transaction's time splits
// between running, waiting for a processor, waiting for its client and system calls (tx.go).
// docs/benchmarks.md quotes its figures.
//
//	go run . trace.out
//	go run . -tx trace.out
//
// It is a module of its own so that golang.org/x/exp/trace's version does not touch the server's.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"golang.org/x/exp/trace"
)

func main() {
	tx := flag.Bool("tx", false, "split transactions' time by goroutine state (tx.go)")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: tracesum [-tx] TRACE") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	if *tx {
		rep, err := transactions(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		rep.print(os.Stdout)
		return
	}
	s, err := summarise(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.print(os.Stdout)
}

// summary holds, per goroutine start function, the lengths of its goroutines' runs and of their
// run-queue waits; waits are also kept per start function and the state the goroutine left
// ("Waiting": it was woken; "Running": it yielded or was preempted; "Syscall": it came back from a
// system call without a processor).
type summary struct {
	runs  map[string][]time.Duration
	waits map[string][]time.Duration
}

// wakeThenSyscall: a goroutine woken this shortly before its waker entered a system call is counted
// apart ("from Waiting, waker then in a system call"): Go queues it on the waker's processor, which
// stays with the waker's thread in the call until the runtime's monitor takes it back. The raft
// loop waking the apply goroutine and then fsyncing the next group is one (docs/benchmarks.md).
const wakeThenSyscall = 20 * time.Microsecond

func summarise(r io.Reader) (*summary, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	s := &summary{runs: map[string][]time.Duration{}, waits: map[string][]time.Duration{}}
	fn := map[trace.GoID]string{}
	running := map[trace.GoID]trace.Time{}
	runnable := map[trace.GoID]trace.Time{}
	left := map[trace.GoID]string{}
	// woke: goroutines woken by each goroutine, with when; a waker that enters a system call within
	// wakeThenSyscall leaves them queued on a processor whose thread is in that call.
	woke := map[trace.GoID][]trace.GoID{}
	wokeAt := map[trace.GoID]trace.Time{}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read trace: %w", err)
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		id := st.Resource.Goroutine()
		if _, ok := fn[id]; !ok {
			// The transition's own stack is the goroutine's (its start stack at creation); the
			// outermost frame is the function it started in. Event.Stack would be the actor's.
			for fr := range st.Stack.Frames() {
				fn[id] = fr.Func
			}
		}
		name := fn[id]
		if name == "" {
			name = "(unknown)"
		}
		from, to := st.Goroutine()
		if to == trace.GoSyscall {
			for _, w := range woke[id] {
				if _, still := runnable[w]; still && left[w] == "Waiting" && time.Duration(ev.Time()-wokeAt[w]) <= wakeThenSyscall {
					left[w] = "Waiting, waker then in a system call"
				}
			}
		}
		if from == trace.GoRunning {
			delete(woke, id) // a waker that ran on without a system call
		}
		if from == trace.GoRunning && to != trace.GoRunning {
			if t, ok := running[id]; ok {
				s.runs[name] = append(s.runs[name], time.Duration(ev.Time()-t))
				delete(running, id)
			}
		}
		switch to {
		case trace.GoRunnable:
			runnable[id] = ev.Time()
			left[id] = from.String()
			if from == trace.GoWaiting && ev.Goroutine() != trace.NoGoroutine {
				woke[ev.Goroutine()] = append(woke[ev.Goroutine()], id)
				wokeAt[id] = ev.Time()
			}
		case trace.GoRunning:
			if t, ok := runnable[id]; ok {
				w := time.Duration(ev.Time() - t)
				s.waits[name] = append(s.waits[name], w)
				k := name + " from " + left[id]
				s.waits[k] = append(s.waits[k], w)
				delete(runnable, id)
			}
			running[id] = ev.Time()
		}
	}
}

type stats struct {
	n                  int
	total, p50, p99, m time.Duration
	over1ms            int
}

func statsOf(ds []time.Duration) stats {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	st := stats{n: len(ds)}
	for _, d := range ds {
		st.total += d
		if d > time.Millisecond {
			st.over1ms++
		}
	}
	if len(ds) > 0 {
		st.p50, st.p99, st.m = ds[len(ds)/2], ds[len(ds)*99/100], ds[len(ds)-1]
	}
	return st
}

func (s *summary) print(w io.Writer) {
	fmt.Fprintln(w, "runs by start function (most running time first): count, total, p50, p99, max, runs over 1 ms")
	type row struct {
		name string
		st   stats
	}
	var rows []row
	for name, ds := range s.runs {
		rows = append(rows, row{name, statsOf(ds)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].st.total > rows[j].st.total })
	for _, r := range rows[:min(15, len(rows))] {
		fmt.Fprintf(w, "  %-80s %8d %12v %10v %10v %10v %5d\n", r.name, r.st.n, r.st.total, r.st.p50, r.st.p99, r.st.m, r.st.over1ms)
	}
	fmt.Fprintln(w, "run-queue waits by start function (at least 100): count, p50, p99, max")
	rows = rows[:0]
	for name, ds := range s.waits {
		if len(ds) >= 100 {
			rows = append(rows, row{name, statsOf(ds)})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	for _, r := range rows {
		fmt.Fprintf(w, "  %-80s %8d %10v %10v %10v\n", r.name, r.st.n, r.st.p50, r.st.p99, r.st.m)
	}
}
