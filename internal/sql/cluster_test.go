package sql

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// fakeCluster is a replica's view: no writes, and a generation the test moves as the log would.
type fakeCluster struct {
	writable atomic.Bool
	gen      atomic.Uint64
	deposed  atomic.Bool
}

func (f *fakeCluster) Writable() (bool, string) { return f.writable.Load(), "10.0.0.1:3306" }
func (f *fakeCluster) Generation() Generation   { return Generation{CatalogWrites: f.gen.Load()} }
func (f *fakeCluster) ReadBarrier(context.Context) error {
	if f.deposed.Load() {
		return sqlerr.New(sqlerr.ErrLockDeadlock, "deposed")
	}
	return nil
}

// A replica refuses writes with 1290 naming the primary, reports read_only, and sees DDL that arrived
// through the log (another DB on the same engine stands for the leader) from the next statement on:
// in queries, prepared statements and COM_INIT_DB alike.
func TestReplicaCatalogAndWrites(t *testing.T) {
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	leader, err := Open(context.Background(), txm, Config{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCluster{}
	replica, err := Open(context.Background(), txm, Config{Version: "test", Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	ls := leader.NewSession(1, "root", "localhost", "")
	rs := replica.NewSession(2, "root", "localhost", "")
	run := func(s *Session, q string) (string, error) {
		w := &textWriter{}
		err := s.Query(context.Background(), q, w)
		return w.b.String(), err
	}
	if _, err := run(ls, "CREATE DATABASE d2"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ls, "CREATE TABLE d2.t (a INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ls, "INSERT INTO d2.t VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	if err := rs.UseDB("d2"); err == nil {
		t.Fatal("the replica knew d2 before the generation moved: the test tests nothing")
	}
	fc.gen.Add(1) // the DDL's records were applied
	if err := rs.UseDB("d2"); err != nil {
		t.Fatalf("COM_INIT_DB after DDL arrived: %v", err)
	}
	info, err := rs.Prepare(context.Background(), "SELECT a FROM t WHERE a = ?")
	if err != nil {
		t.Fatalf("prepare on the replica: %v", err)
	}
	_ = info
	out, err := run(rs, "SELECT a, @@read_only, @@super_read_only FROM t")
	if err != nil || !strings.Contains(out, "7\t1\t1") {
		t.Fatalf("replica read: %q %v", out, err)
	}
	for _, q := range []string{"INSERT INTO t VALUES (8)", "UPDATE t SET a = 9", "DELETE FROM t", "CREATE TABLE u (a INT)", "DROP TABLE t"} {
		_, err := run(rs, q)
		if !sqlerr.Is(err, sqlerr.ErrOptionPreventsStatement) || !strings.Contains(err.Error(), "10.0.0.1:3306") {
			t.Errorf("%s on a replica: %v, want 1290 naming the primary", q, err)
		}
	}
	fc.writable.Store(true)
	if out, err := run(rs, "SELECT @@read_only"); err != nil || !strings.Contains(out, "0") {
		t.Fatalf("@@read_only on the primary: %q %v", out, err)
	}
}

// A statement on a primary that turns out to be deposed fails (and ends its transaction) instead of
// answering from stale state.
func TestDeposedPrimaryRefusesReads(t *testing.T) {
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	fc := &fakeCluster{}
	fc.writable.Store(true)
	db, err := Open(context.Background(), txm, Config{Version: "test", Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession(1, "root", "localhost", "")
	if err := s.Query(context.Background(), "BEGIN", &textWriter{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(context.Background(), "SELECT 1", &textWriter{}); err != nil {
		t.Fatal(err)
	}
	fc.deposed.Store(true)
	err = s.Query(context.Background(), "SELECT 1", &textWriter{})
	if !sqlerr.Is(err, sqlerr.ErrLockDeadlock) {
		t.Fatalf("read on a deposed primary: %v, want 1213", err)
	}
	if s.txn != nil {
		t.Fatal("the transaction of the ended leadership is still open")
	}
}
