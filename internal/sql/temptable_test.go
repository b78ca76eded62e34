package sql

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// tempTestDB is a DB over the real commit path whose committer records every logged record, with
// a server memory account.
func tempTestDB(t *testing.T) (*DB, *repltest.Recorder, *memory.Account) {
	t.Helper()
	st := repltest.Start(t, nil, NewApplier(), nil)
	rec := &repltest.Recorder{Node: st.Node}
	acct := memory.NewAccount(0)
	db, err := Open(context.Background(), txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), rec), Config{Version: "test", Memory: acct})
	if err != nil {
		t.Fatal(err)
	}
	return db, rec, acct
}

func tempQuery(s *Session, q string) (string, error) {
	w := &textWriter{}
	err := s.Query(context.Background(), q, w)
	return strings.TrimSpace(w.b.String()), err
}

// A temporary table is its session's: another session sees the base table of the same name (or
// nothing), and may make a temporary table of the same name of its own.
func TestTempTableInvisibleToOtherSessions(t *testing.T) {
	db, _, _ := tempTestDB(t)
	a := db.NewSession(1, "root", "localhost", "")
	b := db.NewSession(2, "root", "localhost", "")
	mustExec(t, a, "CREATE DATABASE d")
	mustExec(t, a, "CREATE TABLE d.base (id INT PRIMARY KEY, v VARCHAR(10))")
	mustExec(t, a, "INSERT INTO d.base VALUES (1, 'base')")
	mustExec(t, a, "CREATE TEMPORARY TABLE d.only_a (x INT)")
	mustExec(t, a, "INSERT INTO d.only_a VALUES (7)")
	mustExec(t, a, "CREATE TEMPORARY TABLE d.base (id INT PRIMARY KEY, w INT)")
	mustExec(t, a, "INSERT INTO d.base VALUES (1, 100), (2, 200)")

	if _, err := tempQuery(b, "SELECT * FROM d.only_a"); !sqlerr.Is(err, sqlerr.ErrNoSuchTable) {
		t.Errorf("other session reading a's temporary table: %v, want 1146", err)
	}
	if got := query(t, b, "SELECT * FROM d.base"); got != "1\tbase" {
		t.Errorf("other session sees %q, want the base table's row", got)
	}
	if got := query(t, a, "SELECT * FROM d.base ORDER BY id"); got != "1\t100\n2\t200" {
		t.Errorf("owner sees %q, want its temporary table's rows", got)
	}
	// b's own temporary table of the same name is a different table.
	mustExec(t, b, "CREATE TEMPORARY TABLE d.only_a (x INT)")
	mustExec(t, b, "INSERT INTO d.only_a VALUES (8), (9)")
	if got := query(t, a, "SELECT * FROM d.only_a"); got != "7" {
		t.Errorf("a's temporary table: %q, want 7", got)
	}
	if got := query(t, b, "SELECT COUNT(*) FROM d.only_a"); got != "2" {
		t.Errorf("b's temporary table: %q, want 2 rows", got)
	}
	// Listings never show temporary tables.
	if got := query(t, a, "SHOW TABLES FROM d"); got != "base" {
		t.Errorf("SHOW TABLES: %q", got)
	}
}

