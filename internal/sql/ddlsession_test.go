package sql

import "testing"

// TestDDLSessionHoldMetadataLocks: CREATE VIEW marks the databases its DDL holds exclusively as held
// for the planner, and releasing unmarks only the ones it marked: a shared lock the session held
// before stays held (its transaction releases it, not the DDL).
func TestDDLSessionHoldMetadataLocks(t *testing.T) {
	s := &Session{mdl: map[string]bool{"a": true}}
	release := s.ddlSess().HoldMetadataLocks([]string{"a", "b"})
	if !s.mdl["a"] || !s.mdl["b"] {
		t.Fatalf("while held: mdl = %v, want a and b", s.mdl)
	}
	release()
	if !s.mdl["a"] || s.mdl["b"] || len(s.mdl) != 1 {
		t.Fatalf("after release: mdl = %v, want only a", s.mdl)
	}

	var empty Session
	release = empty.ddlSess().HoldMetadataLocks([]string{"x"})
	if !empty.mdl["x"] {
		t.Fatalf("no lock set yet: mdl = %v, want x", empty.mdl)
	}
	release()
	if len(empty.mdl) != 0 {
		t.Fatalf("after release: mdl = %v, want empty", empty.mdl)
	}
}
