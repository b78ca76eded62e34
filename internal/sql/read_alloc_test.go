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
		{"SELECT c FROM t WHERE id BETWEEN 101 AND 200", 100, 1, "c-00000"},
		{"SELECT c FROM t WHERE id BETWEEN 101 AND 200 ORDER BY c", 100, 1.5, "c-00000"},
		// DISTINCT by the sort that follows it (ORDER BY the selected column): no key or map entry
		// per row of its own (it was 2.5).
		{"SELECT DISTINCT c FROM t WHERE id BETWEEN 101 AND 200 ORDER BY c", 100, 1.5, "c-00000"},
		{"SELECT SUM(k) FROM t WHERE id BETWEEN 101 AND 200", 100, 1, "301\n"},
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
		if per := (n - base) / float64(c.rows-1); per > c.perRow {
			t.Errorf("%s: %.2f allocations per row (%.0f for the query, %.0f for one row), want at most %.1f", c.q, per, n, base, c.perRow)
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
