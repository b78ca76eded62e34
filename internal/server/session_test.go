package server

import (
	"context"
	"testing"

	"github.com/kiln-db/kiln/internal/sql"
)

// A command's context: KILL QUERY (cancelQuery) cancels the running command only; the next command
// gets a live context; a new protocol context is followed; between commands KILL QUERY does
// nothing. Commands reuse one context, so begin and end allocate nothing.
func TestCommandContext(t *testing.T) {
	ss := &Session{sql: &sql.Session{}}
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()

	c1 := ss.begin(parent, "Query", "SELECT 1")
	ss.end()
	c2 := ss.begin(parent, "Query", "SELECT 2")
	if c2 != c1 || c2.Err() != nil {
		t.Fatalf("the second command's context: %v (same as the first: %v)", c2.Err(), c2 == c1)
	}
	ss.cancelQuery() // KILL QUERY during the command
	if c2.Err() == nil {
		t.Fatal("KILL QUERY did not cancel the running command")
	}
	ss.end()
	c3 := ss.begin(parent, "Query", "SELECT 3")
	if c3.Err() != nil {
		t.Fatalf("the command after a KILL QUERY starts cancelled: %v", c3.Err())
	}
	ss.end()
	ss.cancelQuery() // between commands: nothing to cancel
	c4 := ss.begin(parent, "Query", "SELECT 4")
	if c4 != c3 || c4.Err() != nil {
		t.Fatalf("KILL QUERY between commands reached the next one: %v", c4.Err())
	}
	ss.end()

	other, cancelOther := context.WithCancel(context.Background())
	c5 := ss.begin(other, "Query", "SELECT 5")
	cancelOther() // the connection's context ends (the client went away)
	if c5.Err() == nil {
		t.Fatal("the command's context does not follow a new protocol context")
	}
	ss.end()

	if n := testing.AllocsPerRun(100, func() {
		ss.begin(parent, "Execute", "")
		ss.end()
	}); n != 0 {
		t.Errorf("begin+end: %.0f allocations per command, want 0", n)
	}
}

// BenchmarkCommandContext is the session's bookkeeping around every command (the context KILL
// QUERY cancels, and the processlist entry).
func BenchmarkCommandContext(b *testing.B) {
	ss := &Session{sql: &sql.Session{}}
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	b.ReportAllocs()
	for b.Loop() {
		ss.begin(parent, "Execute", "")
		ss.end()
	}
}
