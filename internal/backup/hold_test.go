package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/txn"
)

// holdNode is a single-node raft node that purges its log (4 KiB segments) every 5 ms down to 10
// entries below what its engine flushed, and a writer of commits to it.
type holdNode struct {
	n  *repl.Node
	lg *klog.Log
	m  *txn.Manager
	i  int
}

func startHoldNode(t *testing.T) *holdNode {
	t.Helper()
	fs := vfs.NewMem()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lg, err := klog.Open("/log", klog.Options{FS: fs, SegmentBytes: 4096, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := repl.Start(context.Background(), repl.Config{Log: lg, Engine: eng, Applier: txn.NewApplier(map[string]txn.LogicalFunc{}),
		PurgeInterval: 5 * time.Millisecond, RetainEntries: 10, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop(); eng.Close(); lg.Close() })
	return &holdNode{n: n, lg: lg, m: txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)}
}

// write commits count transactions of about 100 bytes each.
func (h *holdNode) write(t *testing.T, count int) {
	t.Helper()
	for range count {
		tx := h.m.Begin(txn.RepeatableRead, false)
		tx.Set([]byte(fmt.Sprintf("k%06d", h.i)), []byte(fmt.Sprintf("%0100d", h.i)))
		if _, err := tx.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		h.i++
	}
}

// waitPurged waits (generously: a loaded machine) until the log's first index is past index.
func (h *holdNode) waitPurged(t *testing.T, index uint64, why string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for h.lg.FirstIndex() <= index {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the log still starts at %d, want past %d", why, h.lg.FirstIndex(), index)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An archiver's hold stops purge at its index while it is renewed, moves up with the archive,
// and lets purge go on once it lapses: after its ttl without renewal, or once the log it keeps
// outgrows its byte bound (checked while it stands, and refused at renewal).
func TestArchiveHoldStopsPurge(t *testing.T) {
	h := startHoldNode(t)
	holds := NewArchiveHolds(h.n.HoldLog, h.lg.BytesFrom, slog.New(slog.NewTextHandler(io.Discard, nil)))
	holds.CheckEvery = 10 * time.Millisecond

	// Without a hold, purge follows the engine.
	h.write(t, 200)
	held := h.n.Applied() + 1
	h.waitPurged(t, held-60, "no hold")

	// A hold at held: many purge rounds later the log still starts at or below it.
	if _, err := holds.Renew("arc", held, time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	h.write(t, 300)
	time.Sleep(100 * time.Millisecond) // 20 purge rounds
	if f := h.lg.FirstIndex(); f > held {
		t.Fatalf("the log was purged to %d under a hold from %d", f, held)
	}
	if l := holds.List(); len(l) != 1 || l[0].From != held || l[0].LogBytes < h.lg.BytesFrom(h.lg.LastIndex()) {
		t.Fatalf("holds: %+v", l)
	}

	// The archiver renews further on: purge moves up to the new index, not past it.
	moved := held + 150
	if _, err := holds.Renew("arc", moved, time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	h.write(t, 100)
	h.waitPurged(t, held, "hold moved up")
	time.Sleep(100 * time.Millisecond)
	if f := h.lg.FirstIndex(); f > moved {
		t.Fatalf("the log was purged to %d under a hold moved to %d", f, moved)
	}

	// The archiver dies: its last renewal had a short ttl, which lapses; purge goes on past it.
	if _, err := holds.Renew("arc", moved, 200*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	h.write(t, 200)
	h.waitPurged(t, moved, "after the ttl")
	if l := holds.List(); len(l) != 0 {
		t.Fatalf("a lapsed hold is still listed: %+v", l)
	}

	// A byte bound: the hold stands while the log it keeps is under it, and lapses once it grows
	// past it (a live but stuck archiver).
	from := h.n.Applied() + 1
	if _, err := holds.Renew("slow", from, time.Hour, 40<<10); err != nil {
		t.Fatal(err)
	}
	h.write(t, 100) // ~15 KB of log
	time.Sleep(50 * time.Millisecond)
	if f := h.lg.FirstIndex(); f > from {
		t.Fatalf("the log was purged to %d under a hold from %d within its byte bound", f, from)
	}
	h.write(t, 500) // ~75 KB more
	h.waitPurged(t, from, "past the byte bound")
	if l := holds.List(); len(l) != 0 {
		t.Fatalf("a hold over its byte bound is still listed: %+v", l)
	}
	// Renewing at an index whose log is already over the bound is refused, and holds nothing.
	old := h.lg.FirstIndex()
	if _, err := holds.Renew("slow", old, time.Hour, 1); !errors.Is(err, ErrHoldTooLarge) {
		t.Fatalf("a renewal over the byte bound: %v", err)
	}
	h.write(t, 200)
	h.waitPurged(t, old, "after a refused renewal")

	// Release drops a hold at once; bad arguments are refused.
	if _, err := holds.Renew("gone", h.lg.FirstIndex(), time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	if !holds.Release("gone") || holds.Release("gone") {
		t.Fatal("Release: want true once, then false")
	}
	for _, c := range []struct {
		name string
		ttl  time.Duration
		max  int64
	}{{"", time.Minute, 0}, {"x", 0, 0}, {"x", MaxHoldTTL + time.Second, 0}, {"x", time.Minute, -1}} {
		if _, err := holds.Renew(c.name, 1, c.ttl, c.max); err == nil {
			t.Fatalf("Renew(%q, ttl %v, max %d) accepted", c.name, c.ttl, c.max)
		}
	}
}
