package repl

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

// HoldLog keeps purge below the held index however far the engine moves on; once released, purge
// goes past it.
func TestHoldLogKeepsPurgeBelow(t *testing.T) {
	fs := vfs.NewMem()
	lg, err := klog.Open("/log", klog.Options{FS: fs, SegmentBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(), PurgeInterval: 5 * time.Millisecond, RetainEntries: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { n.Stop(); eng.Close(); lg.Close() }()
	m := txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
	held := n.Applied() + 1
	release := n.HoldLog(held)
	for i := 0; i < 400; i++ {
		if _, err := put(t, m, context.Background(), fmt.Sprintf("h%03d", i), "value-with-some-bytes"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // many purge rounds
	if f := lg.FirstIndex(); f > held {
		t.Fatalf("log purged to %d under a hold from %d", f, held)
	}
	release()
	release() // twice is harmless
	deadline := time.Now().Add(5 * time.Second)
	for lg.FirstIndex() <= held && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f := lg.FirstIndex(); f <= held {
		t.Fatalf("log not purged after the hold was released: first index %d", f)
	}
}
