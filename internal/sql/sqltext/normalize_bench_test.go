package sqltext

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkNormalize is the plan cache's lookup key of a text statement: sysbench's point select,
// a short multi-row INSERT, and LinkBench's bulk load of nodes (1,024 rows, random payloads sent
// as hex literals).
func BenchmarkNormalize(b *testing.B) {
	for _, bc := range []struct{ name, q string }{
		{"point-select", "SELECT c FROM sbtest1 WHERE id=50241"},
		{"insert-3-rows", "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')"},
		{"insert-1024-hex", bulkNodeInsert(1024)},
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

// bulkNodeInsert is LinkBench's bulkAddNodes statement with n rows: type, version, time and a
// 50-220 byte random payload as x'..'.
func bulkNodeInsert(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	sb.WriteString("INSERT INTO linkdb0.nodetable (type, version, time, data) VALUES ")
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		payload := make([]byte, 50+r.IntN(171))
		for j := range payload {
			payload[j] = byte(r.Uint32())
		}
		fmt.Fprintf(&sb, "(2048, 1, %d, x'%x')", 1700000000+i, payload)
	}
	return sb.String()
}
