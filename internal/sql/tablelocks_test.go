package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// lockSess is one session of a table-lock test; run returns rows, "ok ..." or "error N".
type lockSess struct {
	t *testing.T
	s *Session
}

func (l lockSess) runCtx(ctx context.Context, q string) string {
	w := &textWriter{}
	if err := l.s.Query(ctx, q, w); err != nil {
		return fmt.Sprintf("error %d", sqlerr.As(err).Code)
	}
	return strings.TrimSuffix(w.b.String(), "\n")
}

func (l lockSess) run(q string) string { return l.runCtx(context.Background(), q) }

func (l lockSess) expect(q, want string) {
	l.t.Helper()
	if got := l.run(q); got != want {
		l.t.Fatalf("%s: got %q, want %q", q, got, want)
	}
}

// async runs q in its own goroutine; the result arrives on the channel.
func (l lockSess) async(q string) <-chan string {
	ch := make(chan string, 1)
	go func() { ch <- l.run(q) }()
	return ch
}

// blocked asserts that a statement started with async has not finished yet. A statement that does
// not wait finishes within microseconds here; 200 ms is a wide margin on a loaded machine.
func blocked(t *testing.T, ch <-chan string, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s should wait for the lock, finished with %q", what, r)
	case <-time.After(200 * time.Millisecond):
	}
}

