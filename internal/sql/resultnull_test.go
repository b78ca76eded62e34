package sql

import (
	"context"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// TestResultColumnNotNull checks the NOT_NULL flag of the result metadata as MySQL derives it
// (Item::maybe_null), which CREATE TABLE ... SELECT also uses for its columns.
func TestResultColumnNotNull(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	ctx := context.Background()
	for _, q := range []string{
		"CREATE DATABASE a",
		"USE a",
		"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL, n INT)",
		"CREATE VIEW vw AS SELECT id * 2 AS dbl, n FROM t",
		"SET sql_mode = 'STRICT_TRANS_TABLES'",
	} {
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tc := range []struct {
		query   string
		notNull []bool
	}{
		{"SELECT id + 1, id - n, id * 2, -id, id / 2, id DIV 2, id MOD 2 FROM t", []bool{true, false, true, true, false, false, false}},
		{"SELECT 1, NULL, 'a', UPPER(v), CONCAT(v, 'x'), CONCAT(v, n), LENGTH(v), SUBSTRING(v, 2) FROM t", []bool{true, false, true, true, true, false, true, false}},
		{"SELECT dbl, n, dbl + 1 FROM vw", []bool{true, false, true}},
		{"SELECT d.x + 1 FROM (SELECT id AS x FROM t) AS d", []bool{true}},
		{"SELECT t.id + 1, t2.id + 1, t2.id, t.v FROM t LEFT JOIN t AS t2 ON t2.id = t.id", []bool{true, false, false, true}},
		{"SELECT t.id, t2.id + 1 FROM t RIGHT JOIN t AS t2 ON t2.id = t.id", []bool{false, true}},
		{"SELECT v, COUNT(*), 7 FROM t GROUP BY v", []bool{true, true, true}},
		{"SELECT v, id + 1, COUNT(n), SUM(id), 7 FROM t", []bool{false, false, true, false, true}},
	} {
		w := &textWriter{}
		if err := s.Query(ctx, tc.query, w); err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if len(w.cols) != len(tc.notNull) {
			t.Fatalf("%s: %d columns, want %d", tc.query, len(w.cols), len(tc.notNull))
		}
		for i, c := range w.cols {
			if got := c.Flags&uint16(mysql.NotNullFlag) != 0; got != tc.notNull[i] {
				t.Errorf("%s: column %d (%s) NOT NULL = %v, want %v", tc.query, i, c.Name, got, tc.notNull[i])
			}
		}
	}
}
