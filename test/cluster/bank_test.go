package cluster

import (
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	bankAccounts = 10
	bankInitial  = 1000
	bankClients  = 4
)

// transfer is one attempted transfer and what its client was told.
type transfer struct {
	src, dst int
	amount   int64
	outcome  outcome
	stage    string // where it failed: "begin", "select", "update", "insert", "commit"
	err      error
	node     *node     // the node it was sent to
	done     time.Time // when its client learned the outcome
}

// bankClient moves money between random accounts through whichever node leads.
type bankClient struct {
	id     int
	r      *router
	clock  *failoverClock
	rng    *rand.Rand
	ledger map[int64]*transfer
	errs   *errLog
	acks   *atomic.Int64 // acknowledged transfers of all clients (read while they run)
}

// run transfers until stop is set. Transfer ids are unique over the whole test: client*1e9 + seq.
func (bc *bankClient) run(stop *atomic.Bool) {
	for seq := int64(1); !stop.Load(); seq++ {
		n, gen := bc.r.leader()
		if n == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		id := int64(bc.id)*1_000_000_000 + seq
		src := bc.rng.Intn(bankAccounts)
		dst := (src + 1 + bc.rng.Intn(bankAccounts-1)) % bankAccounts
		tr := &transfer{src: src, dst: dst, amount: int64(1 + bc.rng.Intn(100))}
		bc.ledger[id] = tr
		sent := time.Now()
		bc.do(n.db, id, tr)
		tr.node, tr.done = n, time.Now()
		switch tr.outcome {
		case committed:
			bc.clock.acked(n, sent)
			bc.acks.Add(1)
		case unexpected:
			bc.errs.add("client %d, transfer %d on %v, %s: %v", bc.id, id, n, tr.stage, tr.err)
		}
		if tr.err != nil {
			bc.r.failed(n, gen, tr.err)
			time.Sleep(time.Duration(5+bc.rng.Intn(20)) * time.Millisecond)
		}
	}
}

// do runs one transfer: lock both rows in id order (so transfers never deadlock each other), write
// the new balances as absolute values computed from what was read (so a stale read or a lost lock
// shows up as money created or destroyed), and record the transfer id in the same transaction.
func (bc *bankClient) do(db *sql.DB, id int64, tr *transfer) {
	fail := func(stage string, err error) {
		tr.stage, tr.err = stage, err
		// Nothing was committed: COMMIT was never sent. Only an unexpected error is worth reporting.
		tr.outcome = notCommitted
		if classify(err) == unexpected {
			tr.outcome = unexpected
		}
	}
	tx, err := db.Begin()
	if err != nil {
		fail("begin", err)
		return
	}
	lo, hi := min(tr.src, tr.dst), max(tr.src, tr.dst)
	bal := map[int]int64{}
	for _, a := range []int{lo, hi} {
		var b int64
		if err := tx.QueryRow("SELECT balance FROM bank.accounts WHERE id = ? FOR UPDATE", a).Scan(&b); err != nil {
			_ = tx.Rollback()
			fail("select", err)
			return
		}
		bal[a] = b
	}
	for _, u := range []struct {
		a int
		v int64
	}{{tr.src, bal[tr.src] - tr.amount}, {tr.dst, bal[tr.dst] + tr.amount}} {
		if _, err := tx.Exec("UPDATE bank.accounts SET balance = ? WHERE id = ?", u.v, u.a); err != nil {
			_ = tx.Rollback()
			fail("update", err)
			return
		}
	}
	if _, err := tx.Exec("INSERT INTO bank.transfers (id, src, dst, amount) VALUES (?, ?, ?, ?)", id, tr.src, tr.dst, tr.amount); err != nil {
		_ = tx.Rollback()
		fail("insert", err)
		return
	}
	err = tx.Commit()
	tr.stage, tr.err, tr.outcome = "commit", err, classify(err)
}

// bank is the bank workload on a cluster: its schema, its clients and what they were told.
type bank struct {
	c       *cluster
	r       *router
	clock   *failoverClock
	errs    *errLog
	acks    atomic.Int64
	clients []*bankClient
	stop    atomic.Bool
	wg      sync.WaitGroup
}

