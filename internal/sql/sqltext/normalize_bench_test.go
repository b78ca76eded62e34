package sqltext

import "testing"

// BenchmarkNormalize is the plan cache's lookup key of a text statement: sysbench's point select
// and a short multi-row INSERT.
func BenchmarkNormalize(b *testing.B) {
	for _, bc := range []struct{ name, q string }{
		{"point-select", "SELECT c FROM sbtest1 WHERE id=50241"},
		{"insert-3-rows", "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := Normalize(bc.q, Mode{}); !ok {
					b.Fatal("not normalised")
				}
			}
		})
	}
}

// The key is the parameterised text, a NUL and the literals' kinds, in one allocation with the
// parameterised text as its prefix.
func TestNormalizeKeyLayout(t *testing.T) {
	n, ok := Normalize("SELECT c FROM sbtest1 WHERE id=50241 AND c='x'", Mode{})
	if !ok {
		t.Fatal("not normalised")
	}
	want := "SELECT c FROM sbtest1 WHERE id=? AND c=?"
	if n.Param != want || n.Key != want+"\x00"+string([]byte{byte(Int), byte(String)}) {
		t.Fatalf("param %q key %q", n.Param, n.Key)
	}
	if a := testing.AllocsPerRun(50, func() { Normalize("SELECT c FROM sbtest1 WHERE id=50241", Mode{}) }); a > 2 {
		t.Errorf("point select: %.0f allocations, want at most 2 (the key, the literals)", a)
	}
}
