package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestRangeScanAllocations pins the per-row cost of a primary-key range read (sysbench
// oltp_read_only's simple range): the rows are decoded into chunks of rows and strings and returned
// without per-row copies, so 100 rows take a fraction of an allocation each (it was four to five
// per row: the decoded row, its strings, the join's copy, the projection, the sort's keys, SUM's
// decimals). The bounds leave room for the race detector's own allocations.
func TestRangeScanAllocations(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	var v strings.Builder
	for i := 1; i <= 300; i++ {
		if i > 1 {
			v.WriteByte(',')
		}
		fmt.Fprintf(&v, "(%d, %d, 'c-%08d-%s', 'pad-%d')", i, i%7, (i*7919)%1000, strings.Repeat("x", 40), i)
	}
	for _, q := range []string{"CREATE DATABASE ra", "USE ra",
		"CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY (k))",
		"INSERT INTO t VALUES " + v.String()} {
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q       string
		rows    int
		perRow  float64 // allocations per returned row, at most
		wantAny string  // a value the result must contain (the rows are real)
	}{
		// Streamed to the client (no sort, no aggregate): every row is decoded and projected into
		// the same buffers, nothing per row (it was 0.2: a chunk of rows and strings every 64).
		{"SELECT c FROM t WHERE id BETWEEN 101 AND 200", 100, 0.05, "c-00000"},
		{"SELECT c FROM t WHERE id BETWEEN 101 AND 200 ORDER BY c", 100, 1.5, "c-00000"},
		// DISTINCT by the sort that follows it (ORDER BY the selected column): no key or map entry
		// per row of its own (it was 2.5).
		{"SELECT DISTINCT c FROM t WHERE id BETWEEN 101 AND 200 ORDER BY c", 100, 1.5, "c-00000"},
		// SUM folds its rows into a number: they share one buffer (0.09: the aggregation's own
		// allocations per query; it was 0.15).
		{"SELECT SUM(k) FROM t WHERE id BETWEEN 101 AND 200", 100, 0.12, "301\n"},
	} {
		w := &textWriter{}
		if err := s.Query(ctx, c.q, w); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(w.b.String(), "\n"); (got < c.rows && !strings.Contains(c.q, "SUM")) || !strings.Contains(w.b.String(), c.wantAny) {
			t.Fatalf("%s: %d lines, want %d rows with %q:\n%s", c.q, got, c.rows, c.wantAny, w.b.String())
		}
		base := testing.AllocsPerRun(20, func() {
			if err := s.Query(ctx, "SELECT c FROM t WHERE id BETWEEN 101 AND 101", &discardWriter{}); err != nil {
				t.Fatal(err)
			}
		})
		n := testing.AllocsPerRun(20, func() {
			if err := s.Query(ctx, c.q, &discardWriter{}); err != nil {
				t.Fatal(err)
			}
		})
		limit := c.perRow
		if raceEnabled {
			limit = max(limit, 1)
		}
		if per := (n - base) / float64(c.rows-1); per > limit {
			t.Errorf("%s: %.2f allocations per row (%.0f for the query, %.0f for one row), want at most %.2f", c.q, per, n, base, limit)
		}
	}
}

// TestSumOfIntegers pins SUM and AVG over integers, which add in an int64 until it would overflow
// and then continue exactly in decimal, mixed with decimal, float and NULL arguments.
func TestSumOfIntegers(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE si", "USE si",
		"CREATE TABLE t (id INT PRIMARY KEY, g INT, b BIGINT, d DECIMAL(10,2), f DOUBLE, u BIGINT UNSIGNED)",
		"INSERT INTO t VALUES (1, 1, 9223372036854775807, 1.50, 0.5, 18446744073709551615), (2, 1, 9223372036854775807, NULL, NULL, 1)," +
			"(3, 1, -9223372036854775808, 2.25, 1.5, 5), (4, 2, -9223372036854775808, -1.00, NULL, NULL), (5, 2, -9223372036854775808, NULL, 2, 0)," +
			"(6, 3, 0, NULL, NULL, NULL), (7, 3, NULL, NULL, NULL, NULL), (8, 4, NULL, NULL, NULL, NULL), (9, 5, 5, 0.25, NULL, 3), (10, 5, -7, NULL, 0.25, 4)"} {
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"SELECT SUM(b), AVG(b), SUM(id), AVG(id) FROM t",
			"-9223372036854775812\t-1152921504606846976.5000\t55\t5.5000\n"},
		{"SELECT g, SUM(b), AVG(b), SUM(b + d), SUM(b) + SUM(f), SUM(u) FROM t GROUP BY g ORDER BY g",
			"1\t9223372036854775806\t3074457345618258602.0000\t2.75\t9.223372036854776e18\t18446744073709551621\n" +
				"2\t-18446744073709551616\t-9223372036854775808.0000\t-9223372036854775809.00\t-1.8446744073709552e19\t0\n" +
				"3\t0\t0.0000\tNULL\tNULL\tNULL\n" +
				"4\tNULL\tNULL\tNULL\tNULL\tNULL\n" +
				"5\t-2\t-1.0000\t5.25\t-1.75\t7\n"},
		{"SELECT SUM(b), SUM(f + b) FROM t WHERE g = 5", "-2\t-6.75\n"},
		{"SELECT SUM(DISTINCT g), AVG(DISTINCT g), COUNT(DISTINCT g) FROM t", "15\t3.0000\t5\n"},
	} {
		w := &textWriter{}
		if err := s.Query(ctx, c.q, w); err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got := w.b.String(); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.q, got, c.want)
		}
	}
}

