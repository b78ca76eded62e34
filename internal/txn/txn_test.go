package txn

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/kiln-db/kiln/internal/repl/repltest"
)

// newManager commits through the real commit path: repl over the binlog, on a memory filesystem.
func newManager(t *testing.T) (*Manager, *repltest.Stack) {
	t.Helper()
	s := repltest.Start(t, nil, NewApplier(nil), nil)
	return NewManager(s.Engine, NewLockManager(DefaultLockConfig()), s.Node), s
}

func scan(t *testing.T, tx *Txn, lo, hi string, reverse, latest bool) string {
	t.Helper()
	it, err := tx.NewIter([]byte(lo), []byte(hi), reverse, latest)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := ""
	for ; it.Valid(); it.Next() {
		out += fmt.Sprintf("%s=%s ", it.Key(), it.Value())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func commit(t *testing.T, m *Manager, kv ...string) {
	t.Helper()
	tx := m.Begin(RepeatableRead, false)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			tx.Delete([]byte(kv[i]))
		} else {
			tx.Set([]byte(kv[i]), []byte(kv[i+1]))
		}
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestOverlayIterators(t *testing.T) {
	m, _ := newManager(t)
	commit(t, m, "a", "1", "c", "3", "e", "5", "g", "7")
	tx := m.Begin(RepeatableRead, false)
	tx.Set([]byte("b"), []byte("2"))
	tx.Delete([]byte("c"))
	tx.Set([]byte("e"), []byte("50"))
	tx.Set([]byte("h"), []byte("8"))
	cases := []struct {
		lo, hi  string
		reverse bool
		want    string
	}{
		{"a", "z", false, "a=1 b=2 e=50 g=7 h=8 "},
		{"a", "z", true, "h=8 g=7 e=50 b=2 a=1 "},
		{"b", "f", false, "b=2 e=50 "},
		{"b", "f", true, "e=50 b=2 "},
		{"c", "d", false, ""},
	}
	for _, c := range cases {
		if got := scan(t, tx, c.lo, c.hi, c.reverse, false); got != c.want {
			t.Errorf("scan [%s,%s) reverse=%v = %q, want %q", c.lo, c.hi, c.reverse, got, c.want)
		}
	}
	if v, ok, _ := tx.Get([]byte("c")); ok {
		t.Errorf("deleted key visible: %s", v)
	}
	if v, _, _ := tx.Get([]byte("e")); string(v) != "50" {
		t.Errorf("own write not visible: %s", v)
	}
}

func TestRangeDeleteThenWrite(t *testing.T) {
	m, _ := newManager(t)
	commit(t, m, "t1", "a", "t2", "b", "t3", "c")
	tx := m.Begin(RepeatableRead, false)
	tx.Set([]byte("t2"), []byte("old"))
	tx.DeleteRange([]byte("t"), []byte("u"))
	tx.Set([]byte("t3"), []byte("new"))
	if got := scan(t, tx, "a", "z", false, false); got != "t3=new " {
		t.Fatalf("after range delete: %q", got)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	tx2 := m.Begin(RepeatableRead, false)
	if got := scan(t, tx2, "a", "z", false, false); got != "t3=new " {
		t.Fatalf("committed: %q", got)
	}
}

func TestSnapshotIsolationAndLatest(t *testing.T) {
	m, _ := newManager(t)
	commit(t, m, "k", "1")
	reader := m.Begin(RepeatableRead, false)
	if v, _, _ := reader.Get([]byte("k")); string(v) != "1" {
		t.Fatalf("first read %s", v)
	}
	commit(t, m, "k", "2", "n", "x")
	if v, _, _ := reader.Get([]byte("k")); string(v) != "1" {
		t.Fatalf("snapshot read after a commit %s, want 1", v)
	}
	if v, _, _ := reader.GetLatest([]byte("k")); string(v) != "2" {
		t.Fatalf("current read %s, want 2", v)
	}
	if got := scan(t, reader, "a", "z", false, true); got != "k=2 n=x " {
		t.Fatalf("latest scan %q", got)
	}
	rc := m.Begin(ReadCommitted, false)
	rc.Get([]byte("k"))
	commit(t, m, "k", "3")
	rc.NewStatement()
	if v, _, _ := rc.Get([]byte("k")); string(v) != "3" {
		t.Fatalf("read committed new statement sees %s, want 3", v)
	}
}

func TestSavepoints(t *testing.T) {
	m, _ := newManager(t)
	tx := m.Begin(RepeatableRead, false)
	tx.Set([]byte("a"), []byte("1"))
	sp := tx.Savepoint()
	tx.Set([]byte("a"), []byte("2"))
	tx.Set([]byte("b"), []byte("1"))
	tx.DeleteRange([]byte("a"), []byte("b"))
	tx.RollbackTo(sp)
	if got := scan(t, tx, "a", "z", false, false); got != "a=1 " {
		t.Fatalf("after rollback to savepoint: %q", got)
	}
	tx.RollbackTo(0)
	if tx.HasWrites() {
		t.Fatal("writes left after rolling back everything")
	}
}

// Keys handed over with SetOwned and DeleteOwned are the write set's own: a buffer reused for
// the next key (which the owning callers never do) would change the first, so each key here is a
// fresh slice, and they behave as Set and Delete do, savepoints and Grow included.
func TestOwnedWrites(t *testing.T) {
	m, _ := newManager(t)
	commit(t, m, "c", "3")
	tx := m.Begin(RepeatableRead, false)
	tx.Grow(4)
	tx.SetOwned([]byte("a"), []byte("1"))
	sp := tx.Savepoint()
	tx.SetOwned([]byte("a"), []byte("2"))
	tx.SetOwned([]byte("b"), []byte("1"))
	tx.DeleteOwned([]byte("c"))
	if got := scan(t, tx, "a", "z", false, false); got != "a=2 b=1 " {
		t.Fatalf("owned writes: %q", got)
	}
	tx.RollbackTo(sp)
	if got := scan(t, tx, "a", "z", false, false); got != "a=1 c=3 " {
		t.Fatalf("after rollback to savepoint: %q", got)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	tx = m.Begin(RepeatableRead, false)
	if got := scan(t, tx, "a", "z", false, false); got != "a=1 c=3 " {
		t.Fatalf("committed: %q", got)
	}
}

// Concurrent commits are grouped, and positions are unique and dense.
func TestGroupCommit(t *testing.T) {
	m, s := newManager(t)
	// One commit first: once it is applied, so are the node's start-up entries (leader's empty
	// entry, configuration), whose fsyncs also count as groups; the counts below start after them.
	warm := m.Begin(RepeatableRead, false)
	warm.Set([]byte("warm"), []byte("v"))
	if _, err := warm.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c0, g0 := s.Node.Stats.Commits.Load(), s.Node.Stats.Groups.Load()
	const n = 200
	var wg sync.WaitGroup
	pos := make([]uint64, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tx := m.Begin(RepeatableRead, false)
			tx.Set([]byte(fmt.Sprintf("k%03d", i)), []byte("v"))
			p, err := tx.Commit(context.Background())
			if err != nil {
				t.Error(err)
			}
			pos[i] = p
		}(i)
	}
	wg.Wait()
	seen := map[uint64]bool{}
	lo, hi := pos[0], pos[0]
	for _, p := range pos {
		if p < 1 || seen[p] {
			t.Fatalf("position %d zero or repeated", p)
		}
		seen[p] = true
		lo, hi = min(lo, p), max(hi, p)
	}
	if hi-lo != n-1 {
		t.Fatalf("positions %d..%d for %d commits: not dense", lo, hi, n)
	}
	commits, groups := s.Node.Stats.Commits.Load()-c0, s.Node.Stats.Groups.Load()-g0
	if commits != n || groups == 0 || groups > commits {
		t.Fatalf("commits %d groups %d", commits, groups)
	}
	applied, err := s.Engine.AppliedPosition()
	if err != nil || applied != hi {
		t.Fatalf("applied position %d (%v), want %d", applied, err, hi)
	}
	t.Logf("%d commits in %d groups", commits, groups)
}

type mapBatch struct{ ops []string }

func (m *mapBatch) Set(k, v []byte) error {
	m.ops = append(m.ops, "set "+string(k)+"="+string(v))
	return nil
}
func (m *mapBatch) Delete(k []byte) error { m.ops = append(m.ops, "del "+string(k)); return nil }
func (m *mapBatch) DeleteRange(lo, hi []byte) error {
	m.ops = append(m.ops, "delrange "+string(lo)+" "+string(hi))
	return nil
}

func TestRecordRoundTrip(t *testing.T) {
	m, _ := newManager(t)
	tx := m.Begin(RepeatableRead, false)
	tx.Set([]byte("b"), []byte("2"))
	tx.Set([]byte("t1"), []byte("gone"))
	tx.DeleteRange([]byte("t"), []byte("u"))
	tx.Set([]byte("t2"), []byte("kept"))
	tx.Delete([]byte("a"))
	var mb mapBatch
	a := NewApplier(nil)
	if err := a.ApplyRecord(tx.ws.Encode(), nil, &mb); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(mb.ops)
	want := "[delrange t u del a set b=2 set t2=kept]"
	if got != want {
		t.Fatalf("ops %s, want %s", got, want)
	}
	for _, bad := range [][]byte{nil, {9}, {1, 1, 5, 'a'}, {1, 7, 0, 0}} {
		if err := a.ApplyRecord(bad, nil, &mapBatch{}); err == nil {
			t.Errorf("record %v accepted", bad)
		}
	}
}

// Before-images: a transaction that asks for them carries, for the selected keys, the committed value
// before it (or "did not exist"); apply ignores them, and records without them carry none.
func TestBeforeImages(t *testing.T) {
	s := repltest.Start(t, nil, NewApplier(nil), nil)
	rc := &repltest.Recorder{Node: s.Node}
	m := NewManager(s.Engine, NewLockManager(DefaultLockConfig()), rc)
	ctx := context.Background()
	rows := func(k []byte) bool { return k[0] == 'r' }
	tx := m.Begin(RepeatableRead, false)
	tx.Set([]byte("r1"), []byte("one"))
	tx.Set([]byte("r2"), []byte("two"))
	tx.Set([]byte("i1"), []byte("idx"))
	tx.SetBeforeImages(rows)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx = m.Begin(RepeatableRead, false)
	tx.Set([]byte("r1"), []byte("uno"))
	tx.Delete([]byte("r2"))
	tx.Set([]byte("i1"), []byte("idx2"))
	tx.SetBeforeImages(rows)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx = m.Begin(RepeatableRead, false)
	tx.Set([]byte("r1"), []byte("ein"))
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	describe := func(rec []byte) string {
		cs, err := Changes(rec)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, c := range cs {
			if c.Kind != "set" && c.Kind != "delete" {
				continue
			}
			out += fmt.Sprintf("%s %s=%s", c.Kind, c.Key, c.Value)
			switch {
			case !c.HadBefore:
				out += " (no image); "
			case !c.Existed:
				out += " (was absent); "
			default:
				out += fmt.Sprintf(" (was %s); ", c.Before)
			}
		}
		return out
	}
	want := []string{
		"set i1=idx (no image); set r1=one (was absent); set r2=two (was absent); ",
		"set i1=idx2 (no image); set r1=uno (was one); delete r2= (was two); ",
		"set r1=ein (no image); ",
	}
	for i, w := range want {
		if got := describe(rc.Records()[i]); got != w {
			t.Errorf("record %d: %s\nwant %s", i, got, w)
		}
	}
	if v, ok, _ := s.Engine.Get([]byte("r1")); !ok || string(v) != "ein" {
		t.Fatalf("r1 = %q %v after apply", v, ok)
	}
	if _, ok, _ := s.Engine.Get([]byte("r2")); ok {
		t.Fatal("r2 still there")
	}
}

// TestWriteSetGetAllocs: looking a key up in the write set copies nothing (the duplicate-key
// checks of a bulk INSERT look up every key they write).
func TestWriteSetGetAllocs(t *testing.T) {
	var w WriteSet
	for i := range 100 {
		w.set(fmt.Sprintf("key%03d", i), []byte("v"), false)
	}
	hit, miss := []byte("key042"), []byte("key042x")
	if got := testing.AllocsPerRun(100, func() {
		if _, _, ok := w.get(hit); !ok {
			t.Fatal("key042 not found")
		}
		if _, _, ok := w.get(miss); ok {
			t.Fatal("key042x found")
		}
	}); got != 0 {
		t.Errorf("WriteSet.get makes %v allocations, want 0", got)
	}
}

// TestWriteSetEncodeAllocs: encoding a write set is one allocation, the record, whatever the
// number of keys (a bulk INSERT's commit encodes thousands).
func TestWriteSetEncodeAllocs(t *testing.T) {
	var w WriteSet
	for i := range 500 {
		w.set(fmt.Sprintf("a key longer than 32 bytes, as index keys are: %03d", i), []byte("v"), i%7 == 0)
	}
	if got := testing.AllocsPerRun(20, func() { w.Encode() }); got > 1 {
		t.Errorf("WriteSet.Encode makes %v allocations, want 1", got)
	}
}
