package sql

import (
	"context"
	"testing"
)

// TestCreateTableSelectOneCommit: CREATE TABLE ... SELECT commits the table and its rows as one log
// record (as one INSERT does), and a statement whose insert fails commits nothing: no table
// appears to anyone, not even for a moment, and none has to be dropped again.
func TestCreateTableSelectOneCommit(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	for _, q := range []string{
		"CREATE DATABASE a", "USE a", "CREATE TABLE t (id INT PRIMARY KEY, v INT)",
	} {
		mustExec(t, s, q)
	}
	before := s.lastPos
	mustExec(t, s, "INSERT INTO t VALUES (1, 10), (2, NULL)")
	perCommit := s.lastPos - before
	if perCommit == 0 {
		t.Fatalf("an INSERT did not advance the log position (%d)", before)
	}

	tests := []struct {
		name, q string
		commits uint64 // log records the statement writes
		wantErr bool
	}{
		{"rows", "CREATE TABLE c1 SELECT * FROM t", 1, false},
		{"no rows", "CREATE TABLE c2 SELECT * FROM t WHERE id > 5", 1, false},
		{"strict-mode failure", "CREATE TABLE c3 (v INT NOT NULL) SELECT v FROM t ORDER BY id", 0, true},
		{"duplicate key", "CREATE TABLE c4 (PRIMARY KEY (k)) SELECT 1 AS k FROM t", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.lastPos
			err := s.Query(context.Background(), tc.q, &textWriter{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: err = %v, want error %v", tc.q, err, tc.wantErr)
			}
			if got := s.lastPos - before; got != tc.commits*perCommit {
				t.Fatalf("%s: log advanced %d, want %d commit(s) of %d", tc.q, got, tc.commits, perCommit)
			}
		})
	}
	for _, name := range []string{"c3", "c4"} {
		if _, ok := db.Catalog().Table("a", name); ok {
			t.Errorf("table %s exists after its CREATE TABLE ... SELECT failed", name)
		}
	}
}
