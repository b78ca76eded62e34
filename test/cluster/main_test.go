// Package cluster runs three real `kiln serve` processes as one raft cluster on loopback, injects
// failures into them while clients write, and checks what the clients were promised against what
// every node holds afterwards. No part of Kiln is mocked: the processes, their raft transport, their
// fsyncs and the MySQL protocol are the ones users run.
//
// What is proven, and how:
//
//  1. A harness (this file) starts three nodes with --node-id/--raft-listen/--peers on 127.0.0.1
//     ports that stay fixed for the whole test, so a node restarted with the same command rejoins
//     as itself. Failures are injected by PID only: kill -9 (then a restart), SIGSTOP (then
//     SIGCONT: a leader that freezes and comes back believing it still leads), and SIGTERM. A node
//     exiting when the test did not ask it to is a failure (a crash).
//  2. Clients find the leader through GET /primary and follow the 1290 error a follower answers
//     writes with. Every COMMIT is classified by what the client was told: OK is acknowledged;
//     1213 and 1290 mean it did not happen; 1180, 1053 and connection errors (the node was killed
//     or frozen) mean the outcome is unknown. A transaction whose COMMIT was never sent did not
//     happen either. Any other error, at any statement, is reported as unexpected.
//  3. TestBankFailover: transfers between ten accounts, each also inserting its unique transfer id,
//     under repeated leader failures (kill -9 and SIGSTOP alternately). After healing, once every
//     node has applied the leader's commit index, each node is read directly: every acknowledged
//     transfer is there, no transfer that was refused is, no transfer exists that no client
//     attempted, the balances are exactly the initial ones plus the transfers present (no lost
//     update: the transfers read balances FOR UPDATE and write absolute values), the total is
//     constant, and all nodes hold identical rows. The time from each injected failure to the first
//     write acknowledged by another node is logged (p50/p99/max) but not asserted: the machines
//     that run this are shared, and speed is measured by benchmarks, not tests.
//  4. TestRegisterLinearizable: four clients read, write and compare-and-set (UPDATE ... WHERE
//     v = ?) a row, and two more only read it, each through the node it believes leads, while the
//     leader is frozen (SIGSTOP, then SIGCONT) or killed. Every operation is recorded with its call
//     and return time. A write that changes the row also inserts its value into reg.w in the same
//     transaction, so afterwards reg.w says which writes took effect: none acknowledged is missing,
//     none refused is there, and one of unknown outcome either took effect (its return is then
//     "some time before the end") or is dropped. The write that measures the failover is recorded
//     too: the new leader acknowledges it while the old one is still frozen, so whatever the old
//     one answers after it resumes must reflect it. A read counts only if the same statement saw
//     @@read_only = 0, i.e. it was served by a node that believed it led (follower reads may be
//     stale by design; that is not what this checks). The history is checked with porcupine
//     against a register model, one row per two failures (linearizability is per object, so each
//     row is checked alone and the search stays small); reads that are stale beyond doubt (a write
//     of another value was called after the write they saw returned, and returned before they
//     were sent) are named first. TestRegisterChecker runs both checks on small histories whose
//     verdict is known.
//  5. TestRollingRestart: under continuous writes each node is stopped with SIGTERM (it must exit
//     cleanly and in time: a hang is a failure), started again and waited for until it is a healthy
//     replica or the primary; clients may only see the retryable errors of step 2, no acknowledged
//     write is lost, and all nodes end identical.
//  6. TestPartitionLeader (partition_test.go, Linux, root): the nodes run in network namespaces on
//     a bridge; the leader (then a follower) is cut off by setting its veth down, under the bank
//     workload and its checks, plus clients on both sides of the cut that must never be told OK.
//  7. TestCommitAckApplied (commitack_test.go): under kiln_commit_ack = applied a plain read on the
//     followers right after each commit sees it (two voters: the follower; three: at least one).
//  8. TestLinearizablePartition (linpartition_test.go, Linux, root): linearizable reads on every node
//     and writes through the leader while the leader is partitioned, checked with porcupine; and
//     TestLinearizablePartitionCheckerBites, the same without ReadIndex (a test-only flag), which
//     must fail the check.
//  9. TestRestoreJoin (restorejoin_test.go): a member's backup plus a log archive, restored with
//     `kiln restore --join` and added as a learner, catches up from the leader's log (no engine
//     snapshot), is promoted and holds the leader's rows; another cluster's backup is refused.
//     TestRestoreJoinPurged: the same after the leader purged past the backup: by engine snapshot.
//
// Knobs (environment): KILN_BIN (the binary; built into bin/kiln when unset), KILN_CLUSTER_TRIALS
// (leader failures in TestBankFailover, default 20, about 35 s), KILN_CLUSTER_REGISTER_TRIALS (in
// TestRegisterLinearizable, default 8), KILN_CLUSTER_ROUNDS (passes over the three nodes in
// TestRollingRestart, default 2), KILN_CLUSTER_PARTITIONS (leader partitions in TestPartitionLeader,
// default 5, about 15-20 s), KILN_CLUSTER_SEED (the schedule's random seed; each test logs
// the one it used), KILN_CLUSTER_ELECTION_TIMEOUT (--election-timeout, default 500ms),
// KILN_CLUSTER_LOGDIR (where the node logs and the register history are copied when a test fails),
// KILN_COMMIT_ACK_ITERATIONS (TestCommitAckApplied, default 300 per cluster size),
// KILN_LINPART_PARTITIONS (leader partitions per run in TestLinearizablePartition*, default 2).
package cluster

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/kiln-db/kiln/test/internal/testport"
)

