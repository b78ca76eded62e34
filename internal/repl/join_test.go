package repl

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

// restoredCopy builds, on a new filesystem, what kiln restore --join builds from a backup of src:
// src's engine at some applied index N (a consistent view, as a checkpoint is), its log N+1..E
// (E: what src had applied after that), every entry committed, and PrepareJoin's record of E.
// It returns the filesystem and E.
func restoredCopy(t *testing.T, src *clusterNode) (vfs.FS, uint64) {
	t.Helper()
	fs := vfs.NewMem()
	snap := src.eng.NewSnapshot()
	defer snap.Close()
	n, err := snap.AppliedPosition()
	if err != nil {
		t.Fatal(err)
	}
	end := src.n.Applied()
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	l, err := eng.NewSnapshotLoader("restore-staging")
	if err != nil {
		t.Fatal(err)
	}
	it, err := snap.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
		if err := l.Add(it.Key(), it.Value()); err != nil {
			t.Fatal(err)
		}
	}
	it.Close()
	marker := []byte{0x00, 'r', 'e', 's', 't'}
	if err := l.Install(marker, binary.BigEndian.AppendUint64(nil, n)); err != nil {
		t.Fatal(err)
	}
	endTerm, err := src.lg.Term(end)
	if err != nil {
		t.Fatal(err)
	}
	if err := PrepareJoin(eng, n, end, endTerm); err != nil {
		t.Fatal(err)
	}
	if err := eng.ClearMarker(marker); err != nil {
		t.Fatal(err)
	}
	lg, err := klog.Open("/log", klog.Options{FS: fs, SegmentBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	nTerm, err := src.lg.Term(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := lg.Reset(n, nTerm, klog.HardState{Term: nTerm, Commit: n}); err != nil {
		t.Fatal(err)
	}
	if end > n {
		ents, err := src.lg.Entries(n+1, end+1, 1<<30)
		if err != nil || uint64(len(ents)) != end-n {
			t.Fatalf("copy entries %d..%d: %d %v", n+1, end, len(ents), err)
		}
		if err := lg.Append(ents); err != nil {
			t.Fatal(err)
		}
	}
	if err := lg.SetHardState(klog.HardState{Term: endTerm, Commit: end}); err != nil {
		t.Fatal(err)
	}
	if err := lg.Sync(); err != nil {
		t.Fatal(err)
	}
	return fs, end
}

// startRestored starts member id, joining, on the restored filesystem fs.
func startRestored(t *testing.T, net *memNet, id uint64, fs vfs.FS, tweak ...func(*Config)) *clusterNode {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lg, err := klog.Open("/log", klog.Options{FS: fs, Logger: quiet, SegmentBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{ID: id, Join: true, Log: lg, Engine: eng, Applier: testApplier(), Transport: net.transport(id),
		TickInterval: 5 * time.Millisecond, PurgeInterval: -1, Logger: quiet, FetchSnapshot: net.fetch}
	for _, f := range tweak {
		f(&cfg)
	}
	n, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	net.mu.Lock()
	net.nodes[id] = n
	net.mu.Unlock()
	c := &clusterNode{fs: fs, lg: lg, eng: eng, n: n}
	c.m = txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
	t.Cleanup(func() {
		c.n.Stop()
		c.eng.Close()
		c.lg.Close()
	})
	return c
}

func startClusterWith(t *testing.T, tweak ...func(*Config)) (*memNet, []*clusterNode) {
	t.Helper()
	net := &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}}
	peers := []Peer{{ID: 1, Addr: "node1"}, {ID: 2, Addr: "node2"}, {ID: 3, Addr: "node3"}}
	nodes := make([]*clusterNode, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) { defer wg.Done(); nodes[i] = startMember(t, net, uint64(i+1), peers, false, tweak...) }(i)
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return net, nodes
}

func follower(nodes []*clusterNode, ld *clusterNode) *clusterNode {
	for _, c := range nodes {
		if c != ld {
			return c
		}
	}
	return nil
}

func puts(t *testing.T, ld *clusterNode, prefix string, n int, val string) uint64 {
	t.Helper()
	var last uint64
	for i := 0; i < n; i++ {
		idx, err := put(t, ld.m, context.Background(), fmt.Sprintf("%s%04d", prefix, i), val)
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	return last
}

func restoredState(t *testing.T, c *clusterNode) string {
	t.Helper()
	st, err := c.n.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// /replica refuses a restored member while, and only while, its history is unconfirmed.
	if p := c.n.RestoredPending(); p != (st.Restored == "pending") {
		t.Fatalf("RestoredPending() = %v with Restored %q", p, st.Restored)
	}
	return st.Restored
}

// A member restored from a follower's state (kiln restore --join) and added as a learner catches
// up from the leader's log after its restored end, without an engine snapshot, when the leader
// still holds that log; when the leader has purged it, it gets an engine snapshot as any member
// would. Either way its engine ends equal to the leader's, and it can be promoted to a voter.
func TestClusterRestoredJoin(t *testing.T) {
	t.Run("from the log", func(t *testing.T) {
		net, nodes := startClusterWith(t)
		ld := waitLeader(t, nodes, 0)
		puts(t, ld, "a", 100, "before the backup")
		fs, end := restoredCopy(t, follower(nodes, ld))
		last := puts(t, ld, "b", 100, "after the backup")
		r := startRestored(t, net, 4, fs)
		if got := restoredState(t, r); got != "pending" {
			t.Fatalf("restored member before it hears the leader: %q, want pending", got)
		}
		addLearner(t, nodes, 4, "node4")
		all := append(append([]*clusterNode(nil), nodes...), r)
		waitApplied(t, all, last, 0)
		if got := r.n.Stats.SnapshotsInstalled.Load(); got != 0 {
			t.Fatalf("the restored member installed %d engine snapshots: it should catch up from the log after %d", got, end)
		}
		if got := restoredState(t, r); got != "matched" {
			t.Fatalf("restored member: %q, want matched", got)
		}
		ld = waitLeader(t, nodes, 0)
		if err := ld.n.ChangeMembership(context.Background(), MemberChange{Op: Promote, ID: 4}); err != nil {
			t.Fatal(err)
		}
		last = puts(t, ld, "c", 20, "after the promotion")
		waitApplied(t, all, last, 0)
		// A restart keeps it confirmed: its log runs past the restored end.
		r.n.Stop()
		n, err := Start(context.Background(), Config{ID: 4, Log: r.lg, Engine: r.eng, Applier: testApplier(), Transport: net.transport(4),
			TickInterval: 5 * time.Millisecond, PurgeInterval: -1, FetchSnapshot: net.fetch, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatalf("restart of the joined member: %v", err)
		}
		net.mu.Lock()
		net.nodes[4] = n
		net.mu.Unlock()
		r.n = n
		if got := restoredState(t, r); got != "matched" {
			t.Fatalf("restored member after a restart: %q, want matched", got)
		}
		ld = waitLeader(t, nodes, 0)
		last = puts(t, ld, "d", 20, "after the restart")
		waitApplied(t, all, last, 0)
		for _, c := range all {
			if d, err := engine.Diff(ld.eng, c.eng, []byte{0x01}, []byte{0xff}); err != nil || d != "" {
				t.Fatalf("node %d differs from the leader: %s %v", c.n.ID(), d, err)
			}
		}
	})

	t.Run("purged: engine snapshot", func(t *testing.T) {
		fast := func(c *Config) {
			c.PurgeInterval = 10 * time.Millisecond
			c.RetainEntries = 20
			c.FollowerRetainEntries = 20
		}
		net, nodes := startClusterWith(t, fast)
		ld := waitLeader(t, nodes, 0)
		puts(t, ld, "a", 50, "before the backup")
		fs, end := restoredCopy(t, follower(nodes, ld))
		last := puts(t, ld, "b", 600, "a value of some length to fill log segments")
		deadline := time.Now().Add(10 * time.Second)
		for ld.lg.FirstIndex() <= end+1 {
			if time.Now().After(deadline) {
				t.Fatalf("the leader never purged past the restored end %d (first %d)", end, ld.lg.FirstIndex())
			}
			time.Sleep(5 * time.Millisecond)
		}
		r := startRestored(t, net, 4, fs, fast)
		addLearner(t, nodes, 4, "node4")
		all := append(append([]*clusterNode(nil), nodes...), r)
		waitApplied(t, all, last, 0)
		if r.n.Stats.SnapshotsInstalled.Load() == 0 {
			t.Fatal("the restored member caught up without an engine snapshot though the leader purged its log")
		}
		if got := restoredState(t, r); got != "replaced" {
			t.Fatalf("restored member: %q, want replaced", got)
		}
		ld = waitLeader(t, nodes, 0)
		for _, c := range all {
			if d, err := engine.Diff(ld.eng, c.eng, []byte{0x01}, []byte{0xff}); err != nil || d != "" {
				t.Fatalf("node %d differs from the leader: %s %v", c.n.ID(), d, err)
			}
		}
	})

	// A member restored from another cluster's history (same ids, another history: its terms
	// differ at the restored end) is refused when the leader's log disagrees: it stops and takes
	// nothing, and the cluster goes on committing.
	t.Run("another history: refused", func(t *testing.T) {
		net, nodes := startClusterWith(t)
		ld := waitLeader(t, nodes, 0)
		last := puts(t, ld, "a", 200, "cluster A")

		otherNet, other := startClusterWith(t)
		old := waitLeader(t, other, 0)
		// Elections raise the other cluster's term above this one's.
		ldTerm := ld.n.Term()
		for old.n.Term() <= ldTerm+1 {
			otherNet.isolate(old.n.ID(), true)
			nl := waitLeader(t, other, old.n.ID())
			otherNet.isolate(old.n.ID(), false)
			old = nl
		}
		ob := puts(t, old, "x", 30, "cluster B")
		waitApplied(t, other, ob, 0)
		fs, end := restoredCopy(t, follower(other, old))
		if end >= last {
			t.Fatalf("setup: the other history ends at %d, past this cluster's %d", end, last)
		}
		r := startRestored(t, net, 4, fs)
		addLearner(t, nodes, 4, "node4")
		deadline := time.Now().Add(10 * time.Second)
		for r.n.Failed() == nil {
			if time.Now().After(deadline) {
				t.Fatalf("the member restored from another history was not refused (applied %d)", r.n.Applied())
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := r.n.Failed(); !strings.Contains(err.Error(), "not the cluster's") {
			t.Fatalf("refusal: %v", err)
		}
		if _, ok, _ := r.eng.Get([]byte("a0000")); ok {
			t.Fatal("the refused member took this cluster's data")
		}
		if _, ok, _ := r.eng.Get([]byte("x0000")); !ok {
			t.Fatal("the refused member lost its own data")
		}
		ld = waitLeader(t, nodes, 0)
		last = puts(t, ld, "c", 10, "after")
		waitApplied(t, nodes, last, 0)
		for _, c := range nodes {
			if d, err := engine.Diff(ld.eng, c.eng, []byte{0x01}, []byte{0xff}); err != nil || d != "" {
				t.Fatalf("node %d differs from the leader: %s %v", c.n.ID(), d, err)
			}
		}
	})
}
