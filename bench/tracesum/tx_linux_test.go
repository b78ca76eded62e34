package main

import (
	"bytes"
	"runtime"
	"runtime/trace"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// A thread that sleeps without telling the runtime (a raw system call records no event) looks like
// a processor whose thread the kernel took away: tx must report the silence as a stall.
func TestStalls(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		runtime.Gosched() // an event on this processor before the silence
		ts := syscall.Timespec{Nsec: int64(5 * time.Millisecond)}
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		runtime.Gosched() // and one after
		close(done)
	}()
	<-done
	trace.Stop()
	rep, err := transactions(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.stalls {
		if time.Duration(s.hi-s.lo) >= 4*time.Millisecond {
			return
		}
	}
	t.Fatalf("no stall of 4ms or more among %v", rep.stalls)
}
