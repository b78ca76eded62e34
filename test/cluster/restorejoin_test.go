package cluster

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestoreJoin: a backup of one member of a running cluster, restored with `kiln restore --join`
// and started with `kiln serve --join` after `kiln cluster add-learner`, catches up from the
// leader's log after the backup's end (no engine snapshot: /cluster/status says its restored
// history "matched" and that it installed none, and the leader pinned none), is promoted to a
// voter, and holds exactly the leader's rows. A point in time with --join is refused; a backup of
// another cluster is refused by restore --join and, restored under its own cluster id, by
// `kiln serve --join` into this cluster, with nothing changed.
func TestRestoreJoin(t *testing.T) {
	c := newCluster(t, 2)
	c.mustExec("CREATE DATABASE rj")
	c.mustExec("CREATE TABLE rj.t (id INT PRIMARY KEY, v VARCHAR(64) NOT NULL)")
	insert := func(from, to int, tag string) {
		t.Helper()
		var vals []string
		for i := from; i < to; i++ {
			vals = append(vals, fmt.Sprintf("(%d, '%s-%d')", i, tag, i))
			if len(vals) == 50 || i == to-1 {
				c.mustExec("INSERT INTO rj.t VALUES " + strings.Join(vals, ","))
				vals = vals[:0]
			}
		}
	}
	insert(0, 300, "before")
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
	var fol *node
	for _, n := range c.nodes {
		if n != leader {
			fol = n
		}
	}
	bdir := filepath.Join(c.base, "backup")
	if out, err := exec.Command(kilnBin, "backup", "--from", fol.http, "--to", bdir).CombinedOutput(); err != nil {
		t.Fatalf("kiln backup of %v: %v\n%s", fol, err, out)
	}
	// Writes archived after the backup (kiln log archive from the same member): the restore rolls
	// forward through them (restore --join --log-dir), so the restored log is not empty.
	adir := filepath.Join(c.base, "archive")
	arch := exec.Command(kilnBin, "log", "archive", "--from", fol.http, "--to", adir)
	archLog, err := os.Create(filepath.Join(c.base, "archive.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer archLog.Close()
	arch.Stdout, arch.Stderr = archLog, archLog
	if err := arch.Start(); err != nil {
		t.Fatal(err)
	}
	archDone := make(chan error, 1)
	go func() { archDone <- arch.Wait() }()
	stopArch := func() {
		_ = arch.Process.Signal(syscall.SIGTERM)
		select {
		case <-archDone:
		case <-time.After(15 * time.Second):
			_ = arch.Process.Kill()
			<-archDone
		}
	}
	defer func() {
		if arch.ProcessState == nil {
			stopArch()
		}
	}()
	insert(300, 400, "archived")
	lst, err := leader.status()
	if err != nil {
		t.Fatal(err)
	}
	archived := uint64(0)
	for deadline := time.Now().Add(60 * time.Second); archived < lst.Commit; {
		if time.Now().After(deadline) {
			t.Fatalf("the archive reached index %d, not the leader's commit %d, within 60s", archived, lst.Commit)
		}
		time.Sleep(100 * time.Millisecond)
		out, err := exec.Command(kilnBin, "log", "verify", adir).Output()
		var v struct {
			Last uint64 `json:"last_index"`
		}
		if err == nil && json.Unmarshal(out, &v) == nil {
			archived = v.Last
		}
	}
	stopArch()
	// Writes after the archive's end: the joining member must get them from the leader's log.
	insert(400, 500, "after")
	c.mustExec("UPDATE rj.t SET v = CONCAT(v, '-updated') WHERE id % 7 = 0")
	c.mustExec("DELETE FROM rj.t WHERE id % 11 = 0")

	// A point in time makes no sense for a member.
	if out, err := exec.Command(kilnBin, "restore", "--from", bdir, "--data-dir", filepath.Join(c.base, "pitr"), "--join",
		"--cluster-id", cs.ClusterID, "--node-id", "3", "--to-index", "5").CombinedOutput(); err == nil || !strings.Contains(string(out), "restore without --join") {
		t.Fatalf("restore --join --to-index: %v\n%s", err, out)
	}

	j := &node{c: c, id: 3, dir: filepath.Join(c.base, "node3"), logPath: filepath.Join(c.base, "node3.log"),
		mysql: fixedPort(t), http: fixedPort(t), raftAdr: fixedPort(t)}
	out, err := exec.Command(kilnBin, "restore", "--from", bdir, "--log-dir", adir, "--data-dir", j.dir, "--join", "--cluster-id", cs.ClusterID, "--node-id", "3").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "joins cluster\t"+cs.ClusterID+" as node 3") ||
		!strings.Contains(string(out), fmt.Sprintf("log to index %d ", archived)) {
		t.Fatalf("kiln restore --join --log-dir (archived to %d): %v\n%s", archived, err, out)
	}
	t.Logf("kiln restore --join:\n%s", out)
	if out, err := exec.Command(kilnBin, "check", "--data-dir", j.dir).CombinedOutput(); err != nil {
		t.Fatalf("kiln check of the restored member's directory: %v\n%s", err, out)
	}

	// Another cluster's backup: refused by restore --join; restored for its own cluster, refused
	// by serve --join into this one.
	other := otherClusterBackup(t, c)
	if out, err := exec.Command(kilnBin, "restore", "--from", other.dir, "--data-dir", filepath.Join(c.base, "alien"), "--join",
		"--cluster-id", cs.ClusterID, "--node-id", "3").CombinedOutput(); err == nil || !strings.Contains(string(out), "the backup is of cluster "+other.clusterID+", not "+cs.ClusterID) {
		t.Fatalf("restore --join of another cluster's backup: %v\n%s", err, out)
	}
	alien := filepath.Join(c.base, "alien2")
	if out, err := exec.Command(kilnBin, "restore", "--from", other.dir, "--data-dir", alien, "--join",
		"--cluster-id", other.clusterID, "--node-id", "3").CombinedOutput(); err != nil {
		t.Fatalf("restore --join of the other cluster's backup for its own cluster: %v\n%s", err, out)
	}
	var peers []string
	for _, n := range c.nodes {
		peers = append(peers, fmt.Sprintf("%d=%s", n.id, n.raftAdr))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	refused, err := exec.CommandContext(ctx, kilnBin, "serve", "--data-dir", alien, "--listen", fixedPort(t), "--http", fixedPort(t), "--node-id", "3",
		"--raft-listen", fixedPort(t), "--join", "--cluster-id", cs.ClusterID, "--peers", strings.Join(peers, ",")).CombinedOutput()
	cancel()
	if err == nil || !strings.Contains(string(refused), "belongs to cluster "+other.clusterID+", not "+cs.ClusterID) {
		t.Fatalf("kiln serve --join on another cluster's restored backup: %v\n%s", err, refused)
	}

	if out, err := exec.Command(kilnBin, "cluster", "add-learner", "--http", leader.http, "--id", "3", "--raft", j.raftAdr).CombinedOutput(); err != nil {
		t.Fatalf("kiln cluster add-learner: %v\n%s", err, out)
	}
	j.args = []string{"serve", "--data-dir", j.dir, "--listen", j.mysql, "--http", j.http, "--node-id", "3",
		"--raft-listen", j.raftAdr, "--join", "--cluster-id", cs.ClusterID, "--peers", strings.Join(peers, ","),
		"--election-timeout", "500ms"}
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/?timeout=2s&readTimeout=10s&writeTimeout=3s", j.mysql))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	j.db = db
	c.nodes = append(c.nodes, j) // c.nodes[2] is node 3; stopped by PID with the others
	start := time.Now()
	j.start()
	if err := j.waitHTTP("/replica?max_lag=30", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("the restored member serves as a replica %v after its start", time.Since(start).Round(time.Millisecond))
	var js struct {
		Restored           string
		SnapshotsInstalled uint64
	}
	_, body, _ = j.get("/cluster/status")
	if err := json.Unmarshal(body, &js); err != nil || js.Restored != "matched" || js.SnapshotsInstalled != 0 {
		t.Fatalf("restored member's status %s (%v): want restored matched, no snapshot installed", body, err)
	}
	if out, err := exec.Command(kilnBin, "cluster", "promote", "--http", leader.http, "--id", "3").CombinedOutput(); err != nil {
		t.Fatalf("kiln cluster promote: %v\n%s", err, out)
	}
	insert(500, 600, "promoted")
	if _, err := c.waitConverged(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	q := "SELECT id, v FROM rj.t ORDER BY id"
	want, err := readAll(leader, q)
	if err != nil {
		t.Fatal(err)
	}
	rows := 600
	for i := 0; i < 500; i++ {
		if i%11 == 0 {
			rows-- // deleted
		}
	}
	if len(want) != rows {
		t.Fatalf("the leader holds %d rows, want %d", len(want), rows)
	}
	for _, n := range c.nodes {
		got, err := readAll(n, q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%v holds %d rows that differ from the leader's %d", n, len(got), len(want))
		}
	}
	var lset, jset string
	if err := leader.db.QueryRow("SELECT @@gtid_executed").Scan(&lset); err != nil {
		t.Fatal(err)
	}
	if err := j.db.QueryRow("SELECT @@gtid_executed").Scan(&jset); err != nil {
		t.Fatal(err)
	}
	if strings.Split(lset, ":")[0] != strings.Split(jset, ":")[0] {
		t.Fatalf("the joined member's GTID source %s is not the cluster's %s", jset, lset)
	}
	for _, n := range c.nodes {
		b, _ := os.ReadFile(n.logPath)
		if strings.Contains(string(b), "engine snapshot pinned for a follower") || strings.Contains(string(b), "engine snapshot installed") {
			t.Fatalf("%v's log shows an engine snapshot: the restored member should have caught up from the log", n)
		}
	}
	if b, _ := os.ReadFile(j.logPath); !strings.Contains(string(b), "catching up from the leader's log") {
		t.Fatal("the restored member's log does not say it matched the leader's log")
	}
}

// otherBackup is a backup of a cluster of one started for the purpose.
type otherBackup struct{ dir, clusterID string }

func otherClusterBackup(t *testing.T, c *cluster) otherBackup {
	t.Helper()
	oc := &cluster{t: t, base: t.TempDir(), hc: &http.Client{Timeout: time.Second}}
	n := &node{c: oc, id: 1, dir: filepath.Join(oc.base, "solo"), logPath: filepath.Join(oc.base, "solo.log"),
		mysql: fixedPort(t), http: fixedPort(t)}
	n.args = []string{"serve", "--data-dir", n.dir, "--listen", n.mysql, "--http", n.http}
	oc.nodes = []*node{n}
	t.Cleanup(oc.shutdown)
	n.start()
	if err := n.waitHTTP("/primary", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	_, body, err := n.get("/cluster/status")
	if err != nil {
		t.Fatal(err)
	}
	var cs struct{ ClusterID string }
	if err := json.Unmarshal(body, &cs); err != nil || cs.ClusterID == "" {
		t.Fatalf("other cluster's id from %s: %v", body, err)
	}
	dir := filepath.Join(c.base, "other-backup")
	if out, err := exec.Command(kilnBin, "backup", "--from", n.http, "--to", dir).CombinedOutput(); err != nil {
		t.Fatalf("kiln backup of the other cluster: %v\n%s", err, out)
	}
	return otherBackup{dir: dir, clusterID: cs.ClusterID}
}

// TestRestoreJoinPurged: when the leader no longer holds the log after the backup's end (purged:
// tiny log segments and retention), the member restored with --join gets an engine snapshot, as
// any member that far behind, which replaces its restored state (/cluster/status: "replaced");
// it then holds the leader's rows.
func TestRestoreJoinPurged(t *testing.T) {
	c := newClusterWith(t, 2, nil, func(_ *cluster, n *node) {
		n.args = append(n.args, "--log-segment-bytes", "4096", "--log-retain-entries", "1",
			"--log-retain-for-followers", "1", "--log-purge-interval", "100ms")
	})
	c.mustExec("CREATE DATABASE rp")
	c.mustExec("CREATE TABLE rp.t (id INT PRIMARY KEY, v VARCHAR(64) NOT NULL)")
	c.mustExec("INSERT INTO rp.t VALUES (0, 'zero'), (1, 'one')")
	leader, err := c.waitConverged(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var fol *node
	for _, n := range c.nodes {
		if n != leader {
			fol = n
		}
	}
	var cs struct {
		ClusterID  string
		FirstIndex uint64
	}
	bdir := filepath.Join(c.base, "backup")
	if out, err := exec.Command(kilnBin, "backup", "--from", fol.http, "--to", bdir).CombinedOutput(); err != nil {
		t.Fatalf("kiln backup of %v: %v\n%s", fol, err, out)
	}
	b, err := os.ReadFile(filepath.Join(bdir, "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		End uint64 `json:"end_index"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.End == 0 {
		t.Fatalf("manifest %s: %v", b, err)
	}
	for i := 2; i < 400; i++ {
		c.mustExec("INSERT INTO rp.t VALUES (?, ?)", i, fmt.Sprintf("a row of some length to fill the small log segments: %d", i))
		if i%50 != 0 {
			continue
		}
		_, body, err := leader.get("/cluster/status")
		if err == nil && json.Unmarshal(body, &cs) == nil && cs.FirstIndex > m.End+1 {
			break
		}
	}
	for deadline := time.Now().Add(30 * time.Second); cs.FirstIndex <= m.End+1; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the leader's log still starts at %d, not after the backup's end %d", cs.FirstIndex, m.End)
		}
		_, body, err := leader.get("/cluster/status")
		if err == nil {
			_ = json.Unmarshal(body, &cs)
		}
	}
	j := &node{c: c, id: 3, dir: filepath.Join(c.base, "node3"), logPath: filepath.Join(c.base, "node3.log"),
		mysql: fixedPort(t), http: fixedPort(t), raftAdr: fixedPort(t)}
	if out, err := exec.Command(kilnBin, "restore", "--from", bdir, "--data-dir", j.dir, "--join", "--cluster-id", cs.ClusterID, "--node-id", "3").CombinedOutput(); err != nil {
		t.Fatalf("kiln restore --join: %v\n%s", err, out)
	}
	if out, err := exec.Command(kilnBin, "cluster", "add-learner", "--http", leader.http, "--id", "3", "--raft", j.raftAdr).CombinedOutput(); err != nil {
		t.Fatalf("kiln cluster add-learner: %v\n%s", err, out)
	}
	var peers []string
	for _, n := range c.nodes {
		peers = append(peers, fmt.Sprintf("%d=%s", n.id, n.raftAdr))
	}
	j.args = []string{"serve", "--data-dir", j.dir, "--listen", j.mysql, "--http", j.http, "--node-id", "3",
		"--raft-listen", j.raftAdr, "--join", "--cluster-id", cs.ClusterID, "--peers", strings.Join(peers, ","),
		"--election-timeout", "500ms"}
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/?timeout=2s&readTimeout=10s&writeTimeout=3s", j.mysql))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	j.db = db
	c.nodes = append(c.nodes, j)
	j.start()
	if err := j.waitHTTP("/replica?max_lag=30", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	c.mustExec("INSERT INTO rp.t VALUES (1000, 'after the join')")
	if _, err := c.waitConverged(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Restored           string
		SnapshotsInstalled uint64
	}
	_, body, _ := j.get("/cluster/status")
	if err := json.Unmarshal(body, &js); err != nil || js.Restored != "replaced" || js.SnapshotsInstalled == 0 {
		t.Fatalf("restored member's status %s (%v): want an engine snapshot installed over the restored state", body, err)
	}
	q := "SELECT id, v FROM rp.t ORDER BY id"
	want, err := readAll(leader, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(j, q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(want) < 3 {
		t.Fatalf("the joined member holds %d rows, the leader %d: they differ", len(got), len(want))
	}
}
