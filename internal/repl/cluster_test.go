package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

// memNet is an in-process transport: per-node inboxes, and links that can be cut.
type memNet struct {
	mu    sync.Mutex
	nodes map[uint64]*Node
	cut   map[[2]uint64]bool
}

func (m *memNet) transport(from uint64) Transport { return &memTransport{net: m, from: from} }

// fetch streams leader's engine snapshot through a pipe, as the raft port's HTTP would.
func (m *memNet) fetch(ctx context.Context, leader uint64, _ string, id string, after []byte) (io.ReadCloser, error) {
	m.mu.Lock()
	n := m.nodes[leader]
	m.mu.Unlock()
	if n == nil {
		return nil, fmt.Errorf("no node %d", leader)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(n.ServeSnapshot(ctx, pw, id, after)) }()
	return pr, nil
}

// isolate cuts (or restores) every link of node id; links of other isolated nodes stay cut.
func (m *memNet) isolate(id uint64, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cut[[2]uint64{id, 0}] = on
}

func (m *memNet) isCut(from, to uint64) bool {
	return m.cut[[2]uint64{from, 0}] || m.cut[[2]uint64{to, 0}] || m.cut[[2]uint64{from, to}]
}

type memTransport struct {
	net  *memNet
	from uint64
}

func (t *memTransport) Send(msgs []pb.Message) {
	for _, msg := range msgs {
		t.net.mu.Lock()
		n := t.net.nodes[msg.To]
		cut := t.net.isCut(t.from, msg.To)
		t.net.mu.Unlock()
		if n == nil || cut {
			continue
		}
		select {
		case n.recvc <- msg:
		default: // a full inbox drops, as a network would
		}
	}
}
func (t *memTransport) AddPeer(uint64, string) {}
func (t *memTransport) RemovePeer(uint64)      {}

type clusterNode struct {
	fs  vfs.FS
	lg  *klog.Log
	eng *engine.Engine
	n   *Node
	m   *txn.Manager
}

func startCluster(t *testing.T, size int) (*memNet, []*clusterNode) {
	t.Helper()
	net := &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}}
	var peers []Peer
	for i := 1; i <= size; i++ {
		peers = append(peers, Peer{ID: uint64(i), Addr: fmt.Sprintf("node%d", i)})
	}
	nodes := make([]*clusterNode, size)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			nodes[i] = startMember(t, net, uint64(i+1), peers, false)
		}(i)
	}
	wg.Wait()
	return net, nodes
}

// startMember starts node id on a new memory filesystem, bootstrapping with peers or joining.
func startMember(t *testing.T, net *memNet, id uint64, peers []Peer, join bool, tweak ...func(*Config)) *clusterNode {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fs := vfs.NewMem()
	lg, err := klog.Open("/log", klog.Options{FS: fs, Logger: quiet, SegmentBytes: 16 << 10})
	if err != nil {
		t.Error(err)
		return nil
	}
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Error(err)
		return nil
	}
	c := &clusterNode{fs: fs, lg: lg, eng: eng}
	cfg := Config{ID: id, Peers: peers, Join: join, Log: lg, Engine: eng, Applier: testApplier(),
		Transport: net.transport(id), TickInterval: 5 * time.Millisecond, PurgeInterval: -1, Logger: quiet,
		FetchSnapshot: net.fetch}
	for _, f := range tweak {
		f(&cfg)
	}
	n, err := Start(context.Background(), cfg)
	if err != nil {
		t.Error(err)
		return nil
	}
	net.mu.Lock()
	net.nodes[id] = n
	net.mu.Unlock()
	c.n = n
	c.m = txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
	t.Cleanup(func() {
		c.n.Stop()
		c.eng.Close()
		c.lg.Close()
	})
	return c
}