func finished(t *testing.T, ch <-chan string, want, what string) {
	t.Helper()
	select {
	case r := <-ch:
		if r != want {
			t.Fatalf("%s: got %q, want %q", what, r, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits after the lock was released", what)
	}
}

func lockSessions(t *testing.T, n int) []lockSess {
	db := testDB(t)
	out := make([]lockSess, n)
	for i := range out {
		out[i] = lockSess{t: t, s: db.NewSession(uint32(i+1), "root", "localhost", "")}
		t.Cleanup(out[i].s.Close)
	}
	out[0].expect("CREATE DATABASE d", "ok affected=1")
	for i := range out {
		out[i].expect("USE d", "ok affected=0")
	}
	out[0].run("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	out[0].run("CREATE TABLE u (id INT PRIMARY KEY)")
	out[0].run("INSERT INTO t VALUES (1, 10)")
	out[0].run("CREATE VIEW vt AS SELECT id FROM t")
	return out
}

func TestLockTablesOwnSession(t *testing.T) {
	ss := lockSessions(t, 1)
	a := ss[0]
	a.expect("LOCK TABLES t READ", "ok affected=0")
	for _, tc := range []struct{ q, want string }{
		{"SELECT v FROM t", "10"},
		{"SELECT COUNT(*) FROM t x JOIN t y ON x.id = y.id", "1"},
		{"INSERT INTO t VALUES (2, 20)", "error 1099"},
		{"UPDATE t SET v = 0", "error 1099"},
		{"DELETE FROM t", "error 1099"},
		{"SELECT * FROM u", "error 1100"},
		{"INSERT INTO u VALUES (1)", "error 1100"},
		{"ALTER TABLE t ADD COLUMN w INT", "error 1099"},
		{"SELECT COUNT(*) > 0 FROM information_schema.tables WHERE table_name = 't'", "1"},
		{"DROP DATABASE d", "error 1192"},
		{"LOCK TABLES nosuch READ", "error 1146"},
		{"LOCK TABLES information_schema.tables READ", "error 1044"},
	} {
		a.expect(tc.q, tc.want)
	}
	a.expect("LOCK TABLES t WRITE, u READ", "ok affected=0")
	a.expect("INSERT INTO t VALUES (2, 20)", "ok affected=1")
	a.expect("ALTER TABLE t ADD COLUMN w INT", "ok affected=0")
	a.expect("INSERT INTO u VALUES (1)", "error 1099")
	a.expect("SELECT COUNT(*) FROM t, u", "0")
	// A view is locked with the tables it reads.
	a.expect("LOCK TABLES vt READ", "ok affected=0")
	a.expect("SELECT COUNT(*) FROM vt", "2")
	a.expect("UNLOCK TABLES", "ok affected=0")
	a.expect("INSERT INTO u VALUES (1)", "ok affected=1")
}

func TestLockTablesBetweenSessions(t *testing.T) {
	ss := lockSessions(t, 3)
	a, b, c := ss[0], ss[1], ss[2]
	b.expect("SET SESSION lock_wait_timeout = 1", "ok affected=0")

	// WRITE: other sessions can neither read nor write.
	a.expect("LOCK TABLES t WRITE", "ok affected=0")
	b.expect("SELECT v FROM t", "error 1205")
	b.expect("SELECT * FROM u", "")
	read := c.async("SELECT v FROM t")
	blocked(t, read, "a read of a WRITE-locked table")
	a.expect("UPDATE t SET v = 11", "ok affected=1")
	a.expect("UNLOCK TABLES", "ok affected=0")
	finished(t, read, "11", "the read")

	// READ: other sessions read, their writes wait.
	a.expect("LOCK TABLES t READ", "ok affected=0")
	b.expect("SELECT v FROM t", "11")
	b.expect("UPDATE t SET v = 12", "error 1205")
	upd := c.async("UPDATE t SET v = 12")
	blocked(t, upd, "a write to a READ-locked table")
	// A second READ lock is compatible; a WRITE lock is not.
	b.expect("LOCK TABLES t READ", "ok affected=0")
	b.expect("UNLOCK TABLES", "ok affected=0")
	b.expect("LOCK TABLES t WRITE", "error 1205")
	a.expect("UNLOCK TABLES", "ok affected=0")
	finished(t, upd, "ok affected=1", "the update")

	// Prepared statements planned before the lock are still checked at each execution.
	c.expect("PREPARE p FROM 'SELECT v FROM t'", "ok affected=0")
	c.expect("EXECUTE p", "12")
	a.expect("LOCK TABLES t WRITE", "ok affected=0")
	exec := c.async("EXECUTE p")
	blocked(t, exec, "a prepared read of a WRITE-locked table")
	a.expect("UNLOCK TABLES", "ok affected=0")
	finished(t, exec, "12", "the prepared read")

	// DDL from another session waits for the lock too.
	a.expect("LOCK TABLES t READ", "ok affected=0")
	ddl := c.async("ALTER TABLE t ADD COLUMN z INT")
	blocked(t, ddl, "ALTER TABLE of a READ-locked table")
	a.expect("UNLOCK TABLES", "ok affected=0")
	finished(t, ddl, "ok affected=0", "the ALTER TABLE")

	// Closing the connection releases its locks.
	a.expect("LOCK TABLES t WRITE", "ok affected=0")
	sel := c.async("SELECT v FROM t")
	blocked(t, sel, "a read of a WRITE-locked table")
	a.s.Close()
	finished(t, sel, "12", "the read after the holder's connection closed")
}

// LOCK TABLES waits for transactions that used the table, as MySQL's metadata locks make it.
func TestLockTablesWaitsForTransactions(t *testing.T) {
	ss := lockSessions(t, 2)
	a, b := ss[0], ss[1]
	b.expect("BEGIN", "ok affected=0")
	b.expect("UPDATE t SET v = 20 WHERE id = 1", "ok affected=1")
	lock := a.async("LOCK TABLES t WRITE")
	blocked(t, lock, "LOCK TABLES while another transaction wrote the table")
	b.expect("COMMIT", "ok affected=0")
	finished(t, lock, "ok affected=0", "LOCK TABLES")
	a.expect("SELECT v FROM t", "20")
	a.expect("UNLOCK TABLES", "ok affected=0")

	// A transaction that only read the table blocks WRITE but not READ.
	b.expect("BEGIN", "ok affected=0")
	b.expect("SELECT v FROM t", "20")
	a.expect("LOCK TABLES t READ", "ok affected=0")
	a.expect("UNLOCK TABLES", "ok affected=0")
	lock = a.async("LOCK TABLES t WRITE")
	blocked(t, lock, "LOCK TABLES WRITE while another transaction read the table")
	b.expect("ROLLBACK", "ok affected=0")
	finished(t, lock, "ok affected=0", "LOCK TABLES WRITE")
	a.expect("UNLOCK TABLES", "ok affected=0")
}

func TestLockTablesWaitEndsWithStatement(t *testing.T) {
	ss := lockSessions(t, 2)
	a, b := ss[0], ss[1]
	a.expect("LOCK TABLES t WRITE", "ok affected=0")
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan string, 1)
	go func() { ch <- b.runCtx(ctx, "SELECT v FROM t") }()
	blocked(t, ch, "a read of a WRITE-locked table")
	cancel() // KILL QUERY or the client going away
	finished(t, ch, "error 1317", "the killed read")
	b.expect("SET SESSION max_execution_time = 100", "ok affected=0")
	b.expect("SELECT v FROM t", "error 3024")
}

// A session waiting for a table lock while it holds a database metadata lock that the lock holder's
// DDL needs is a deadlock: it gets 1213 and its transaction is rolled back, so the DDL goes on.
func TestLockTablesDeadlockWithDDL(t *testing.T) {
	ss := lockSessions(t, 2)
	a, b := ss[0], ss[1]
	a.expect("LOCK TABLES t WRITE", "ok affected=0")
	b.expect("BEGIN", "ok affected=0")
	b.expect("INSERT INTO u VALUES (5)", "ok affected=1") // holds d's metadata lock
	sel := b.async("SELECT v FROM t")
	blocked(t, sel, "a read of a WRITE-locked table")
	alter := a.async("ALTER TABLE t ADD COLUMN w INT")
	finished(t, sel, "error 1213", "the read that closes the cycle")
	finished(t, alter, "ok affected=0", "the lock holder's ALTER TABLE")
	a.expect("UNLOCK TABLES", "ok affected=0")
	b.expect("SELECT COUNT(*) FROM u", "0") // rolled back
}

func TestFlushTablesWithReadLock(t *testing.T) {
	ss := lockSessions(t, 2)
	a, b := ss[0], ss[1]
	a.expect("FLUSH TABLES WITH READ LOCK", "ok affected=0")
	b.expect("SELECT v FROM t", "10")
	ins := b.async("INSERT INTO u VALUES (1)")
	blocked(t, ins, "a write under the global read lock")
	a.expect("INSERT INTO u VALUES (2)", "error 1223")
	// mysqldump --single-transaction --source-data: the snapshot transaction keeps the global read
	// lock until UNLOCK TABLES, which does not commit it.
	a.expect("START TRANSACTION WITH CONSISTENT SNAPSHOT", "ok affected=0")
	blocked(t, ins, "a write under the global read lock")
	a.expect("SELECT COUNT(*) FROM u", "0")
	a.expect("UNLOCK TABLES", "ok affected=0")
	finished(t, ins, "ok affected=1", "the write after UNLOCK TABLES")
	a.expect("SELECT COUNT(*) FROM u", "0") // still the snapshot
	a.expect("COMMIT", "ok affected=0")
	a.expect("SELECT COUNT(*) FROM u", "1")

	// The global read lock waits for a transaction that writes.
	b.expect("BEGIN", "ok affected=0")
	b.expect("INSERT INTO u VALUES (3)", "ok affected=1")
	fl := a.async("FLUSH TABLES WITH READ LOCK")
	blocked(t, fl, "FLUSH TABLES WITH READ LOCK while a transaction writes")
	b.expect("COMMIT", "ok affected=0")
	finished(t, fl, "ok affected=0", "FLUSH TABLES WITH READ LOCK")
	a.expect("UNLOCK TABLES", "ok affected=0")
}

// A DDL statement waiting for a database's metadata lock behind an open transaction can be killed
// and times out after lock_wait_timeout, as in MySQL; statements held back behind it then go on.
func TestMetadataLockWaitEnds(t *testing.T) {
	ss := lockSessions(t, 3)
	a, b, c := ss[0], ss[1], ss[2]
	b.expect("BEGIN", "ok affected=0")
	b.expect("SELECT v FROM t", "10") // holds d's metadata lock until the transaction ends

	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan string, 1)
	go func() { ch <- a.runCtx(ctx, "ALTER TABLE u ADD COLUMN w INT") }()
	blocked(t, ch, "ALTER TABLE behind an open transaction")
	// A new statement on d waits behind the waiting DDL (it is not starved)...
	sel := c.async("SELECT COUNT(*) FROM u")
	blocked(t, sel, "a read queued behind a waiting ALTER TABLE")
	cancel() // KILL QUERY of the ALTER TABLE
	finished(t, ch, "error 1317", "the killed ALTER TABLE")
	// ...and goes on once the DDL gave up.
	finished(t, sel, "0", "the read queued behind the killed ALTER TABLE")

	a.expect("SET SESSION lock_wait_timeout = 1", "ok affected=0")
	a.expect("ALTER TABLE u ADD COLUMN w INT", "error 1205")
	alter := a.async("ALTER TABLE u ADD COLUMN w INT")
	blocked(t, alter, "ALTER TABLE behind an open transaction")
	b.expect("COMMIT", "ok affected=0")
	finished(t, alter, "ok affected=0", "ALTER TABLE after the transaction ended")
}

// TestStatementQueuedBehindDDLSeesIt: the planner takes no metadata lock; a statement planned
// while a DDL waits is planned again once its locks are held, so it sees what the DDL committed,
// never the definition it was planned on (plan.Resolve).
func TestStatementQueuedBehindDDLSeesIt(t *testing.T) {
	ss := lockSessions(t, 3)
	a, b, c := ss[0], ss[1], ss[2]
	a.expect("INSERT INTO u VALUES (1)", "ok affected=1")
	c.expect("PREPARE p FROM 'SELECT * FROM u'", "ok affected=0")
	for _, tc := range []struct{ ddl, query, want string }{
		{"ALTER TABLE u ADD COLUMN w INT DEFAULT 7", "SELECT * FROM u WHERE id = 1", "1\t7"},
		{"ALTER TABLE u ADD COLUMN x INT DEFAULT 8", "EXECUTE p", "1\t7\t8"},
		{"CREATE TABLE nt (id INT PRIMARY KEY)", "SELECT COUNT(*) FROM nt", "0"},
		{"CREATE OR REPLACE VIEW vt AS SELECT id, v FROM t", "SELECT * FROM vt", "1\t10"},
		{"DROP TABLE nt", "SELECT COUNT(*) FROM nt", "error 1146"},
		{"ALTER TABLE u ADD COLUMN y INT DEFAULT 9", "UPDATE u SET y = y + 1", "ok affected=1"},
		{"ALTER TABLE u ADD COLUMN z INT DEFAULT 3", "INSERT INTO u (id, z) VALUES (2, (SELECT MAX(z) FROM u) + 1)", "ok affected=1"},
	} {
		b.expect("BEGIN", "ok affected=0")
		b.expect("SELECT v FROM t", "10") // holds d's metadata lock until COMMIT
		ddl := a.async(tc.ddl)
		blocked(t, ddl, tc.ddl)
		q := c.async(tc.query)
		blocked(t, q, tc.query+" queued behind "+tc.ddl)
		b.expect("COMMIT", "ok affected=0")
		finished(t, ddl, "ok affected=0", tc.ddl)
		finished(t, q, tc.want, tc.query+" after "+tc.ddl)
	}
	c.expect("SELECT id, z FROM u ORDER BY id", "1\t3\n2\t4")
}

// A table's lock state outlives its last use, so the next statement's use allocates nothing; idle
// states are dropped beyond maxIdleTableStates, so tables used once each do not accumulate.
func TestTableLockStatesBounded(t *testing.T) {
	var l tableLocks
	s := &Session{}
	ctx := context.Background()
	keys := map[string]bool{"db.t": false}
	if err := l.use(ctx, s, "db.t", false, time.Second); err != nil {
		t.Fatal(err)
	}
	l.releaseUses(s, keys)
	if n := testing.AllocsPerRun(100, func() {
		if err := l.use(ctx, s, "db.t", false, time.Second); err != nil {
			t.Fatal(err)
		}
		l.releaseUses(s, keys)
	}); n != 0 {
		t.Errorf("use and release of a known table: %.0f allocations, want 0", n)
	}
	for i := range 3 * maxIdleTableStates {
		k := fmt.Sprintf("db.t%d", i)
		if err := l.use(ctx, s, k, i%2 == 0, time.Second); err != nil {
			t.Fatal(err)
		}
		l.releaseUses(s, map[string]bool{k: true})
	}
	if n := len(l.tables); n > maxIdleTableStates+1 {
		t.Errorf("%d table lock states kept, want at most %d", n, maxIdleTableStates+1)
	}
	// A kept state still answers for its table: a WRITE lock elsewhere blocks a use.
	other := &Session{}
	l.state("db.t").writeLock = other
	if c := l.useConflict(s, "db.t", false); c != other {
		t.Errorf("the kept state's WRITE lock does not conflict: %v", c)
	}
}
