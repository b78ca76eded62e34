package integration

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
)

// TestMemoryBounds drives issue 13's reproductions 3-5 through a real server: REPLACE of ten
// million matches is NULL with 1301, GROUP_CONCAT at the maximum group_concat_max_len is cut at
// max_allowed_packet with 1260, a sort past kiln_mem_quota_query and one past --memory-limit fail
// with 3170, and the server answers throughout (its status counts the refusal).
func TestMemoryBounds(t *testing.T) {
	k := startKiln(t, "", "--memory-limit", "512M")
	db := k.db(t, "")
	db.SetMaxOpenConns(1) // one session: SET SESSION must apply to the queries after it
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	warning := func() (code int, msg string) {
		t.Helper()
		var level string
		if err := db.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil {
			t.Fatalf("SHOW WARNINGS: %v", err)
		}
		return code, msg
	}
	var n sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT LENGTH(REPLACE(REPEAT('a',10000000),'a',REPEAT('b',1000)))").Scan(&n); err != nil || n.Valid {
		t.Fatalf("REPLACE: %v %v, want NULL", n, err)
	}
	if code, msg := warning(); code != 1301 || !strings.HasPrefix(msg, "Result of replace() was larger than max_allowed_packet") {
		t.Fatalf("REPLACE warning %d %s", code, msg)
	}

	exec("CREATE DATABASE m")
	exec("CREATE TABLE m.t (id INT PRIMARY KEY, v VARCHAR(2000))")
	for i := 0; i < 1000; i += 100 {
		var ins strings.Builder
		ins.WriteString("INSERT INTO m.t VALUES ")
		for j := i; j < i+100; j++ {
			if j > i {
				ins.WriteString(",")
			}
			ins.WriteString("(" + strconv.Itoa(j) + ", REPEAT('x', 1000))")
		}
		exec(ins.String())
	}
	exec("SET SESSION group_concat_max_len = 18446744073709551615")
	// 2,000,000 rows of 1 KB through a join: cut at max_allowed_packet (64 MiB).
	if err := db.QueryRowContext(ctx, "SELECT LENGTH(GROUP_CONCAT(a.v)) FROM m.t a, m.t b, (SELECT 1 UNION ALL SELECT 2) c").Scan(&n); err != nil || n.Int64 != 64<<20 {
		t.Fatalf("GROUP_CONCAT: %v %v, want %d", n, err, 64<<20)
	}
	if code, msg := warning(); code != 1260 || !strings.HasSuffix(msg, "was cut by GROUP_CONCAT()") {
		t.Fatalf("GROUP_CONCAT warning %d %s", code, msg)
	}

	exec("SET SESSION kiln_mem_quota_query = 10000000")
	var v string
	err := db.QueryRowContext(ctx, "SELECT a.v FROM m.t a, m.t b ORDER BY a.v, b.id LIMIT 1").Scan(&v)
	if errCode(err) != 3170 || !strings.Contains(err.Error(), "'kiln_mem_quota_query'") {
		t.Fatalf("sort past the quota: %v, want 3170", err)
	}
	exec("SET SESSION kiln_mem_quota_query = 0")
	err = db.QueryRowContext(ctx, "SELECT a.v FROM m.t a, m.t b ORDER BY a.v, b.id LIMIT 1").Scan(&v)
	if errCode(err) != 3170 || !strings.Contains(err.Error(), "'kiln_memory_limit'") {
		t.Fatalf("sort past --memory-limit: %v, want 3170", err)
	}
	var name, refused string
	if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Kiln_memory_refused'").Scan(&name, &refused); err != nil || refused == "0" {
		t.Fatalf("Kiln_memory_refused = %q, %v", refused, err)
	}
	var count int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM m.t").Scan(&count); err != nil || count != 1000 {
		t.Fatalf("after the refusals: %d %v", count, err)
	}
}
