package sql

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sql/gtid"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

const testClusterUUID = "6f1c1f0e-0000-4000-8000-00000000c1a5"

// testLogPos is a LogPosition: the real node's, or (node nil) a replica's that the test moves.
type testLogPos struct {
	node *repl.Node
	mu   sync.Mutex
	at   uint64
	ch   chan struct{}
}

func (p *testLogPos) ClusterUUID() gtid.UUID { u, _ := gtid.ParseUUID(testClusterUUID); return u }
func (p *testLogPos) ServerUUID() string     { return "11111111-2222-4333-8444-555555555555" }
func (p *testLogPos) Applied() uint64 {
	if p.node != nil {
		return p.node.Applied()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at
}

func (p *testLogPos) WaitApplied(ctx context.Context, idx uint64) error {
	if p.node != nil {
		return p.node.WaitApplied(ctx, idx)
	}
	for {
		p.mu.Lock()
		if p.at >= idx {
			p.mu.Unlock()
			return nil
		}
		if p.ch == nil {
			p.ch = make(chan struct{})
		}
		ch := p.ch
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *testLogPos) advance(to uint64) {
	p.mu.Lock()
	p.at = to
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
	p.mu.Unlock()
}

// okWriter records the session state of each OK packet besides the text.
type okWriter struct {
	textWriter
	states [][]byte
}

func (w *okWriter) OK(ok proto.OK, more bool) error {
	w.states = append(w.states, ok.SessionState)
	return w.textWriter.OK(ok, more)
}

func gtidTestDB(t *testing.T, lp *testLogPos) (*DB, *repl.Node) {
	t.Helper()
	st := repltest.Start(t, nil, NewApplier(), nil)
	if lp.node == nil && lp.at == 0 {
		lp.node = st.Node
	}
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	db, err := Open(context.Background(), txm, Config{Version: "test", LogPosition: lp})
	if err != nil {
		t.Fatal(err)
	}
	return db, st.Node
}

func query(t *testing.T, s *Session, q string) string {
	t.Helper()
	w := &textWriter{}
	if err := s.Query(context.Background(), q, w); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.TrimSpace(w.b.String())
}

// @@gtid_mode is ON, @@server_uuid the node's, @@gtid_executed <cluster uuid>:1-<applied> and it
// grows with each commit; session_track_gtids puts the commit's GTID (OWN_GTID) or the whole
// executed set (ALL_GTIDS) in the OK packet, and nothing when OFF or when nothing was committed.
func TestGTIDVariablesAndTracking(t *testing.T) {
	db, node := gtidTestDB(t, &testLogPos{})
	s := db.NewSession(1, "root", "localhost", "")
	query(t, s, "CREATE DATABASE d")
	query(t, s, "CREATE TABLE d.t (a INT PRIMARY KEY)")
	if got := query(t, s, "SELECT @@gtid_mode, @@global.gtid_mode, @@server_uuid"); got != "ON\tON\t11111111-2222-4333-8444-555555555555" {
		t.Errorf("gtid_mode, server_uuid: %q", got)
	}
	before := node.Applied()
	if got, want := query(t, s, "SELECT @@gtid_executed"), fmt.Sprintf("%s:1-%d", testClusterUUID, before); got != want {
		t.Errorf("gtid_executed = %q, want %q", got, want)
	}
	query(t, s, "INSERT INTO d.t VALUES (1)")
	if after := node.Applied(); after <= before || query(t, s, "SELECT @@global.gtid_executed") != fmt.Sprintf("%s:1-%d", testClusterUUID, after) {
		t.Errorf("gtid_executed did not grow to the applied index %d: %q", after, query(t, s, "SELECT @@gtid_executed"))
	}
	for _, q := range []string{"SET GLOBAL gtid_mode = OFF", "SET @@global.gtid_executed = ''", "SET GLOBAL server_uuid = 'x'"} {
		if err := s.Query(context.Background(), q, &textWriter{}); !sqlerr.Is(err, sqlerr.ErrIncorrectGlobalLocalVar) {
			t.Errorf("%s: %v, want 1238 (read-only)", q, err)
		}
	}

	entry := func(text string) string { return string(appendGTIDState(nil, text)) }
	for _, tc := range []struct {
		mode, stmt string
		want       func(idx uint64) string // the OK's session state, given the commit's index
	}{
		{"OFF", "INSERT INTO d.t VALUES (%d)", func(uint64) string { return "" }},
		{"OWN_GTID", "INSERT INTO d.t VALUES (%d)", func(i uint64) string { return entry(fmt.Sprintf("%s:%d", testClusterUUID, i)) }},
		{"1", "REPLACE INTO d.t VALUES (%d)", func(i uint64) string { return entry(fmt.Sprintf("%s:%d", testClusterUUID, i)) }},
		{"ALL_GTIDS", "INSERT INTO d.t VALUES (%d)", func(i uint64) string { return entry(fmt.Sprintf("%s:1-%d", testClusterUUID, i)) }},
		{"own_gtid", "UPDATE d.t SET a = a WHERE a = -%d", func(uint64) string { return "" }}, // nothing written: no GTID
	} {
		query(t, s, "SET session_track_gtids = '"+tc.mode+"'")
		w := &okWriter{}
		n := node.Applied() + 100
		if err := s.Query(context.Background(), fmt.Sprintf(tc.stmt, n), w); err != nil {
			t.Fatal(err)
		}
		if got, want := string(w.states[0]), tc.want(s.LastCommitPos()); got != want {
			t.Errorf("%s, %s: session state %q, want %q", tc.mode, tc.stmt, got, want)
		}
	}
	// An explicit transaction: the GTID comes with COMMIT's OK, not with the statements before.
	query(t, s, "SET session_track_gtids = OWN_GTID")
	w := &okWriter{}
	if err := s.Query(context.Background(), "BEGIN; INSERT INTO d.t VALUES (1000); COMMIT", w); err != nil {
		t.Fatal(err)
	}
	if len(w.states) != 3 || w.states[0] != nil || w.states[1] != nil || string(w.states[2]) != entry(fmt.Sprintf("%s:%d", testClusterUUID, s.LastCommitPos())) {
		t.Errorf("BEGIN; INSERT; COMMIT: states %q", w.states)
	}
	if err := s.Query(context.Background(), "SET session_track_gtids = 'SOME'", &textWriter{}); !sqlerr.Is(err, sqlerr.ErrWrongValueForVar) {
		t.Errorf("session_track_gtids = SOME: %v, want 1231", err)
	}
	// The encoding, byte by byte: type 3, length, encoding specification 0, length-encoded text.
	if got := appendGTIDState(nil, "u:7"); string(got) != "\x03\x05\x00\x03u:7" {
		t.Errorf("SESSION_TRACK_GTIDS entry %q", got)
	}
}

// WAIT_FOR_EXECUTED_GTID_SET: 0 once applied, 1 at its timeout, MySQL's errors for malformed sets,
// NULL and negative timeouts, 1210 for another UUID; KILL QUERY and max_execution_time end it.
func TestWaitForExecutedGTIDSet(t *testing.T) {
	lp := &testLogPos{at: 10} // a replica at index 10 that the test moves
	db, _ := gtidTestDB(t, lp)
	s := db.NewSession(1, "root", "localhost", "")
	u := testClusterUUID
	for _, tc := range []struct {
		q       string
		want    string
		errCode uint16
	}{
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('')", "0", 0},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":1-10')", "0", 0},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":3:7-8', 1)", "0", 0},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":11', 0.05)", "1", 0},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":1-10,\n" + u + ":12', 0.05)", "1", 0},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + "', 0.05)", "0", 0}, // a UUID without intervals: empty
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('garbage')", "", sqlerr.ErrMalformedGTIDSetSpecification},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":0')", "", sqlerr.ErrMalformedGTIDSetSpecification},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":5-3', 1)", "", sqlerr.ErrMalformedGTIDSetSpecification},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET(NULL)", "", sqlerr.ErrMalformedGTIDSetSpecification},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":1', -1)", "", sqlerr.ErrWrongArguments},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + u + ":1', NULL)", "", sqlerr.ErrWrongArguments},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('3e11fa47-71ca-11e1-9e33-c80aa9429562:1', 1)", "", sqlerr.ErrWrongArguments},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET()", "", sqlerr.ErrWrongParamCount},
		{"SELECT WAIT_FOR_EXECUTED_GTID_SET('', 1, 2)", "", sqlerr.ErrWrongParamCount},
	} {
		w := &textWriter{}
		err := s.Query(context.Background(), tc.q, w)
		if tc.errCode != 0 {
			if !sqlerr.Is(err, tc.errCode) {
				t.Errorf("%s: %v, want error %d", tc.q, err, tc.errCode)
			}
			continue
		}
		if err != nil || strings.TrimSpace(w.b.String()) != tc.want {
			t.Errorf("%s = %q, %v; want %s", tc.q, w.b.String(), err, tc.want)
		}
	}
	// Outside strict mode a negative timeout is NULL with a warning, as in MySQL.
	query(t, s, "SET sql_mode = ''")
	if got := query(t, s, "SELECT WAIT_FOR_EXECUTED_GTID_SET('"+u+":1', -1)"); !strings.HasPrefix(got, "NULL") {
		t.Errorf("negative timeout, non-strict: %q", got)
	}
	query(t, s, "SET sql_mode = DEFAULT")

	// A wait without a timeout returns 0 once the index is applied.
	done := make(chan string, 1)
	go func() {
		s2 := db.NewSession(2, "root", "localhost", "")
		w := &textWriter{}
		err := s2.Query(context.Background(), "SELECT WAIT_FOR_EXECUTED_GTID_SET('"+u+":1-12')", w)
		done <- fmt.Sprint(strings.TrimSpace(w.b.String()), err)
	}()
	lp.advance(11)
	select {
	case got := <-done:
		t.Fatalf("returned before index 12 was applied: %s", got)
	case <-time.After(50 * time.Millisecond):
	}
	lp.advance(12)
	select {
	case got := <-done:
		if got != "0<nil>" {
			t.Fatalf("after the index was applied: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end when the index was applied")
	}

	// KILL QUERY (the statement's context cancelled) and max_execution_time end a wait.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	if err := s.Query(ctx, "SELECT WAIT_FOR_EXECUTED_GTID_SET('"+u+":100')", &textWriter{}); !sqlerr.Is(err, sqlerr.ErrQueryInterrupted) {
		t.Errorf("killed wait: %v, want 1317", err)
	}
	query(t, s, "SET max_execution_time = 30")
	if err := s.Query(context.Background(), "SELECT WAIT_FOR_EXECUTED_GTID_SET('"+u+":100')", &textWriter{}); !sqlerr.Is(err, sqlerr.ErrQueryTimeout) {
		t.Errorf("wait past max_execution_time: %v, want 3024", err)
	}
}

