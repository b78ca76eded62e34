package txn

import (
	"testing"
)

// A LatestReader answers as GetLatest: own writes first, then the latest committed state, also
// for commits made visible after its iterator was opened (it reopens when the engine's generation
// moved), and for keys outside its span.
func TestLatestReaderMatchesGetLatest(t *testing.T) {
	m, _ := newManager(t)
	commit(t, m, "k1", "a", "k3", "c", "z9", "out")
	tx := m.Begin(RepeatableRead, false)
	defer tx.Rollback()
	r := tx.NewLatestReader([]byte("k"), []byte("l"))
	defer r.Close()
	check := func(step, key, want string) {
		t.Helper()
		v, ok, err := r.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		gv, gok, err := tx.GetLatest([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		got := "<absent>"
		if ok {
			got = string(v)
		}
		gl := "<absent>"
		if gok {
			gl = string(gv)
		}
		if got != want || gl != want {
			t.Fatalf("%s: Get(%s) = %s, GetLatest = %s, want %s", step, key, got, gl, want)
		}
	}
	check("committed", "k1", "a")
	check("absent", "k2", "<absent>")
	check("outside the span", "z9", "out")
	// Committed by another transaction after the reader's iterator was opened.
	commit(t, m, "k2", "b", "k1", "")
	check("committed later", "k2", "b")
	check("deleted later", "k1", "<absent>")
	// Own writes win over the engine.
	tx.Set([]byte("k3"), []byte("mine"))
	tx.Delete([]byte("k2"))
	check("own write", "k3", "mine")
	check("own delete", "k2", "<absent>")
	tx.DeleteRange([]byte("k0"), []byte("k4"))
	check("own range delete", "k3", "<absent>")
}
