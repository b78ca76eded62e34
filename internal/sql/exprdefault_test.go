package sql

import "testing"

// TestExprDefaultRewrite: DEFAULT (...) of CREATE/ALTER statements is wrapped for the parser,
// and nothing else is touched (strings, quoted names, comments, other statements, DEFAULT
// without parentheses).
func TestExprDefaultRewrite(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"CREATE TABLE t (a INT DEFAULT (3 + 5))", "CREATE TABLE t (a INT DEFAULT (__kiln_default_expr(3 + 5)))", true},
		{"create table t (a int default((3 * 5)), b text DEFAULT ('a)b'))", "create table t (a int default(__kiln_default_expr((3 * 5))), b text DEFAULT (__kiln_default_expr('a)b')))", true},
		{"ALTER TABLE t ALTER COLUMN a SET DEFAULT (a + 1)", "ALTER TABLE t ALTER COLUMN a SET DEFAULT (__kiln_default_expr(a + 1))", true},
		{"  CREATE TABLE t (a INT DEFAULT\n(uuid()))", "  CREATE TABLE t (a INT DEFAULT\n(__kiln_default_expr(uuid())))", true},
		{"CREATE TABLE t (a INT DEFAULT 5) DEFAULT CHARSET=utf8mb4", "", false},
		{"CREATE TABLE t (a VARCHAR(9) DEFAULT 'DEFAULT (1)', `default (x)` INT)", "", false},
		{"CREATE TABLE t (a INT /* DEFAULT (1) */, b INT) -- DEFAULT (2)", "", false},
		{"SELECT DEFAULT(a) FROM t", "", false},
		{"INSERT INTO t VALUES (DEFAULT (a))", "", false},
		{"CREATE TABLE t (a INT DEFAULT (1", "", false},
		{"CREATE TABLE t (a INT, b INT AS (a + 1))", "", false},
	} {
		got, ok := exprDefaultRewrite(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("exprDefaultRewrite(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
