package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// testDBMem is testDB with a server-wide memory account.
func testDBMem(t testing.TB, acct *memory.Account) *DB {
	t.Helper()
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	db, err := Open(context.Background(), txm, Config{Version: "8.0.40-kiln-test", Memory: acct})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// fillKB creates table t with n rows of a 1,000-byte string each (k: distinct values).
func fillKB(t *testing.T, s *Session, n int) {
	t.Helper()
	mustExec(t, s, "CREATE DATABASE IF NOT EXISTS d")
	mustExec(t, s, "USE d")
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, k INT, v VARCHAR(2000))")
	var b strings.Builder
	for i := 0; i < n; i++ {
		if b.Len() == 0 {
			b.WriteString("INSERT INTO t VALUES ")
		} else {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, %d, CONCAT(LPAD('%d', 10, '0'), REPEAT('x', 990)))", i, i%7, i)
		if (i+1)%500 == 0 || i == n-1 {
			mustExec(t, s, b.String())
			b.Reset()
		}
	}
}

func queryErr(s *Session, q string) error {
	return s.Query(context.Background(), q, &textWriter{})
}

// TestGroupConcatBounded is reproduction 4 of issue 13: with group_concat_max_len at its maximum,
// GROUP_CONCAT is still cut at max_allowed_packet (its effective maximum, as MySQL documents) with
// warning 1260, and holds no more than that while it runs.
func TestGroupConcatBounded(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	fillKB(t, s, 2000) // 2 MB of values
	// Only SET GLOBAL changes max_allowed_packet (1621 for SESSION); a new session takes it.
	mustExec(t, s, "SET GLOBAL max_allowed_packet = 65536")
	s = db.NewSession(2, "root", "localhost", "d")
	mustExec(t, s, "SET SESSION group_concat_max_len = 18446744073709551615")
	for _, q := range []string{
		"SELECT LENGTH(GROUP_CONCAT(v)) FROM t",
		"SELECT LENGTH(GROUP_CONCAT(v ORDER BY id DESC)) FROM t",
		"SELECT LENGTH(GROUP_CONCAT(DISTINCT v SEPARATOR '')) FROM t",
	} {
		got, warns := queryOne(t, s, q)
		if got != "65536" {
			t.Errorf("%s = %s, want 65536", q, got)
		}
		if len(warns) != 1 || warns[0].Code != sqlerr.ErrCutValueGroupConcat || !strings.HasSuffix(warns[0].Message, "was cut by GROUP_CONCAT()") {
			t.Errorf("%s: warnings %v, want one 1260", q, warns)
		}
	}
	// group_concat_max_len below max_allowed_packet is the bound; the cut row is named.
	mustExec(t, s, "SET SESSION group_concat_max_len = 2500")
	got, warns := queryOne(t, s, "SELECT LENGTH(GROUP_CONCAT(v ORDER BY id)) FROM t")
	if got != "2500" || len(warns) != 1 || warns[0].Message != "Row 3 was cut by GROUP_CONCAT()" {
		t.Errorf("got %s, %v; want 2500 and row 3 cut", got, warns)
	}
	// Groups are cut separately; short groups are whole.
	got, warns = queryOne(t, s, "SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE id < 5 GROUP BY k ORDER BY k LIMIT 1")
	if got != "0" || len(warns) != 0 {
		t.Errorf("got %s, %v", got, warns)
	}
	// JSON_ARRAYAGG past max_allowed_packet is NULL with 1301.
	got, warns = queryOne(t, s, "SELECT JSON_ARRAYAGG(v) FROM t")
	if got != "NULL" || len(warns) != 1 || warns[0].Code != sqlerr.ErrWarnAllowedPacketOverflow ||
		warns[0].Message != "Result of json_arrayagg() was larger than max_allowed_packet (65536) - truncated" {
		t.Errorf("JSON_ARRAYAGG: %.40s, %v", got, warns)
	}
	got, _ = queryOne(t, s, "SELECT JSON_LENGTH(JSON_OBJECTAGG(id, id)) FROM t WHERE id < 10")
	if got != "10" {
		t.Errorf("JSON_OBJECTAGG within the limit: %s", got)
	}
}

