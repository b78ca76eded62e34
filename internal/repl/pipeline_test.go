package repl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

// With PipelineSync, a single node's fsync runs on the syncer goroutine: while one group's fsync is
// in flight (held here in AfterSync, between the fsync and the apply), the raft loop stays free (it
// answers Status) and appends the next group, and no commit of either group is applied, acknowledged
// or visible before its fsync. Without the pipeline the loop itself is stuck in that fsync.
func TestPipelinedSyncBeforeApply(t *testing.T) {
	for _, pipelined := range []bool{true, false} {
		t.Run(fmt.Sprintf("pipelined=%v", pipelined), func(t *testing.T) {
			fs := vfs.NewMem()
			lg, err := klog.Open("/log", klog.Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
			if err != nil {
				t.Fatal(err)
			}
			defer lg.Close()
			defer eng.Close()
			var armed atomic.Bool
			held := make(chan struct{})
			release := make(chan struct{})
			n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(), PipelineSync: pipelined,
				AfterSync: func() {
					if armed.CompareAndSwap(true, false) {
						close(held)
						<-release
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Stop()
			var releaseOnce sync.Once
			unhold := func() { releaseOnce.Do(func() { close(release) }) }
			defer unhold() // before Stop (deferred calls run last first): a held syncer would block it
			m := txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
			armed.Store(true)
			first := make(chan error, 1)
			go func() { _, err := put(t, m, context.Background(), "a", "1"); first <- err }()
			<-held // a's entry is fsynced; the hook holds it before apply
			second := make(chan error, 1)
			go func() { _, err := put(t, m, context.Background(), "b", "2"); second <- err }()

			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, statusErr := n.Status(ctx)
			cancel()
			if pipelined && statusErr != nil {
				t.Fatalf("the loop did not answer while an fsync was in flight: %v", statusErr)
			}
			if !pipelined && statusErr == nil {
				t.Fatal("the serial loop answered while it should be inside its fsync")
			}
			if pipelined {
				// b reaches the log (appended, committed in raft's memory) while a's fsync is held.
				deadline := time.Now().Add(5 * time.Second)
				for n.lg.LastIndex() <= n.Durable() && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				if n.lg.LastIndex() <= n.Durable() {
					t.Fatalf("the next group was not appended during the fsync (last %d, durable %d)", n.lg.LastIndex(), n.Durable())
				}
			}
			select {
			case err := <-first:
				t.Fatalf("a was acknowledged (%v) before its fsync finished", err)
			case err := <-second:
				t.Fatalf("b was acknowledged (%v) before its fsync", err)
			case <-time.After(50 * time.Millisecond):
			}
			for _, k := range []string{"a", "b"} {
				if _, ok, _ := eng.Get([]byte(k)); ok {
					t.Fatalf("%s is applied before it is durable", k)
				}
			}
			if n.Applied() > n.Durable() {
				t.Fatalf("applied %d beyond durable %d", n.Applied(), n.Durable())
			}
			unhold()
			for _, c := range []chan error{first, second} {
				if err := <-c; err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []string{"a", "b"} {
				if _, ok, _ := eng.Get([]byte(k)); !ok {
					t.Fatalf("%s is not applied after its commit returned", k)
				}
			}
		})
	}
}

// The free-space check reads the filesystem once per window while there is ample room, at every commit
// near the reserve, and refuses commits below it (and accepts them again as soon as room returns).
func TestDiskFreeCheckedOnlyNearReserve(t *testing.T) {
	const reserve = 64 << 20
	var free atomic.Uint64
	var reads atomic.Int64
	n := &Node{cfg: Config{ReserveBytes: reserve, DiskFree: func() (uint64, error) {
		reads.Add(1)
		return free.Load(), nil
	}}}
	free.Store(reserve + diskAmpleBytes + 1)
	for i := 0; i < 100; i++ {
		if err := n.checkDiskFree(100); err != nil {
			t.Fatal(err)
		}
	}
	if r := reads.Load(); r != 1 {
		t.Fatalf("ample room: %d statfs for 100 commits, want 1", r)
	}
	// Half the ample room proposed ends the window early.
	if err := n.checkDiskFree(diskAmpleBytes / 2); err != nil || reads.Load() != 2 {
		t.Fatalf("a large commit did not read the filesystem again (%d reads, %v)", reads.Load(), err)
	}
	// Near the reserve: every commit reads it.
	free.Store(reserve + 1)
	n.diskAmpleUntil.Store(0)
	reads.Store(0)
	for i := 0; i < 10; i++ {
		if err := n.checkDiskFree(100); err != nil {
			t.Fatal(err)
		}
	}
	if r := reads.Load(); r != 10 {
		t.Fatalf("near the reserve: %d statfs for 10 commits, want 10", r)
	}
	free.Store(reserve - 1)
	var df *DiskFullError
	if err := n.checkDiskFree(100); !errors.As(err, &df) {
		t.Fatalf("below the reserve: %v, want DiskFullError", err)
	}
	free.Store(reserve + 1)
	if err := n.checkDiskFree(100); err != nil {
		t.Fatalf("room returned: %v", err)
	}
}
