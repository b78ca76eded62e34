package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/trace"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// rawSleep blocks the calling thread for d without telling the runtime (a raw system call records
// no event): to the trace, its processor falls silent, as when the kernel takes the thread away.
func rawSleep(d time.Duration) {
	ts := syscall.Timespec{Nsec: int64(d)}
	syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// A connection's goroutine (it logged a command) whose processor falls silent is a stall; another
// goroutine's silence is not (it may be computing).
func TestStalls(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	run := func(logs bool, d time.Duration) {
		done := make(chan struct{})
		go func() {
			if logs {
				trace.Log(context.Background(), "cmd", "s:SELECT 1")
			}
			runtime.Gosched() // an event on this processor before the silence
			rawSleep(d)
			runtime.Gosched() // and one after
			close(done)
		}()
		<-done
	}
	run(false, 8*time.Millisecond)
	run(true, 5*time.Millisecond)
	trace.Stop()
	rep, err := transactions(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, s := range rep.stalls {
		d := time.Duration(s.hi - s.lo)
		if d >= 7*time.Millisecond {
			t.Errorf("a goroutine that logged no command counted as stalled for %v", d)
		}
		if d >= 4*time.Millisecond {
			found++
		}
	}
	if found != 1 {
		t.Fatalf("%d stalls of 4-7ms, want 1: %v", found, rep.stalls)
	}
}

// A goroutine woken just before its waker goes into a blocking system call waits apart: with one
// processor, it runs only once the runtime takes the processor back from the sleeping thread.
func TestWakeThenSyscall(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	c := make(chan struct{})
	done := make(chan struct{})
	go func() { <-c; close(done) }()
	runtime.Gosched() // let it block on c
	c <- struct{}{}
	ts := syscall.Timespec{Nsec: int64(2 * time.Millisecond)}
	_ = syscall.Nanosleep(&ts, nil)
	<-done
	trace.Stop()
	s, err := summarise(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for k, ds := range s.waits {
		if strings.Contains(k, "TestWakeThenSyscall.func1 from Waiting, waker then in a system call") && len(ds) == 1 {
			return
		}
	}
	t.Fatalf("no wait counted apart: %v", keys(s.waits))
}
