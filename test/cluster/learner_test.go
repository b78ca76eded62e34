package cluster

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLearnerServesReads: a learner added with `kiln cluster add --learner` and started with --join
// applies the log and serves reads with the cluster's read guarantees, and never votes or leads:
//   - it is listed as a learner, follows the leader, and /replica?max_lag= answers 200 for it;
//   - reads after WAIT_FOR_EXECUTED_GTID_SET of the leader's @@gtid_executed, and linearizable reads
//     (kiln_read_concern), return every commit made on the leader just before, KILN_LEARNER_ITERATIONS
//     times (default 100);
//   - when the leader is killed, a voter takes over (the learner never leads), and the learner's
//     linearizable reads see the new leader's commits.
func TestLearnerServesReads(t *testing.T) {
	iters := envInt(t, "KILN_LEARNER_ITERATIONS", 100)
	c := newCluster(t, 3)
	c.mustExec("CREATE DATABASE lrn")
	c.mustExec("CREATE TABLE lrn.t (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	c.mustExec("INSERT INTO lrn.t VALUES (1, 0)")
	leader, err := c.waitConverged(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := leader.get("/cluster/status")
	if err != nil {
		t.Fatal(err)
	}
	var cs struct{ ClusterID string }
	if err := json.Unmarshal(body, &cs); err != nil || cs.ClusterID == "" {
		t.Fatalf("cluster id from %s: %v", body, err)
	}

	l := &node{c: c, id: 4, dir: filepath.Join(c.base, "node4"), logPath: filepath.Join(c.base, "node4.log"),
		mysql: fixedPort(t), http: fixedPort(t), raftAdr: fixedPort(t)}
	var peers []string
	for _, n := range c.nodes {
		peers = append(peers, fmt.Sprintf("%d=%s", n.id, n.raftAdr))
	}
	add := exec.Command(kilnBin, "cluster", "add", "--learner", "--http", leader.http, "--id", "4", "--raft", l.raftAdr)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("kiln cluster add --learner: %v: %s", err, out)
	}
	l.args = []string{"serve", "--data-dir", l.dir, "--listen", l.mysql, "--http", l.http, "--node-id", "4",
		"--raft-listen", l.raftAdr, "--join", "--cluster-id", cs.ClusterID, "--peers", strings.Join(peers, ","),
		"--election-timeout", "500ms"}
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/?timeout=2s&readTimeout=10s&writeTimeout=3s", l.mysql))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	l.db = db
	c.nodes = append(c.nodes, l) // stopped by PID with the others when the test ends
	l.start()
	if err := l.waitHTTP("/replica?max_lag=30", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code, b, _ := l.get("/replica?max_lag=soon"); code != 400 {
		t.Errorf("/replica?max_lag=soon: %d %s, want 400", code, b)
	}
	var members struct {
		Members []struct {
			ID    uint64
			Voter bool
		}
	}
	_, body, _ = leader.get("/cluster/status")
	_ = json.Unmarshal(body, &members)
	found := false
	for _, m := range members.Members {
		if m.ID == 4 {
			found = true
			if m.Voter {
				t.Fatal("node 4 was added as a voter")
			}
		}
	}
	if !found {
		t.Fatalf("node 4 is not a member: %s", body)
	}

	ctx := context.Background()
	lin, err := l.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lin.Close()
	if _, err := lin.ExecContext(ctx, "SET SESSION kiln_read_concern = 'linearizable'"); err != nil {
		t.Fatal(err)
	}
	check := func(ld *node, i int) {
		t.Helper()
		if _, err := ld.db.ExecContext(ctx, "UPDATE lrn.t SET v = ? WHERE id = 1", i); err != nil {
			t.Fatalf("iteration %d: commit on %v: %v", i, ld, err)
		}
		var got int64
		if i%2 == 0 {
			var set string
			if err := ld.db.QueryRowContext(ctx, "SELECT @@gtid_executed").Scan(&set); err != nil {
				t.Fatal(err)
			}
			var r int
			if err := l.db.QueryRowContext(ctx, "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, 10)", set).Scan(&r); err != nil || r != 0 {
				t.Fatalf("iteration %d: WAIT_FOR_EXECUTED_GTID_SET on the learner: %d %v", i, r, err)
			}
			if err := l.db.QueryRowContext(ctx, "SELECT v FROM lrn.t WHERE id = 1").Scan(&got); err != nil {
				t.Fatal(err)
			}
		} else if err := lin.QueryRowContext(ctx, "SELECT v FROM lrn.t WHERE id = 1").Scan(&got); err != nil {
			t.Fatalf("iteration %d: linearizable read on the learner: %v", i, err)
		}
		if got != int64(i) {
			t.Fatalf("iteration %d: the learner read %d after the commit of %d", i, got, i)
		}
	}
	for i := 1; i <= iters; i++ {
		check(leader, i)
	}

	// The leader dies: a voter takes over, never the learner.
	leader.kill9()
	var nl *node
	deadline := time.Now().Add(30 * time.Second)
	for nl == nil && time.Now().Before(deadline) {
		for _, n := range c.nodes {
			if n == leader {
				continue
			}
			if st, err := n.status(); err == nil && st.Role == "leader" {
				nl = n
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if nl == nil {
		t.Fatal("no new leader within 30s of killing the old one")
	}
	if nl == l {
		t.Fatal("the learner became the leader")
	}
	for i := iters + 1; i <= iters+20; i++ {
		check(nl, i)
	}
	if st, err := l.status(); err != nil || st.Role == "leader" || st.Leader != uint64(nl.id) {
		t.Fatalf("learner status %+v (%v), want a follower of node %d", st, err, nl.id)
	}
}
