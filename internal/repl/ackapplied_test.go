package repl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/engine"
)

// gatedApplier holds every Apply until its gate opens: a follower whose apply is slow.
type gatedApplier struct {
	Applier
	mu   sync.Mutex
	open chan struct{}
}

func newGatedApplier() *gatedApplier {
	g := &gatedApplier{Applier: testApplier(), open: make(chan struct{})}
	close(g.open) // open until closeGate
	return g
}

func (g *gatedApplier) closeGate() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedApplier) openGate() {
	g.mu.Lock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	g.mu.Unlock()
}

func (g *gatedApplier) Apply(rec []byte, eng *engine.Engine, b *engine.Batch) error {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
	return g.Applier.Apply(rec, eng, b)
}

// openAll opens every gate when the test ends, before the nodes' cleanups stop them (cleanups run
// last-registered first): a node whose apply is held could not stop.
func openAll(t *testing.T, gates []*gatedApplier) {
	t.Cleanup(func() {
		for _, g := range gates {
			g.openGate()
		}
	})
}

// startGatedCluster is startCluster whose every member's apply can be held (gates[i] for node i+1).
func startGatedCluster(t *testing.T, size int) (*memNet, []*clusterNode, []*gatedApplier) {
	t.Helper()
	net := &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}}
	var peers []Peer
	for i := 1; i <= size; i++ {
		peers = append(peers, Peer{ID: uint64(i), Addr: fmt.Sprintf("node%d", i)})
	}
	nodes := make([]*clusterNode, size)
	gates := make([]*gatedApplier, size)
	var wg sync.WaitGroup
	for i := range nodes {
		gates[i] = newGatedApplier()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			nodes[i] = startMember(t, net, uint64(i+1), peers, false, func(c *Config) { c.Applier = gates[i] })
		}(i)
	}
	wg.Wait()
	openAll(t, gates)
	if t.Failed() {
		t.FailNow()
	}
	return net, nodes, gates
}

// TestWaitMajorityApplied: the applied ack level waits for a majority of the voters' engines, not
// only their logs. With one follower cut off and the other's apply held, a commit is durable on a
// majority (leader + the held follower's log) and acknowledged by Commit, but WaitMajorityApplied
// does not return until the held follower applies it; once it does, the follower's engine has the
// row. Then, with the follower held again, the leader is cut off while a commit waits for the level:
// the wait ends with ErrAppliedUnconfirmed (the commit itself completed), never with success.
func TestWaitMajorityApplied(t *testing.T) {
	net, nodes, gates := startGatedCluster(t, 3)
	ld := waitLeader(t, nodes, 0)
	var fs []*clusterNode
	for _, c := range nodes {
		if c != ld {
			fs = append(fs, c)
		}
	}
	cut, held := fs[0], fs[1]
	gate := gates[held.n.ID()-1]

	// A healthy cluster: the level is reached at once.
	idx, err := put(t, ld.m, context.Background(), "a", "1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := ld.n.WaitMajorityApplied(ctx, idx); err != nil {
		t.Fatalf("healthy cluster: %v", err)
	}
	cancel()

	net.isolate(cut.n.ID(), true)
	gate.closeGate()
	idx, err = put(t, ld.m, context.Background(), "b", "1")
	if err != nil {
		t.Fatalf("commit with one follower cut off and the other's apply held: %v", err)
	}
	if got := held.n.Applied(); got >= idx {
		t.Fatalf("the held follower applied %d >= %d: the test's gate does not hold", got, idx)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	err = ld.n.WaitMajorityApplied(ctx, idx)
	cancel()
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Index != idx {
		t.Fatalf("WaitMajorityApplied while no follower applied %d: %v, want an InterruptedError at %d", idx, err, idx)
	}
	done := make(chan error, 1)
	go func() { done <- ld.n.WaitMajorityApplied(context.Background(), idx) }()
	select {
	case err := <-done:
		t.Fatalf("WaitMajorityApplied returned %v before a follower applied %d", err, idx)
	case <-time.After(100 * time.Millisecond):
	}
	gate.openGate()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitMajorityApplied did not return after the follower applied")
	}
	if _, ok, _ := held.eng.Get([]byte("b")); !ok {
		t.Fatal("the level was confirmed but the follower's engine lacks the row")
	}
	st, err := ld.n.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Members {
		if m.ID == held.n.ID() && m.Applied < idx {
			t.Fatalf("the leader's status shows the held follower at applied %d, want >= %d", m.Applied, idx)
		}
	}

	// Leadership lost while waiting: a clear error, not an acknowledgement.
	net.isolate(cut.n.ID(), false)
	waitApplied(t, nodes, idx, 0)
	gate.closeGate()
	net.isolate(cut.n.ID(), true) // the held follower is the only one that can complete the commit
	idx, err = put(t, ld.m, context.Background(), "c", "1")
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- ld.n.WaitMajorityApplied(context.Background(), idx) }()
	net.isolate(cut.n.ID(), false)
	net.isolate(ld.n.ID(), true)
	select {
	case err := <-done:
		if !errors.Is(err, ErrAppliedUnconfirmed) {
			t.Fatalf("WaitMajorityApplied after the leader was cut off: %v, want ErrAppliedUnconfirmed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitMajorityApplied did not end when the leader lost its quorum")
	}
	gate.openGate()
	net.isolate(ld.n.ID(), false)
}

