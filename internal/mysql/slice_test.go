package mysql

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

func TestTimeSlice(t *testing.T) {
	old := runnableNow
	t.Cleanup(func() { runnableNow = old })
	long := time.Hour
	cases := []struct {
		name      string
		limit     time.Duration
		sinceRun  time.Duration // how long ago the slice started
		readTook  time.Duration // the packet read before the command
		others    bool
		wantReset bool // the slice starts again (a wait for the client, or a yield)
		wantAsked bool // the scheduler's count was consulted
	}{
		// A slice limit far beyond the test's run: the new slice is not used up by a late wake-up.
		{"a read that waited starts a new slice", time.Hour, long, time.Millisecond, true, true, false},
		{"slice used up, others runnable: yield", 200 * time.Microsecond, long, 0, true, true, true},
		{"slice used up, nobody else: keep running", 200 * time.Microsecond, long, 0, false, false, true},
		{"slice not used up", time.Hour, time.Millisecond, 0, true, false, false},
		{"disabled", -1, long, 0, true, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			runnableNow = func(time.Time) bool { asked = true; return tc.others }
			start := time.Now().Add(-tc.sinceRun)
			s := timeSlice{limit: tc.limit, start: start}
			// A read that took no time is dated ahead: however late this goroutine runs on a busy
			// machine (-race, 2 cores), it never looks parked (parkedRead, 20 us).
			began := time.Now().Add(time.Minute)
			if tc.readTook > 0 {
				began = time.Now().Add(-tc.readTook)
			}
			s.readDone(began)
			s.commandDone()
			if reset := !s.start.Equal(start); reset != tc.wantReset {
				t.Errorf("slice restarted = %v, want %v", reset, tc.wantReset)
			}
			if asked != tc.wantAsked {
				t.Errorf("asked the scheduler = %v, want %v", asked, tc.wantAsked)
			}
		})
	}
}

// The count comes from runtime/metrics; a Go release without it would silently turn yielding off.
func TestRunnableMetricExists(t *testing.T) {
	for _, d := range metrics.All() {
		if d.Name == "/sched/goroutines/runnable:goroutines" {
			if d.Kind != metrics.KindUint64 {
				t.Fatalf("kind %v", d.Kind)
			}
			othersRunnable(time.Now()) // must not panic
			return
		}
	}
	t.Fatal("runtime/metrics has no /sched/goroutines/runnable:goroutines")
}

// goyield must hand the processor to a goroutine queued on it: with one processor, a goroutine just
// started runs only when this one blocks, yields, or is preempted after 10 ms (far beyond the loop).
func TestGoyieldRunsQueued(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ran atomic.Bool
	done := make(chan struct{})
	go func() { ran.Store(true); close(done) }()
	yields := 0
	for ; yields < 100 && !ran.Load(); yields++ {
		goyield()
	}
	if !ran.Load() {
		t.Fatalf("the queued goroutine did not run in %d yields", yields)
	}
	<-done
}
