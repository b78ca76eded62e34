package repl

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/repl/rafthttp"
	"github.com/kiln-db/kiln/internal/tlsconf"
)

// lateRaft hands the transport's deliveries to a node created after the transport (the node needs
// the transport to start), as kiln serve wires them.
type lateRaft struct{ n atomic.Pointer[Node] }

func (l *lateRaft) Step(ctx context.Context, m pb.Message) error {
	if n := l.n.Load(); n != nil {
		return n.Step(ctx, m)
	}
	return fmt.Errorf("node starting")
}

func (l *lateRaft) ReportUnreachable(id uint64) {
	if n := l.n.Load(); n != nil {
		n.ReportUnreachable(id)
	}
}

func (l *lateRaft) ReportSnapshot(id uint64, st raft.SnapshotStatus) {
	if n := l.n.Load(); n != nil {
		n.ReportSnapshot(id, st)
	}
}

// A three-voter cluster over the real transport with mutual TLS (certificates of one CA) elects a
// leader and commits to every engine; a fourth node whose certificate comes from another CA, added
// as a learner, never receives anything: the voters refuse its handshake and it refuses theirs.
func TestClusterOverTLS(t *testing.T) {
	ca, err := tlsconf.NewCA("cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := tlsconf.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	setOf := func(ca *tlsconf.CA, name string) *tlsconf.Set {
		cert, key, err := ca.Issue(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tlsconf.FromPEM(cert, key, ca.CertPEM())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type member struct {
		late *lateRaft
		tr   *rafthttp.Transport
		addr string
	}
	newMember := func(id uint64, set *tlsconf.Set) *member {
		m := &member{late: &lateRaft{}}
		m.tr = rafthttp.New(rafthttp.Config{ID: id, ClusterID: "tls", Raft: m.late, Logger: slog.New(slog.DiscardHandler),
			ServerTLS: set.PeerServer(true), ClientTLS: set.PeerClient()})
		addr, stop, err := m.tr.Serve("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		m.addr = addr
		// Registered before the node's cleanup, so it runs after it: the node stops first.
		t.Cleanup(func() { m.tr.Stop(); _ = stop() })
		return m
	}
	net := &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}} // snapshots only; unused here
	var members []*member
	var peers []Peer
	for id := uint64(1); id <= 3; id++ {
		m := newMember(id, setOf(ca, fmt.Sprintf("node%d", id)))
		members = append(members, m)
		peers = append(peers, Peer{ID: id, Addr: m.addr})
	}
	var nodes []*clusterNode
	for i, m := range members {
		c := startMember(t, net, uint64(i+1), peers, false, func(cfg *Config) { cfg.Transport = m.tr })
		if c == nil {
			t.FailNow()
		}
		m.late.n.Store(c.n)
		nodes = append(nodes, c)
	}
	ld := waitLeader(t, nodes, 0)
	var last uint64
	for i := 0; i < 20; i++ {
		idx, err := put(t, ld.m, context.Background(), fmt.Sprintf("k%02d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	waitApplied(t, nodes, last, 0)
	for _, c := range nodes {
		if _, ok, _ := c.eng.Get([]byte("k19")); !ok {
			t.Fatalf("node %d lacks k19", c.n.ID())
		}
	}

	// The stranger: certificate of another CA, joining as a learner.
	sm := newMember(4, setOf(other, "node4"))
	stranger := startMember(t, net, 4, nil, true, func(cfg *Config) { cfg.Transport = sm.tr })
	if stranger == nil {
		t.FailNow()
	}
	sm.late.n.Store(stranger.n)
	for _, p := range peers {
		sm.tr.AddPeer(p.ID, p.Addr)
	}
	addLearner(t, nodes, 4, sm.addr)
	ld = waitLeader(t, nodes, 0)
	for i := 20; i < 30; i++ {
		if last, err = put(t, ld.m, context.Background(), fmt.Sprintf("k%02d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	waitApplied(t, nodes, last, 0)
	time.Sleep(300 * time.Millisecond) // many heartbeat intervals: the learner would have caught up
	if got := stranger.n.Applied(); got != 0 {
		t.Fatalf("a node with another CA's certificate applied up to %d", got)
	}
	if _, ok, _ := stranger.eng.Get([]byte("k00")); ok {
		t.Fatal("a node with another CA's certificate received data")
	}

	// The control: a learner with a certificate of the cluster's CA catches up.
	fm := newMember(5, setOf(ca, "node5"))
	friend := startMember(t, net, 5, nil, true, func(cfg *Config) { cfg.Transport = fm.tr })
	if friend == nil {
		t.FailNow()
	}
	fm.late.n.Store(friend.n)
	for _, p := range peers {
		fm.tr.AddPeer(p.ID, p.Addr)
	}
	addLearner(t, nodes, 5, fm.addr)
	waitApplied(t, []*clusterNode{friend}, last, 0)
}