// Closing the session (disconnect, KILL, COM_RESET_CONNECTION) drops its temporary tables and
// gives their memory back; the shadowed base table is what the name means again.
func TestTempTableDroppedAtClose(t *testing.T) {
	db, _, acct := tempTestDB(t)
	a := db.NewSession(1, "root", "localhost", "")
	mustExec(t, a, "CREATE DATABASE d")
	mustExec(t, a, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	mustExec(t, a, "CREATE TEMPORARY TABLE d.t (id INT PRIMARY KEY, pad VARCHAR(200))")
	mustExec(t, a, "INSERT INTO d.t VALUES (1, REPEAT('x', 200)), (2, REPEAT('y', 200))")
	if acct.Used() <= 0 {
		t.Errorf("the temporary rows reserve no memory: used %d", acct.Used())
	}
	a.Close()
	if a.temp != nil {
		t.Error("the session still holds temporary tables after Close")
	}
	if acct.Used() != 0 {
		t.Errorf("memory still reserved after Close: %d", acct.Used())
	}
	// The same connection after COM_RESET_CONNECTION is a new session over the same account.
	a2 := db.NewSession(1, "root", "localhost", "d")
	if got := query(t, a2, "SELECT COUNT(*) FROM t"); got != "0" {
		t.Errorf("after close: %q, want the empty base table", got)
	}
	if _, err := tempQuery(a2, "DROP TEMPORARY TABLE t"); !sqlerr.Is(err, sqlerr.ErrBadTable) {
		t.Errorf("DROP TEMPORARY TABLE after close: %v, want 1051", err)
	}
}

// Writes to temporary tables are never logged: a transaction touching only them commits no
// record, and one that also writes a base table logs that table's keys only.
func TestTempTableNotLogged(t *testing.T) {
	db, rec, _ := tempTestDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	mustExec(t, s, "CREATE DATABASE d")
	mustExec(t, s, "USE d")
	mustExec(t, s, "CREATE TABLE b (id INT PRIMARY KEY)")
	mark := len(rec.Records())
	mustExec(t, s, "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY AUTO_INCREMENT, v INT, KEY kv (v))")
	mustExec(t, s, "INSERT INTO tmp (v) VALUES (1), (2), (3)")
	mustExec(t, s, "UPDATE tmp SET v = v + 10")
	mustExec(t, s, "DELETE FROM tmp WHERE id = 2")
	mustExec(t, s, "CREATE INDEX kv2 ON tmp (v, id)")
	mustExec(t, s, "ALTER TABLE tmp ADD COLUMN w INT DEFAULT 5")
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO tmp (v) VALUES (4)")
	mustExec(t, s, "COMMIT")
	mustExec(t, s, "TRUNCATE TABLE tmp")
	mustExec(t, s, "INSERT INTO tmp (v) VALUES (5)")
	mustExec(t, s, "CREATE TEMPORARY TABLE tmp2 AS SELECT * FROM tmp")
	mustExec(t, s, "DROP TEMPORARY TABLE tmp2")
	if n := len(rec.Records()) - mark; n != 0 {
		t.Fatalf("temporary table statements logged %d records, want none", n)
	}
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO tmp (v) VALUES (6)")
	mustExec(t, s, "INSERT INTO b VALUES (1)")
	mustExec(t, s, "COMMIT")
	recs := rec.Records()[mark:]
	if len(recs) != 1 {
		t.Fatalf("mixed transaction logged %d records, want 1", len(recs))
	}
	cs, err := txn.Changes(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	bt, _ := db.Catalog().Table("d", "b")
	lo, hi := rowenc.TableSpan(bt.ID)
	for _, c := range cs {
		if bytes.Compare(c.Key, lo) < 0 || bytes.Compare(c.Key, hi) >= 0 {
			t.Errorf("logged a key outside table b: %s %x", c.Kind, c.Key)
		}
		if len(c.Key) > 1 && c.Key[0] == rowenc.TablePrefix && c.Key[1] >= 0x80 {
			t.Errorf("logged a temporary table's key: %x", c.Key)
		}
	}
	if got := query(t, s, "SELECT v FROM tmp ORDER BY v"); got != "5\n6" {
		t.Errorf("temporary rows after the mixed commit: %q", got)
	}
	// Rows an open transaction wrote to a table it then drops leave nothing in the store.
	gone, _ := s.catalog().Table("d", "tmp")
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO tmp (v) VALUES (7), (8)")
	mustExec(t, s, "DROP TEMPORARY TABLE tmp")
	mustExec(t, s, "COMMIT")
	glo, ghi := rowenc.TableSpan(gone.ID)
	it, err := s.temp.local.Reader().NewIter(glo, ghi)
	if err != nil {
		t.Fatal(err)
	}
	if it.First() {
		t.Errorf("a dropped table's key is left in the store: %x", it.Key())
	}
	_ = it.Close()
	// No temporary definition reached the catalog anyone else reads.
	for _, tb := range db.Catalog().Tables("d") {
		if catalog.IsTempID(tb.ID) {
			t.Errorf("temporary table %s in the shared catalog", tb.Name)
		}
	}
}

// The temporary table shadows the base table of its name for every statement in its session.
func TestTempTableShadowsBaseTable(t *testing.T) {
	db, _, _ := tempTestDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	mustExec(t, s, "CREATE DATABASE d")
	mustExec(t, s, "USE d")
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	mustExec(t, s, "INSERT INTO t VALUES (1, 'base')")
	mustExec(t, s, "CREATE TEMPORARY TABLE t (k INT PRIMARY KEY, n INT NOT NULL)")
	for _, c := range []struct{ q, want string }{
		{"INSERT INTO t VALUES (5, 50)", "ok affected=1"},
		{"SELECT * FROM t", "5\t50"},
		{"UPDATE t SET n = n + 1", "ok affected=1"},
		{"SELECT k, n FROM t WHERE k = 5", "5\t51"},
		{"SHOW CREATE TABLE t", "t\tCREATE TEMPORARY TABLE `t` (\n  `k` int NOT NULL,\n  `n` int NOT NULL,\n  PRIMARY KEY (`k`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"},
		{"SHOW COLUMNS FROM t", "k\tint\tNO\tPRI\tNULL\t\nn\tint\tNO\t\tNULL"},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT 3", "ok affected=0"},
		{"SELECT * FROM t", "5\t51\t3"},
		{"DELETE FROM t", "ok affected=1"},
		{"DROP TABLE t", "ok affected=0"},
		{"SELECT * FROM t", "1\tbase"},
	} {
		got, err := tempQuery(s, c.q)
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.q, got, c.want)
		}
	}
}

