package sql

import (
	"context"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// Autocommit is remembered between statements; every way of changing it is seen at once: a session
// SET, SET GLOBAL for a session that has no value of its own, and a new session after a SET GLOBAL.
func TestAutocommitRemembered(t *testing.T) {
	db := testDB(t)
	a := db.NewSession(1, "root", "localhost", "")
	defer a.Close()
	b := db.NewSession(2, "root", "localhost", "")
	defer b.Close()
	ctx := context.Background()
	run := func(s *Session, q string) {
		t.Helper()
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(s *Session, want bool, what string) {
		t.Helper()
		for range 2 { // the second answer comes from what was remembered
			if got := s.Autocommit(); got != want {
				t.Fatalf("%s: autocommit %v, want %v", what, got, want)
			}
		}
	}
	check(a, true, "default")
	run(a, "SET autocommit = 0")
	check(a, false, "after SET autocommit = 0")
	check(b, true, "another session")
	run(a, "SET SESSION autocommit = 1")
	check(a, true, "after SET SESSION autocommit = 1")
	run(a, "SET @@autocommit = OFF")
	check(a, false, "after SET @@autocommit = OFF")
	run(b, "SET GLOBAL autocommit = 0")
	check(b, false, "after SET GLOBAL autocommit = 0, no session value")
	check(a, false, "a session value stays")
	run(a, "SET autocommit = 1")
	check(a, true, "session value over a global 0")
	c := db.NewSession(3, "root", "localhost", "")
	defer c.Close()
	check(c, false, "a new session after SET GLOBAL")
	run(b, "SET GLOBAL autocommit = 1")
	check(b, true, "after SET GLOBAL autocommit = 1")
	check(c, true, "the new session, after SET GLOBAL autocommit = 1")
	if n := testing.AllocsPerRun(100, func() { a.Autocommit() }); n != 0 {
		t.Errorf("Autocommit: %.0f allocations", n)
	}
}

// BenchmarkAutocommit is one read of the setting, as each statement's transaction and status flags do.
func BenchmarkAutocommit(b *testing.B) {
	db := testDB(b)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	for b.Loop() {
		if !s.Autocommit() {
			b.Fatal("autocommit off")
		}
	}
}

// The character sets every statement reads (client text, results) are remembered the same way:
// SET NAMES, SET character_set_results, the handshake's collation and SET GLOBAL are all seen.
func TestCharsetVarsRemembered(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	run := func(q string) {
		t.Helper()
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(client, results, what string) {
		t.Helper()
		for range 2 {
			if c, r := s.charsetVar("character_set_client"), s.charsetVar("character_set_results"); c != client || r != results {
				t.Fatalf("%s: client %q results %q, want %q %q", what, c, r, client, results)
			}
		}
	}
	check("utf8mb4", "utf8mb4", "default")
	run("SET NAMES latin1")
	check("latin1", "latin1", "SET NAMES latin1")
	run("SET character_set_results = 'UTF8MB4'")
	check("latin1", "utf8mb4", "SET character_set_results")
	run("SET NAMES utf8mb4")
	check("utf8mb4", "utf8mb4", "SET NAMES utf8mb4")
	s.SetHandshakeCollation(8) // latin1_swedish_ci
	check("latin1", "latin1", "the handshake's collation")
	o := db.NewSession(2, "root", "localhost", "")
	defer o.Close()
	if err := o.Query(ctx, "SET GLOBAL character_set_results = latin1", &textWriter{}); err != nil {
		t.Fatal(err)
	}
	if r := o.charsetVar("character_set_results"); r != "latin1" {
		t.Fatalf("after SET GLOBAL: %q", r)
	}
	if n := testing.AllocsPerRun(100, func() { s.charsetVar("character_set_results") }); n != 0 {
		t.Errorf("charsetVar: %.0f allocations", n)
	}
}

// wait_timeout (every command), lock_wait_timeout (every statement's locks) and session_track_gtids
// (every result writer) are remembered too, and follow session SETs and SET GLOBAL.
func TestTimeoutVarsRemembered(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	run := func(q string) {
		t.Helper()
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(wait, lock time.Duration, track, what string) {
		t.Helper()
		for range 2 {
			w, l := s.WaitTimeout(), s.metadataLockTimeout()
			tr := types.ToString(s.memoVal(&s.trackGTIDs, trackGTIDsVar))
			if w != wait || l != lock || tr != track {
				t.Fatalf("%s: wait_timeout %v lock_wait_timeout %v session_track_gtids %q, want %v %v %q", what, w, l, tr, wait, lock, track)
			}
		}
	}
	check(28800*time.Second, 31536000*time.Second, "OFF", "defaults")
	run("SET wait_timeout = 5")
	check(5*time.Second, 31536000*time.Second, "OFF", "SET wait_timeout")
	run("SET GLOBAL lock_wait_timeout = 7")
	check(5*time.Second, 7*time.Second, "OFF", "SET GLOBAL lock_wait_timeout")
	run("SET lock_wait_timeout = 9")
	check(5*time.Second, 9*time.Second, "OFF", "SET lock_wait_timeout")
	run("SET session_track_gtids = OWN_GTID")
	check(5*time.Second, 9*time.Second, "OWN_GTID", "SET session_track_gtids")
}
