package repl

import (
	"context"
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
