package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// Transactions (tracesum -tx): a Kiln server traced with --pprof logs every command it serves to
// the trace (category "cmd", "s:" and the statement's first bytes when it starts, "e:" and the same
// when its reply is flushed; internal/mysql/conn.go). tx follows each connection's goroutine from a
// BEGIN to the end of its COMMIT or ROLLBACK and splits the transaction's time by the state the
// goroutine was in: running, runnable (waiting for a processor), waiting (for its client, or a
// lock), in a system call. A transaction starts when its BEGIN could first run: when the goroutine
// was last woken before it (its client's command arrived), or the end of its previous command if it
// never waited. sysbench's latency adds the client's own time on both sides.
//
// It also times each kind of command (by its tag), and lists stalls: stretches of more than
// stallAfter in which a processor running a connection's goroutine (one that logged commands), not
// in a system call, recorded no event at all. A goroutine serving commands records a system call
// every few microseconds, so such a stretch means the thread holding the processor was off its CPU
// (the kernel ran something else), which the Go trace cannot show otherwise. Other goroutines (the
// collector's workers, compactions) may compute for long stretches without an event: not counted.

// stallAfter is the shortest processor silence reported as a stall.
const stallAfter = 300 * time.Microsecond

// txn is one transaction's time by goroutine state.
type txn struct {
	start, end trace.Time
	in         map[trace.GoState]time.Duration
	gc         time.Duration // overlap with the collector's mark phase
	cmds       []string      // each command's tag and its start, in µs after the transaction's start
}

func (t *txn) total() time.Duration { return time.Duration(t.end - t.start) }

// txGoroutine is tx's state for one goroutine.
type txGoroutine struct {
	state   trace.GoState
	since   trace.Time
	woke    trace.Time // last Waiting -> Runnable
	lastEnd trace.Time // end of the previous command
	cur     *txn
}

type txReport struct {
	txns   []*txn
	cmds   map[string][]time.Duration // each command's time from its start to its reply, by tag
	gcs    int
	stalls []stall
}

type stall struct {
	proc   trace.ProcID
	lo, hi trace.Time
}

func isBegin(tag string) bool {
	u := strings.ToUpper(strings.TrimSpace(tag))
	return strings.HasPrefix(u, "BEGIN") || strings.HasPrefix(u, "START TRANSACTION")
}

func isEnd(tag string) bool {
	u := strings.ToUpper(strings.TrimSpace(tag))
	return strings.HasPrefix(u, "COMMIT") || strings.HasPrefix(u, "ROLLBACK")
}

func transactions(r io.Reader) (*txReport, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	rep := &txReport{}
	gs := map[trace.GoID]*txGoroutine{}
	var marks [][2]trace.Time
	var markStart trace.Time
	lastEv := map[trace.ProcID]trace.Time{}
	inSyscall := map[trace.ProcID]bool{} // its goroutine is in a system call: silence is expected
	runningOn := map[trace.ProcID]trace.GoID{}
	conns := map[trace.GoID]bool{} // goroutines that logged commands
	cmdStart := map[trace.GoID]trace.Time{}
	rep.cmds = map[string][]time.Duration{}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read trace: %w", err)
		}
		now := ev.Time()
		if p := ev.Proc(); p != trace.NoProc {
			if l, ok := lastEv[p]; ok && !inSyscall[p] && conns[runningOn[p]] && time.Duration(now-l) > stallAfter {
				rep.stalls = append(rep.stalls, stall{p, l, now})
			}
			lastEv[p] = now
			if ev.Kind() == trace.EventStateTransition && ev.StateTransition().Resource.Kind == trace.ResourceProc {
				if _, to := ev.StateTransition().Proc(); to != trace.ProcRunning {
					delete(lastEv, p) // an idle processor records nothing, rightly
				}
			}
		}
		switch ev.Kind() {
		case trace.EventRangeBegin:
			if strings.HasPrefix(ev.Range().Name, "GC concurrent mark") {
				markStart = now
			}
		case trace.EventRangeEnd:
			if strings.HasPrefix(ev.Range().Name, "GC concurrent mark") && markStart != 0 {
				marks = append(marks, [2]trace.Time{markStart, now})
				markStart = 0
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			id := st.Resource.Goroutine()
			g := gs[id]
			if g == nil {
				g = &txGoroutine{}
				gs[id] = g
			}
			from, to := st.Goroutine()
			if p := ev.Proc(); p != trace.NoProc {
				if to == trace.GoRunning {
					runningOn[p] = id
				} else if from == trace.GoRunning && runningOn[p] == id {
					delete(runningOn, p)
				}
				if to == trace.GoSyscall {
					inSyscall[p] = true
				} else if from == trace.GoSyscall || to == trace.GoRunning {
					delete(inSyscall, p)
				}
			}
			if g.cur != nil {
				g.cur.in[from] += time.Duration(now - g.since)
			}
			if from == trace.GoWaiting && to == trace.GoRunnable {
				g.woke = now
			}
			g.state, g.since = to, now
		case trace.EventLog:
			l := ev.Log()
			if l.Category != "cmd" || ev.Goroutine() == trace.NoGoroutine {
				continue
			}
			conns[ev.Goroutine()] = true
			g := gs[ev.Goroutine()]
			if g == nil {
				g = &txGoroutine{state: trace.GoRunning, since: now}
				gs[ev.Goroutine()] = g
			}
			tag, started := strings.CutPrefix(l.Message, "s:")
			if started {
				cmdStart[ev.Goroutine()] = now
				if isBegin(tag) {
					start := max(g.lastEnd, g.woke)
					if start == 0 {
						start = now
					}
					// Until now the goroutine was woken and waiting for a processor, then
					// running: counted from the state it is in since, and runnable before.
					g.cur = &txn{start: start, in: map[trace.GoState]time.Duration{}}
					if g.since > start {
						g.cur.in[trace.GoRunnable] += time.Duration(g.since - start)
						g.cur.in[g.state] += time.Duration(now - g.since)
					} else {
						g.cur.in[g.state] += time.Duration(now - start)
					}
					g.since = now
				}
				if g.cur != nil {
					g.cur.cmds = append(g.cur.cmds, fmt.Sprintf("%s@%d", tag, time.Duration(now-g.cur.start).Microseconds()))
				}
				continue
			}
			tag = strings.TrimPrefix(l.Message, "e:")
			g.lastEnd = now
			if t0, ok := cmdStart[ev.Goroutine()]; ok {
				rep.cmds[tag] = append(rep.cmds[tag], time.Duration(now-t0))
				delete(cmdStart, ev.Goroutine())
			}
			if g.cur != nil && isEnd(tag) {
				t := g.cur
				t.in[g.state] += time.Duration(now - g.since)
				g.since = now
				t.end = now
				for _, m := range marks {
					if lo, hi := max(m[0], t.start), min(m[1], t.end); hi > lo {
						t.gc += time.Duration(hi - lo)
					}
				}
				if markStart != 0 && t.end > markStart {
					t.gc += time.Duration(t.end - max(markStart, t.start))
				}
				rep.txns = append(rep.txns, t)
				g.cur = nil
			}
		}
	}
	rep.gcs = len(marks)
	sort.Slice(rep.txns, func(i, j int) bool { return rep.txns[i].total() < rep.txns[j].total() })
	return rep, nil
}

