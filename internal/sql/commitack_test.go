package sql

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// ackLogPos is a LogPosition that is also an AppliedAcker: it records each wait and answers with
// err; while gate is set, a wait (after it is recorded) lasts until gate is closed.
type ackLogPos struct {
	*testLogPos
	mu    sync.Mutex
	waits []uint64
	err   error
	gate  chan struct{}
}

func (p *ackLogPos) WaitMajorityApplied(_ context.Context, index uint64) error {
	p.mu.Lock()
	p.waits = append(p.waits, index)
	gate, err := p.gate, p.err
	p.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return err
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

// DDL and account statements honour kiln_commit_ack = applied as a COMMIT does: each statement
// that committed waits at its own log index before its OK (the implicit commit of an open
// transaction at its own too), a statement that changed nothing does not wait, the wait's error is
// the statement's while the change stands, and the wait holds neither the metadata locks nor the
// DDL mutex (another session's DDL and account statements go ahead meanwhile).
func TestCommitAckDDL(t *testing.T) {
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
	if w := lp.waited(); len(w) != 0 {
		t.Fatalf("durable DDL waited for the applied level at %v", w)
	}
	query(t, s, "SET SESSION kiln_commit_ack = 'applied'")
	for _, q := range []string{
		"CREATE TABLE d.u (a INT PRIMARY KEY)",
		"ALTER TABLE d.u ADD COLUMN b INT",
		"CREATE INDEX ib ON d.u (b)",
		"TRUNCATE TABLE d.u",
		"DROP TABLE d.u",
		"CREATE DATABASE e",
		"DROP DATABASE e",
		"CREATE USER 'ack'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT ON d.* TO 'ack'@'%'",
		"REVOKE SELECT ON d.* FROM 'ack'@'%'",
		"ALTER USER 'ack'@'%' IDENTIFIED BY 'pw2'",
		"DROP USER 'ack'@'%'",
	} {
		before := len(lp.waited())
		query(t, s, q)
		w, pos := lp.waited(), s.LastCommitPos()
		if len(w) != before+1 || w[len(w)-1] != pos || pos == 0 {
			t.Errorf("%s: waited at %v, want one more wait at its commit's index %d", q, w[before:], pos)
		}
	}
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS d.t (a INT PRIMARY KEY)", "DROP TABLE IF EXISTS d.nope"} {
		before := len(lp.waited())
		query(t, s, q)
		if w := lp.waited(); len(w) != before {
			t.Errorf("%s (no change) waited at %v", q, w[before:])
		}
	}
	// An open transaction's implicit commit waits at its index, then the DDL at its own.
	query(t, s, "BEGIN")
	query(t, s, "INSERT INTO d.t VALUES (1)")
	before := len(lp.waited())
	query(t, s, "CREATE TABLE d.v (a INT PRIMARY KEY)")
	if w, pos := lp.waited(), s.LastCommitPos(); len(w) != before+2 || w[before] >= w[before+1] || w[before+1] != pos {
		t.Errorf("DDL after an open transaction waited at %v, want the implicit commit's index then %d", w[before:], pos)
	}

	// The wait's error is the statement's; the change stands.
	lp.mu.Lock()
	lp.err = sqlerr.New(sqlerr.ErrErrorDuringCommit, "not confirmed")
	lp.mu.Unlock()
	for _, q := range []string{"CREATE TABLE d.w (a INT PRIMARY KEY)", "CREATE USER 'ack2'@'%'"} {
		if err := s.Query(context.Background(), q, &textWriter{}); !sqlerr.Is(err, sqlerr.ErrErrorDuringCommit) {
			t.Errorf("%s, level unconfirmed: %v, want 1180", q, err)
		}
	}
	lp.mu.Lock()
	lp.err = nil
	lp.mu.Unlock()
	if got := query(t, s, "SELECT COUNT(*) FROM d.w"); got != "0" {
		t.Errorf("table after the unconfirmed CREATE: %q", got)
	}
	if got := query(t, s, "SELECT COUNT(*) FROM mysql.user WHERE user = 'ack2'"); got != "1" {
		t.Errorf("account after the unconfirmed CREATE USER: %q", got)
	}

	// A waiting DDL and a waiting account statement hold no lock another session's DDL needs.
	gate := make(chan struct{})
	lp.mu.Lock()
	lp.gate = gate
	lp.mu.Unlock()
	released := false
	release := func() {
		if !released {
			released = true
			lp.mu.Lock()
			lp.gate = nil
			lp.mu.Unlock()
			close(gate)
		}
	}
	defer release()
	before = len(lp.waited())
	done := make(chan error, 2)
	go func() { done <- s.Query(context.Background(), "ALTER TABLE d.t ADD COLUMN c INT", &textWriter{}) }()
	s4 := db.NewSession(4, "root", "localhost", "")
	go func() {
		done <- s4.Query(context.Background(), "SET SESSION kiln_commit_ack = 'applied'; CREATE USER 'ack3'@'%'", &textWriter{})
	}()
	for deadline := time.Now().Add(10 * time.Second); len(lp.waited()) < before+2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the two statements did not both reach the applied wait: %v", lp.waited()[before:])
		}
	}
	other := db.NewSession(5, "root", "localhost", "")
	finished := make(chan error, 1)
	go func() {
		finished <- other.Query(context.Background(), "ALTER TABLE d.t ADD COLUMN d INT", &textWriter{})
	}()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatalf("DDL of a session at durable while others wait for applied: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("DDL on the same table waited for another session's applied acknowledgement (a lock is held during the wait)")
	}
	release()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("waiting statement: %v", err)
		}
	}
	if got := query(t, s, "SELECT COUNT(*) FROM mysql.user WHERE user = 'ack3'"); got != "1" {
		t.Errorf("ack3: %q", got)
	}
}
