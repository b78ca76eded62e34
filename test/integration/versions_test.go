package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestVersionFlushFromScans drives the engine's flush for old versions (internal/engine/versions.go)
// through SQL on a real server: every row of a table updated a hundred times leaves a hundred
// versions of each in the memtable, range scans over it start a flush (Kiln_engine_version_flushes
// moves), and the rows read the same before and after it. Rounds repeat the updates in case the
// server's periodic engine flush (the log purge's) took the versions first.
func TestVersionFlushFromScans(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	ctx := context.Background()
	mustExec(t, db, "CREATE DATABASE vf")
	mustExec(t, db, "CREATE TABLE vf.t (id INT PRIMARY KEY, v INT NOT NULL, pad CHAR(20) NOT NULL DEFAULT 'x')")
	const rows = 500
	var ins strings.Builder
	ins.WriteString("INSERT INTO vf.t (id, v) VALUES ")
	for i := 1; i <= rows; i++ {
		if i > 1 {
			ins.WriteString(",")
		}
		fmt.Fprintf(&ins, "(%d, 0)", i)
	}
	mustExec(t, db, ins.String())
	flushes := func() int {
		t.Helper()
		var name, v string
		if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Kiln_engine_version_flushes'").Scan(&name, &v); err != nil {
			t.Fatalf("SHOW GLOBAL STATUS: %v", err)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("Kiln_engine_version_flushes = %q", v)
		}
		return n
	}
	if n := flushes(); n != 0 {
		t.Fatalf("%d version flushes before any update", n)
	}
	updates := 0
	for round := 1; round <= 3 && flushes() == 0; round++ {
		for i := 0; i < 100; i++ {
			mustExec(t, db, "UPDATE vf.t SET v = v + 1")
			updates++
		}
		// 499 extra steps per row scanned at most: 2^20 of them take about 25 scans.
		for scan := 0; scan < 200 && flushes() == 0; scan++ {
			var sum, n int
			if err := db.QueryRowContext(ctx, "SELECT SUM(v), COUNT(*) FROM vf.t WHERE id > 0").Scan(&sum, &n); err != nil {
				t.Fatal(err)
			}
			if n != rows || sum != rows*updates {
				t.Fatalf("scan %d: SUM(v) %d COUNT(*) %d, want %d and %d", scan, sum, n, rows*updates, rows)
			}
		}
	}
	if flushes() == 0 {
		t.Fatal("no version flush after three rounds of 100 updates of every row and 200 scans each")
	}
	var sum, n int
	if err := db.QueryRowContext(ctx, "SELECT SUM(v), COUNT(*) FROM vf.t").Scan(&sum, &n); err != nil {
		t.Fatal(err)
	}
	if n != rows || sum != rows*updates {
		t.Fatalf("after the flush: SUM(v) %d COUNT(*) %d, want %d and %d", sum, n, rows*updates, rows)
	}
}