var kilnBin string

func TestMain(m *testing.M) {
	// The driver logs every broken connection to stderr; here they are the point of the test, and
	// each one is classified where it happens.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	kilnBin = os.Getenv("KILN_BIN")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	if kilnBin == "" {
		kilnBin = filepath.Join(root, "bin", "kiln")
		build := exec.Command("go", "build", "-o", kilnBin, "./cmd/kiln")
		build.Dir = root
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build kiln:", err)
			os.Exit(1)
		}
	} else if !filepath.IsAbs(kilnBin) {
		// go test runs in the package's directory; a relative KILN_BIN (bin/kiln) is meant from
		// the repository root.
		if _, err := os.Stat(kilnBin); err != nil {
			kilnBin = filepath.Join(root, kilnBin)
		}
		kilnBin, _ = filepath.Abs(kilnBin)
	}
	os.Exit(m.Run())
}

func envInt(t testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, s)
	}
	return v
}

// seed returns the schedule's random seed (KILN_CLUSTER_SEED or the clock) and logs it, so a
// failing schedule can be replayed (timing still varies: the seed fixes choices, not the kernel).
func seed(t testing.TB) int64 {
	s := time.Now().UnixNano()
	if v := os.Getenv("KILN_CLUSTER_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("KILN_CLUSTER_SEED=%q: %v", v, err)
		}
		s = n
	}
	t.Logf("seed %d (KILN_CLUSTER_SEED=%d replays this schedule)", s, s)
	return s
}

// fixedPort picks a port that stays free across a node's restarts: a node keeps its three ports
// (its peers know its raft address; clients learn its MySQL address from 1290 errors).
func fixedPort(t testing.TB) string { return testport.Addr(t) }

// status is the part of GET /cluster/status (repl.Status) the tests read.
type status struct {
	ID, Leader, Term uint64
	Role             string
	Commit, Applied  uint64
	LeaderReady      bool
}

// node is one kiln process, identified by its raft id, and the command that (re)starts it.
type node struct {
	c                    *cluster
	id                   int
	dir, logPath         string
	mysql, http, raftAdr string
	mysqlListen          string // kiln's --listen when clients reach it at another address (nodeNet)
	args                 []string
	db                   *sql.DB // pooled connections to this node's MySQL port
	netns                string  // the network namespace it runs in ("": the test's own)

	mu          sync.Mutex
	proc        *os.Process
	exited      chan struct{} // closed once the process has been waited for
	exitErr     error
	paused      bool
	partitioned bool // cut off from the network (TestPartitionLeader): running, but unreachable
	expectExit  bool
}

