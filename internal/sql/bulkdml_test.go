package sql

import (
	"fmt"
	"strings"
	"testing"
)

// UPDATE and DELETE through a secondary index whose order is not the primary key's: over several
// key ranges, many rows and the transaction's own earlier writes, every matching row is changed
// exactly once and no other row is.
func TestSecondaryIndexDML(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	mustExec(t, s, "CREATE DATABASE d")
	mustExec(t, s, "USE d")
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL, KEY kx (k))")
	const n = 2000
	k := func(id int) int { return id * 7919 % n } // a permutation: index order is not key order
	v := make([]int, n)
	var vals []string
	for id := 0; id < n; id++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, 0)", id, k(id)))
	}
	mustExec(t, s, "INSERT INTO t VALUES "+strings.Join(vals, ","))
	if plan := query(t, s, "EXPLAIN SELECT * FROM t WHERE k BETWEEN 100 AND 1499 FOR UPDATE"); !strings.Contains(plan, "kx") {
		t.Fatalf("the range does not use the index: %s", plan)
	}
	check := func(step string) {
		t.Helper()
		got := query(t, s, "SELECT id, v FROM t ORDER BY id")
		var want []string
		for id := 0; id < n; id++ {
			if v[id] >= 0 {
				want = append(want, fmt.Sprintf("%d\t%d", id, v[id]))
			}
		}
		if got != strings.Join(want, "\n") {
			t.Fatalf("%s: rows differ from the expected ones", step)
		}
	}
	update := func(q string, add int, match func(k int) bool) {
		t.Helper()
		mustExec(t, s, q)
		for id := 0; id < n; id++ {
			if v[id] >= 0 && match(k(id)) {
				v[id] += add
			}
		}
		check(q)
	}
	update("UPDATE t SET v = v + 1 WHERE k BETWEEN 100 AND 1499", 1, func(k int) bool { return k >= 100 && k <= 1499 })
	update("UPDATE t SET v = v + 10 WHERE k IN (3, 5, 1998) OR k BETWEEN 600 AND 900 OR k > 1990", 10,
		func(k int) bool { return k == 3 || k == 5 || k == 1998 || k >= 600 && k <= 900 || k > 1990 })
	// The transaction's own writes are what the rows are read as.
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "UPDATE t SET v = 1000 WHERE id = 7")
	v[7] = 1000
	update("UPDATE t SET v = v + 100 WHERE k BETWEEN 0 AND 1999", 100, func(int) bool { return true })
	mustExec(t, s, "COMMIT")
	check("after COMMIT")
	mustExec(t, s, "DELETE FROM t WHERE k < 700")
	for id := 0; id < n; id++ {
		if k(id) < 700 {
			v[id] = -1
		}
	}
	check("DELETE")
	if got := query(t, s, "SELECT COUNT(*) FROM t"); got != "1300" {
		t.Fatalf("%s rows after the DELETE, want 1300", got)
	}
}
