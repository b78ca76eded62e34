package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestDerivedMaterializedOnce: an inner derived table, view or CTE is materialised once per
// execution of its statement and its rows are reused for every outer row (exec constFnRows),
// as MySQL does: a user variable assigned inside it moves once per execution, and the results are
// those of the nested loop. A derived table inside a correlated subquery is materialised again
// for each evaluation of the subquery, with that evaluation's outer row.
func TestDerivedMaterializedOnce(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE dm", "USE dm",
		"CREATE TABLE t (id INT PRIMARY KEY, g INT)",
		"INSERT INTO t VALUES (1, 1), (2, 1), (3, 2), (4, 3), (5, 3)",
		"CREATE TABLE o (id INT PRIMARY KEY, g INT, n INT)",
		"INSERT INTO o VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, 3, 40)",
		"CREATE VIEW vg AS SELECT g, SUM(n) AS s FROM o GROUP BY g",
		"SET @n = 0",
	} {
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"SELECT t.id, d.s FROM t JOIN (SELECT g, SUM(n) AS s FROM o GROUP BY g) AS d ON d.g = t.g ORDER BY t.id",
			"1\t30\n2\t30\n3\t30\n4\t40\n5\t40\n"},
		{"SELECT COUNT(*), MAX(x) FROM t, (SELECT @n := @n + 1 AS x) AS d", "5\t1\n"},
		{"SELECT @n", "1\n"},
		{"SELECT COUNT(*), MAX(x) FROM t, (SELECT @n := @n + 1 AS x) AS d", "5\t2\n"},
		{"SELECT t.id, v.s FROM t LEFT JOIN vg AS v ON v.g = t.g AND v.s > 30 ORDER BY t.id",
			"1\tNULL\n2\tNULL\n3\tNULL\n4\t40\n5\t40\n"},
		{"WITH c AS (SELECT g, COUNT(*) AS k FROM o GROUP BY g) SELECT t.id, c.k FROM t JOIN c ON c.g = t.g WHERE t.id > 2 ORDER BY t.id",
			"3\t1\n4\t1\n5\t1\n"},
		{"SELECT x.id, y.id FROM (SELECT id FROM t WHERE id < 3) AS x JOIN (SELECT id FROM o) AS y ON y.id >= x.id ORDER BY x.id, y.id",
			"1\t1\n1\t2\n1\t3\n1\t4\n2\t2\n2\t3\n2\t4\n"},
		// The subquery runs once per row of t, each time with its own outer row.
		{"SELECT t.id, (SELECT SUM(d.n) FROM (SELECT n FROM o WHERE o.g = t.g) AS d) FROM t ORDER BY t.id",
			"1\t30\n2\t30\n3\t30\n4\t40\n5\t40\n"},
		{"SELECT t.id, (SELECT COUNT(*) FROM o JOIN (SELECT t.g AS tg) AS d ON o.g = d.tg) FROM t ORDER BY t.id",
			"1\t2\n2\t2\n3\t1\n4\t1\n5\t1\n"},
		{"SELECT t.id, (SELECT MAX(y) FROM (SELECT x AS y FROM (SELECT t.g * 10 AS x) AS d2) AS d1) FROM t ORDER BY t.id",
			"1\t10\n2\t10\n3\t20\n4\t30\n5\t30\n"},
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM (SELECT g FROM o WHERE o.n > 10 * t.id) AS d WHERE d.g = t.g) ORDER BY id",
			"1\n"},
		{"SELECT t.id, (SELECT COUNT(*) FROM (SELECT id FROM o) AS d) FROM t WHERE t.id < 3 ORDER BY t.id", "1\t4\n2\t4\n"},
	} {
		w := &textWriter{}
		if err := s.Query(ctx, c.q, w); err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got := w.b.String(); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.q, got, c.want)
		}
	}
	// A derived table cannot see the FROM items before it (no LATERAL): were it allowed to, its
	// rows could not be kept across outer rows.
	err := s.Query(ctx, "SELECT * FROM t, (SELECT t.g AS x) AS d", &textWriter{})
	if err == nil {
		t.Fatal("a derived table read a column of an earlier FROM item")
	}
}