func (n *node) String() string { return fmt.Sprintf("node %d", n.id) }

// cluster is three nodes and what the test learned about them.
type cluster struct {
	t     *testing.T
	base  string
	nodes []*node
	hc    *http.Client
	// scheme is the HTTP ports' ("" means http; https under peer TLS, tls_test.go).
	scheme string

	mu      sync.Mutex
	crashes []string // nodes that exited without being asked to
}

// newCluster starts size nodes as a new cluster and waits until they have a leader that every
// node follows. Everything it starts is stopped by PID when the test ends.
func newCluster(t *testing.T, size int) *cluster {
	t.Helper()
	return newClusterAt(t, size, nil)
}

// nodeNet places a node in a network namespace on its own address (see netLab): the node listens
// on ip with fixed ports (no other process can take them: the namespace is the node's own), except
// for MySQL, which it serves on the namespace's loopback (mysqlListen; Kiln admits root only from
// loopback) and which clients reach through mysql, a forwarder in the same namespace.
type nodeNet struct {
	netns, ip          string
	mysql, mysqlListen string
}

// newClusterAt is newCluster with node i placed as nets[i]; with nets nil, every node runs in the
// test's namespace on loopback ports.
func newClusterAt(t *testing.T, size int, nets []nodeNet) *cluster {
	t.Helper()
	return newClusterWith(t, size, nets, nil)
}

