package repl

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Linearizable reads: on every member, a read index covers every commit acknowledged before the
// request, so a read after applying it sees them (even on a follower that has not applied them
// yet); a leader cut off from its quorum, and a member without a leader, get no read index at all
// (never a stale one); after healing, the old leader answers again with the new leader's commits.
func TestReadIndexLinearizable(t *testing.T) {
	net, nodes := startCluster(t, 3)
	ld := waitLeader(t, nodes, 0)
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		idx, err := put(t, ld.m, ctx, fmt.Sprintf("k%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range nodes {
			ri, err := c.n.ReadIndex(ctx)
			if err != nil {
				t.Fatalf("node %d: read index: %v", c.n.ID(), err)
			}
			if ri < idx {
				t.Fatalf("node %d: read index %d below the acknowledged commit %d", c.n.ID(), ri, idx)
			}
			if err := c.n.WaitApplied(ctx, ri); err != nil {
				t.Fatal(err)
			}
			if _, ok, _ := c.eng.Get([]byte(fmt.Sprintf("k%03d", i))); !ok {
				t.Fatalf("node %d: k%03d missing after applying the read index", c.n.ID(), i)
			}
		}
	}

	// Cut the leader off: it still believes it leads for a while, but no quorum confirms it, so it
	// answers no read index.
	old := ld
	net.isolate(old.n.ID(), true)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if ri, err := old.n.ReadIndex(short); err == nil {
		t.Fatalf("isolated leader answered read index %d", ri)
	}
	cancel()
	nl := waitLeader(t, nodes, old.n.ID())
	var last uint64
	for i := 30; i < 40; i++ {
		idx, err := put(t, nl.m, ctx, fmt.Sprintf("k%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	if ri, err := old.n.ReadIndex(short); err == nil {
		t.Fatalf("isolated old leader answered read index %d while %d leads", ri, nl.n.ID())
	}
	cancel()

	// Healed, the old leader (now a follower) answers with an index covering the new commits.
	net.isolate(old.n.ID(), false)
	long, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ri, err := old.n.ReadIndex(long)
	if err != nil {
		t.Fatalf("healed member: %v", err)
	}
	if ri < last {
		t.Fatalf("healed member's read index %d below the new leader's commit %d", ri, last)
	}
	if err := old.n.WaitApplied(long, ri); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := old.eng.Get([]byte("k039")); !ok {
		t.Fatal("healed member misses k039 after applying its read index")
	}
}

// A single voter answers at once with its commit index.
func TestReadIndexSingleVoter(t *testing.T) {
	s := startAsync(t, vfs.NewMem(), time.Hour)
	defer s.close()
	idx := s.put(t, "a", false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ri, err := s.n.ReadIndex(ctx)
	if err != nil || ri < idx {
		t.Fatalf("read index %d, %v; want >= %d", ri, err, idx)
	}
}
