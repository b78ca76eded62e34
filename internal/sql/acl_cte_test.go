package sql

import (
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// A name that refers to a CTE needs no table privilege, but a table of the same name read outside
// the CTE's scope (or by the CTE's own body) still needs SELECT: the privilege check scopes CTE
// names as the planner does.
func TestPrivilegeChecksCTE(t *testing.T) {
	db, _ := openACLTestDB(t)
	root := db.NewSession(1, "root", "127.0.0.1", "")
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.t (id INT PRIMARY KEY, n INT)",
		"CREATE TABLE shop.secret (id INT PRIMARY KEY)",
		"INSERT INTO shop.t VALUES (1, 1), (2, 2)",
		"INSERT INTO shop.secret VALUES (7)",
		"CREATE USER 'app'@'localhost'",
		"GRANT SELECT, UPDATE, DELETE ON shop.t TO 'app'@'localhost'",
	} {
		mustQ(t, root, q)
	}
	u := db.NewSession(2, "app", "127.0.0.1", "")
	if err := u.UseDB("shop"); err != nil {
		t.Fatal(err)
	}
	ok := []struct{ q, want string }{
		{"WITH secret AS (SELECT id FROM t) SELECT COUNT(*) FROM secret", "2\n"},
		{"WITH a AS (SELECT id FROM t), secret AS (SELECT id FROM a) SELECT COUNT(*) FROM secret", "2\n"},
		{"WITH RECURSIVE secret(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM secret WHERE n < 3) SELECT SUM(n) FROM secret", "6\n"},
		{"SELECT (WITH secret AS (SELECT MAX(id) m FROM t) SELECT m FROM secret)", "2\n"},
	}
	for _, c := range ok {
		if got := mustQ(t, u, c.q); got != c.want {
			t.Errorf("%s: got %q, want %q", c.q, got, c.want)
		}
	}
	mustQ(t, u, "WITH secret AS (SELECT 1 id) DELETE FROM t WHERE id IN (SELECT id FROM secret)")
	denied := []string{
		"WITH secret AS (SELECT id FROM secret) SELECT * FROM secret",                        // the body reads the table
		"SELECT * FROM secret WHERE EXISTS (WITH secret AS (SELECT 1) SELECT 1 FROM secret)", // out of scope
		"WITH a AS (SELECT * FROM secret), secret AS (SELECT 1) SELECT * FROM a",             // defined later
		"WITH x AS (SELECT 1) SELECT * FROM shop.secret",                                     // qualified: a table
	}
	for _, q := range denied {
		_, err := runQ(u, q)
		if !sqlerr.Is(err, sqlerr.ErrTableAccessDenied) || !strings.Contains(err.Error(), "'secret'") {
			t.Errorf("%s: got %v, want SELECT denied on secret", q, err)
		}
	}
}
