package sql

import (
	"context"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

func nested(open string, n int, mid, close string) string {
	return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
}

// Statements nested deeper than the limits get 1436 or 1473 instead of overflowing the goroutine
// stack (which ends the process), and the session goes on answering.
func TestNestingLimits(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	for _, q := range []string{"CREATE DATABASE n", "USE n", "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)"} {
		if err := s.Query(context.Background(), q, &textWriter{}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		q    string
		code uint16 // 0: runs, and returns want
		want string
	}{
		{"abs-300000", "SELECT " + nested("ABS(", 300000, "1", ")"), sqlerr.ErrStackOverrun, ""},
		{"parens-300000", "SELECT " + nested("(", 300000, "1", ")"), sqlerr.ErrStackOverrun, ""},
		{"unclosed-parens", "SELECT " + strings.Repeat("(", 300000), sqlerr.ErrStackOverrun, ""},
		{"tilde-1000000", "SELECT " + strings.Repeat("~", 1000000) + "1", sqlerr.ErrStackOverrun, ""},
		{"not-100000", "SELECT " + strings.Repeat("NOT ", 100000) + "1", sqlerr.ErrStackOverrun, ""},
		{"minus-100000", "SELECT " + strings.Repeat("- ", 100000) + "1", sqlerr.ErrStackOverrun, ""},
		{"plus-chain-100000", "SELECT 1" + strings.Repeat("+1", 100000), sqlerr.ErrStackOverrun, ""},
		{"or-chain-100000", "SELECT id FROM t WHERE id = 0" + strings.Repeat(" OR id = 0", 100000), sqlerr.ErrStackOverrun, ""},
		{"case-nesting-5000", "SELECT " + nested("CASE WHEN id = 1 THEN ", 5000, "1", " END") + " FROM t", sqlerr.ErrStackOverrun, ""},
		{"in-where", "SELECT id FROM t WHERE id IN (" + nested("ABS(", 100000, "1", ")") + ")", sqlerr.ErrStackOverrun, ""},
		{"parens-in-string", "SELECT LENGTH('" + strings.Repeat("(", 300000) + "')", 0, "300000\n"},
		{"parens-in-comment", "SELECT 1 /* " + strings.Repeat("(", 300000) + " */", 0, "1\n"},
		{"abs-500", "SELECT " + nested("ABS(", 500, "-1", ")"), 0, "1\n"},
		{"plus-chain-800", "SELECT 0" + strings.Repeat("+1", 800), 0, "800\n"},
		{"subquery-62", "SELECT " + nested("(SELECT ", 62, "1", ")"), 0, "1\n"},
		{"subquery-64", "SELECT " + nested("(SELECT ", 64, "1", ")"), sqlerr.ErrTooHighNesting, ""},
		{"subquery-5000", "SELECT " + nested("(SELECT ", 5000, "1", ")"), sqlerr.ErrStackOverrun, ""},
		{"derived-64", "SELECT * FROM " + nested("(SELECT * FROM ", 64, "t", ") x"), sqlerr.ErrTooHighNesting, ""},
		{"union-64", nested("(SELECT 1 UNION ", 64, "SELECT 2", ")"), sqlerr.ErrTooHighNesting, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &textWriter{}
			err := s.Query(context.Background(), tc.q, w)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("got %v", err)
				}
				if w.b.String() != tc.want {
					t.Fatalf("got %q, want %q", w.b.String(), tc.want)
				}
			} else if !sqlerr.Is(err, tc.code) {
				t.Fatalf("got %v, want %d", err, tc.code)
			}
			// Prepared statements are bounded the same way.
			if tc.code != 0 {
				if _, err := s.Prepare(context.Background(), tc.q); !sqlerr.Is(err, tc.code) {
					t.Fatalf("prepare: got %v, want %d", err, tc.code)
				}
			}
			w = &textWriter{}
			if err := s.Query(context.Background(), "SELECT COUNT(*) FROM t", w); err != nil || w.b.String() != "1\n" {
				t.Fatalf("after: %v %q", err, w.b.String())
			}
		})
	}
}