// kiln_read_after_gtid makes each read wait for the set; SET and table-less SELECTs do not wait;
// the variable refuses malformed sets (1772) and other UUIDs (1231); kiln_read_after_gtid_timeout
// bounds the wait (3024).
func TestReadAfterGTID(t *testing.T) {
	lp := &testLogPos{at: 1 << 20} // a replica far ahead while the test creates its table
	db, _ := gtidTestDB(t, lp)
	s := db.NewSession(1, "root", "localhost", "")
	query(t, s, "CREATE DATABASE d")
	query(t, s, "CREATE TABLE d.t (a INT PRIMARY KEY)")
	query(t, s, "INSERT INTO d.t VALUES (1)")
	lp.advance(10)
	u := testClusterUUID
	for _, tc := range []struct {
		val  string
		code uint16
	}{{"nonsense", sqlerr.ErrMalformedGTIDSetSpecification}, {u + ":0", sqlerr.ErrMalformedGTIDSetSpecification}, {"3e11fa47-71ca-11e1-9e33-c80aa9429562:1", sqlerr.ErrWrongValueForVar}} {
		if err := s.Query(context.Background(), "SET kiln_read_after_gtid = '"+tc.val+"'", &textWriter{}); !sqlerr.Is(err, tc.code) {
			t.Errorf("SET kiln_read_after_gtid = %q: %v, want %d", tc.val, err, tc.code)
		}
	}
	if err := s.Query(context.Background(), "SET GLOBAL kiln_read_after_gtid = ''", &textWriter{}); !sqlerr.Is(err, sqlerr.ErrLocalVariable) {
		t.Errorf("SET GLOBAL kiln_read_after_gtid: %v, want 1228", err)
	}
	query(t, s, "SET kiln_read_after_gtid = '"+u+":1-12'")
	// Statements that read no table do not wait.
	if got := query(t, s, "SELECT @@kiln_read_after_gtid, 1"); got != u+":1-12\t1" {
		t.Errorf("table-less select: %q", got)
	}
	query(t, s, "SHOW WARNINGS")
	query(t, s, "SHOW VARIABLES LIKE 'kiln_read_after_gtid'")
	// SHOW of the catalog waits (DDL arrives through the log).
	tctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	if err := s.Query(tctx, "SHOW TABLES FROM d", &textWriter{}); !sqlerr.Is(err, sqlerr.ErrQueryInterrupted) {
		t.Errorf("SHOW TABLES before index 12 is applied: %v, want to wait (and be interrupted)", err)
	}
	cancel()
	done := make(chan string, 1)
	go func() {
		w := &textWriter{}
		err := s.Query(context.Background(), "SELECT a FROM d.t", w)
		done <- fmt.Sprint(strings.TrimSpace(w.b.String()), err)
	}()
	select {
	case got := <-done:
		t.Fatalf("the read did not wait for index 12: %s", got)
	case <-time.After(50 * time.Millisecond):
	}
	lp.advance(12)
	select {
	case got := <-done:
		if got != "1<nil>" {
			t.Fatalf("read after the wait: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not run once the index was applied")
	}
	// A prepared statement waits too; kiln_read_after_gtid_timeout ends the wait with 3024.
	query(t, s, "SET kiln_read_after_gtid = '"+u+":13', kiln_read_after_gtid_timeout = 1")
	info, err := s.Prepare(context.Background(), "SELECT a FROM d.t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.Execute(context.Background(), info.ID, []types.Value{types.NewInt(1)}, &textWriter{})
	if !sqlerr.Is(err, sqlerr.ErrQueryTimeout) || !strings.Contains(err.Error(), "kiln_read_after_gtid_timeout") {
		t.Errorf("prepared read past kiln_read_after_gtid_timeout: %v, want 3024", err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the wait ended after %v, before its 1 s timeout", d)
	}
	// Clearing the variable never waits (to '', NULL or DEFAULT), and reads run at once again.
	for _, clear := range []string{"NULL", "DEFAULT", "''"} {
		query(t, s, "SET kiln_read_after_gtid = '"+u+":13'")
		query(t, s, "SET kiln_read_after_gtid = "+clear)
		if got := query(t, s, "SELECT @@kiln_read_after_gtid = ''"); got != "1" {
			t.Errorf("after SET kiln_read_after_gtid = %s: @@kiln_read_after_gtid = '' is %s", clear, got)
		}
	}
	if got := query(t, s, "SELECT a FROM d.t"); got != "1" {
		t.Errorf("read after clearing: %q", got)
	}
}
