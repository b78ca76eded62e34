//go:build linux

package cluster

// TestPartitionLeader: the three nodes run in network namespaces of their own, joined by a bridge
// in the test's namespace (netLab). A partition sets a node's bridge-side veth down: the node keeps
// running but reaches no one, and no client reaches it. Under the bank workload the leader is cut
// off KILN_CLUSTER_PARTITIONS times (default 5); each time another node must take writes, and after
// healing the old leader must rejoin as a follower and catch up. Then a follower alone is cut off
// and writes must go on. Clients that held connections to the leader when it was cut off attempt
// commits during the partition (staleClients): from the test's namespace, whose requests reach the
// old leader only after the heal, and from inside the leader's namespace, whose requests reach the
// isolated leader while it is cut off. None may be told OK, and none may be in the final state. At
// the end the bank checks of TestBankFailover hold, and every acknowledgement a cut-off leader
// sent (received by its client after the cut) is there. The time from each partition to the first
// write another node acknowledges is logged, not asserted.
//
// Kiln admits root only from loopback, so each node serves MySQL on its namespace's loopback and
// the test runs a forwarder inside each namespace (nsForwarder: a socket created by a thread that
// entered the namespace) on the node's bridge address: the clients' TCP connections still cross
// the veth, so a partition cuts them exactly as it would cut a remote client.
//
// Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for ip netns) and iproute2; skipped without them.
// Everything it creates is named after the test's PID and removed by exact name.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sys/unix"
)