// newClusterWith is newClusterAt with tweak applied to each node (its args and DSN) before anything
// starts.
func newClusterWith(t *testing.T, size int, nets []nodeNet, tweak func(*cluster, *node)) *cluster {
	t.Helper()
	c := &cluster{t: t, base: t.TempDir(),
		hc: &http.Client{Timeout: time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	et := os.Getenv("KILN_CLUSTER_ELECTION_TIMEOUT")
	if et == "" {
		et = "500ms"
	}
	var peers []string
	for i := 1; i <= size; i++ {
		n := &node{c: c, id: i, dir: filepath.Join(c.base, fmt.Sprintf("node%d", i)),
			logPath: filepath.Join(c.base, fmt.Sprintf("node%d.log", i))}
		if nets == nil {
			n.mysql, n.http, n.raftAdr = fixedPort(t), fixedPort(t), fixedPort(t)
		} else {
			nn := nets[i-1]
			n.netns = nn.netns
			n.mysql, n.mysqlListen = nn.mysql, nn.mysqlListen
			n.http = net.JoinHostPort(nn.ip, "18080")
			n.raftAdr = net.JoinHostPort(nn.ip, "17000")
		}
		peers = append(peers, fmt.Sprintf("%d=%s", i, n.raftAdr))
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		listen := n.mysql
		if n.mysqlListen != "" {
			listen = n.mysqlListen
		}
		n.args = []string{"serve", "--data-dir", n.dir, "--listen", listen, "--http", n.http,
			"--node-id", strconv.Itoa(n.id), "--raft-listen", n.raftAdr, "--peers", strings.Join(peers, ","),
			"--election-timeout", et}
		dsn := fmt.Sprintf("root@tcp(%s)/?timeout=2s&readTimeout=3s&writeTimeout=3s&interpolateParams=true", n.mysql)
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(16)
		db.SetMaxIdleConns(16)
		n.db = db
		if tweak != nil {
			tweak(c, n)
		}
	}
	t.Cleanup(c.shutdown)
	// A replica of a new cluster waits for the leader's catalog before it serves, and a leader needs
	// a quorum: all members start together.
	for _, n := range c.nodes {
		n.start()
	}
	for _, n := range c.nodes {
		if err := n.waitHTTP("/health", 60*time.Second); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if _, err := c.waitConverged(60 * time.Second); err != nil {
		t.Fatalf("new cluster: %v", err)
	}
	return c
}

// start runs the node's command. Its output goes to its log (appended across restarts).
func (n *node) start() {
	t := n.c.t
	t.Helper()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logf, "=== test: starting %v at %s\n", n, time.Now().Format("15:04:05.000"))
	cmd := exec.Command(kilnBin, n.args...)
	if n.netns != "" {
		// ip netns exec enters the namespace and execs the binary: the PID is kiln's own.
		cmd = exec.Command("ip", append([]string{"netns", "exec", n.netns, kilnBin}, n.args...)...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	logf.Close() // the child holds its own descriptor
	exited := make(chan struct{})
	n.mu.Lock()
	n.proc, n.exited, n.exitErr, n.paused, n.expectExit = cmd.Process, exited, nil, false, false
	n.mu.Unlock()
	go func() {
		err := cmd.Wait()
		n.mu.Lock()
		n.exitErr = err
		expected := n.expectExit
		n.mu.Unlock()
		if !expected {
			n.c.mu.Lock()
			n.c.crashes = append(n.c.crashes, fmt.Sprintf("%v (pid %d) exited on its own at %s: %v",
				n, cmd.Process.Pid, time.Now().Format("15:04:05.000"), err))
			n.c.mu.Unlock()
		}
		close(exited)
	}()
}

// running reports whether the process is alive (it may be paused).
func (n *node) running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// reachable reports whether the node is running, not paused and not partitioned away: whether
// asking it can answer.
func (n *node) reachable() bool {
	n.mu.Lock()
	p := n.paused || n.partitioned
	n.mu.Unlock()
	return !p && n.running()
}

func (n *node) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return
	}
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM:
		n.expectExit = true
	case syscall.SIGSTOP:
		n.paused = true
	case syscall.SIGCONT:
		n.paused = false
	}
	_ = n.proc.Signal(sig)
}

// kill9 kills the process without warning and waits for it.
func (n *node) kill9() {
	n.signal(syscall.SIGKILL)
	n.wait(time.Minute)
	n.mu.Lock()
	n.paused = false
	n.mu.Unlock()
}

func (n *node) pause()  { n.signal(syscall.SIGSTOP) }
func (n *node) resume() { n.signal(syscall.SIGCONT) }

// wait waits up to d for the process to exit; false if it is still running.
func (n *node) wait(d time.Duration) bool {
	n.mu.Lock()
	ch := n.exited
	n.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// terminate asks the node to shut down (SIGTERM) and waits up to d. A node that does not exit in
// time is killed and reported: a shutdown that hangs is a bug.
func (n *node) terminate(d time.Duration) error {
	n.signal(syscall.SIGTERM)
	if !n.wait(d) {
		n.kill9()
		return fmt.Errorf("%v did not exit within %v of SIGTERM (killed)", n, d)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.exitErr != nil {
		return fmt.Errorf("%v exited uncleanly after SIGTERM: %v", n, n.exitErr)
	}
	return nil
}

func (n *node) get(path string) (int, []byte, error) {
	scheme := n.c.scheme
	if scheme == "" {
		scheme = "http"
	}
	resp, err := n.c.hc.Get(scheme + "://" + n.http + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitHTTP waits until path answers 200 (GET /health, /primary or /replica).
func (n *node) waitHTTP(path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !n.running() {
			return fmt.Errorf("%v exited while waiting for %s", n, path)
		}
		if code, _, err := n.get(path); err == nil && code == 200 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%v: %s did not answer 200 within %v", n, path, d)
}

// waitServing waits until the node is a healthy replica or the primary.
func (n *node) waitServing(d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !n.running() {
			return fmt.Errorf("%v exited while waiting for it to serve", n)
		}
		for _, p := range []string{"/replica", "/primary"} {
			if code, _, err := n.get(p); err == nil && code == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%v did not become a healthy replica or the primary within %v", n, d)
}

func (n *node) status() (status, error) {
	var st status
	code, b, err := n.get("/cluster/status")
	if err != nil {
		return st, err
	}
	if code != 200 {
		return st, fmt.Errorf("%v /cluster/status: %d %s", n, code, strings.TrimSpace(string(b)))
	}
	err = json.Unmarshal(b, &st)
	return st, err
}

func (n *node) isPrimary() bool {
	code, _, err := n.get("/primary")
	return err == nil && code == 200
}

// byMySQL maps a MySQL address (as a 1290 error names it: the node's --listen) to its node.
func (c *cluster) byMySQL(addr string) *node {
	for _, n := range c.nodes {
		if n.mysql == addr || n.mysqlListen == addr {
			return n
		}
	}
	return nil
}

// primaries asks every reachable node's /primary at once and returns those that answered 200.
// Right after a frozen leader resumes, it and its successor may both answer for a moment.
func (c *cluster) primaries() []*node {
	var mu sync.Mutex
	var out []*node
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		if !n.reachable() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n.isPrimary() {
				mu.Lock()
				out = append(out, n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// waitConverged waits until every node runs, all follow one leader that takes writes, and every
// node has applied the leader's commit index as sampled once they agree. It returns the leader.
func (c *cluster) waitConverged(d time.Duration) (*node, error) {
	deadline := time.Now().Add(d)
	var why string
	var target uint64
	var leader *node
	for time.Now().Before(deadline) {
		if err := c.crashErr(); err != nil {
			return nil, err
		}
		sts := make([]status, len(c.nodes))
		ok := true
		for i, n := range c.nodes {
			if !n.reachable() {
				ok, why = false, fmt.Sprintf("%v is down, paused or partitioned", n)
				break
			}
			st, err := n.status()
			if err != nil {
				ok, why = false, err.Error()
				break
			}
			sts[i] = st
		}
		if ok {
			lid := sts[0].Leader
			for _, st := range sts {
				if st.Leader != lid || st.Term != sts[0].Term || lid == 0 {
					ok, why = false, fmt.Sprintf("nodes disagree on the leader: %+v", sts)
					leader, target = nil, 0
					break
				}
			}
			if ok {
				ls := sts[lid-1]
				if ls.Role != "leader" || !ls.LeaderReady {
					ok, why = false, fmt.Sprintf("leader %d not ready: %+v", lid, ls)
				} else {
					if leader != c.nodes[lid-1] {
						leader, target = c.nodes[lid-1], ls.Commit
					}
					for _, st := range sts {
						if st.Applied < target {
							ok, why = false, fmt.Sprintf("node %d applied %d < leader's commit %d", st.ID, st.Applied, target)
						}
					}
				}
			}
		}
		if ok {
			return leader, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("cluster did not converge within %v: %s", d, why)
}

func (c *cluster) crashErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.crashes) > 0 {
		return fmt.Errorf("crash: %s", strings.Join(c.crashes, "; "))
	}
	return nil
}

// shutdown stops every process this cluster started, by PID, and reports crashes. On failure it
// shows the end of each node's log (and copies the logs to KILN_CLUSTER_LOGDIR when set).
func (c *cluster) shutdown() {
	for _, n := range c.nodes {
		if n.db != nil {
			n.db.Close()
		}
	}
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		if !n.running() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.resume() // a paused process cannot handle SIGTERM
			n.signal(syscall.SIGTERM)
			if !n.wait(15 * time.Second) {
				n.kill9()
			}
		}()
	}
	wg.Wait()
	c.hc.CloseIdleConnections()
	if err := c.crashErr(); err != nil {
		c.t.Error(err)
	}
	if c.t.Failed() {
		c.dumpLogs()
	}
}

func (c *cluster) dumpLogs() {
	dir := os.Getenv("KILN_CLUSTER_LOGDIR")
	if dir != "" {
		dir = filepath.Join(dir, strings.ReplaceAll(c.t.Name(), "/", "_"))
		_ = os.MkdirAll(dir, 0o755)
	}
	for _, n := range c.nodes {
		b, err := os.ReadFile(n.logPath)
		if err != nil {
			continue
		}
		if dir != "" {
			_ = os.WriteFile(filepath.Join(dir, filepath.Base(n.logPath)), b, 0o644)
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		c.t.Logf("--- last lines of %s:\n%s", n.logPath, strings.Join(lines, "\n"))
	}
	if dir != "" {
		c.t.Logf("node logs copied to %s", dir)
	}
}

// router is the clients' shared idea of which node leads.
type router struct {
	c   *cluster
	cur atomic.Pointer[node]
	gen atomic.Uint64 // bumped whenever cur changes
	mu  sync.Mutex    // one discovery at a time
}

func newRouter(c *cluster) *router { return &router{c: c} }

// leader returns the node believed to lead and the belief's generation, discovering it if needed
// (nil if no node answers /primary yet: the caller backs off and asks again).
func (r *router) leader() (*node, uint64) {
	if n := r.cur.Load(); n != nil {
		return n, r.gen.Load()
	}
	g := r.gen.Load()
	r.discover(g)
	return r.cur.Load(), r.gen.Load()
}

// failed tells the router that a statement on n failed with err under belief gen: a 1290 naming the
// primary moves clients there, anything else makes them ask /primary again.
func (r *router) failed(n *node, gen uint64, err error) {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1290 {
		if _, addr, ok := strings.Cut(me.Message, "the primary is "); ok {
			addr = strings.TrimRight(strings.TrimSpace(addr), ")")
			if p := r.c.byMySQL(addr); p != nil && p != n && p.reachable() {
				if r.gen.Load() == gen {
					r.set(p)
				}
				return
			}
		}
	}
	r.discover(gen)
}

func (r *router) set(n *node) {
	r.cur.Store(n)
	r.gen.Add(1)
}

// discover asks /primary, unless another client already changed the belief since gen.
func (r *router) discover(gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen.Load() != gen {
		return
	}
	ps := r.c.primaries()
	if len(ps) == 0 {
		r.cur.Store(nil)
		r.gen.Add(1)
		return
	}
	r.set(ps[rand.Intn(len(ps))])
}

// outcome is what a client may conclude about a statement or COMMIT from its result.
type outcome int

const (
	committed    outcome = iota // OK
	notCommitted                // 1213, 1290: rolled back or refused, retry safe
	unknown                     // 1180, 1053, connection errors: the log decides
	unexpected                  // anything else: a bug or a gap in this list
)

func (o outcome) String() string {
	return [...]string{"committed", "not committed", "unknown", "unexpected"}[o]
}

// classify maps a COMMIT's (or an autocommit statement's) error to its outcome, as
// internal/server/cluster.go documents the codes.
func classify(err error) outcome {
	if err == nil {
		return committed
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1213, 1290:
			return notCommitted
		case 1180, 1053:
			return unknown
		}
		return unexpected
	}
	if connErr(err) {
		return unknown
	}
	return unexpected
}

// connErr reports whether err is the connection failing (a node killed, frozen, restarting).
func connErr(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &ne):
		return true
	}
	// database/sql reports a transaction whose connection broke as ErrTxDone or ErrConnDone.
	return errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone)
}

// errLog collects unexpected errors (bounded) so a test can fail with all of them.
type errLog struct {
	mu    sync.Mutex
	n     int
	first []string
}

func (e *errLog) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.first) < 20 {
		e.first = append(e.first, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
}

func (e *errLog) check(t testing.TB, what string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n > 0 {
		t.Errorf("%d %s, first ones:\n  %s", e.n, what, strings.Join(e.first, "\n  "))
	}
}

// failoverClock measures, for one injected failure, the time until some other node acknowledges a
// write: what a client waits, at best, for the cluster to take writes again.
type failoverClock struct {
	mu   sync.Mutex
	old  *node
	t0   time.Time
	took time.Duration
	done chan struct{}
}

func (f *failoverClock) begin(old *node) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.old, f.t0, f.took, f.done = old, time.Now(), 0, make(chan struct{})
}

// acked is called after every acknowledged write, with the node that acknowledged it and the time
// its statement was sent: a write sent before the failure does not show the new leader working.
func (f *failoverClock) acked(n *node, sent time.Time) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done == nil || n == f.old || sent.Before(f.t0) {
		return
	}
	f.took = now.Sub(f.t0)
	close(f.done)
	f.done = nil
}

// await waits for the first acknowledgement after begin while probing: every 10 ms it writes (with
// probe, which must time out within a second or so) to a reachable node other than the failed one
// that answers /primary, so the measurement does not depend on the clients' own timeouts.
func (f *failoverClock) await(c *cluster, probe func(*node) error, d time.Duration) (time.Duration, error) {
	f.mu.Lock()
	done, old := f.done, f.old
	f.mu.Unlock()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.took, nil
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no node other than %v acknowledged a write within %v of the failure", old, d)
		}
		if err := c.crashErr(); err != nil {
			return 0, err
		}
		for _, n := range c.nodes {
			if n == old || !n.reachable() || !n.isPrimary() {
				continue
			}
			sent := time.Now()
			if probe(n) == nil {
				f.acked(n, sent)
			}
		}
	}
}

