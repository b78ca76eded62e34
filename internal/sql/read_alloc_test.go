package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestRangeScanAllocations pins the per-row cost of a primary-key range read (sysbench
// oltp_read_only's simple range): the rows are decoded into chunks of rows and strings and returned
// without per-row copies, so 100 rows take a small fraction of an allocation each (it was five per
// row: the decoded row, its strings, the join's copy, the projection, and the sort's keys).
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
		{"SELECT c FROM t WHERE id BETWEEN 101 AND 200", 100, 0.5, "c-00000"},
		{"SELECT c FROM t WHERE id BETWEEN 101 AND 200 ORDER BY c", 100, 0.8, "c-00000"},
		{"SELECT DISTINCT c FROM t WHERE id BETWEEN 101 AND 200 ORDER BY c", 100, 2, "c-00000"},
	} {
		w := &textWriter{}
		if err := s.Query(ctx, c.q, w); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(w.b.String(), "\n"); got < c.rows || !strings.Contains(w.b.String(), c.wantAny) {
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
