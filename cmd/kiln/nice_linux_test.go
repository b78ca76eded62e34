//go:build linux

package main

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// threadNices is the nice value of every thread of this process.
func threadNices(t *testing.T) map[int]int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
		if err != nil {
			continue // the thread has exited
		}
		out[tid] = 20 - raw
	}
	return out
}

// kiln backup --nice N lowers every thread of the client, those the Go runtime starts later
// included, and never raises a priority already lower. Run in a child process: nice values
// cannot be raised back without privileges.
func TestLowerPriority(t *testing.T) {
	if os.Getenv("KILN_TEST_NICE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLowerPriority$", "-test.v")
		cmd.Env = append(os.Environ(), "KILN_TEST_NICE_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "CHILD OK") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	if err := lowerPriority(7); err != nil {
		t.Fatal(err)
	}
	// New threads: goroutines locked to their threads while others block force the runtime to
	// start more.
	var wg, ready sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 8; i++ {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			ready.Done()
			<-stop
		}()
	}
	ready.Wait()
	nices := threadNices(t)
	close(stop)
	wg.Wait()
	if len(nices) < 8 {
		t.Fatalf("only %d threads: %v", len(nices), nices)
	}
	for tid, n := range nices {
		if n != 7 {
			t.Fatalf("thread %d has nice %d, want 7 (all: %v)", tid, n, nices)
		}
	}
	if err := lowerPriority(3); err != nil { // lower than now: left as it is
		t.Fatal(err)
	}
	for tid, n := range threadNices(t) {
		if n != 7 {
			t.Fatalf("after lowerPriority(3), thread %d has nice %d, want 7 still", tid, n)
		}
	}
	t.Log("CHILD OK")
}
