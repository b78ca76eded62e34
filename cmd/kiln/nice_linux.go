//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// lowerPriority sets the nice value of every thread of this process to at least n (never
// raises a priority the caller already lowered further). On Linux a nice value belongs to a
// thread, and a new thread inherits its creator's: setting it on every thread that exists now
// covers the threads the Go runtime starts later as well.
func lowerPriority(n int) error {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("nice: %w", err)
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// getpriority(2) returns 20 - nice.
		if raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil && 20-raw >= n {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, n); err != nil && err != unix.ESRCH {
			return fmt.Errorf("nice %d: %w", n, err)
		}
	}
	return nil
}
