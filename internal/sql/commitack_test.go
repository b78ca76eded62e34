package sql

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// ackLogPos is a LogPosition that is also an AppliedAcker: it records each wait and answers with err.
type ackLogPos struct {
	*testLogPos
	mu    sync.Mutex
	waits []uint64
	err   error
}

func (p *ackLogPos) WaitMajorityApplied(_ context.Context, index uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waits = append(p.waits, index)
	return p.err
}

func (p *ackLogPos) waited() []uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.waits)
}

// kiln_commit_ack: durable (the default) acknowledges a commit without the applied wait; applied
// waits for the commit's own log index before the OK, for autocommit statements and COMMIT alike,
// never for a transaction that wrote nothing; the wait's error is the statement's error; other
// values are refused with 1231.
func TestCommitAck(t *testing.T) {
	st := repltest.Start(t, nil, NewApplier(), nil)
	lp := &ackLogPos{testLogPos: &testLogPos{node: st.Node}}
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	db, err := Open(context.Background(), txm, Config{Version: "test", LogPosition: lp})
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession(1, "root", "localhost", "")
	query(t, s, "CREATE DATABASE d")
	query(t, s, "CREATE TABLE d.t (a INT PRIMARY KEY)")
	if got := query(t, s, "SELECT @@kiln_commit_ack, @@global.kiln_commit_ack"); got != "durable\tdurable" {
		t.Fatalf("defaults: %q", got)
	}
	for _, v := range []string{"'received'", "NULL", "1", "'remote_apply'"} {
		if err := s.Query(context.Background(), "SET kiln_commit_ack = "+v, &textWriter{}); !sqlerr.Is(err, sqlerr.ErrWrongValueForVar) {
			t.Errorf("SET kiln_commit_ack = %s: %v, want 1231", v, err)
		}
	}
	query(t, s, "INSERT INTO d.t VALUES (1)")
	if w := lp.waited(); len(w) != 0 {
		t.Fatalf("durable commit waited for the applied level at %v", w)
	}

	query(t, s, "SET SESSION kiln_commit_ack = 'APPLIED'")
	query(t, s, "INSERT INTO d.t VALUES (2)")
	pos := s.LastCommitPos()
	if w := lp.waited(); !slices.Equal(w, []uint64{pos}) || pos == 0 {
		t.Fatalf("applied autocommit waited at %v, want [%d] (its commit's index)", w, pos)
	}
	query(t, s, "BEGIN")
	query(t, s, "INSERT INTO d.t VALUES (3)")
	if w := lp.waited(); len(w) != 1 {
		t.Fatalf("waited before COMMIT: %v", w)
	}
	query(t, s, "COMMIT")
	if w, p := lp.waited(), s.LastCommitPos(); len(w) != 2 || w[1] != p || p <= pos {
		t.Fatalf("COMMIT waited at %v, want its index %d last", w, p)
	}
	query(t, s, "SELECT a FROM d.t")
	query(t, s, "BEGIN")
	query(t, s, "SELECT a FROM d.t")
	query(t, s, "COMMIT")
	if w := lp.waited(); len(w) != 2 {
		t.Fatalf("a transaction that wrote nothing waited: %v", w)
	}

	// The wait's error is the statement's; the commit stands (the row is there).
	lp.mu.Lock()
	lp.err = sqlerr.New(sqlerr.ErrErrorDuringCommit, "not confirmed")
	lp.mu.Unlock()
	if err := s.Query(context.Background(), "INSERT INTO d.t VALUES (4)", &textWriter{}); !sqlerr.Is(err, sqlerr.ErrErrorDuringCommit) {
		t.Fatalf("unconfirmed applied level: %v, want 1180", err)
	}
	lp.mu.Lock()
	lp.err = nil
	lp.mu.Unlock()
	if got := query(t, s, "SELECT COUNT(*) FROM d.t"); got != "4" {
		t.Fatalf("rows after the unconfirmed commit: %s, want 4", got)
	}

	// A second session at the global default does not wait; SET GLOBAL changes new sessions.
	s2 := db.NewSession(2, "root", "localhost", "")
	query(t, s2, "INSERT INTO d.t VALUES (5)")
	if w := lp.waited(); len(w) != 3 {
		t.Fatalf("a session at the default waited: %v", w)
	}
	query(t, s2, "SET GLOBAL kiln_commit_ack = 'applied'")
	s3 := db.NewSession(3, "root", "localhost", "")
	query(t, s3, "INSERT INTO d.t VALUES (6)")
	if w := lp.waited(); len(w) != 4 {
		t.Fatalf("a session under SET GLOBAL applied did not wait: %v", w)
	}
}
