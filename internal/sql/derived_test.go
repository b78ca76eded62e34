package sql

import (
	"context"
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
