package sql

import (
	"context"
	"strings"
	"testing"
)

// TestRowConstructorIn: `(a, b) IN ((..), ...)` and `(a, b) = (..)` read their rows through an
// index on those columns (a batch of point reads or prefix scans, exec openTuples), as MySQL's
// range access does, and give the rows the condition gives: NULLs, values that do not key exactly,
// duplicates, columns in another order than the index's, a join whose tuples read the earlier
// table, a descending order. FOR UPDATE locks the rows named, not the table (go-tpc's New-Order).
func TestRowConstructorIn(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	run := func(s *Session, q string) (string, error) {
		w := &textWriter{}
		err := s.Query(ctx, q, w)
		return w.b.String(), err
	}
	for _, q := range []string{"CREATE DATABASE ti", "USE ti",
		"CREATE TABLE st (w INT, i INT, q INT, name VARCHAR(10), PRIMARY KEY (w, i), KEY kn (name, q))",
		"INSERT INTO st VALUES (1, 1, 10, 'a'), (1, 2, 20, 'b'), (1, 3, 30, 'c'), (2, 1, 40, 'a'), (2, 2, 50, 'B'), (3, 7, 60, NULL)",
		"CREATE TABLE o (id INT PRIMARY KEY, w INT, i INT)",
		"INSERT INTO o VALUES (1, 1, 3), (2, 2, 2), (3, 9, 9), (4, 1, 1)",
	} {
		if _, err := run(s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct{ q, access, want string }{
		{"SELECT q FROM st WHERE (w, i) IN ((1, 2), (2, 1), (1, 2), (5, 5))", "batch point get on PRIMARY", "20\n40\n"},
		{"SELECT q FROM st WHERE (i, w) IN ((2, 1), (1, 2))", "batch point get on PRIMARY", "20\n40\n"},
		{"SELECT q FROM st WHERE (w, i) = (2, 2)", "batch point get on PRIMARY", "50\n"},
		{"SELECT q FROM st WHERE (w, i) IN ((1, NULL), (NULL, 1), (3, 7))", "batch point get on PRIMARY", "60\n"},
		{"SELECT q FROM st WHERE (w, i) IN ((1, 1.5), (1, 3.0), (2, '2'))", "batch point get on PRIMARY", "30\n50\n"},
		{"SELECT q FROM st WHERE (w, q) IN ((1, 20), (2, 40), (2, 41))", "batch point get on PRIMARY", "20\n40\n"},
		{"SELECT q FROM st WHERE (name, q) IN (('A', 10), ('b', 50), ('c', 30))", "batch point get on kn (covering)", "10\n50\n30\n"},
		// Each position compares in its own collation, with or without the index.
		{"SELECT q FROM st IGNORE INDEX (kn) WHERE (name, q) IN (('A', 10), ('b', 50), ('c', 30))", "full scan on PRIMARY", "10\n30\n50\n"},
		{"SELECT q FROM st WHERE (name, w) = ('A', 2)", "", "40\n"},
		{"SELECT q FROM st WHERE (w, i) IN ((1, 1), (1, 3), (2, 2)) ORDER BY w DESC, i DESC", "batch point get on PRIMARY (reverse)", "50\n30\n10\n"},
		{"SELECT o.id, st.q FROM o JOIN st ON (st.w, st.i) = (o.w, o.i) ORDER BY o.id", "", "1\t30\n2\t50\n4\t10\n"},
		{"SELECT o.id, st.q FROM o JOIN st ON (st.w, st.i) IN ((o.w, o.i), (o.w, 1)) ORDER BY o.id, st.q", "", "1\t10\n1\t30\n2\t40\n2\t50\n4\t10\n"},
		{"SELECT q FROM st WHERE (w, i) NOT IN ((1, 1), (1, 2), (1, 3), (2, 1))", "full scan on PRIMARY", "50\n60\n"},
	} {
		if c.access != "" {
			out, err := run(s, "EXPLAIN "+c.q)
			if err != nil {
				t.Fatalf("EXPLAIN %s: %v", c.q, err)
			}
			if !strings.Contains(out, "\t"+c.access+"\t") {
				t.Errorf("EXPLAIN %s:\n%s\nwant access %q", c.q, out, c.access)
			}
		}
		got, err := run(s, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.q, got, c.want)
		}
	}

	// Two transactions lock different rows by tuple: neither waits for the other.
	s2 := db.NewSession(2, "root", "localhost", "")
	defer s2.Close()
	for _, step := range []struct {
		s *Session
		q string
	}{
		{s, "BEGIN"},
		{s, "SELECT q FROM st WHERE (w, i) IN ((1, 1), (1, 2)) FOR UPDATE"},
		{s2, "USE ti"},
		{s2, "BEGIN"},
		{s2, "SELECT q FROM st WHERE (w, i) IN ((2, 1), (1, 3)) FOR UPDATE NOWAIT"},
		{s2, "UPDATE st SET q = q + 1 WHERE (w, i) = (2, 2)"},
		{s2, "COMMIT"},
		{s, "COMMIT"},
	} {
		if _, err := run(step.s, step.q); err != nil {
			t.Fatalf("%s: %v", step.q, err)
		}
	}
	if got, _ := run(s, "SELECT q FROM st WHERE (w, i) = (2, 2)"); got != "51\n" {
		t.Errorf("after the tuple UPDATE: %q", got)
	}
}