func (rep *txReport) print(w io.Writer) {
	n := len(rep.txns)
	if n == 0 {
		fmt.Fprintln(w, "no transactions (was the server built with the command log, and traced under load?)")
		return
	}
	at := func(q float64) time.Duration { return rep.txns[min(n-1, int(q*float64(n)))].total() }
	fmt.Fprintf(w, "%d transactions, %d collector mark phases; p50 %v, p90 %v, p99 %v, max %v\n",
		n, rep.gcs, at(0.5), at(0.9), at(0.99), rep.txns[n-1].total())
	fmt.Fprintln(w, "mean time per transaction by goroutine state, by latency band:")
	fmt.Fprintf(w, "  %-12s %6s %10s %10s %10s %10s %10s %12s %8s\n", "band", "count", "total", "running", "runnable", "waiting", "syscall", "in GC mark", "in GC %")
	band := func(name string, ts []*txn) {
		if len(ts) == 0 {
			return
		}
		var tot, gc time.Duration
		var in [4]time.Duration
		inGC := 0
		for _, t := range ts {
			tot += t.total()
			gc += t.gc
			if t.gc > 0 {
				inGC++
			}
			for i, s := range []trace.GoState{trace.GoRunning, trace.GoRunnable, trace.GoWaiting, trace.GoSyscall} {
				in[i] += t.in[s]
			}
		}
		k := time.Duration(len(ts))
		us := func(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d/k)/1e3) }
		fmt.Fprintf(w, "  %-12s %6d %10s %10s %10s %10s %10s %12s %7d%%\n", name, len(ts), us(tot), us(in[0]), us(in[1]), us(in[2]), us(in[3]), us(gc), 100*inGC/len(ts))
	}
	band("all", rep.txns)
	band("p0-p50", rep.txns[:n/2])
	band("p50-p90", rep.txns[n/2:n*9/10])
	band("p90-p99", rep.txns[n*9/10:n*99/100])
	band("p99-max", rep.txns[n*99/100:])
	fmt.Fprintln(w, "slowest transactions (command@µs after the start):")
	for _, t := range rep.txns[max(0, n-5):] {
		fmt.Fprintf(w, "  %v: %s\n", t.total(), strings.Join(t.cmds, " "))
	}
	fmt.Fprintln(w, "commands by tag (start to reply flushed; at least 100): count, mean, p50, p99, max")
	var tags []string
	for tag, ds := range rep.cmds {
		if len(ds) >= 100 {
			tags = append(tags, tag)
		}
	}
	sort.Strings(tags)
	for _, tag := range tags {
		st := statsOf(rep.cmds[tag])
		fmt.Fprintf(w, "  %-26s %8d %10v %10v %10v %10v\n", tag, st.n, st.total/time.Duration(st.n), st.p50, st.p99, st.m)
	}
	var over, longest time.Duration
	overMs := 0
	for _, s := range rep.stalls {
		d := time.Duration(s.hi - s.lo)
		over += d
		longest = max(longest, d)
		if d > time.Millisecond {
			overMs++
		}
	}
	fmt.Fprintf(w, "processor stalls over %v (a running processor with no event): %d, %v in all, %d over 1ms, the longest %v\n",
		stallAfter, len(rep.stalls), over, overMs, longest)
}