// TestStatementMemoryQuota: a statement that holds more rows than kiln_mem_quota_query fails with
// 3170; its transaction keeps what earlier statements did, the session goes on, and the server
// account is back to zero after each statement.
func TestStatementMemoryQuota(t *testing.T) {
	acct := memory.NewAccount(0)
	db := testDBMem(t, acct)
	s := db.NewSession(1, "root", "localhost", "")
	fillKB(t, s, 1000) // ~1 MB of values
	mustExec(t, s, "SET SESSION kiln_mem_quota_query = 200000")
	want := "Memory capacity of 200000 bytes for 'kiln_mem_quota_query' exceeded."
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO t VALUES (5000, 0, 'kept')")
	for _, q := range []string{
		"SELECT v FROM t ORDER BY v DESC",                             // sort
		"SELECT id, COUNT(*) FROM t GROUP BY id",                      // hash aggregation
		"SELECT DISTINCT v FROM t",                                    // DISTINCT
		"SELECT COUNT(DISTINCT v) FROM t",                             // an aggregate's DISTINCT set
		"SELECT GROUP_CONCAT(v ORDER BY id) FROM t",                   // GROUP_CONCAT's kept rows
		"SELECT COUNT(*) FROM (SELECT v FROM t) x",                    // derived table
		"SELECT COUNT(*) FROM t a, t b WHERE b.v <> ''",               // join inner side cache
		"SELECT 1 FROM t WHERE v IN (SELECT v FROM t) LIMIT 1",        // subquery result
		"SELECT v FROM t UNION SELECT v FROM t",                       // UNION parts
		"UPDATE t SET k = k + 1 WHERE id IN (SELECT id FROM t)",       // DML collecting rows
		"SELECT ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) FROM t", // a window's rows
	} {
		err := queryErr(s, q)
		if err == nil {
			t.Errorf("%s: no error, want 3170", q)
			continue
		}
		if e := sqlerr.As(err); e.Code != sqlerr.ErrCapacityExceeded || !strings.HasPrefix(e.Message, want) {
			t.Errorf("%s: %v, want 3170 %q", q, err, want)
		}
		if acct.Used() != 0 {
			t.Errorf("%s: account holds %d bytes after the statement", q, acct.Used())
		}
	}
	got, _ := queryOne(t, s, "SELECT v FROM t WHERE id = 5000")
	if got != "kept" {
		t.Fatalf("the transaction lost its earlier statement: %q", got)
	}
	mustExec(t, s, "COMMIT")
	got, _ = queryOne(t, s, "SELECT SUM(k) FROM t")
	if got != "2997" {
		t.Fatalf("SUM(k) = %s: the failed UPDATE was not rolled back", got)
	}
	// Rows that are re-materialised per outer row (a derived table inside a join, a correlated
	// subquery) are given back each time: only what is held at once counts.
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM t a, (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) c": "4004",
		"SELECT SUM((SELECT COUNT(*) FROM t b WHERE b.k = a.k AND b.id < 3)) FROM t a":                    "430",
	} {
		if got, _ := queryOne(t, s, q); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
	// Within the quota, and with no quota, the same statements work.
	if got, _ := queryOne(t, s, "SELECT COUNT(*) FROM (SELECT v FROM t WHERE id < 50 ORDER BY v) x"); got != "50" {
		t.Fatalf("small sort: %s", got)
	}
	mustExec(t, s, "SET SESSION kiln_mem_quota_query = 0")
	if got, _ := queryOne(t, s, "SELECT COUNT(*) FROM (SELECT DISTINCT v FROM t ORDER BY v) x"); got != "1001" {
		t.Fatalf("no quota: %s", got)
	}
	if acct.Peak() == 0 || acct.Used() != 0 {
		t.Fatalf("account: peak %d, used %d", acct.Peak(), acct.Used())
	}
}

// TestServerMemoryAdmission: when the server-wide account is full, a statement that needs to hold
// rows is refused with 3170 naming kiln_memory_limit (counted), while small statements and other
// sessions go on; once memory is released the same statement runs.
func TestServerMemoryAdmission(t *testing.T) {
	const limit = 8 << 30 // the live heap is far below it: only the account decides
	acct := memory.NewAccount(limit)
	db := testDBMem(t, acct)
	s := db.NewSession(1, "root", "localhost", "")
	fillKB(t, s, 1000)
	// Another holder (long data of other connections, other statements) takes almost everything.
	if !acct.Reserve(limit - 512<<10) {
		t.Fatal("reserve")
	}
	err := queryErr(s, "SELECT v FROM t ORDER BY v DESC")
	if err == nil {
		t.Fatal("no error, want 3170")
	}
	if e := sqlerr.As(err); e.Code != sqlerr.ErrCapacityExceeded || !strings.Contains(e.Message, "'kiln_memory_limit'") {
		t.Fatalf("got %v, want 3170 for kiln_memory_limit", err)
	}
	if acct.Refused() == 0 {
		t.Fatal("refusal not counted")
	}
	if got, _ := queryOne(t, s, "SELECT COUNT(*) FROM t"); got != "1000" {
		t.Fatalf("a statement holding nothing: %s", got)
	}
	acct.Release(limit - 512<<10)
	if got, _ := queryOne(t, s, "SELECT COUNT(*) FROM (SELECT v FROM t ORDER BY v DESC) x"); got != "1000" {
		t.Fatalf("after release: %s", got)
	}
	if acct.Used() != 0 {
		t.Fatalf("account holds %d", acct.Used())
	}
}
