package sql

import (
	"context"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// TestJSONTablePrepared: the document of JSON_TABLE is a parameter of the binary protocol; the
// prepared plan runs again with another document, and a lateral JSON_TABLE reads each row's.
func TestJSONTablePrepared(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	mustQ(t, s, "CREATE DATABASE j")
	mustQ(t, s, "USE j")
	mustQ(t, s, `CREATE TABLE t (id INT PRIMARY KEY, doc JSON)`)
	mustQ(t, s, `INSERT INTO t VALUES (1, '[1, 2]'), (2, '[3]')`)
	ps, err := s.Prepare(ctx, "SELECT jt.n, jt.v FROM JSON_TABLE(?, '$[*]' COLUMNS(n FOR ORDINALITY, v VARCHAR(10) PATH '$')) AS jt")
	if err != nil {
		t.Fatal(err)
	}
	if ps.Params != 1 {
		t.Fatalf("params %d, want 1", ps.Params)
	}
	for _, c := range []struct{ doc, want string }{
		{`["a", "b"]`, "1\ta\n2\tb\n"},
		{`["c"]`, "1\tc\n"},
	} {
		w := &textWriter{}
		if err := s.Execute(ctx, ps.ID, []types.Value{types.NewString(c.doc)}, w); err != nil {
			t.Fatal(err)
		}
		if w.b.String() != c.want {
			t.Errorf("doc %s: got %q, want %q", c.doc, w.b.String(), c.want)
		}
	}
	ps, err = s.Prepare(ctx, "SELECT t.id, jt.v FROM t, JSON_TABLE(t.doc, '$[*]' COLUMNS(v INT PATH '$')) jt WHERE t.id >= ? ORDER BY jt.v")
	if err != nil {
		t.Fatal(err)
	}
	w := &textWriter{}
	if err := s.Execute(ctx, ps.ID, []types.Value{types.NewInt(1)}, w); err != nil {
		t.Fatal(err)
	}
	if want := "1\t1\n1\t2\n2\t3\n"; w.b.String() != want {
		t.Errorf("lateral: got %q, want %q", w.b.String(), want)
	}
}

// TestJSONTableTextCache: a text statement with JSON_TABLE is never served from the text plan
// cache (its path literals cannot be parameters), and runs right each time with other literals.
func TestJSONTableTextCache(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	for _, c := range []struct{ q, want string }{
		{"SELECT v FROM JSON_TABLE('[1, 2]', '$[*]' COLUMNS(v INT PATH '$')) jt WHERE v > 1", "2\n"},
		{"SELECT v FROM JSON_TABLE('[5, 6]', '$[*]' COLUMNS(v INT PATH '$')) jt WHERE v > 5", "6\n"},
		{"SELECT v FROM JSON_TABLE('[{\"a\": 7}]', '$[*]' COLUMNS(v INT PATH '$.a')) jt WHERE v > 0", "7\n"},
	} {
		if got := mustQ(t, s, c.q); got != c.want {
			t.Errorf("%s: got %q, want %q", c.q, got, c.want)
		}
	}
	for k, p := range s.pcache.entries {
		if p != nil {
			t.Errorf("cached: %q", k.text)
		}
	}
}
