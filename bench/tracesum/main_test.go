package main

import (
	"bytes"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"
)

// spinner busies its processor for d, then returns; the test looks for its runs by name.
func spinner(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// yielder gives up its processor n times.
func yielder(n int) {
	for i := 0; i < n; i++ {
		runtime.Gosched()
	}
}

func TestSummarise(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); spinner(3 * time.Millisecond) }()
	go func() { defer wg.Done(); yielder(500) }()
	wg.Wait()
	trace.Stop()

	s, err := summarise(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var spin, yield string
	for name := range s.runs {
		switch {
		case strings.Contains(name, "TestSummarise.func1"):
			spin = name
		case strings.Contains(name, "TestSummarise.func2"):
			yield = name
		}
	}
	if spin == "" || yield == "" {
		t.Fatalf("goroutines not found by start function: %v", keys(s.runs))
	}
	// The spinner runs at least 3 ms in all (preemption may cut it into several runs).
	if st := statsOf(s.runs[spin]); st.total < 3*time.Millisecond {
		t.Errorf("spinner ran %v in all, want >= 3ms", st.total)
	}
	// Each Gosched ends a run and makes a wait counted as "from Running".
	if st := statsOf(s.waits[yield+" from Running"]); st.n < 500 {
		t.Errorf("yielder: %d waits after yielding, want >= 500", st.n)
	}
	var out bytes.Buffer
	s.print(&out)
	if !strings.Contains(out.String(), yield+" from Running") {
		t.Errorf("report lacks the yielder's waits:\n%s", out.String())
	}
}

func keys(m map[string][]time.Duration) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