// TestRangeReadResults guards the plain-read savings with results: columns a query does not read
// are not decoded (correlated subqueries, views, derived tables, GROUP BY, ORDER BY and the
// wildcard still see theirs), and an integer BETWEEN that the range scan implies is not checked
// again per row when its bounds are exact integers, but is whenever they are not (decimals,
// strings, NULL, out-of-range values for an unsigned column, reversed bounds, prepared
// statements with either kind of parameter).
func TestRangeReadResults(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE rr", "USE rr",
		"CREATE TABLE t (id INT PRIMARY KEY, k INT UNSIGNED NOT NULL, c CHAR(20) NOT NULL, pad CHAR(10) NOT NULL, KEY (k))",
		"INSERT INTO t VALUES (1, 0, 'c1', 'p1'), (2, 1, 'c2', 'p2'), (3, 1, 'c3', 'p3'), (4, 2, 'c4', 'p4'), (5, 3, 'c5', 'p5'), (6, 5, 'c6', 'p6')",
		"CREATE VIEW v AS SELECT id, pad FROM t",
		"CREATE TABLE s (name VARCHAR(20) PRIMARY KEY, k INT, v INT, KEY (k))",
		"INSERT INTO s VALUES ('anna', 1, 10), ('bob', 2, 20), ('carla-long-name', 1, 30), ('dan', 1, NULL)",
	} {
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"SELECT id FROM t WHERE id BETWEEN 2 AND 4", "2\n3\n4\n"},
		{"SELECT id FROM t WHERE id BETWEEN 2.5 AND 4.5", "3\n4\n"},
		{"SELECT id FROM t WHERE id BETWEEN '2' AND '3.5'", "2\n3\n"},
		{"SELECT id FROM t WHERE id BETWEEN -1 AND 1", "1\n"},
		{"SELECT id FROM t WHERE id BETWEEN 4 AND 2", ""},
		{"SELECT id FROM t WHERE id BETWEEN NULL AND 3", ""},
		{"SELECT id FROM t WHERE id BETWEEN 5 AND 9223372036854775807", "5\n6\n"},
		{"SELECT id FROM t WHERE id BETWEEN 5 AND 18446744073709551615", "5\n6\n"},
		{"SELECT id FROM t WHERE k BETWEEN -3 AND 1", "1\n2\n3\n"},
		{"SELECT id FROM t WHERE k BETWEEN 1 AND 2 AND c <> 'c3'", "2\n4\n"},
		// An OR of ranges read as a multi-range scan implies its condition the same way.
		{"SELECT COUNT(k) FROM t WHERE k BETWEEN 0 AND 1 OR k BETWEEN 3 AND 4", "4\n"},
		{"SELECT id FROM t WHERE id BETWEEN 1 AND 2 OR id BETWEEN 2 AND 3 OR id = 6", "1\n2\n3\n6\n"},
		{"SELECT id FROM t WHERE id < 2 OR id > 5 OR id IN (3, 4)", "1\n3\n4\n6\n"},
		{"SELECT id FROM t WHERE id <= 1 OR 5 <= id", "1\n5\n6\n"},
		{"SELECT id FROM t WHERE id BETWEEN 1.5 AND 2.5 OR id BETWEEN 4 AND 4.9", "2\n4\n"},
		{"SELECT id FROM t WHERE id BETWEEN '2' AND '2.5' OR id = '5.0'", "2\n5\n"},
		{"SELECT id FROM t WHERE id BETWEEN 3 AND 1 OR id BETWEEN NULL AND 9 OR id = 2", "2\n"},
		{"SELECT id FROM t WHERE k BETWEEN -3 AND 0 OR k BETWEEN 5 AND 18446744073709551615", "1\n6\n"},
		{"SELECT id FROM t WHERE k < 1 OR k > 4.5", "1\n6\n"},
		{"SELECT id FROM t WHERE (k BETWEEN 1 AND 2 OR k = 5) AND c <> 'c3'", "2\n4\n6\n"},
		{"SELECT id FROM t WHERE id BETWEEN 2 AND 5 AND (k = 1 OR k = 3)", "2\n3\n5\n"},
		// Index entries: a covering read returns them as rows (streamed, or kept by a sort); any
		// other read turns each into its primary key in scratch space.
		{"SELECT k, id FROM t WHERE k BETWEEN 1 AND 3", "1\t2\n1\t3\n2\t4\n3\t5\n"},
		{"SELECT k, id FROM t WHERE k BETWEEN 1 AND 3 ORDER BY id DESC", "3\t5\n2\t4\n1\t3\n1\t2\n"},
		{"SELECT c FROM t WHERE k IN (1, 5)", "c2\nc3\nc6\n"},
		{"SELECT name, k FROM s WHERE k = 1 ORDER BY name DESC", "dan\t1\ncarla-long-name\t1\nanna\t1\n"},
		{"SELECT v FROM s WHERE k = 1", "10\n30\nNULL\n"},
		{"SELECT COUNT(v), COUNT(k), COUNT(*), COUNT(DISTINCT k) FROM s WHERE k BETWEEN 1 AND 2", "3\t4\t4\t2\n"},
		{"SELECT COUNT(v + 1), COUNT(name) FROM s", "3\t4\n"},
		{"SELECT id FROM t WHERE id BETWEEN 2 AND 5 AND k BETWEEN 1 AND 2", "2\n3\n4\n"},
		{"SELECT SUM(k) FROM t WHERE id BETWEEN 1 AND 6", "12\n"},
		{"SELECT c FROM t WHERE id BETWEEN 2 AND 4 ORDER BY pad DESC", "c4\nc3\nc2\n"},
		{"SELECT pad, COUNT(*) FROM t WHERE id BETWEEN 1 AND 3 GROUP BY pad ORDER BY pad", "p1\t1\np2\t1\np3\t1\n"},
		{"SELECT c, (SELECT pad FROM t AS u WHERE u.id = t.id + 1) FROM t WHERE id BETWEEN 4 AND 6", "c4\tp5\nc5\tp6\nc6\tNULL\n"},
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.pad = CONCAT('p', t.k)) ORDER BY id", "2\n3\n4\n5\n6\n"},
		{"SELECT pad FROM v WHERE id BETWEEN 5 AND 6", "p5\np6\n"},
		{"SELECT d.p FROM (SELECT pad AS p, k FROM t WHERE id BETWEEN 1 AND 2) AS d", "p1\np2\n"},
		{"SELECT * FROM t WHERE id BETWEEN 6 AND 6", "6\t5\tc6\tp6\n"},
		{"SELECT t.c, u.pad FROM t JOIN t AS u ON u.id = t.k WHERE t.id BETWEEN 4 AND 6", "c4\tp2\nc5\tp3\nc6\tp5\n"},
		// Streamed rows share one buffer (Select.OpenStreaming): a user variable keeps its own copy.
		{"SELECT @v := c FROM t WHERE id BETWEEN 1 AND 3", "c1\nc2\nc3\n"},
		{"SELECT c, @v FROM t WHERE id BETWEEN 5 AND 6", "c5\tc3\nc6\tc3\n"},
		{"SELECT DISTINCT k FROM t WHERE id BETWEEN 1 AND 6", "0\n1\n2\n3\n5\n"},
		{"SELECT c FROM t WHERE id BETWEEN 1 AND 6 AND pad <> 'p2' LIMIT 1, 2", "c3\nc4\n"},
		// COUNT/SUM/AVG read their rows through one buffer too (Select.foldsRows); each group keeps
		// a copy of its first row.
		{"SELECT pad, COUNT(*), SUM(k) FROM t WHERE id BETWEEN 1 AND 6 GROUP BY pad ORDER BY pad", "p1\t1\t0\np2\t1\t1\np3\t1\t1\np4\t1\t2\np5\t1\t3\np6\t1\t5\n"},
		{"SELECT AVG(k), SUM(k), COUNT(c) FROM t WHERE id BETWEEN 2 AND 5", "1.7500\t7\t4\n"},
		{"SELECT MAX(c), MIN(pad), COUNT(*) FROM t WHERE id BETWEEN 1 AND 6", "c6\tp1\t6\n"},
		// The regexp cache keys a copy of a pattern read from a row, not the row's buffer.
		{"SELECT REGEXP_LIKE('c5', c) FROM t WHERE id BETWEEN 1 AND 6", "0\n0\n0\n0\n1\n0\n"},
		{"SELECT GET_LOCK(c, 0), IS_USED_LOCK('c1') IS NOT NULL, IS_USED_LOCK('c2') IS NOT NULL FROM t WHERE id BETWEEN 1 AND 2", "1\t1\t0\n1\t1\t1\n"},
		{"SELECT RELEASE_ALL_LOCKS()", "2\n"},
	} {
		w := &textWriter{}
		if err := s.Query(ctx, c.q, w); err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got := w.b.String(); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.q, got, c.want)
		}
	}
	// A prepared range is planned once: the same plan must check the bounds that are not exact.
	for _, p := range []struct {
		prepare, execute string
		runs             []struct{ set, want string }
	}{
		{"PREPARE p FROM 'SELECT c FROM t WHERE id BETWEEN ? AND ?'", "EXECUTE p USING @a, @b", []struct{ set, want string }{
			{"SET @a = 2, @b = 3", "c2\nc3\n"},
			{"SET @a = 1.5, @b = 3.5", "c2\nc3\n"},
			{"SET @a = '5', @b = 'x'", ""},
			{"SET @a = 5, @b = 7", "c5\nc6\n"},
		}},
		{"PREPARE p FROM 'SELECT c FROM t WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?'", "EXECUTE p USING @a, @b, @c, @d", []struct{ set, want string }{
			{"SET @a = 0, @b = 0, @c = 3, @d = 4", "c1\nc5\n"},
			{"SET @a = 0.5, @b = 1, @c = 2.5, @d = 4", "c2\nc3\nc5\n"},
			{"SET @a = -1, @b = 0, @c = 5, @d = 99", "c1\nc6\n"},
			{"SET @a = 2, @b = 1, @c = NULL, @d = 4", ""},
		}},
	} {
		if err := s.Query(ctx, p.prepare, &textWriter{}); err != nil {
			t.Fatal(err)
		}
		for _, c := range p.runs {
			w := &textWriter{}
			if err := s.Query(ctx, c.set, &textWriter{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Query(ctx, p.execute, w); err != nil {
				t.Fatalf("%s: %v", c.set, err)
			}
			if got := w.b.String(); got != c.want {
				t.Errorf("%s, EXECUTE after %s: got %q, want %q", p.prepare, c.set, got, c.want)
			}
		}
	}
}
