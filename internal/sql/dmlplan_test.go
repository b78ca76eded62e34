package sql

import (
	"context"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// A prepared UPDATE or DELETE (and one of the text plan cache) keeps its plan between runs
// (dmlPlan). The kept plan must never outlive what it was planned on: a table dropped and created
// again with other columns, an index added (UPDATE must maintain it), another default database.
// Each step checks rows, and the index through a read that uses it.
func TestKeptDMLPlanFollowsDDL(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE d1", "CREATE DATABASE d2", "USE d1",
		"CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)", "INSERT INTO t VALUES (1, 10, 100), (2, 20, 200)",
		"CREATE TABLE d2.t (id INT PRIMARY KEY, a INT)", "INSERT INTO d2.t VALUES (1, 1000)"} {
		query(t, s, q)
	}
	upd, err := s.Prepare(ctx, "UPDATE t SET a=a+? WHERE id=?")
	if err != nil {
		t.Fatal(err)
	}
	del, err := s.Prepare(ctx, "DELETE FROM t WHERE id=?")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(id uint32, args ...int64) {
		t.Helper()
		vals := make([]types.Value, len(args))
		for i, a := range args {
			vals[i] = types.NewInt(a)
		}
		if err := s.Execute(ctx, id, vals, &textWriter{}); err != nil {
			t.Fatal(err)
		}
	}
	// Prepared and text, each run twice: the second run is the kept plan's.
	exec(upd.ID, 1, 1)
	exec(upd.ID, 1, 1)
	query(t, s, "UPDATE t SET a=a+5 WHERE id=2")
	query(t, s, "UPDATE t SET a=a+5 WHERE id=2")
	if got := query(t, s, "SELECT id, a, b FROM t ORDER BY id"); got != "1\t12\t100\n2\t30\t200" {
		t.Fatalf("after the updates: %q", got)
	}

	// The table again, its columns in other positions and with a secondary index on a.
	query(t, s, "DROP TABLE t")
	query(t, s, "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(10), a INT, KEY ka (a))")
	query(t, s, "INSERT INTO t VALUES (1, 'one', 10), (2, 'two', 20), (3, 'three', 30)")
	exec(upd.ID, 100, 1)
	query(t, s, "UPDATE t SET a=a+5 WHERE id=2")
	exec(del.ID, 3)
	if got := query(t, s, "SELECT id, x, a FROM t ORDER BY id"); got != "1\tone\t110\n2\ttwo\t25" {
		t.Fatalf("after the table was created again: %q", got)
	}
	if got := query(t, s, "SELECT id FROM t FORCE INDEX (ka) WHERE a = 110"); got != "1" {
		t.Fatalf("index ka after the prepared UPDATE: %q", got)
	}
	if got := query(t, s, "SELECT COUNT(*) FROM t FORCE INDEX (ka) WHERE a BETWEEN 0 AND 1000"); got != "2" {
		t.Fatalf("index ka entries: %q", got)
	}

	// An index added under the kept plans: UPDATE must write its entries.
	query(t, s, "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7")
	query(t, s, "CREATE INDEX kc ON t (c)")
	exec(upd.ID, 1, 2)
	query(t, s, "UPDATE t SET c=c+1 WHERE id=1")
	query(t, s, "UPDATE t SET c=c+1 WHERE id=1")
	if got := query(t, s, "SELECT id, a, c FROM t ORDER BY id"); got != "1\t110\t9\n2\t26\t7" {
		t.Fatalf("after ALTER TABLE: %q", got)
	}
	if got := query(t, s, "SELECT id FROM t FORCE INDEX (kc) WHERE c = 9"); got != "1" {
		t.Fatalf("index kc after the text UPDATE: %q", got)
	}

	// Another default database: the unqualified name is d2's table now.
	query(t, s, "USE d2")
	exec(upd.ID, 1, 1)
	exec(del.ID, 1)
	query(t, s, "USE d1")
	if got := query(t, s, "SELECT COUNT(*) FROM d2.t"); got != "0" {
		t.Fatalf("d2.t after the prepared DELETE under USE d2: %q", got)
	}
	if got := query(t, s, "SELECT id, a FROM t ORDER BY id"); got != "1\t110\n2\t26" {
		t.Fatalf("d1.t changed by statements run under USE d2: %q", got)
	}
	exec(del.ID, 2)
	if got := query(t, s, "SELECT id FROM t ORDER BY id"); got != "1" {
		t.Fatalf("after the prepared DELETE back in d1: %q", got)
	}
}

// TestReadWriteAllocations pins what a prepared UPDATE by primary key costs in allocations once
// planned: its plan is kept (dmlPlan), so a run does not parse or plan (100 and 85 allocations
// when it planned at every run), sql_mode's flags are read without splitting it, and an UPDATE of
// a column no index holds encodes no index entry (exec.PutRowKey; 24 for update c before).
func TestReadWriteAllocations(t *testing.T) {
	s, _ := pointSession(t)
	ctx := context.Background()
	prep := func(q string) uint32 {
		info, err := s.Prepare(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return info.ID
	}
	updK, updC := prep("UPDATE sbtest1 SET k=k+1 WHERE id=?"), prep("UPDATE sbtest1 SET c=? WHERE id=?")
	begin, rollback := prep("BEGIN"), prep("ROLLBACK")
	run := func(id uint32, args ...types.Value) {
		if err := s.Execute(ctx, id, args, discardWriter{}); err != nil {
			t.Fatal(err)
		}
	}
	run(begin)
	// c alternates between two values: an UPDATE that changes nothing returns before writing.
	cs := [2]types.Value{types.NewString("updated-a"), types.NewString("updated-b")}
	n := 0
	for _, tc := range []struct {
		name string
		max  float64
		run  func()
	}{
		{"update k", 30, func() { run(updK, types.NewInt(5)) }},
		{"update c", 22, func() { n++; run(updC, cs[n%2], types.NewInt(6)) }},
	} {
		n := testing.AllocsPerRun(50, tc.run)
		if raceEnabled {
			tc.max += 10
		}
		t.Logf("%s: %.0f allocations", tc.name, n)
		if n > tc.max {
			t.Errorf("%s: %.0f allocations, want at most %.0f", tc.name, n, tc.max)
		}
	}
	run(rollback)
}