// execProbe is a probe that runs q.
func execProbe(q string) func(*node) error {
	return func(n *node) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := n.db.ExecContext(ctx, q)
		return err
	}
}

// durationStats formats p50/p99/max of ds (nearest rank).
func durationStats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	return fmt.Sprintf("p50 %v, p99 %v, max %v over %d failures", rank(0.50).Round(time.Millisecond),
		rank(0.99).Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond), len(s))
}

// mustExec runs a setup statement on the leader, retrying while leadership settles.
func (c *cluster) mustExec(q string, args ...any) {
	c.t.Helper()
	var err error
	for i := 0; i < 100; i++ {
		ps := c.primaries()
		if len(ps) == 1 {
			if _, err = ps[0].db.Exec(q, args...); err == nil {
				return
			}
			if o := classify(err); o != notCommitted && o != unknown {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("%s: %v", q, err)
}

// readAll runs q on n directly (a follower's local read) and returns its rows as strings.
func readAll(n *node, q string) ([][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := n.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// sameOnAllNodes checks that q returns identical rows on every node, and returns node 1's.
func (c *cluster) sameOnAllNodes(q string) [][]string {
	c.t.Helper()
	var first [][]string
	for i, n := range c.nodes {
		rows, err := readAll(n, q)
		if err != nil {
			c.t.Fatalf("%v: %s: %v", n, q, err)
		}
		if i == 0 {
			first = rows
			continue
		}
		if d := diffRows(first, rows); d != "" {
			c.t.Errorf("%s differs between %v and %v: %s", q, c.nodes[0], n, d)
		}
	}
	return first
}

func diffRows(a, b [][]string) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d rows vs %d rows", len(a), len(b))
	}
	for i := range a {
		if strings.Join(a[i], ",") != strings.Join(b[i], ",") {
			return fmt.Sprintf("row %d: %v vs %v", i, a[i], b[i])
		}
	}
	return ""
}

// healAndSettle waits for every node to run and apply the leader's commit index: the precondition
// of reading each node directly at the end of a test.
func (c *cluster) healAndSettle() *node {
	c.t.Helper()
	for _, n := range c.nodes {
		if n.running() {
			n.resume()
		} else {
			n.start()
		}
	}
	for _, n := range c.nodes {
		if err := n.waitHTTP("/health", 60*time.Second); err != nil {
			c.t.Fatalf("heal: %v", err)
		}
	}
	l, err := c.waitConverged(60 * time.Second)
	if err != nil {
		c.t.Fatalf("heal: %v", err)
	}
	return l
}

// mysqlCode is err's MySQL error number, 0 if it is not a server error.
func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}
