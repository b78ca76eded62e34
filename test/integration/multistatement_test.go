package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// A client that did not ask for CLIENT_MULTI_STATEMENTS gets MySQL's syntax error for a second
// statement, and nothing of the text runs (a stacked statement in injected text stays inert); a
// client that asked for it gets every result.
func TestMultiStatementsNeedTheCapability(t *testing.T) {
	k := startKiln(t, "")
	ctx := context.Background()
	multi := k.db(t, "") // multiStatements=true
	mustExec(t, multi, "CREATE DATABASE ms")
	mustExec(t, multi, "CREATE TABLE ms.t (id INT PRIMARY KEY)")
	mustExec(t, multi, "INSERT INTO ms.t VALUES (1); INSERT INTO ms.t VALUES (2)")

	single, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/ms?timeout=10s", k.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	for _, tc := range []struct{ q, near string }{
		{"INSERT INTO t VALUES (3); DROP TABLE t", "near 'DROP TABLE t' at line 1"},
		{"INSERT INTO t VALUES (3);\nDROP TABLE t;", "near 'DROP TABLE t' at line 2"},
		{"SELECT 1; SELECT 2", "near 'SELECT 2' at line 1"},
	} {
		_, err := single.ExecContext(ctx, tc.q)
		if errCode(err) != 1064 || !strings.Contains(err.Error(), tc.near) {
			t.Errorf("%q without CLIENT_MULTI_STATEMENTS: %v, want 1064 %s", tc.q, err, tc.near)
		}
	}
	// One statement with its trailing semicolon is not several.
	mustExec(t, single, "INSERT INTO t VALUES (4);")
	var n int
	if err := multi.QueryRowContext(ctx, "SELECT COUNT(*) FROM ms.t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("rows after the refused texts: %d, %v; want 3 (1, 2 and 4)", n, err)
	}
}