// The session's temporary tables hold at most kiln_mem_quota_query bytes: past it a statement
// fails with 3170 and the session goes on.
func TestTempTableMemoryQuota(t *testing.T) {
	db, _, _ := tempTestDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	mustExec(t, s, "CREATE DATABASE d")
	mustExec(t, s, "USE d")
	mustExec(t, s, "CREATE TEMPORARY TABLE big (id INT PRIMARY KEY AUTO_INCREMENT, pad MEDIUMTEXT)")
	mustExec(t, s, "SET kiln_mem_quota_query = 2097152")
	// Random hex does not compress: the store's files hold about what was written.
	rnd := rand.New(rand.NewPCG(1, 2))
	pad := make([]byte, 100000)
	var err error
	n := 0
	for ; n < 100 && err == nil; n++ {
		for i := range pad {
			pad[i] = "0123456789abcdef"[rnd.IntN(16)]
		}
		_, err = tempQuery(s, "INSERT INTO big (pad) VALUES ('"+string(pad)+"')")
	}
	if !sqlerr.Is(err, sqlerr.ErrCapacityExceeded) || !strings.Contains(err.Error(), "temporary tables") {
		t.Fatalf("filling temporary tables past the quota: %v, want 3170 for the temporary tables", err)
	}
	if n < 5 {
		t.Errorf("refused after %d inserts of 100 kB under a 2 MiB quota", n)
	}
	if got := query(t, s, "SELECT COUNT(*) FROM big"); got != strconv.Itoa(n-1) {
		t.Errorf("rows kept: %s, want %d (the refused insert left none)", got, n-1)
	}
	mustExec(t, s, "DROP TEMPORARY TABLE big")
}

