package integration

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// Temporary tables through the wire: another connection never sees them, and closing the
// connection that made them frees what their rows held (Kiln_memory_accounted falls back).
func TestTempTablesGoWithTheConnection(t *testing.T) {
	k := startKiln(t, "")
	ctx := context.Background()
	other := k.db(t, "")
	mustExec(t, other, "CREATE DATABASE tt")
	accounted := func() int64 {
		t.Helper()
		var name, v string
		if err := other.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Kiln_memory_accounted'").Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	base := accounted()

	owner := k.db(t, "tt")
	owner.SetMaxOpenConns(1)
	owner.SetMaxIdleConns(1)
	mustExec(t, owner, "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY AUTO_INCREMENT, pad VARCHAR(1000))")
	for i := 0; i < 20; i++ {
		mustExec(t, owner, "INSERT INTO tmp (pad) VALUES (REPEAT(MD5(RAND()), 30)), (REPEAT(MD5(RAND()), 30)), (REPEAT(MD5(RAND()), 30)), (REPEAT(MD5(RAND()), 30)), (REPEAT(MD5(RAND()), 30))")
	}
	var n int
	if err := owner.QueryRowContext(ctx, "SELECT COUNT(*) FROM tmp").Scan(&n); err != nil || n != 100 {
		t.Fatalf("owner's rows: %d, %v", n, err)
	}
	if _, err := other.ExecContext(ctx, "SELECT * FROM tt.tmp"); errCode(err) != 1146 {
		t.Fatalf("another connection reading the temporary table: %v, want 1146", err)
	}
	held := accounted()
	if held <= base {
		t.Fatalf("temporary rows hold no accounted memory: %d, before %d", held, base)
	}
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for accounted() >= held {
		if time.Now().After(deadline) {
			t.Fatalf("memory still accounted 10 s after the connection closed: %d (with the table %d, before %d)", accounted(), held, base)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
