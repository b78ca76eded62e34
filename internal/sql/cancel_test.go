package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// cancelBound is how long a cancelled statement may take to return. The promise is 100 ms; the
// assertion is generous because CI machines are shared and noisy.
const cancelBound = 3 * time.Second

// cancelDB is a database with t (4,000 rows) and an empty u: a join of t with itself three times is
// 64 billion rows, a statement that never ends on its own.
func cancelDB(t *testing.T) *DB {
	t.Helper()
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	var b strings.Builder
	b.WriteString("INSERT INTO t VALUES ")
	for i := 1; i <= 4000; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d, %d)", i, i%10)
	}
	for _, q := range []string{"CREATE DATABASE c", "USE c", "CREATE TABLE t (id INT PRIMARY KEY, g INT)",
		"CREATE TABLE u (x INT)", "CREATE TABLE w (x INT)", "INSERT INTO w VALUES (1)", b.String(), "CREATE VIEW v AS SELECT a.id FROM t a, t b WHERE a.id + b.id < 0"} {
		if err := s.Query(context.Background(), q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q[:min(len(q), 60)], err)
		}
	}
	return db
}

// runaway lists statements that run for hours, one per kind of long loop in the executor. They
// filter or aggregate so that they hold little memory while they run.
var runaway = []struct {
	name, q  string
	isSelect bool
}{
	{"join", "SELECT COUNT(*) FROM t a, t b, t c", true},
	{"join-filter", "SELECT a.id FROM t a, t b, t c WHERE a.id + b.id + c.id < 0", true},
	{"left-join", "SELECT COUNT(*) FROM t a LEFT JOIN t b ON a.g = b.g LEFT JOIN t c ON b.g = c.g", true},
	{"group-by", "SELECT a.g, COUNT(*), SUM(b.id) FROM t a, t b, t c GROUP BY a.g", true},
	{"order-by", "SELECT a.id FROM t a, t b, t c WHERE a.id + b.id + c.id = 5 ORDER BY a.id DESC", true},
	{"distinct", "SELECT DISTINCT a.g FROM t a, t b, t c", true},
	{"union", "SELECT a.g FROM t a, t b, t c WHERE a.id = 0 UNION SELECT a.g FROM t a, t b, t c", true},
	{"derived", "SELECT COUNT(*) FROM (SELECT a.id FROM t a, t b WHERE a.id + b.id < 0) d, t c", true},
	{"view", "SELECT COUNT(*) FROM v, t c", true},
	{"correlated-subquery", "SELECT (SELECT COUNT(*) FROM t b, t c WHERE b.id > a.id) FROM t a", true},
	{"in-subquery", "SELECT COUNT(*) FROM t a, t b WHERE a.id + b.id IN (SELECT g + 100000 FROM t)", true},
	{"exists", "SELECT COUNT(*) FROM t a WHERE NOT EXISTS (SELECT 1 FROM t b, t c WHERE b.id + c.id = a.id - 10)", true},
	{"insert-select", "INSERT INTO u SELECT a.id FROM t a, t b, t c WHERE a.id + b.id + c.id < 0", false},
	{"update-subquery", "UPDATE t SET g = (SELECT COUNT(*) FROM t a, t b, t c) WHERE id = 1", false},
	{"delete-subquery", "DELETE FROM w WHERE x IN (SELECT a.id FROM t a, t b, t c WHERE a.id + b.id + c.id < 0)", false},
	{"benchmark", "SELECT BENCHMARK(100000000000, 1 + 1)", true},
}

// runCancelled runs q on a new session and cancels its context after delay (or sets
// max_execution_time first when timeoutMS > 0). It returns the error and how long the statement took
// after the cancellation.
func runCancelled(t *testing.T, db *DB, q string, delay time.Duration, timeoutMS int) (error, time.Duration) {
	t.Helper()
	s := db.NewSession(2, "root", "localhost", "c")
	defer s.Close()
	if timeoutMS > 0 {
		if err := s.Query(context.Background(), fmt.Sprintf("SET SESSION max_execution_time = %d", timeoutMS), &textWriter{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelledAt time.Time
	if timeoutMS == 0 {
		time.AfterFunc(delay, func() { cancelledAt = time.Now(); cancel() })
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- s.Query(ctx, q, &textWriter{}) }()
	select {
	case err := <-done:
		if timeoutMS > 0 {
			cancelledAt = start.Add(time.Duration(timeoutMS) * time.Millisecond)
		}
		return err, time.Since(cancelledAt)
	case <-time.After(delay + time.Duration(timeoutMS)*time.Millisecond + cancelBound):
		t.Fatalf("%s: still running %v after it was cancelled", q, cancelBound)
		return nil, 0
	}
}

// Every kind of long loop stops when the statement's context is cancelled (KILL QUERY, KILL, the
// client going away, shutdown all cancel it) and when max_execution_time passes.
func TestCancelRunawayStatements(t *testing.T) {
	db := cancelDB(t)
	var worst time.Duration
	for _, tc := range runaway {
		t.Run(tc.name, func(t *testing.T) {
			err, took := runCancelled(t, db, tc.q, 50*time.Millisecond, 0)
			if !sqlerr.Is(err, sqlerr.ErrQueryInterrupted) {
				t.Fatalf("cancelled: got %v, want 1317", err)
			}
			worst = max(worst, took)
			if tc.isSelect {
				err, took := runCancelled(t, db, tc.q, 0, 50)
				if !sqlerr.Is(err, sqlerr.ErrQueryTimeout) {
					t.Fatalf("max_execution_time: got %v, want 3024", err)
				}
				worst = max(worst, took)
			}
		})
	}
	t.Logf("slowest stop after cancellation: %v", worst)
	// The data is untouched and the database answers.
	s := db.NewSession(3, "root", "localhost", "c")
	defer s.Close()
	w := &textWriter{}
	if err := s.Query(context.Background(), "SELECT COUNT(*), SUM(g) FROM t; SELECT COUNT(*) FROM u", w); err != nil {
		t.Fatal(err)
	}
	if got := w.b.String(); got != "4000\t18000\n0\n" {
		t.Fatalf("after the cancelled statements: %q", got)
	}
}