func waitLeader(t *testing.T, nodes []*clusterNode, not uint64) *clusterNode {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range nodes {
			if c.n.ID() != not && c.n.IsLeader() {
				return c
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no leader within 10s")
	return nil
}

// addLearner adds a learner through the leader, and again through the next leader when leadership
// moved before the change was confirmed (a loaded machine can delay heartbeats past the election
// timeout). Adding a learner twice is harmless, so the retry is safe.
func addLearner(t *testing.T, nodes []*clusterNode, id uint64, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ld := waitLeader(t, nodes, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := ld.n.ChangeMembership(ctx, MemberChange{Op: AddLearner, ID: id, Addr: addr})
		cancel()
		if err == nil {
			return
		}
		var nl *NotLeaderError
		if !errors.Is(err, ErrOutcomeUnknown) && !errors.As(err, &nl) || time.Now().After(deadline) {
			t.Fatal(err)
		}
		t.Logf("adding learner %d: %v; again through the next leader", id, err)
	}
}

func waitApplied(t *testing.T, nodes []*clusterNode, idx uint64, skip uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range nodes {
		if c.n.ID() == skip {
			continue
		}
		for c.n.Applied() < idx {
			if time.Now().After(deadline) {
				t.Fatalf("node %d applied %d, want %d", c.n.ID(), c.n.Applied(), idx)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// Three voters: commits go through the leader and reach every engine; a follower refuses commits
// with NotLeaderError; isolating the leader elects another that has every acknowledged commit, the
// old leader's waiting commit gets an outcome (never a silent success), and after healing all
// engines are equal.
func TestClusterCommitFailover(t *testing.T) {
	net, nodes := startCluster(t, 3)
	ld := waitLeader(t, nodes, 0)
	var last uint64
	for i := 0; i < 50; i++ {
		idx, err := put(t, ld.m, context.Background(), fmt.Sprintf("k%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	waitApplied(t, nodes, last, 0)
	for _, c := range nodes {
		if c == ld {
			continue
		}
		_, err := put(t, c.m, context.Background(), "nope", "v")
		var nl *NotLeaderError
		if !errors.As(err, &nl) || nl.Leader != ld.n.ID() {
			t.Fatalf("commit on follower %d: %v, want NotLeaderError naming %d", c.n.ID(), err, ld.n.ID())
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for !ld.n.ReadLeaseValid() {
		if time.Now().After(deadline) {
			t.Fatal("a healthy leader never got a read lease")
		}
		time.Sleep(time.Millisecond)
	}
	for _, c := range nodes {
		if c != ld && c.n.ReadLeaseValid() {
			t.Fatalf("follower %d claims a read lease", c.n.ID())
		}
	}
	// Cut the leader off; a commit started on it cannot be acknowledged.
	net.isolate(ld.n.ID(), true)
	errc := make(chan error, 1)
	go func() {
		_, err := put(t, ld.m, context.Background(), "orphan", "v")
		errc <- err
	}()
	nl := waitLeader(t, nodes, ld.n.ID())
	// Safety of the lease: by the time another node leads, the old leader no longer answers reads
	// as the leader (it still believes it leads until CheckQuorum deposes it).
	if ld.n.ReadLeaseValid() {
		t.Fatal("the cut-off leader still holds a read lease while another node leads")
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a commit on an isolated leader was acknowledged")
		}
		t.Logf("isolated leader's commit: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("isolated leader's commit did not end (CheckQuorum should depose it)")
	}
	for i := 50; i < 100; i++ {
		idx, err := put(t, nl.m, context.Background(), fmt.Sprintf("k%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	net.isolate(ld.n.ID(), false)
	waitApplied(t, nodes, last, 0)
	for _, c := range nodes {
		for i := 0; i < 100; i++ {
			if _, ok, _ := c.eng.Get([]byte(fmt.Sprintf("k%03d", i))); !ok {
				t.Fatalf("node %d lacks acknowledged k%03d", c.n.ID(), i)
			}
		}
		if _, ok, _ := c.eng.Get([]byte("orphan")); ok {
			t.Fatalf("node %d has the isolated leader's unacknowledged commit", c.n.ID())
		}
		if d, err := engine.Diff(nodes[0].eng, c.eng, []byte{0x01}, []byte{0xff}); err != nil || d != "" {
			t.Fatalf("node %d differs from node 1: %s %v", c.n.ID(), d, err)
		}
	}
}

// Membership while serving: a joining node added as a learner catches up from the log without
// voting, is promoted, and the cluster keeps committing after a member (the leader) is removed.
func TestClusterMembership(t *testing.T) {
	net, nodes := startCluster(t, 3)
	ld := waitLeader(t, nodes, 0)
	var last uint64
	for i := 0; i < 20; i++ {
		idx, err := put(t, ld.m, context.Background(), fmt.Sprintf("a%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	n4 := startMember(t, net, 4, nil, true)
	if n4 == nil {
		t.FailNow()
	}
	ctx := context.Background()
	if err := nodes[0].n.ChangeMembership(ctx, MemberChange{Op: AddLearner, ID: 4, Addr: "node4"}); err == nil && nodes[0] != ld {
		t.Fatal("a follower took a membership change")
	}
	if err := ld.n.ChangeMembership(ctx, MemberChange{Op: AddLearner, ID: 4, Addr: "node4"}); err != nil {
		t.Fatal(err)
	}
	all := append(append([]*clusterNode(nil), nodes...), n4)
	waitApplied(t, all, last, 0)
	st, err := ld.n.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Members {
		if m.ID == 4 && m.Voter {
			t.Fatal("learner listed as a voter")
		}
	}
	if err := ld.n.ChangeMembership(ctx, MemberChange{Op: Promote, ID: 4}); err != nil {
		t.Fatal(err)
	}
	if err := ld.n.ChangeMembership(ctx, MemberChange{Op: Remove, ID: ld.n.ID()}); err != nil {
		t.Fatal(err)
	}
	rest := []*clusterNode{}
	for _, c := range all {
		if c != ld {
			rest = append(rest, c)
		}
	}
	nl := waitLeader(t, rest, ld.n.ID())
	for i := 0; i < 20; i++ {
		idx, err := put(t, nl.m, context.Background(), fmt.Sprintf("b%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	waitApplied(t, rest, last, 0)
	for _, c := range rest {
		if d, err := engine.Diff(rest[0].eng, c.eng, []byte{0x01}, []byte{0xff}); err != nil || d != "" {
			t.Fatalf("node %d differs: %s %v", c.n.ID(), d, err)
		}
		if _, ok, _ := c.eng.Get([]byte("a000")); !ok {
			t.Fatalf("node %d lacks a000", c.n.ID())
		}
	}
}

// A member cut off while the leader purged the entries it needs, and a member added after that,
// catch up through an engine snapshot, then from the log; all engines end equal.
func TestClusterSnapshotCatchUp(t *testing.T) {
	net := &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}}
	peers := []Peer{{ID: 1, Addr: "node1"}, {ID: 2, Addr: "node2"}, {ID: 3, Addr: "node3"}}
	fast := func(c *Config) {
		c.PurgeInterval = 10 * time.Millisecond
		c.RetainEntries = 20
		c.FollowerRetainEntries = 20
	}
	nodes := make([]*clusterNode, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) { defer wg.Done(); nodes[i] = startMember(t, net, uint64(i+1), peers, false, fast) }(i)
	}
	wg.Wait()
	ld := waitLeader(t, nodes, 0)
	var lag *clusterNode
	for _, c := range nodes {
		if c != ld {
			lag = c
			break
		}
	}
	net.isolate(lag.n.ID(), true)
	var last uint64
	for i := 0; i < 600; i++ {
		idx, err := put(t, ld.m, context.Background(), fmt.Sprintf("s%04d", i), "a value of some length to fill log segments")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	deadline := time.Now().Add(10 * time.Second)
	for ld.lg.FirstIndex() <= lag.n.Applied()+1 {
		if time.Now().After(deadline) {
			t.Fatalf("leader never purged past the cut-off member (first %d, member applied %d)", ld.lg.FirstIndex(), lag.n.Applied())
		}
		time.Sleep(5 * time.Millisecond)
	}
	net.isolate(lag.n.ID(), false)
	n4 := startMember(t, net, 4, nil, true, fast)
	if err := ld.n.ChangeMembership(context.Background(), MemberChange{Op: AddLearner, ID: 4, Addr: "node4"}); err != nil {
		t.Fatal(err)
	}
	for i := 600; i < 650; i++ {
		idx, err := put(t, ld.m, context.Background(), fmt.Sprintf("s%04d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	all := append(append([]*clusterNode(nil), nodes...), n4)
	waitApplied(t, all, last, 0)
	for _, c := range []*clusterNode{lag, n4} {
		if c.n.Stats.SnapshotsInstalled.Load() == 0 {
			t.Fatalf("node %d caught up without a snapshot: the test did not test it", c.n.ID())
		}
	}
	for _, c := range all {
		if d, err := engine.Diff(ld.eng, c.eng, []byte{0x01}, []byte{0xff}); err != nil || d != "" {
			t.Fatalf("node %d differs from the leader: %s %v", c.n.ID(), d, err)
		}
	}
	// The snapshot-installed member keeps working after a restart (its log starts after the
	// snapshot).
	lag.n.Stop()
	lag.eng.Close()
	lag.lg.Close()
	lg, err := klog.Open("/log", klog.Options{FS: lag.fs})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: lag.fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), Config{ID: lag.n.ID(), Log: lg, Engine: eng, Applier: testApplier(), Transport: net.transport(lag.n.ID()),
		TickInterval: 5 * time.Millisecond, PurgeInterval: -1, FetchSnapshot: net.fetch})
	if err != nil {
		t.Fatalf("restart after a snapshot install: %v", err)
	}
	net.mu.Lock()
	net.nodes[n.ID()] = n
	net.mu.Unlock()
	lag.n, lag.eng, lag.lg = n, eng, lg
	idx, err := put(t, ld.m, context.Background(), "after-restart", "v")
	if err != nil {
		t.Fatal(err)
	}
	waitApplied(t, all, idx, 0)
	if _, ok, _ := eng.Get([]byte("after-restart")); !ok {
		t.Fatal("restarted member did not catch up")
	}
}

// Two full voters and a log-only voter: commits are acknowledged by a full voter and the log-only
// one while the other full voter is cut off; when the leader then dies, only the log-only voter has
// those commits. It wins the election, brings the surviving full voter up to date and hands it the
// leadership: every acknowledged commit survives, and the log-only voter never takes commits.
func TestClusterLogOnlyVoter(t *testing.T) {
	net := &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}}
	peers := []Peer{{ID: 1, Addr: "node1"}, {ID: 2, Addr: "node2"}, {ID: 3, Addr: "node3", LogOnly: true}}
	nodes := make([]*clusterNode, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			nodes[i] = startMember(t, net, uint64(i+1), peers, false, func(c *Config) { c.LogOnly = i == 2 })
		}(i)
	}
	wg.Wait()
	full := nodes[:2]
	ld := waitLeader(t, full, 0)
	other := full[0]
	if other == ld {
		other = full[1]
	}
	if nodes[2].n.IsLeader() {
		t.Fatal("the log-only voter takes commits")
	}
	net.isolate(other.n.ID(), true)
	var last uint64
	for i := 0; i < 30; i++ {
		idx, err := put(t, ld.m, context.Background(), fmt.Sprintf("l%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	// The leader dies; the full voter that missed the commits comes back.
	net.isolate(ld.n.ID(), true)
	net.isolate(other.n.ID(), false)
	deadline := time.Now().Add(10 * time.Second)
	for !other.n.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatalf("no full voter leads: node %d applied %d (want %d), leader %d", other.n.ID(), other.n.Applied(), last, other.n.Leader())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; i < 30; i++ {
		if _, ok, _ := other.eng.Get([]byte(fmt.Sprintf("l%03d", i))); !ok {
			t.Fatalf("acknowledged l%03d lost in the failover", i)
		}
	}
	if nodes[2].n.Stats.Handoffs.Load() == 0 {
		t.Fatal("the log-only voter never led: the test did not test the handoff")
	}
	if _, ok, _ := nodes[2].eng.Get([]byte("l000")); ok {
		t.Fatal("the log-only voter applied data to its engine")
	}
	if _, err := put(t, nodes[2].m, context.Background(), "x", "v"); err == nil {
		t.Fatal("the log-only voter took a commit")
	}
	if _, err := put(t, other.m, context.Background(), "after", "v"); err != nil {
		t.Fatal(err)
	}
}
