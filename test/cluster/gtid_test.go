package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadYourWritesGTID: a client commits on the leader and reads the row back on a follower,
// KILN_RYW_ITERATIONS times (default 10,000, as issue 10 asks of CI), and is never shown a stale
// value. Each commit's GTID comes from its OK packet (session_track_gtids = OWN_GTID, parsed by
// rawConn, a raw protocol client: go-sql-driver does not expose session state) or, every third
// iteration, from the leader's @@gtid_executed read right after the commit. The follower (chosen at
// random) is made to wait for it in turn by WAIT_FOR_EXECUTED_GTID_SET(gtid, 10) = 0 on a pooled
// connection, or by kiln_read_after_gtid on a connection that keeps it set, so the read itself is
// an ordinary SELECT. A plain read on the same follower just before the wait counts how often the
// wait was needed (logged). Also checked: the GTIDs are <cluster uuid>:<index> with the same UUID
// on every node and strictly increasing indexes, @@gtid_mode is ON, each node has its own
// @@server_uuid, @@gtid_executed is <cluster uuid>:1-<n> and covers every GTID handed out, and a
// restarted follower keeps its @@server_uuid.
func TestReadYourWritesGTID(t *testing.T) {
	iters := envInt(t, "KILN_RYW_ITERATIONS", 10000)
	rng := rand.New(rand.NewSource(seed(t)))
	c := newCluster(t, 3)
	c.mustExec("CREATE DATABASE ryw")
	c.mustExec("CREATE TABLE ryw.t (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	c.mustExec("INSERT INTO ryw.t VALUES (1, 0)")
	leader, err := c.waitConverged(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var followers []*node
	for _, n := range c.nodes {
		if n != leader {
			followers = append(followers, n)
		}
	}

	// Identities: one cluster UUID, a server UUID per node, GTID mode on.
	var clusterUUID string
	serverUUIDs := map[string]*node{}
	executedRe := regexp.MustCompile(`^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):1-(\d+)$`)
	for _, n := range c.nodes {
		var mode, su, exec string
		if err := n.db.QueryRow("SELECT @@gtid_mode, @@server_uuid, @@gtid_executed").Scan(&mode, &su, &exec); err != nil {
			t.Fatalf("%v: %v", n, err)
		}
		m := executedRe.FindStringSubmatch(exec)
		if mode != "ON" || m == nil {
			t.Fatalf("%v: gtid_mode %q, gtid_executed %q", n, mode, exec)
		}
		if clusterUUID == "" {
			clusterUUID = m[1]
		} else if m[1] != clusterUUID {
			t.Fatalf("%v: gtid_executed %q names another cluster UUID than %s", n, exec, clusterUUID)
		}
		if other := serverUUIDs[su]; other != nil || len(su) != 36 || su == clusterUUID {
			t.Fatalf("%v: server_uuid %q (also %v's, or the cluster's)", n, su, other)
		}
		serverUUIDs[su] = n
	}
	t.Logf("cluster uuid %s", clusterUUID)

	lc, err := dialRaw(leader.mysql, "root")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	if _, err := lc.exec("SET session_track_gtids = OWN_GTID"); err != nil {
		t.Fatal(err)
	}
	// A connection per follower that keeps kiln_read_after_gtid set between statements.
	ctx := context.Background()
	pinned := map[*node]*sql.Conn{}
	for _, f := range followers {
		conn, err := f.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		pinned[f] = conn
	}

	gtidRe := regexp.MustCompile(`^` + clusterUUID + `:(\d+)$`)
	var last uint64
	var needed, byFunc, byVar int
	var waits []time.Duration
	for i := 1; i <= iters; i++ {
		ok, err := lc.exec(fmt.Sprintf("UPDATE ryw.t SET v = %d WHERE id = 1", i))
		if err != nil {
			t.Fatalf("iteration %d: commit on the leader: %v", i, err)
		}
		m := gtidRe.FindStringSubmatch(ok.gtids)
		if ok.affected != 1 || m == nil {
			t.Fatalf("iteration %d: OK affected %d, GTID %q; want 1 and %s:<index>", i, ok.affected, ok.gtids, clusterUUID)
		}
		idx, _ := strconv.ParseUint(m[1], 10, 64)
		if idx <= last {
			t.Fatalf("iteration %d: GTID index %d after %d", i, idx, last)
		}
		last = idx
		waitFor := ok.gtids
		if i%3 == 0 {
			// The leader's @@gtid_executed after the commit covers it, and is a set a client may
			// pass as it is.
			if err := leader.db.QueryRow("SELECT @@gtid_executed").Scan(&waitFor); err != nil {
				t.Fatal(err)
			}
			if m := executedRe.FindStringSubmatch(waitFor); m == nil || m[1] != clusterUUID || mustUint(m[2]) < idx {
				t.Fatalf("iteration %d: leader's gtid_executed %q does not cover %s", i, waitFor, ok.gtids)
			}
		}
		f := followers[rng.Intn(len(followers))]
		var plain int64
		if err := f.db.QueryRow("SELECT v FROM ryw.t WHERE id = 1").Scan(&plain); err != nil {
			t.Fatalf("iteration %d: plain read on %v: %v", i, f, err)
		}
		if plain < int64(i) {
			needed++
		}
		var got int64
		start := time.Now()
		if i%2 == 0 {
			byFunc++
			var r int
			if err := f.db.QueryRow("SELECT WAIT_FOR_EXECUTED_GTID_SET(?, 10)", waitFor).Scan(&r); err != nil || r != 0 {
				t.Fatalf("iteration %d: WAIT_FOR_EXECUTED_GTID_SET(%q, 10) on %v = %d, %v", i, waitFor, f, r, err)
			}
			waits = append(waits, time.Since(start))
			if err := f.db.QueryRow("SELECT v FROM ryw.t WHERE id = 1").Scan(&got); err != nil {
				t.Fatalf("iteration %d: read on %v: %v", i, f, err)
			}
		} else {
			byVar++
			conn := pinned[f]
			if _, err := conn.ExecContext(ctx, "SET kiln_read_after_gtid = ?", waitFor); err != nil {
				t.Fatalf("iteration %d: SET kiln_read_after_gtid on %v: %v", i, f, err)
			}
			if err := conn.QueryRowContext(ctx, "SELECT v FROM ryw.t WHERE id = 1").Scan(&got); err != nil {
				t.Fatalf("iteration %d: read after GTID on %v: %v", i, f, err)
			}
			waits = append(waits, time.Since(start))
		}
		if got != int64(i) {
			t.Fatalf("iteration %d: stale read on %v after waiting for %s: v = %d, want %d", i, f, waitFor, got, i)
		}
	}
	t.Logf("%d iterations (%d through WAIT_FOR_EXECUTED_GTID_SET, %d through kiln_read_after_gtid): a plain follower read right after the commit was stale %d times; wait+read latency %s",
		iters, byFunc, byVar, needed, latencyStats(waits))

	// Every node's @@gtid_executed covers the last GTID once converged.
	if _, err := c.waitConverged(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		var exec string
		if err := n.db.QueryRow("SELECT @@gtid_executed").Scan(&exec); err != nil {
			t.Fatal(err)
		}
		if m := executedRe.FindStringSubmatch(exec); m == nil || m[1] != clusterUUID || mustUint(m[2]) < last {
			t.Fatalf("%v: gtid_executed %q does not cover %s:%d", n, exec, clusterUUID, last)
		}
	}

	// A restarted follower keeps its server UUID, and the cluster's.
	f := followers[0]
	var before string
	if err := f.db.QueryRow("SELECT @@server_uuid").Scan(&before); err != nil {
		t.Fatal(err)
	}
	for _, conn := range pinned {
		conn.Close()
	}
	if err := f.terminate(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	f.start()
	if err := f.waitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	var after, exec string
	if err := f.db.QueryRow("SELECT @@server_uuid, @@gtid_executed").Scan(&after, &exec); err != nil {
		t.Fatal(err)
	}
	if after != before || !strings.HasPrefix(exec, clusterUUID+":1-") {
		t.Fatalf("after a restart: server_uuid %q (was %q), gtid_executed %q", after, before, exec)
	}
}

// latencyStats is p50/p99/max in microseconds (durationStats rounds to milliseconds).
func latencyStats(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return fmt.Sprintf("p50 %v, p99 %v, max %v over %d reads", at(0.5).Round(time.Microsecond), at(0.99).Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond), len(s))
}

func mustUint(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}
