package sql

import (
	"context"
	"strings"
	"testing"
)

// TestEqualityPropagation: `a = b AND b = v` lets a's index be read with `a = v` (plan
// propagateConstants) for integer columns of inner-joined tables, and the rows are those of the
// written conditions; a LEFT JOIN's NULL-filled table, string columns and non-equalities take no
// derived condition.
func TestEqualityPropagation(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	run := func(q string) string {
		w := &textWriter{}
		if err := s.Query(ctx, q, w); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return w.b.String()
	}
	for _, q := range []string{"CREATE DATABASE ep", "USE ep",
		"CREATE TABLE w (w_id INT PRIMARY KEY, tax INT, name VARCHAR(10))",
		"CREATE TABLE c (c_w_id INT, c_d_id INT, c_id INT, last VARCHAR(10), PRIMARY KEY (c_w_id, c_d_id, c_id), KEY kl (last))",
		"INSERT INTO w VALUES (1, 10, 'a'), (2, 20, 'B'), (3, 30, NULL)",
		"INSERT INTO c VALUES (1, 1, 1, 'a'), (1, 1, 2, 'b'), (2, 1, 1, 'A'), (2, 2, 1, 'b'), (3, 1, 1, 'c')",
	} {
		run(q)
	}
	for _, c := range []struct{ q, access, want string }{
		{"SELECT c_id, tax FROM c, w WHERE w_id = 2 AND c_w_id = w_id AND c_d_id = 1 AND c_id = 1", "c\tpoint get on PRIMARY", "1\t20\n"},
		{"SELECT c_id, tax FROM c, w WHERE w_id = 2 AND w_id = c_w_id AND c_d_id = 2 ORDER BY c_id", "c\trange scan on PRIMARY", "1\t20\n"},
		{"SELECT c.c_id, w.tax FROM c JOIN w ON w.w_id = c.c_w_id WHERE c.c_w_id = 1 ORDER BY c.c_id", "w\tpoint get on PRIMARY", "1\t10\n2\t10\n"},
		{"SELECT w.w_id, c.c_id FROM w LEFT JOIN c ON c.c_w_id = w.w_id AND c.c_d_id = 2 WHERE w.w_id = 3", "", "3\tNULL\n"},
		{"SELECT w.w_id, c.c_id FROM w LEFT JOIN c ON c.c_w_id = w.w_id WHERE w.w_id = 1 ORDER BY c.c_id", "", "1\t1\n1\t2\n"},
		{"SELECT c.c_id FROM c, w WHERE w.name = c.last AND w.name = 'a' ORDER BY c.c_w_id, c.c_id", "", "1\n1\n"},
		{"SELECT COUNT(*) FROM c, w WHERE c.c_w_id = w.w_id AND w.w_id > 1", "", "3\n"},
		{"SELECT COUNT(*) FROM c, w WHERE c.c_w_id = w.w_id AND w.w_id = 1.5", "", "0\n"},
	} {
		if c.access != "" {
			out := run("EXPLAIN " + c.q)
			if !strings.Contains(out, c.access) {
				t.Errorf("EXPLAIN %s:\n%s\nwant %q", c.q, out, c.access)
			}
		}
		if got := run(c.q); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.q, got, c.want)
		}
	}
	run("PREPARE p FROM 'SELECT c_id, tax FROM c, w WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?'")
	run("SET @w = 2, @d = 2, @c = 1")
	if got := run("EXECUTE p USING @w, @d, @c"); got != "1\t20\n" {
		t.Errorf("prepared: %q", got)
	}
	run("SET @w = '1', @d = 1, @c = 2")
	if got := run("EXECUTE p USING @w, @d, @c"); got != "2\t10\n" {
		t.Errorf("prepared with a string: %q", got)
	}
}
