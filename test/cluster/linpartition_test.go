//go:build linux

package cluster

// TestLinearizablePartition: linearizable reads (kiln_read_concern = linearizable) on every node,
// checked with porcupine while the leader is cut off by a network partition (netLab: network
// namespaces on a bridge, the leader's veth set down; root needed, skipped without).
//
// Three writer clients read, write and compare-and-set a register row through the node they believe
// leads (regClient, as in TestRegisterLinearizable, with reg.w recording which writes took effect).
// Two readers per node read the row with kiln_read_concern = linearizable from inside that node's
// namespace, over its loopback: a partition does not cut them off, so the readers of a cut-off old
// leader keep asking it for the whole partition, first while it still believes it leads and then
// after it stepped down without a quorum, while the new leader takes writes. Every read that
// returns counts, whatever node served it and whatever @@read_only says; a read that times out
// (3024 after kiln_read_after_gtid_timeout = 1 s: no quorum confirmed a read index) has no effect
// and is only counted. KILN_LINPART_PARTITIONS times (default 2) the leader is cut off, kept cut
// off until another node acknowledged a write and then 1.5 s longer, and healed; each partition
// gets a row of its own. The history (writes resolved from reg.w, then the final values read on the
// leader) must be linearizable, and the old leaders' readers must have been refused during the
// partitions (that they were asked is what makes the check mean something).
//
// TestLinearizablePartitionCheckerBites runs the same with every node started with the hidden test
// hook --unsafe-no-read-index (linearizable reads answer from the node's applied state without
// ReadIndex), recording only the reads a node answered while it was cut off (so lagging followers'
// stale reads, which the hook also causes, play no part), and requires the check to fail: the
// partitioned old leader's stale reads must be caught. Together they take about 30 s.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-sql-driver/mysql"
)

// linReader reads the current row with kiln_read_concern = linearizable on one node, from inside
// its network namespace.
type linReader struct {
	id    int
	n     *node
	db    *sql.DB
	h     *history
	row   *atomic.Int64
	rng   *rand.Rand
	errs  *errLog
	ok    atomic.Int64
	fails sync.Map // error text (code) -> *atomic.Int64
	// cut is the node the test has cut off (nil between partitions).
	cut *atomic.Pointer[node]
	// cutOK and cutRefused count reads sent to a cut-off node that returned, or failed.
	cutOK, cutRefused atomic.Int64
	// onlyCut records only the reads a node answered while cut off for the whole read (the checker
	// test: the verdict then rests on the partitioned old leader's reads alone).
	onlyCut bool
}

func (lr *linReader) run(stop *atomic.Bool) {
	ctx := context.Background()
	for !stop.Load() {
		key := lr.row.Load()
		cut := lr.cut.Load() == lr.n
		call := lr.h.now()
		var v int64
		err := lr.db.QueryRowContext(ctx, "SELECT v FROM reg.r WHERE id = ?", key).Scan(&v)
		ret := lr.h.now()
		if err == nil {
			lr.ok.Add(1)
			if cut {
				lr.cutOK.Add(1)
			}
			if !lr.onlyCut || (cut && lr.cut.Load() == lr.n) {
				lr.h.add(lr.id, regInput{key: int(key), op: "read"}, regOutput{value: v}, call, ret, lr.n.String()+" (linearizable read)")
			}
		} else {
			if cut {
				lr.cutRefused.Add(1)
			}
			what := "connection"
			var me *mysql.MySQLError
			if errors.As(err, &me) {
				what = fmt.Sprint(me.Number)
				// 3024: no read index within the timeout (no quorum); 1213: the node stopped
				// leading while the statement waited for its read lease.
				if me.Number != 3024 && me.Number != 1213 {
					lr.errs.add("linearizable reader %d on %v: %v", lr.id, lr.n, err)
				}
			} else if !connErr(err) {
				lr.errs.add("linearizable reader %d on %v: %v", lr.id, lr.n, err)
			}
			c, _ := lr.fails.LoadOrStore(what, new(atomic.Int64))
			c.(*atomic.Int64).Add(1)
			time.Sleep(20 * time.Millisecond)
		}
		// Paced, so that the history stays small enough to check exactly and the readers leave
		// the CPU to the nodes.
		time.Sleep(time.Duration(2000+lr.rng.Intn(4000)) * time.Microsecond)
	}
}

