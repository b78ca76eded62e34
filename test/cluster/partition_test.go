//go:build linux

package cluster

// TestPartitionLeader: the three nodes run in network namespaces of their own, joined by a bridge
// in the test's namespace (netLab). A partition sets a node's bridge-side veth down: the node keeps
// running but reaches no one, and no client reaches it. Under the bank workload the leader is cut
// off KILN_CLUSTER_PARTITIONS times (default 5); each time another node must take writes, and after
// healing the old leader must rejoin as a follower and catch up. Then a follower alone is cut off
// and writes must go on. Clients that held connections to the leader when it was cut off attempt
// commits during the partition (a transaction begun before it, and an autocommit INSERT); with
// read timeouts longer than the partition, their requests reach the old leader once the link is
// back, and they must not be told OK. At the end the bank checks of TestBankFailover hold, and
// every acknowledgement the old leader sent after it was cut off is there.
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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
		if err := startForwarder(t, ns, nn.mysql, nn.mysqlListen); err != nil {
			t.Fatal(err)
		}
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
func startForwarder(t *testing.T, ns, listen, target string) error {
	type dialed struct {
		c   net.Conn
		err error
	}
	dials := make(chan chan dialed)
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
			case reply := <-dials:
				c, err := d.Dial("tcp", target)
				reply <- dialed{c, err}
			}
		}
	}()
	if err := <-ready; err != nil {
		wg.Wait()
		return err
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
			reply := make(chan dialed, 1)
			select {
			case dials <- reply:
			case <-done:
				in.Close()
				return
			}
			r := <-reply
			if r.err != nil {
				in.Close()
				continue
			}
			out := r.c
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
	return nil
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
// before it was cut off.
type staleOp struct {
	id      int64
	what    string
	node    *node
	outcome outcome
	err     error
	took    time.Duration
}

// staleClients are such clients, for one partition: one with a transaction begun (and written in)
// before the partition, which commits during it; one with an idle connection, which sends an
// autocommit INSERT during it. Their read timeout outlasts the partition, so their requests reach
// the old leader after the heal (TCP retransmits them) and its answer is what they see.
type staleClients struct {
	db   *sql.DB
	tx   *sql.Tx
	conn *sql.Conn
	ops  []*staleOp
	wg   sync.WaitGroup
}

func openStale(t *testing.T, n *node, part int) *staleClients {
	t.Helper()
	dsn := fmt.Sprintf("root@tcp(%s)/?timeout=2s&readTimeout=10s&writeTimeout=10s&interpolateParams=true", n.mysql)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := &staleClients{db: db}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	base := int64(1_000_000_000_000) + int64(part)*10
	if tx, err := db.Begin(); err == nil {
		if _, err := tx.Exec("INSERT INTO bank.stale (id, part) VALUES (?, ?)", base+1, part); err == nil {
			s.tx = tx
			s.ops = append(s.ops, &staleOp{id: base + 1, what: "COMMIT of a transaction begun before the partition", node: n})
		} else {
			_ = tx.Rollback()
			t.Logf("partition %d: stale transaction on %v not set up: %v", part+1, n, err)
		}
	}
	if conn, err := db.Conn(ctx); err == nil {
		if err := conn.PingContext(ctx); err == nil {
			s.conn = conn
			s.ops = append(s.ops, &staleOp{id: base + 2, what: "autocommit INSERT on a connection opened before the partition", node: n})
		} else {
			conn.Close()
		}
	}
	return s
}

// attempt sends the commits (call it once the partition is in place); wait collects them.
func (s *staleClients) attempt(part int) {
	for _, op := range s.ops {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			start := time.Now()
			var err error
			if op.id%10 == 1 {
				err = s.tx.Commit()
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				_, err = s.conn.ExecContext(ctx, "INSERT INTO bank.stale (id, part) VALUES (?, ?)", op.id, part)
				cancel()
				s.conn.Close()
			}
			op.err, op.outcome, op.took = err, classify(err), time.Since(start)
		}()
	}
}

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
		sc.attempt(p)
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
	t.Logf("%d acknowledgements from a leader received after it was cut off (all present)", late)
	if len(lateMissing) > 0 {
		t.Errorf("%d acknowledgements a cut-off leader sent are missing: %s", len(lateMissing), strings.Join(lateMissing, "; "))
	}

	// The stale clients' commits: never OK; refused ones absent.
	srows := c.sameOnAllNodes("SELECT id FROM bank.stale ORDER BY id")
	spresent := map[int64]bool{}
	for _, row := range srows {
		id, _ := strconv.ParseInt(row[0], 10, 64)
		spresent[id] = true
	}
	seen := map[string]int{}
	for _, sc := range stales {
		for _, op := range sc.ops {
			kind := "OK"
			if op.err != nil {
				kind = errKind(op.err)
			}
			seen[kind]++
			switch {
			case op.outcome == committed:
				t.Errorf("stale client of %v: %s (id %d) was acknowledged after %v, during or after its partition (present afterwards: %v)",
					op.node, op.what, op.id, op.took.Round(time.Millisecond), spresent[op.id])
			case op.outcome == unexpected:
				t.Errorf("stale client of %v: %s (id %d): unexpected error: %v", op.node, op.what, op.id, op.err)
			case op.outcome == notCommitted && spresent[op.id]:
				t.Errorf("stale client of %v: %s (id %d) was refused (%v) but is present", op.node, op.what, op.id, op.err)
			}
			t.Logf("stale client of %v: %s (id %d): %s after %v: %v", op.node, op.what, op.id, op.outcome,
				op.took.Round(time.Millisecond), op.err)
		}
	}
	t.Logf("stale clients' answers: %v", seen)
}
