package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// kiln_read_concern = linearizable: a statement that reads tables first gets a read index and waits
// until this node applied it, so a replica behind the cluster does not answer from its old state; a
// node without a quorum (no read index) times out with 3024 instead of answering; statements that
// read no table, and local reads, do not ask.
func TestReadConcern(t *testing.T) {
	lp := &testLogPos{at: 1 << 20, readIndex: 1}
	db, _ := gtidTestDB(t, lp)
	s := db.NewSession(1, "root", "localhost", "")
	query(t, s, "CREATE DATABASE d")
	query(t, s, "CREATE TABLE d.t (a INT PRIMARY KEY)")
	query(t, s, "INSERT INTO d.t VALUES (1)")
	lp.advance(10)
	for _, v := range []string{"'eventual'", "NULL", "1"} {
		if err := s.Query(context.Background(), "SET kiln_read_concern = "+v, &textWriter{}); !sqlerr.Is(err, sqlerr.ErrWrongValueForVar) {
			t.Errorf("SET kiln_read_concern = %s: %v, want 1231", v, err)
		}
	}
	if got := query(t, s, "SELECT @@kiln_read_concern"); got != "local" {
		t.Errorf("default read concern %q", got)
	}
	query(t, s, "SELECT a FROM d.t")
	if lp.reads != 0 {
		t.Fatalf("a local read asked for a read index (%d times)", lp.reads)
	}
	query(t, s, "SET SESSION kiln_read_concern = 'LINEARIZABLE'")
	if got := query(t, s, "SELECT @@kiln_read_concern, 1"); got != "linearizable\t1" || lp.reads != 0 {
		t.Fatalf("table-less select: %q, %d read index requests", got, lp.reads)
	}

	// The cluster's read index is 12, this replica applied 10: the read waits for 12.
	lp.mu.Lock()
	lp.readIndex = 12
	lp.mu.Unlock()
	done := make(chan string, 1)
	go func() {
		w := &textWriter{}
		err := s.Query(context.Background(), "SELECT a FROM d.t", w)
		done <- fmt.Sprint(strings.TrimSpace(w.b.String()), err)
	}()
	select {
	case got := <-done:
		t.Fatalf("linearizable read answered (%s) before the read index was applied", got)
	case <-time.After(50 * time.Millisecond):
	}
	lp.advance(12)
	select {
	case got := <-done:
		if got != "1<nil>" {
			t.Fatalf("linearizable read: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("linearizable read still waits after the read index was applied")
	}

	// No quorum: no read index, 3024 after kiln_read_after_gtid_timeout; prepared statements too.
	lp.mu.Lock()
	lp.readIndex = 0
	lp.mu.Unlock()
	query(t, s, "SET kiln_read_after_gtid_timeout = 1")
	start := time.Now()
	if err := s.Query(context.Background(), "SELECT a FROM d.t", &textWriter{}); !sqlerr.Is(err, sqlerr.ErrQueryTimeout) {
		t.Fatalf("linearizable read without a quorum: %v, want 3024", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("gave up after %v, before the 1 s timeout", d)
	}
	ps, err := s.Prepare(context.Background(), "SELECT a FROM d.t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Execute(context.Background(), ps.ID, []types.Value{types.NewInt(1)}, &textWriter{}); !sqlerr.Is(err, sqlerr.ErrQueryTimeout) {
		t.Fatalf("prepared linearizable read without a quorum: %v, want 3024", err)
	}
	query(t, s, "SET kiln_read_concern = local")
	if got := query(t, s, "SELECT a FROM d.t"); got != "1" {
		t.Fatalf("local read: %q", got)
	}
}