// CREATE TEMPORARY TABLE needs the CREATE TEMPORARY TABLES privilege on the database, and nothing
// more afterwards: the session may then read, write, alter and drop its temporary table (MySQL's
// rule), while the base table it shadows stays out of reach.
func TestTempTablePrivileges(t *testing.T) {
	db, _ := openACLTestDB(t)
	root := db.NewSession(1, "root", "127.0.0.1", "")
	mustQ(t, root, "CREATE DATABASE shop")
	mustQ(t, root, "CREATE TABLE shop.t (id INT PRIMARY KEY)")
	mustQ(t, root, "CREATE USER 'app'@'localhost' IDENTIFIED BY 'x'")
	mustQ(t, root, "GRANT SELECT ON shop.t TO 'app'@'localhost'")
	u := db.NewSession(2, "app", "127.0.0.1", "")
	wantCode(t, u, "CREATE TEMPORARY TABLE shop.tmp (a INT)", sqlerr.ErrDBAccessDenied, "")
	mustQ(t, root, "GRANT CREATE TEMPORARY TABLES ON shop.* TO 'app'@'localhost'")
	wantCode(t, u, "CREATE TABLE shop.base2 (a INT)", sqlerr.ErrTableAccessDenied, "CREATE command denied")
	for _, q := range []string{
		"CREATE TEMPORARY TABLE shop.tmp (a INT)",
		"INSERT INTO shop.tmp VALUES (1), (2)",
		"UPDATE shop.tmp SET a = a + 10",
		"DELETE FROM shop.tmp WHERE a = 11",
		"ALTER TABLE shop.tmp ADD COLUMN b INT",
		"CREATE INDEX ia ON shop.tmp (a)",
		"SELECT * FROM shop.tmp",
		"CREATE TEMPORARY TABLE shop.t (x INT)", // shadows the base table
		"INSERT INTO shop.t VALUES (5)",
		"DROP TABLE shop.t",
		"DROP TEMPORARY TABLE shop.tmp",
	} {
		mustQ(t, u, q)
	}
	// The temporary t is gone: INSERT reaches the base table again, which app may not write.
	wantCode(t, u, "INSERT INTO shop.t VALUES (6)", sqlerr.ErrTableAccessDenied, "INSERT command denied")
}

// A replica (read_only) runs temporary tables, as a MySQL replica does: nothing of them is logged;
// writes to base tables stay refused.
func TestTempTableOnReplica(t *testing.T) {
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	leader, err := Open(context.Background(), txm, Config{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCluster{}
	replica, err := Open(context.Background(), txm, Config{Version: "test", Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	ls := leader.NewSession(1, "root", "localhost", "")
	mustExec(t, ls, "CREATE DATABASE d")
	mustExec(t, ls, "CREATE TABLE d.b (id INT PRIMARY KEY, v INT)")
	mustExec(t, ls, "INSERT INTO d.b VALUES (1, 10), (2, 20)")
	fc.gen.Add(1)
	rs := replica.NewSession(2, "root", "localhost", "d")
	for _, q := range []string{
		"CREATE TEMPORARY TABLE r (id INT PRIMARY KEY, v INT)",
		"INSERT INTO r SELECT * FROM b",
		"UPDATE r SET v = v + 1",
		"DELETE FROM r WHERE id = 1",
		"CREATE INDEX iv ON r (v)",
		"CREATE TEMPORARY TABLE s AS SELECT id FROM b",
		"DROP TEMPORARY TABLE s",
	} {
		mustExec(t, rs, q)
	}
	if got := query(t, rs, "SELECT * FROM r"); got != "2\t21" {
		t.Errorf("replica temporary table: %q", got)
	}
	for _, q := range []string{"INSERT INTO b VALUES (3, 30)", "CREATE TABLE u (a INT)", "DROP TABLE b"} {
		if _, err := tempQuery(rs, q); !sqlerr.Is(err, sqlerr.ErrOptionPreventsStatement) {
			t.Errorf("%s on a replica: %v, want 1290", q, err)
		}
	}
}