// netLab is a bridge in the test's namespace and, per node, a network namespace connected to it
// by a veth pair, on a private /24: the bridge is .1, node i is .1i.
type netLab struct {
	t      *testing.T
	bridge string
	nets   []nodeNet
	veths  []string // the bridge-side end of node i+1's veth pair: what partition sets down
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func permissionErr(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Operation not permitted") || strings.Contains(s, "Permission denied")
}

// newNetLab creates the network for size nodes, and removes it when the test ends (after the
// cluster's processes are stopped: cleanups run last-registered first).
func newNetLab(t *testing.T, size int) *netLab {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("network namespaces need iproute2: %v", err)
	}
	pid := os.Getpid()
	l := &netLab{t: t, bridge: fmt.Sprintf("kb%d", pid)}
	// A /24 no interface of this machine is on, preferably 10.213.<pid%200>.0/24.
	prefix := ""
	for k := 0; k < 200 && prefix == ""; k++ {
		cand := fmt.Sprintf("10.213.%d.", (pid+k)%200)
		addrs, err1 := exec.Command("ip", "-4", "-o", "addr", "show", "to", cand+"0/24").Output()
		routes, err2 := exec.Command("ip", "-4", "route", "show", "root", cand+"0/24").Output()
		if err1 == nil && err2 == nil && len(bytes.TrimSpace(addrs)) == 0 && len(bytes.TrimSpace(routes)) == 0 {
			prefix = cand
		}
	}
	if prefix == "" {
		t.Fatal("no free 10.213.x.0/24")
	}
	must := func(args ...string) {
		t.Helper()
		if err := ipCmd(args...); err != nil {
			if permissionErr(err) {
				t.Skipf("cannot create network namespaces here: %v", err)
			}
			t.Fatal(err)
		}
	}
	undo := func(args ...string) {
		t.Cleanup(func() {
			if err := ipCmd(args...); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
	}
	must("link", "add", l.bridge, "type", "bridge")
	undo("link", "del", l.bridge)
	must("addr", "add", prefix+"1/24", "dev", l.bridge)
	must("link", "set", l.bridge, "up")
	for i := 1; i <= size; i++ {
		ns := fmt.Sprintf("kiln-%d-n%d", pid, i)
		host, peer := fmt.Sprintf("kv%dh%d", pid, i), fmt.Sprintf("kv%dn%d", pid, i)
		must("netns", "add", ns)
		undo("netns", "del", ns)
		must("link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns)
		undo("link", "del", host) // deletes both ends
		must("link", "set", host, "master", l.bridge, "up")
		ip := fmt.Sprintf("%s%d", prefix, 10+i)
		must("-n", ns, "addr", "add", ip+"/24", "dev", peer)
		must("-n", ns, "link", "set", peer, "up")
		must("-n", ns, "link", "set", "lo", "up")
		nn := nodeNet{netns: ns, ip: ip, mysql: net.JoinHostPort(ip, "3306"),
			// distinct per node, so the primary a 1290 error names maps to one node
			mysqlListen: fmt.Sprintf("127.0.0.1:%d", 13305+i)}
		dial, err := startForwarder(t, ns, nn.mysql, nn.mysqlListen)
		if err != nil {
			t.Fatal(err)
		}
		// The driver's name for dialling from inside ns (registrations are process-wide; the
		// name is unique to this namespace).
		mysql.RegisterDialContext("netns-"+ns, func(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, addr) })
		l.nets = append(l.nets, nn)
		l.veths = append(l.veths, host)
	}
	t.Logf("network: bridge %s on %s0/24, namespaces %v", l.bridge, prefix, l.nets)
	return l
}

// startForwarder accepts TCP connections on listen and forwards each to target, both inside network
// namespace ns. A thread that entered ns creates the listener and makes every dial (a socket
// belongs to the namespace of the thread that created it); it exits with the test. Accepting and
// copying run anywhere.
func startForwarder(t *testing.T, ns, listen, target string) (dialInside func(ctx context.Context, addr string) (net.Conn, error), err error) {
	type dialed struct {
		c   net.Conn
		err error
	}
	type dialReq struct {
		ctx   context.Context
		addr  string
		reply chan dialed
	}
	dials := make(chan dialReq)
	ready := make(chan error, 1)
	var lnMu sync.Mutex
	var ln net.Listener
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Never unlocked: the thread, which is in another namespace, ends with this goroutine.
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			ready <- err
			return
		}
		err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
		f.Close()
		if err != nil {
			ready <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		l, err := net.Listen("tcp", listen)
		if err != nil {
			ready <- fmt.Errorf("forwarder in %s: %w", ns, err)
			return
		}
		lnMu.Lock()
		ln = l
		lnMu.Unlock()
		ready <- nil
		d := net.Dialer{Timeout: 2 * time.Second}
		for {
			select {
			case <-done:
				return
			case r := <-dials:
				c, err := d.DialContext(r.ctx, "tcp", r.addr)
				r.reply <- dialed{c, err}
			}
		}
	}()
	if err := <-ready; err != nil {
		wg.Wait()
		return nil, err
	}
	dialInside = func(ctx context.Context, addr string) (net.Conn, error) {
		reply := make(chan dialed, 1)
		select {
		case dials <- dialReq{ctx, addr, reply}:
		case <-done:
			return nil, net.ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		r := <-reply
		return r.c, r.err
	}
	var connMu sync.Mutex
	conns := map[net.Conn]bool{}
	track := func(c net.Conn, add bool) bool {
		connMu.Lock()
		defer connMu.Unlock()
		if add {
			select {
			case <-done:
				return false
			default:
			}
			conns[c] = true
		} else {
			delete(conns, c)
		}
		return true
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			out, err := dialInside(context.Background(), target)
			if err != nil {
				in.Close()
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			if !track(in, true) || !track(out, true) {
				in.Close()
				out.Close()
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var once sync.Once
				closeBoth := func() {
					once.Do(func() {
						in.Close()
						out.Close()
						track(in, false)
						track(out, false)
					})
				}
				go func() { _, _ = io.Copy(out, in); closeBoth() }()
				_, _ = io.Copy(in, out)
				closeBoth()
			}()
		}
	}()
	t.Cleanup(func() {
		connMu.Lock()
		close(done)
		for c := range conns {
			c.Close()
		}
		connMu.Unlock()
		ln.Close()
		wg.Wait()
	})
	return dialInside, nil
}

// partition cuts n off: its veth's bridge side goes down; the process runs on.
func (l *netLab) partition(n *node) {
	l.t.Helper()
	n.mu.Lock()
	n.partitioned = true
	n.mu.Unlock()
	if err := ipCmd("link", "set", l.veths[n.id-1], "down"); err != nil {
		l.t.Fatal(err)
	}
}

func (l *netLab) heal(n *node) {
	l.t.Helper()
	if err := ipCmd("link", "set", l.veths[n.id-1], "up"); err != nil {
		l.t.Fatal(err)
	}
	n.mu.Lock()
	n.partitioned = false
	n.mu.Unlock()
}

// staleOp is a commit attempted during a partition by a client connected to the cut-off leader
// before it was cut off. None may be acknowledged, and none may be in the final state: an inside
// client's reaches the isolated leader, which has no quorum, and an outside client's reaches it
// only after the heal, as a follower.
type staleOp struct {
	id      int64
	what    string
	node    *node
	outcome outcome
	err     error
	took    time.Duration
}

// staleClients are such clients, for one partition, on both sides of it. Outside (the test's
// namespace, across the veth and the forwarder): one with a transaction begun (and written in)
// before the partition, which commits during it, and one with an idle connection, which sends an
// autocommit INSERT during it; their read timeout outlasts the partition, so their requests reach
// the old leader after the heal (TCP retransmits them) and its answer is what they see. Inside (on
// the leader's own loopback, in its namespace, so the partition does not cut them off): the same
// transaction, and INSERTs every 50 ms on the idle connection until the heal.
type staleClients struct {
	node   *node
	part   int
	seq    atomic.Int64
	sides  []*staleSide
	healed chan struct{}
	mu     sync.Mutex
	ops    []*staleOp
	wg     sync.WaitGroup
}

type staleSide struct {
	name string
	tx   *sql.Tx
	txID int64 // what tx inserted
	conn *sql.Conn
}

func openStale(t *testing.T, n *node, part int) *staleClients {
	t.Helper()
	s := &staleClients{node: n, part: part, healed: make(chan struct{})}
	for _, side := range []struct{ name, dsn string }{
		{"outside", fmt.Sprintf("tcp(%s)", n.mysql)},
		{"inside", fmt.Sprintf("netns-%s(%s)", n.netns, n.mysqlListen)},
	} {
		db, err := sql.Open("mysql", "root@"+side.dsn+"/?timeout=2s&readTimeout=10s&writeTimeout=10s&interpolateParams=true")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		ss := &staleSide{name: side.name}
		if tx, err := db.Begin(); err == nil {
			id := s.nextID()
			if _, err := tx.Exec("INSERT INTO bank.stale (id, part) VALUES (?, ?)", id, part); err == nil {
				ss.tx, ss.txID = tx, id
			} else {
				_ = tx.Rollback()
				t.Logf("partition %d: %s stale transaction on %v not set up: %v", part+1, side.name, n, err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if conn, err := db.Conn(ctx); err == nil {
			if err := conn.PingContext(ctx); err == nil {
				ss.conn = conn
			} else {
				conn.Close()
			}
		}
		cancel()
		s.sides = append(s.sides, ss)
	}
	return s
}

func (s *staleClients) nextID() int64 {
	return int64(1_000_000_000_000) + int64(s.part)*100_000 + s.seq.Add(1)
}

// attempt sends the commits (call it once the partition is in place); heal ends the inside
// client's INSERTs; wait collects everything.
func (s *staleClients) attempt() {
	record := func(op *staleOp, start time.Time, err error) {
		op.err, op.outcome, op.took = err, classify(err), time.Since(start)
		s.mu.Lock()
		s.ops = append(s.ops, op)
		s.mu.Unlock()
	}
	for _, ss := range s.sides {
		if ss.tx != nil {
			op := &staleOp{id: ss.txID, what: ss.name + " client: COMMIT of a transaction begun before the partition", node: s.node}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				start := time.Now()
				record(op, start, ss.tx.Commit())
			}()
		}
		if ss.conn != nil {
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer ss.conn.Close()
				for {
					id := s.nextID()
					op := &staleOp{id: id, what: ss.name + " client: autocommit INSERT on a connection opened before the partition", node: s.node}
					start := time.Now()
					ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
					_, err := ss.conn.ExecContext(ctx, "INSERT INTO bank.stale (id, part) VALUES (?, ?)", id, s.part)
					cancel()
					record(op, start, err)
					if ss.name == "outside" || connErr(err) {
						return
					}
					select {
					case <-s.healed:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			}()
		}
	}
}

func (s *staleClients) heal() { close(s.healed) }

func (s *staleClients) wait() { s.wg.Wait() }

// waitFollower waits until n reports being a follower of another node.
func waitFollower(n *node, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		st, err := n.status()
		if err == nil && st.Role == "follower" && st.Leader != 0 && st.Leader != uint64(n.id) {
			return nil
		}
		last = fmt.Sprintf("%+v %v", st, err)
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%v did not rejoin as a follower within %v (last status: %s)", n, d, last)
}

func TestPartitionLeader(t *testing.T) {
	parts := envInt(t, "KILN_CLUSTER_PARTITIONS", 5)
	rng := rand.New(rand.NewSource(seed(t)))
	lab := newNetLab(t, 3)
	c := newClusterAt(t, 3, lab.nets)
	b := startBank(c, rng)
	c.mustExec("CREATE TABLE bank.stale (id BIGINT PRIMARY KEY, part INT NOT NULL)")

	type window struct {
		old      *node
		from, to time.Time // partition in place .. healed
		until    time.Time // the next partition: until then the old leader is not elected again
	}
	var windows []window
	var stales []*staleClients
	var took []time.Duration
	start := time.Now()
	for p := 0; p < parts; p++ {
		leader, err := c.waitConverged(30 * time.Second)
		if err != nil {
			t.Fatalf("before partition %d: %v", p+1, err)
		}
		time.Sleep(time.Duration(300+rng.Intn(500)) * time.Millisecond)
		sc := openStale(t, leader, p)
		stales = append(stales, sc)
		b.clock.begin(leader)
		from := time.Now()
		lab.partition(leader)
		sc.attempt()
		d, err := b.clock.await(c, b.probe(), 30*time.Second)
		if err != nil {
			t.Fatalf("partition %d of leader %v: %v", p+1, leader, err)
		}
		took = append(took, d)
		var now *node
		if ps := c.primaries(); len(ps) == 1 {
			now = ps[0]
		}
		t.Logf("partition %d: leader %v cut off; %v acknowledged a write after %v", p+1, leader, now, d.Round(time.Millisecond))
		// Keep it cut off a little longer (it steps down on its own once it misses a quorum), with
		// clients writing to the new leader.
		time.Sleep(time.Duration(200+rng.Intn(500)) * time.Millisecond)
		sc.heal()
		lab.heal(leader)
		if len(windows) > 0 {
			windows[len(windows)-1].until = from
		}
		windows = append(windows, window{old: leader, from: from, to: time.Now()})
		if err := waitFollower(leader, 30*time.Second); err != nil {
			t.Fatalf("after partition %d: %v", p+1, err)
		}
		if _, err := c.waitConverged(30 * time.Second); err != nil {
			t.Fatalf("after partition %d: %v", p+1, err)
		}
	}

	// A minority: one follower cut off. The leader keeps its quorum, and writes go on.
	leader, err := c.waitConverged(30 * time.Second)
	if err != nil {
		t.Fatalf("before the follower's partition: %v", err)
	}
	var follower *node
	for _, n := range c.nodes {
		if n != leader && (follower == nil || rng.Intn(2) == 0) {
			follower = n
		}
	}
	if len(windows) > 0 {
		windows[len(windows)-1].until = time.Now()
	}
	lab.partition(follower)
	acks0 := b.acks.Load()
	time.Sleep(1500 * time.Millisecond)
	acks := b.acks.Load() - acks0
	ps := c.primaries()
	lab.heal(follower)
	t.Logf("follower %v cut off for 1.5s: %d transfers acknowledged meanwhile; primaries then: %v", follower, acks, ps)
	if acks == 0 {
		t.Errorf("no transfer was acknowledged while only follower %v was cut off (leader %v)", follower, leader)
	}
	if l, err := c.waitConverged(30 * time.Second); err != nil {
		t.Fatalf("after the follower's partition: %v", err)
	} else if l != leader {
		t.Logf("note: the leader changed from %v to %v around the follower's partition", leader, l)
	}

	t.Logf("%d leader partitions and 1 follower partition in %v", parts, time.Since(start).Round(time.Millisecond))
	time.Sleep(300 * time.Millisecond)
	b.stopClients()
	for _, sc := range stales {
		sc.wait()
	}
	b.errs.check(t, "unexpected client errors")
	if parts > 0 {
		t.Logf("failover (partition -> first write acknowledged by another node): %s", durationStats(took))
	}

	c.healAndSettle()
	ledger := b.verify(t)

	// What the old leaders acknowledged once cut off (their answers reach clients after the heal,
	// if at all; an answer sent just before the cut is retransmitted then too): each must be in the
	// final state (checkBank reports every missing acknowledgement too; this names those of a
	// cut-off leader). Until the next partition the old leader is a follower (waitFollower), so an
	// acknowledgement from it in that window is one it sent as the cut-off leader.
	rows, err := readAll(c.nodes[0], "SELECT id FROM bank.transfers")
	if err != nil {
		t.Fatal(err)
	}
	present := map[int64]bool{}
	for _, row := range rows {
		id, _ := strconv.ParseInt(row[0], 10, 64)
		present[id] = true
	}
	late, lateMissing := 0, []string{}
	for id, tr := range ledger {
		if tr.outcome != committed {
			continue
		}
		for _, w := range windows {
			if tr.node == w.old && tr.done.After(w.from) && tr.done.Before(w.until) {
				late++
				if !present[id] {
					lateMissing = append(lateMissing, fmt.Sprintf("%d (acknowledged by %v at %s; cut off %s..%s)", id, w.old,
						tr.done.Format("15:04:05.000"), w.from.Format("15:04:05.000"), w.to.Format("15:04:05.000")))
				}
				break
			}
		}
	}
	t.Logf("%d acknowledgements from a leader received after it was cut off, %d of them missing", late, len(lateMissing))
	if len(lateMissing) > 0 {
		t.Errorf("%d acknowledgements a cut-off leader sent are missing: %s", len(lateMissing), strings.Join(lateMissing, "; "))
	}

	// The stale clients' commits: never OK, and never in the final state (see staleOp).
	srows := c.sameOnAllNodes("SELECT id FROM bank.stale ORDER BY id")
	spresent := map[int64]bool{}
	for _, row := range srows {
		id, _ := strconv.ParseInt(row[0], 10, 64)
		spresent[id] = true
	}
	seen := map[string]int{}
	sample := map[string]string{}
	var keys []string
	for _, sc := range stales {
		for _, op := range sc.ops {
			kind := "OK"
			if op.err != nil {
				kind = errKind(op.err)
			}
			key := op.what + ": " + kind
			if seen[key] == 0 {
				keys = append(keys, key)
				sample[key] = fmt.Sprintf("%v after %v", op.err, op.took.Round(time.Millisecond))
			}
			seen[key]++
			switch {
			case op.outcome == committed:
				t.Errorf("stale client of %v: %s (id %d) was acknowledged after %v, during or after its partition (present afterwards: %v)",
					op.node, op.what, op.id, op.took.Round(time.Millisecond), spresent[op.id])
			case op.outcome == unexpected:
				t.Errorf("stale client of %v: %s (id %d): unexpected error: %v", op.node, op.what, op.id, op.err)
			case spresent[op.id]:
				t.Errorf("stale client of %v: %s (id %d), sent while the leader was cut off, is present (its client was told %s: %v)",
					op.node, op.what, op.id, op.outcome, op.err)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("stale clients: %d x %s (e.g. %s)", seen[k], k, sample[k])
	}
}