// TestMajorityApplied: the count is raft's quorum over the engine-bearing voters; log-only voters
// and members outside the configuration never count, and a joint configuration needs both halves.
func TestMajorityApplied(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out []uint64
		logOnly []uint64
		self    uint64            // the leader's applied index (id 1)
		reports map[uint64]uint64 // other members' reports
		want    uint64
	}{
		{"single voter", []uint64{1}, nil, nil, 7, nil, 7},
		{"three voters, one report", []uint64{1, 2, 3}, nil, nil, 9, map[uint64]uint64{2: 5}, 5},
		{"three voters, two reports", []uint64{1, 2, 3}, nil, nil, 9, map[uint64]uint64{2: 5, 3: 8}, 8},
		{"no report yet", []uint64{1, 2, 3}, nil, nil, 9, nil, 0},
		{"log-only voter does not count", []uint64{1, 2, 3}, nil, []uint64{3}, 9, map[uint64]uint64{2: 4, 3: 9}, 4},
		{"learner report does not count", []uint64{1, 2, 3}, nil, nil, 9, map[uint64]uint64{4: 9}, 0},
		{"joint: both halves", []uint64{1, 2, 3}, []uint64{1, 4, 5}, nil, 9, map[uint64]uint64{2: 9, 3: 9}, 0},
		{"joint: both halves reached", []uint64{1, 2, 3}, []uint64{1, 4, 5}, nil, 9, map[uint64]uint64{2: 9, 4: 6}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &Node{id: 1, members: map[uint64]string{}, logOnly: map[uint64]bool{}}
			for _, id := range tc.logOnly {
				n.logOnly[id] = true
			}
			n.applied.Store(tc.self)
			n.acks.setVoters(tc.in, tc.out)
			for id, v := range tc.reports {
				n.peerApplied(id, v)
			}
			if got := n.majorityApplied(); got != tc.want {
				t.Fatalf("majorityApplied = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestWaitMajorityAppliedLogOnly: with two full voters and a log-only voter, the log-only voter's
// fsync completes a commit's majority but not the applied level: its engine holds nothing to read,
// so the level waits for the other full voter's apply (the majority of the two engine-bearing
// voters is both).
func TestWaitMajorityAppliedLogOnly(t *testing.T) {
	net := &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}}
	peers := []Peer{{ID: 1, Addr: "node1"}, {ID: 2, Addr: "node2"}, {ID: 3, Addr: "node3", LogOnly: true}}
	nodes := make([]*clusterNode, 3)
	gates := []*gatedApplier{newGatedApplier(), newGatedApplier(), newGatedApplier()}
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			nodes[i] = startMember(t, net, uint64(i+1), peers, false, func(c *Config) { c.LogOnly = i == 2; c.Applier = gates[i] })
		})
	}
	wg.Wait()
	openAll(t, gates)
	if t.Failed() {
		t.FailNow()
	}
	ld := waitLeader(t, nodes[:2], 0)
	other := nodes[0]
	if other == ld {
		other = nodes[1]
	}
	gates[other.n.ID()-1].closeGate()
	idx, err := put(t, ld.m, context.Background(), "k", "v")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err = ld.n.WaitMajorityApplied(ctx, idx)
	cancel()
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("WaitMajorityApplied while only the leader and the log-only voter have %d: %v, want an InterruptedError", idx, err)
	}
	gates[other.n.ID()-1].openGate()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ld.n.WaitMajorityApplied(ctx, idx); err != nil {
		t.Fatalf("after the full follower applied: %v", err)
	}
	if _, ok, _ := other.eng.Get([]byte("k")); !ok {
		t.Fatal("the level was confirmed but the full follower's engine lacks the row")
	}
}
