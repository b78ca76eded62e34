package cluster

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rollClient inserts rows under continuous load: each transaction inserts one row keyed by a
// unique id and bumps its client's counter row, so a torn transaction shows as a count mismatch.
type rollClient struct {
	id       int
	r        *router
	rng      *rand.Rand
	errs     *errLog
	outcomes map[int64]outcome // row id -> what the client was told
	seen     map[string]int    // error kinds seen, for the log
}

func (rc *rollClient) run(stop *atomic.Bool) {
	for seq := int64(1); !stop.Load(); seq++ {
		n, gen := rc.r.leader()
		if n == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		id := int64(rc.id)*1_000_000_000 + seq
		stage, err := rc.once(n, id)
		o := classify(err)
		if o == unexpected {
			rc.errs.add("client %d, row %d on %v, %s: %v", rc.id, id, n, stage, err)
		}
		if err != nil && stage != "commit" {
			o = notCommitted // COMMIT was never sent
		}
		rc.outcomes[id] = o
		if err != nil {
			rc.seen[errKind(err)]++
			rc.r.failed(n, gen, err)
			time.Sleep(time.Duration(5+rc.rng.Intn(20)) * time.Millisecond)
		}
	}
}

func (rc *rollClient) once(n *node, id int64) (string, error) {
	tx, err := n.db.Begin()
	if err != nil {
		return "begin", err
	}
	if _, err := tx.Exec("INSERT INTO roll.t (id, client, payload) VALUES (?, ?, ?)", id, rc.id, strings.Repeat("x", 50+rc.rng.Intn(200))); err != nil {
		_ = tx.Rollback()
		return "insert", err
	}
	if _, err := tx.Exec("UPDATE roll.counts SET n = n + 1 WHERE client = ?", rc.id); err != nil {
		_ = tx.Rollback()
		return "update", err
	}
	return "commit", tx.Commit()
}

// errKind names an error for the log: its MySQL code, or "connection".
func errKind(err error) string {
	if c := mysqlCode(err); c != 0 {
		return strconv.Itoa(int(c))
	}
	if connErr(err) {
		return "connection"
	}
	return "other"
}

func TestRollingRestart(t *testing.T) {
	rounds := envInt(t, "KILN_CLUSTER_ROUNDS", 2)
	rng := rand.New(rand.NewSource(seed(t)))
	c := newCluster(t, 3)
	const clients = 4
	c.mustExec("CREATE DATABASE roll")
	c.mustExec("CREATE TABLE roll.t (id BIGINT PRIMARY KEY, client INT NOT NULL, payload VARCHAR(300) NOT NULL, KEY by_client (client))")
	c.mustExec("CREATE TABLE roll.counts (client INT PRIMARY KEY, n BIGINT NOT NULL)")
	for i := 1; i <= clients; i++ {
		c.mustExec("INSERT INTO roll.counts VALUES (?, 0)", i)
	}

	r := newRouter(c)
	errs := &errLog{}
	var stop atomic.Bool
	var wg sync.WaitGroup
	rcs := make([]*rollClient, clients)
	for i := range rcs {
		rcs[i] = &rollClient{id: i + 1, r: r, rng: rand.New(rand.NewSource(rng.Int63())), errs: errs,
			outcomes: map[int64]outcome{}, seen: map[string]int{}}
		wg.Add(1)
		go func() { defer wg.Done(); rcs[i].run(&stop) }()
	}
	stopClients := func() {
		stop.Store(true)
		wg.Wait()
	}
	defer stopClients()

	for round := 0; round < rounds; round++ {
		for _, n := range c.nodes {
			if _, err := c.waitConverged(60 * time.Second); err != nil {
				t.Fatalf("before restarting %v: %v", n, err)
			}
			time.Sleep(time.Duration(500+rng.Intn(500)) * time.Millisecond)
			role := "replica"
			if n.isPrimary() {
				role = "primary"
			}
			start := time.Now()
			// A clean shutdown must end on its own: waiting commits are answered (1053) and the
			// process exits 0. One that hangs is a bug, not something to kill -9 away quietly.
			if err := n.terminate(30 * time.Second); err != nil {
				t.Fatalf("round %d: %v", round+1, err)
			}
			stopped := time.Since(start)
			time.Sleep(time.Duration(100+rng.Intn(300)) * time.Millisecond)
			n.start()
			if err := n.waitServing(60 * time.Second); err != nil {
				t.Fatalf("round %d: %v", round+1, err)
			}
			t.Logf("round %d: restarted %v (was %s): exited %v after SIGTERM, serving again %v after it",
				round+1, n, role, stopped.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		}
	}
	time.Sleep(500 * time.Millisecond)
	stopClients()
	errs.check(t, "client errors that are not retryable (only 1290, 1213, 1180, 1053 and connection errors are)")
	seen := map[string]int{}
	for _, rc := range rcs {
		for k, v := range rc.seen {
			seen[k] += v
		}
	}
	t.Logf("errors clients saw, by MySQL code: %v", seen)

	c.healAndSettle()
	c.sameOnAllNodes("SELECT client, n FROM roll.counts ORDER BY client")
	c.sameOnAllNodes("SELECT id, client, payload FROM roll.t ORDER BY id")
	counts := map[outcome]int{}
	for _, rc := range rcs {
		for _, o := range rc.outcomes {
			counts[o]++
		}
	}
	t.Logf("transactions: %d acknowledged, %d not committed, %d unknown outcome", counts[committed], counts[notCommitted], counts[unknown])
	if counts[committed] == 0 {
		t.Fatal("no transaction was acknowledged")
	}
	for _, n := range c.nodes {
		rows, err := readAll(n, "SELECT id, client FROM roll.t")
		if err != nil {
			t.Fatalf("%v: %v", n, err)
		}
		present := map[int64]bool{}
		perClient := map[int]int64{}
		var bad []string
		for _, row := range rows {
			id, _ := strconv.ParseInt(row[0], 10, 64)
			cl, _ := strconv.Atoi(row[1])
			present[id] = true
			perClient[cl]++
			if cl < 1 || cl > len(rcs) {
				bad = append(bad, fmt.Sprintf("%d (client %d)", id, cl))
			} else if o, ok := rcs[cl-1].outcomes[id]; !ok || o == notCommitted {
				bad = append(bad, fmt.Sprintf("%d (%v)", id, o))
			}
		}
		var lost []string
		for _, rc := range rcs {
			for id, o := range rc.outcomes {
				if o == committed && !present[id] {
					lost = append(lost, strconv.FormatInt(id, 10))
				}
			}
		}
		if len(lost) > 0 {
			t.Errorf("%v: %d acknowledged rows are missing: %v", n, len(lost), lost[:min(len(lost), 20)])
		}
		if len(bad) > 0 {
			t.Errorf("%v: %d rows exist that were never attempted or whose client was told they did not commit: %v", n, len(bad), bad[:min(len(bad), 20)])
		}
		cnts, err := readAll(n, "SELECT client, n FROM roll.counts ORDER BY client")
		if err != nil {
			t.Fatalf("%v: %v", n, err)
		}
		for _, row := range cnts {
			cl, _ := strconv.Atoi(row[0])
			v, _ := strconv.ParseInt(row[1], 10, 64)
			if v != perClient[cl] {
				t.Errorf("%v: client %d's counter is %d but %d of its rows exist (a torn transaction)", n, cl, v, perClient[cl])
			}
		}
	}
}
