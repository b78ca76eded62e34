package sql

import (
	"strings"
	"testing"
	"time"
)

// A multi-row INSERT reads its duplicate keys through one engine iterator (txn.LatestReader):
// a row committed by another transaction while the INSERT waits for that row's lock must still
// be found (1062), not overwritten, and INSERT IGNORE / ON DUPLICATE KEY UPDATE / REPLACE must
// see it too.
func TestMultiRowInsertSeesConcurrentCommit(t *testing.T) {
	for _, c := range []struct {
		name, stmt, err, after string
	}{
		{"insert", "INSERT INTO t VALUES (1, 'p'), (2, 'q'), (5, 'r'), (6, 's')", "Duplicate entry '5' for key 't.PRIMARY'", "5:b"},
		{"ignore", "INSERT IGNORE INTO t VALUES (1, 'p'), (2, 'q'), (5, 'r'), (6, 's')", "", "1:p 2:q 5:b 6:s"},
		{"on dup", "INSERT INTO t VALUES (1, 'p'), (2, 'q'), (5, 'r'), (6, 's') ON DUPLICATE KEY UPDATE v = CONCAT(v, VALUES(v))", "", "1:p 2:q 5:br 6:s"},
		{"replace", "REPLACE INTO t VALUES (1, 'p'), (2, 'q'), (5, 'r'), (6, 's')", "", "1:p 2:q 5:r 6:s"},
		{"unique secondary", "INSERT INTO t VALUES (1, 'p'), (2, 'q'), (7, 'b'), (8, 'y')", "Duplicate entry 'b' for key 't.uv'", "5:b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := testDB(t)
			a := db.NewSession(1, "root", "localhost", "")
			b := db.NewSession(2, "root", "localhost", "")
			mustQ(t, a, "CREATE DATABASE c")
			mustQ(t, a, "USE c")
			mustQ(t, b, "USE c")
			mustQ(t, a, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), UNIQUE KEY uv (v))")
			mustQ(t, b, "BEGIN")
			mustQ(t, b, "INSERT INTO t VALUES (5, 'b')")
			done := make(chan error, 1)
			go func() {
				_, err := runQ(a, c.stmt)
				done <- err
			}()
			// Let a's INSERT open its reader and block on a lock that b holds, then commit b.
			time.Sleep(300 * time.Millisecond)
			mustQ(t, b, "COMMIT")
			err := <-done
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("%s: %v, want %q", c.stmt, err, c.err)
			}
			out := mustQ(t, a, "SELECT GROUP_CONCAT(CONCAT(id, ':', v) ORDER BY id SEPARATOR ' ') FROM t")
			if out != c.after+"\n" {
				t.Fatalf("rows %q, want %q", out, c.after)
			}
		})
	}
}