func (lr *linReader) failures() string {
	var parts []string
	lr.fails.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("%s: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	return strings.Join(parts, ", ")
}

// linPartitionResult is what one run found.
type linPartitionResult struct {
	res   porcupine.CheckResult
	stale []string
	ops   int
}

func runLinPartition(t *testing.T, unsafe bool) linPartitionResult {
	parts := envInt(t, "KILN_LINPART_PARTITIONS", 2)
	rng := rand.New(rand.NewSource(seed(t)))
	lab := newNetLab(t, 3)
	c := newClusterWith(t, 3, lab.nets, func(_ *cluster, n *node) {
		if unsafe {
			n.args = append(n.args, "--unsafe-no-read-index")
		}
	})
	rows := parts + 1
	c.mustExec("CREATE DATABASE reg")
	c.mustExec("CREATE TABLE reg.r (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	c.mustExec("CREATE TABLE reg.w (val BIGINT PRIMARY KEY, row_id INT NOT NULL)")
	var vals []string
	for k := 1; k <= rows; k++ {
		vals = append(vals, fmt.Sprintf("(%d, 0)", k))
	}
	c.mustExec("INSERT INTO reg.r VALUES " + strings.Join(vals, ", "))
	if _, err := c.waitConverged(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	h := &history{start: time.Now()}
	errs := &errLog{}
	var row, burst atomic.Int64
	row.Store(1)
	var cut atomic.Pointer[node]
	var stop atomic.Bool
	var wg sync.WaitGroup
	const writers = 3
	for i := 0; i < writers; i++ {
		rc := &regClient{id: i, r: newRouter(c), rng: rand.New(rand.NewSource(rng.Int63())), h: h, errs: errs, row: &row, burst: &burst}
		wg.Go(func() { rc.run(&stop) })
	}
	var readers []*linReader
	for _, n := range c.nodes {
		dsn := fmt.Sprintf("root@netns-%s(%s)/?timeout=2s&readTimeout=5s&writeTimeout=5s&interpolateParams=true"+
			"&kiln_read_concern=%%27linearizable%%27&kiln_read_after_gtid_timeout=1", n.netns, n.mysqlListen)
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for j := 0; j < 2; j++ {
			lr := &linReader{id: 100 + len(readers), n: n, db: db, h: h, row: &row, rng: rand.New(rand.NewSource(rng.Int63())), errs: errs, cut: &cut, onlyCut: unsafe}
			readers = append(readers, lr)
			wg.Go(func() { lr.run(&stop) })
		}
	}
	prober := &regClient{id: 99, rng: rand.New(rand.NewSource(rng.Int63())), h: h, errs: errs, row: &row}
	stopClients := func() {
		stop.Store(true)
		wg.Wait()
	}
	defer stopClients()

	clock := &failoverClock{}
	for p := 0; p < parts; p++ {
		leader, err := c.waitConverged(30 * time.Second)
		if err != nil {
			t.Fatalf("before partition %d: %v", p+1, err)
		}
		if p > 0 {
			row.Add(1)
		}
		time.Sleep(time.Duration(300+rng.Intn(400)) * time.Millisecond)
		clock.begin(leader)
		cut.Store(leader)
		lab.partition(leader)
		d, err := clock.await(c, prober.probe, 30*time.Second)
		if err != nil {
			t.Fatalf("partition %d of leader %v: %v", p+1, leader, err)
		}
		// The old leader steps down within an election timeout of losing its quorum; from then on
		// it believes it is a follower, and a node that skipped ReadIndex would serve its old state.
		time.Sleep(1500 * time.Millisecond)
		lab.heal(leader)
		cut.Store(nil)
		t.Logf("partition %d: leader %v cut off for %v; another node acknowledged a write after %v",
			p+1, leader, (d + 1500*time.Millisecond).Round(time.Millisecond), d.Round(time.Millisecond))
		if err := waitFollower(leader, 30*time.Second); err != nil {
			t.Fatalf("after partition %d: %v", p+1, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	stopClients()
	errs.check(t, "unexpected client errors")
	var cutOK, cutRefused int64
	for _, lr := range readers {
		t.Logf("linearizable reader %d on %v: %d reads, failures {%s}", lr.id, lr.n, lr.ok.Load(), lr.failures())
		cutOK += lr.cutOK.Load()
		cutRefused += lr.cutRefused.Load()
	}
	t.Logf("reads sent to a cut-off node: %d returned, %d failed", cutOK, cutRefused)
	if cutOK+cutRefused == 0 {
		t.Errorf("no linearizable read reached a cut-off node: the partition was not exercised")
	}

	final := c.healAndSettle()
	c.sameOnAllNodes("SELECT id, v FROM reg.r ORDER BY id")
	h.resolve(t, c.sameOnAllNodes("SELECT val, row_id FROM reg.w ORDER BY val"))
	end := h.now()
	for i := range h.ops {
		if h.ops[i].Return == math.MaxInt64 {
			h.ops[i].Return = end
		}
	}
	for k := 1; k <= rows; k++ {
		var v int64
		if err := final.db.QueryRow("SELECT v FROM reg.r WHERE id = ?", k).Scan(&v); err != nil {
			t.Fatal(err)
		}
		h.add(1000, regInput{key: k, op: "read"}, regOutput{value: v}, end+1, end+2, "final read on "+final.String())
	}
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(registerModel, h.ops, 2*time.Minute)
	t.Logf("history: %d operations on %d rows; porcupine: %s in %v", len(h.ops), rows, res, time.Since(start).Round(time.Millisecond))
	out := linPartitionResult{res: res, stale: h.staleReads(), ops: len(h.ops)}
	if res == porcupine.Illegal && !unsafe {
		reportNonLinearizable(t, h, info)
	}
	return out
}

func TestLinearizablePartition(t *testing.T) {
	r := runLinPartition(t, false)
	if len(r.stale) > 0 {
		t.Errorf("%d stale linearizable reads:\n%s", len(r.stale), strings.Join(r.stale, "\n"))
	}
	switch r.res {
	case porcupine.Ok:
	case porcupine.Unknown:
		t.Errorf("porcupine could not decide within its time limit (%d operations): linearizability not checked", r.ops)
	default:
		t.Errorf("the history of linearizable reads and writes under partitions is not linearizable (%d operations)", r.ops)
	}
}

// TestLinearizablePartitionCheckerBites: the same run with ReadIndex disabled by a test hook must
// fail the check; if it passed, TestLinearizablePartition would prove nothing.
func TestLinearizablePartitionCheckerBites(t *testing.T) {
	r := runLinPartition(t, true)
	t.Logf("without ReadIndex: porcupine %s, %d stale reads named", r.res, len(r.stale))
	if len(r.stale) > 0 {
		t.Logf("e.g.:\n%s", strings.Join(r.stale[:min(3, len(r.stale))], "\n"))
	}
	if r.res != porcupine.Illegal && len(r.stale) == 0 {
		t.Fatalf("with linearizable reads answered without ReadIndex the history was judged %s and no stale read was named: the check does not catch stale reads", r.res)
	}
}