// startBank creates the bank's tables on c and starts its clients; they stop when the test ends,
// or earlier with stopClients.
func startBank(c *cluster, rng *rand.Rand) *bank {
	c.t.Helper()
	c.mustExec("CREATE DATABASE bank")
	c.mustExec("CREATE TABLE bank.accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL)")
	c.mustExec("CREATE TABLE bank.transfers (id BIGINT PRIMARY KEY, src INT NOT NULL, dst INT NOT NULL, amount BIGINT NOT NULL)")
	c.mustExec("CREATE TABLE bank.probe (id INT PRIMARY KEY, n BIGINT NOT NULL)")
	c.mustExec("INSERT INTO bank.probe VALUES (1, 0)")
	var vals []string
	for a := 0; a < bankAccounts; a++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", a, bankInitial))
	}
	c.mustExec("INSERT INTO bank.accounts VALUES " + strings.Join(vals, ", "))

	b := &bank{c: c, r: newRouter(c), clock: &failoverClock{}, errs: &errLog{}}
	b.clients = make([]*bankClient, bankClients)
	for i := range b.clients {
		b.clients[i] = &bankClient{id: i + 1, r: b.r, clock: b.clock, rng: rand.New(rand.NewSource(rng.Int63())),
			ledger: map[int64]*transfer{}, errs: b.errs, acks: &b.acks}
		b.wg.Add(1)
		go func() { defer b.wg.Done(); b.clients[i].run(&b.stop) }()
	}
	c.t.Cleanup(b.stopClients)
	return b
}

// stopClients stops the clients and waits for them (idempotent).
func (b *bank) stopClients() {
	b.stop.Store(true)
	b.wg.Wait()
}

// probe is the write the failover clock measures with.
func (b *bank) probe() func(*node) error {
	return execProbe("UPDATE bank.probe SET n = n + 1 WHERE id = 1")
}

// ledger merges the clients' ledgers (after stopClients).
func (b *bank) ledger() map[int64]*transfer {
	ledger := map[int64]*transfer{}
	for _, bc := range b.clients {
		for id, tr := range bc.ledger {
			ledger[id] = tr
		}
	}
	return ledger
}

// verify checks, once the clients stopped and every node applied the leader's commit index
// (healAndSettle), each node's tables against the ledger, and that all nodes are identical.
func (b *bank) verify(t *testing.T) map[int64]*transfer {
	t.Helper()
	ledger := b.ledger()
	counts := map[outcome]int{}
	for _, tr := range ledger {
		counts[tr.outcome]++
	}
	t.Logf("transfers: %d acknowledged, %d not committed, %d unknown outcome", counts[committed], counts[notCommitted], counts[unknown])
	if counts[committed] == 0 {
		t.Fatal("no transfer was acknowledged")
	}
	c := b.c
	accounts := c.sameOnAllNodes("SELECT id, balance FROM bank.accounts ORDER BY id")
	c.sameOnAllNodes("SELECT id, src, dst, amount FROM bank.transfers ORDER BY id")
	for _, n := range c.nodes {
		checkBank(t, n, ledger)
	}
	rows, err := readAll(c.nodes[0], "SELECT id FROM bank.transfers")
	if err != nil {
		t.Fatal(err)
	}
	resolved := 0
	for _, row := range rows {
		id, _ := strconv.ParseInt(row[0], 10, 64)
		if tr, ok := ledger[id]; ok && tr.outcome == unknown {
			resolved++
		}
	}
	t.Logf("of the %d transfers with an unknown outcome, %d committed", counts[unknown], resolved)
	t.Logf("final balances: %v", accounts)
	return ledger
}

