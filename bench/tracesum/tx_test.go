package main

import (
	"bytes"
	"context"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	exptrace "golang.org/x/exp/trace"
)

// Two "connections" run ten transactions each, every one waiting 2 ms (a sleep: its client) and
// running 1 ms inside a command; tx must find all twenty and split their time accordingly.
func TestTransactions(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cmd := func(tag string, body func()) {
		trace.Log(ctx, "cmd", "s:"+tag)
		if body != nil {
			body()
		}
		trace.Log(ctx, "cmd", "e:"+tag)
	}
	var wg sync.WaitGroup
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd("SELECT 0", nil) // outside a transaction: not counted
			for i := 0; i < 10; i++ {
				cmd("begin", nil)
				cmd("SELECT c FROM", func() { time.Sleep(2 * time.Millisecond); spinner(time.Millisecond) })
				cmd("COMMIT", nil)
			}
		}()
	}
	wg.Wait()
	trace.Stop()

	rep, err := transactions(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.txns) != 20 {
		t.Fatalf("%d transactions, want 20", len(rep.txns))
	}
	for _, x := range rep.txns {
		if w := x.in[exptrace.GoWaiting]; w < 2*time.Millisecond {
			t.Errorf("waiting %v, want >= 2ms", w)
		}
		// The spin is 1ms of wall time, preemption may make part of it runnable.
		if r := x.in[exptrace.GoRunning] + x.in[exptrace.GoRunnable]; r < time.Millisecond {
			t.Errorf("running or runnable %v, want >= 1ms", r)
		}
		var sum time.Duration
		for _, d := range x.in {
			sum += d
		}
		if d := sum - x.total(); d > time.Microsecond || d < -time.Microsecond {
			t.Errorf("states add up to %v, the transaction took %v", sum, x.total())
		}
		if len(x.cmds) != 3 || !strings.HasPrefix(x.cmds[0], "begin@") || !strings.HasPrefix(x.cmds[2], "COMMIT@") {
			t.Errorf("commands %v", x.cmds)
		}
	}
	var out bytes.Buffer
	rep.print(&out)
	if !strings.Contains(out.String(), "20 transactions") {
		t.Errorf("report:\n%s", out.String())
	}
}
