package sql

import (
	"context"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// endless is a recursive CTE that never ends on its own once cte_max_recursion_depth is lifted.
const endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r"

// A recursive CTE's iteration stops on KILL QUERY (the statement's context cancelled) and on
// max_execution_time, within cancelBound, and the session answers afterwards.
func TestRecursiveCTECancel(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	mustExec(t, s, "SET SESSION cte_max_recursion_depth = 4294967295")
	run := func(ctx context.Context) (error, time.Duration) {
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- s.Query(ctx, endless, &textWriter{}) }()
		select {
		case err := <-done:
			return err, time.Since(start)
		case <-time.After(10 * time.Second):
			t.Fatal("recursive CTE still running 10 s after it was started")
			return nil, 0
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err, took := run(ctx)
	if !sqlerr.Is(err, sqlerr.ErrQueryInterrupted) {
		t.Fatalf("cancelled: got %v, want 1317", err)
	}
	if took > 50*time.Millisecond+cancelBound {
		t.Fatalf("cancelled: took %v", took)
	}
	t.Logf("KILL QUERY: returned %v after the start (cancelled at 50ms)", took)
	mustExec(t, s, "SET SESSION max_execution_time = 50")
	err, took = run(context.Background())
	if !sqlerr.Is(err, sqlerr.ErrQueryTimeout) {
		t.Fatalf("max_execution_time: got %v, want 3024", err)
	}
	if took > 50*time.Millisecond+cancelBound {
		t.Fatalf("max_execution_time: took %v", took)
	}
	t.Logf("max_execution_time=50: returned after %v", took)
	mustExec(t, s, "SET SESSION max_execution_time = 0")
	if got := mustQ(t, s, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT SUM(n) FROM r"); got != "6\n" {
		t.Fatalf("after the cancelled statements: %q", got)
	}
}

// The rows a recursive CTE accumulates count against kiln_mem_quota_query (3170), and the server
// account is back to zero afterwards.
func TestRecursiveCTEMemoryQuota(t *testing.T) {
	acct := memory.NewAccount(0)
	db := testDBMem(t, acct)
	s := db.NewSession(1, "root", "localhost", "")
	mustExec(t, s, "SET SESSION cte_max_recursion_depth = 100000000")
	mustExec(t, s, "SET SESSION kiln_mem_quota_query = 200000")
	err := queryErr(s, "WITH RECURSIVE r(n, pad) AS (SELECT 1, REPEAT('x', 100) UNION ALL SELECT n + 1, pad FROM r WHERE n < 10000000) SELECT COUNT(*) FROM r")
	if e := sqlerr.As(err); err == nil || e.Code != sqlerr.ErrCapacityExceeded {
		t.Fatalf("got %v, want 3170", err)
	}
	if used := acct.Used(); used != 0 {
		t.Fatalf("server account holds %d bytes after the statement", used)
	}
}