func TestBankFailover(t *testing.T) {
	trials := envInt(t, "KILN_CLUSTER_TRIALS", 20)
	rng := rand.New(rand.NewSource(seed(t)))
	c := newCluster(t, 3)
	b := startBank(c, rng)
	clock := b.clock

	var took []time.Duration
	start := time.Now()
	for trial := 0; trial < trials; trial++ {
		leader, err := c.waitConverged(60 * time.Second)
		if err != nil {
			t.Fatalf("before failure %d: %v", trial+1, err)
		}
		// Let the clients work against the healed cluster, so the failure hits commits in flight.
		time.Sleep(time.Duration(300+rng.Intn(500)) * time.Millisecond)
		kill := trial%2 == 0
		clock.begin(leader)
		if kill {
			leader.kill9()
		} else {
			leader.pause()
		}
		d, err := clock.await(c, b.probe(), 60*time.Second)
		if err != nil {
			t.Fatalf("failure %d (%s of leader %v): %v", trial+1, map[bool]string{true: "kill -9", false: "SIGSTOP"}[kill], leader, err)
		}
		took = append(took, d)
		t.Logf("failure %d: %s of leader %v; another node acknowledged a write after %v",
			trial+1, map[bool]string{true: "kill -9", false: "SIGSTOP"}[kill], leader, d.Round(time.Millisecond))
		if kill {
			time.Sleep(time.Duration(100+rng.Intn(400)) * time.Millisecond)
			leader.start()
			if err := leader.waitHTTP("/health", 60*time.Second); err != nil {
				t.Fatalf("restart after failure %d: %v", trial+1, err)
			}
		} else {
			// Resume soon after the new leader took writes: the old one comes back believing it
			// leads, with client commits and reads still queued on it.
			time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
			leader.resume()
		}
	}
	t.Logf("%d failures injected in %v", trials, time.Since(start).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond)
	b.stopClients()
	b.errs.check(t, "unexpected client errors")
	if trials > 0 {
		t.Logf("failover (failure injected -> first write acknowledged by another node): %s", durationStats(took))
	}

	c.healAndSettle()
	b.verify(t)
}

// checkBank reads n's tables directly and checks them against the clients' ledger.
func checkBank(t *testing.T, n *node, ledger map[int64]*transfer) {
	t.Helper()
	rows, err := readAll(n, "SELECT id, src, dst, amount FROM bank.transfers")
	if err != nil {
		t.Fatalf("%v: %v", n, err)
	}
	present := map[int64]bool{}
	want := make([]int64, bankAccounts)
	for a := range want {
		want[a] = bankInitial
	}
	var phantom, refused []string
	for _, row := range rows {
		id, _ := strconv.ParseInt(row[0], 10, 64)
		src, _ := strconv.Atoi(row[1])
		dst, _ := strconv.Atoi(row[2])
		amt, _ := strconv.ParseInt(row[3], 10, 64)
		present[id] = true
		want[src] -= amt
		want[dst] += amt
		tr, ok := ledger[id]
		switch {
		case !ok:
			phantom = append(phantom, row[0])
		case tr.src != src || tr.dst != dst || tr.amount != amt:
			phantom = append(phantom, fmt.Sprintf("%s (as %v, attempted as %d->%d %d)", row[0], row[1:], tr.src, tr.dst, tr.amount))
		case tr.outcome == notCommitted || (tr.outcome == unexpected && tr.stage != "commit"):
			refused = append(refused, fmt.Sprintf("%d (%s: %v)", id, tr.stage, tr.err))
		}
	}
	var lost []string
	for id, tr := range ledger {
		if tr.outcome == committed && !present[id] {
			lost = append(lost, strconv.FormatInt(id, 10))
		}
	}
	sort.Strings(lost)
	report := func(what string, ids []string) {
		if len(ids) > 0 {
			if len(ids) > 20 {
				ids = append(ids[:20], "...")
			}
			t.Errorf("%v: %s: %s", n, what, strings.Join(ids, ", "))
		}
	}
	report(fmt.Sprintf("%d acknowledged transfers are missing", len(lost)), lost)
	report(fmt.Sprintf("%d transfers exist that their client was told did not commit", len(refused)), refused)
	report(fmt.Sprintf("%d transfers exist that no client attempted so", len(phantom)), phantom)

	accts, err := readAll(n, "SELECT id, balance FROM bank.accounts ORDER BY id")
	if err != nil {
		t.Fatalf("%v: %v", n, err)
	}
	if len(accts) != bankAccounts {
		t.Fatalf("%v: %d accounts, want %d", n, len(accts), bankAccounts)
	}
	var sum int64
	for _, row := range accts {
		a, _ := strconv.Atoi(row[0])
		b, _ := strconv.ParseInt(row[1], 10, 64)
		sum += b
		if b != want[a] {
			t.Errorf("%v: account %d holds %d, but the transfers present on it make %d (a lost update or a torn transaction)", n, a, b, want[a])
		}
	}
	if sum != bankAccounts*bankInitial {
		t.Errorf("%v: balances sum to %d, want %d", n, sum, bankAccounts*bankInitial)
	}
}