// TestDerivedHashLookup: an inner materialised level looks its rows up by hash on its equality
// conditions (exec lookupRows). Each query is run again with the probe side wrapped (an
// expression, so no hash key: every row is scanned) and must give the same rows: integers of
// either signedness, strings in a case- and accent-insensitive PAD SPACE collation, NULLs on
// either side, LEFT JOIN padding, several keys at once, constants and parameters as probes.
func TestDerivedHashLookup(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	setup := []string{"CREATE DATABASE dh", "USE dh",
		"CREATE TABLE a (id INT PRIMARY KEY, k INT, u BIGINT UNSIGNED, s VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, b VARCHAR(10) COLLATE utf8mb4_bin)",
		"CREATE TABLE z (id INT PRIMARY KEY, k INT, u BIGINT UNSIGNED, s VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, n INT)",
	}
	for i := 1; i <= 12; i++ {
		setup = append(setup, fmt.Sprintf("INSERT INTO a VALUES (%d, %s, %s, %s, %s)", i,
			[]string{"NULL", "1", "2", "3", "-4"}[i%5], []string{"0", "1", "18446744073709551615", "2"}[i%4],
			[]string{"'abc'", "'ABC '", "'Äbc'", "NULL", "'x'"}[i%5], []string{"'abc'", "'abc '", "'ABC'"}[i%3]))
	}
	for i := 1; i <= 20; i++ {
		setup = append(setup, fmt.Sprintf("INSERT INTO z VALUES (%d, %s, %s, %s, %d)", i,
			[]string{"1", "2", "NULL", "-4", "7"}[i%5], []string{"1", "18446744073709551615", "2"}[i%3],
			[]string{"'abc'", "'x '", "NULL", "'y'"}[i%4], i*10))
	}
	setup = append(setup, "SET @p = 2")
	for _, q := range setup {
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	run := func(q string) string {
		w := &textWriter{}
		if err := s.Query(ctx, q, w); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return w.b.String()
	}
	for _, c := range []struct{ hashed, scanned string }{
		{"SELECT a.id, d.id FROM a JOIN (SELECT id, k FROM z) AS d ON d.k = a.k ORDER BY a.id, d.id",
			"SELECT a.id, d.id FROM a JOIN (SELECT id, k FROM z) AS d ON d.k = a.k + 0 ORDER BY a.id, d.id"},
		{"SELECT a.id, d.id FROM a LEFT JOIN (SELECT id, u FROM z) AS d ON a.u = d.u ORDER BY a.id, d.id",
			"SELECT a.id, d.id FROM a LEFT JOIN (SELECT id, u FROM z) AS d ON a.u + 0 = d.u ORDER BY a.id, d.id"},
		{"SELECT a.id, d.id FROM a JOIN (SELECT id, u FROM z) AS d ON d.u = a.k ORDER BY a.id, d.id",
			"SELECT a.id, d.id FROM a JOIN (SELECT id, u FROM z) AS d ON d.u = a.k + 0 ORDER BY a.id, d.id"},
		{"SELECT a.id, d.id FROM a LEFT JOIN (SELECT id, s FROM z) AS d ON d.s = a.s ORDER BY a.id, d.id",
			"SELECT a.id, d.id FROM a LEFT JOIN (SELECT id, s FROM z) AS d ON d.s = CONCAT(a.s, '') ORDER BY a.id, d.id"},
		{"SELECT a.id, d.id FROM a JOIN (SELECT id, s FROM z) AS d ON d.s = a.b COLLATE utf8mb4_0900_ai_ci ORDER BY a.id, d.id",
			"SELECT a.id, d.id FROM a JOIN (SELECT id, s FROM z) AS d ON d.s = CONCAT(a.b, '') COLLATE utf8mb4_0900_ai_ci ORDER BY a.id, d.id"},
		{"SELECT a.id, d.id FROM a JOIN (SELECT id, k, s FROM z) AS d ON d.k = a.k AND d.s = a.s ORDER BY a.id, d.id",
			"SELECT a.id, d.id FROM a JOIN (SELECT id, k, s FROM z) AS d ON d.k = a.k + 0 AND d.s = CONCAT(a.s, '') ORDER BY a.id, d.id"},
		{"SELECT a.id, d.n FROM a, (SELECT k, SUM(n) AS n FROM z GROUP BY k) AS d WHERE d.k = a.k AND d.n > 100 ORDER BY a.id",
			"SELECT a.id, d.n FROM a, (SELECT k, SUM(n) AS n FROM z GROUP BY k) AS d WHERE d.k = a.k + 0 AND d.n > 100 ORDER BY a.id"},
		{"SELECT a.id, COUNT(d.id) FROM a JOIN (SELECT id, k FROM z) AS d ON d.k = 2 GROUP BY a.id ORDER BY a.id",
			"SELECT a.id, COUNT(d.id) FROM a JOIN (SELECT id, k FROM z) AS d ON d.k = 2 + 0 GROUP BY a.id ORDER BY a.id"},
		{"SELECT a.id, d.id FROM a JOIN (SELECT id, k FROM z) AS d ON d.k = @p AND a.k = d.k ORDER BY a.id, d.id",
			"SELECT a.id, d.id FROM a JOIN (SELECT id, k FROM z) AS d ON d.k = @p + 0 AND a.k + 0 = d.k ORDER BY a.id, d.id"},
		{"WITH c AS (SELECT id, k FROM z) SELECT a.id, c.id FROM a JOIN c ON c.k = a.k WHERE a.id < 5 ORDER BY a.id, c.id",
			"WITH c AS (SELECT id, k FROM z) SELECT a.id, c.id FROM a JOIN c ON c.k = a.k + 0 WHERE a.id < 5 ORDER BY a.id, c.id"},
		// A base table without an index on the join column: read once, hashed (HashScan).
		{"SELECT a.id, z.id FROM a JOIN z ON z.k = a.k ORDER BY a.id, z.id",
			"SELECT a.id, z.id FROM a JOIN z ON z.k = a.k + 0 ORDER BY a.id, z.id"},
		{"SELECT a.id, z.id FROM a LEFT JOIN z ON z.u = a.u AND z.n > 50 ORDER BY a.id, z.id",
			"SELECT a.id, z.id FROM a LEFT JOIN z ON z.u = a.u + 0 AND z.n > 50 ORDER BY a.id, z.id"},
		{"SELECT a.id, z.id FROM a STRAIGHT_JOIN z ON z.s = a.s WHERE z.n < 150 ORDER BY a.id, z.id",
			"SELECT a.id, z.id FROM a STRAIGHT_JOIN z ON z.s = CONCAT(a.s, '') WHERE z.n < 150 ORDER BY a.id, z.id"},
		{"SELECT a.id, z.id FROM a, z WHERE z.k = a.k AND z.s = a.s AND z.id BETWEEN 2 AND 18 ORDER BY a.id, z.id",
			"SELECT a.id, z.id FROM a, z WHERE z.k = a.k + 0 AND z.s = CONCAT(a.s, '') AND z.id BETWEEN 2 AND 18 ORDER BY a.id, z.id"},
		{"SELECT a.id, z.id, y.id FROM a JOIN z ON z.k = a.k JOIN z AS y ON y.u = z.u AND y.n <> z.n ORDER BY a.id, z.id, y.id",
			"SELECT a.id, z.id, y.id FROM a JOIN z ON z.k = a.k + 0 JOIN z AS y ON y.u = z.u + 0 AND y.n <> z.n ORDER BY a.id, z.id, y.id"},
	} {
		got, want := run(c.hashed), run(c.scanned)
		if got != want || want == "" {
			t.Errorf("%s:\ngot  %q\nwant %q (%s)", c.hashed, got, want, c.scanned)
		}
		// A COLLATE clause is an expression, not a column: not a hash key.
		if plan := run("EXPLAIN " + c.hashed); !strings.Contains(plan, "hash lookup") && !strings.Contains(c.hashed, "COLLATE") {
			t.Errorf("EXPLAIN %s: no hash lookup:\n%s", c.hashed, plan)
		}
		if plan := run("EXPLAIN " + c.scanned); strings.Contains(plan, "hash lookup") {
			t.Errorf("EXPLAIN %s: the reference query uses a hash lookup:\n%s", c.scanned, plan)
		}
	}
}
