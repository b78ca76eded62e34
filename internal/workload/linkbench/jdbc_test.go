package linkbench

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// appendLiteral follows LinkStoreMysql.stringLiteral: a quoted literal only when every byte is
// escaped or a letter/digit (Java's getNumericValue >= 0), else a hex literal.
func TestAppendLiteral(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"", "''"},
		{"abcXYZ09", "'abcXYZ09'"},
		{"it's\\\n\t\r\b\x00", `'it\'s\\\n\t\r\b\0'`},
		{"a b", "x'612062'"},        // a space has no numeric value
		{"a-b", "x'612d62'"},        // nor punctuation
		{"\x80\xff", "x'80ff'"},     // nor C1 controls and most latin1 letters
		{"x\xb2\xb3\xb9", "'x²³¹'"}, // superscript digits do: sent as UTF-8
		{"\xbd", "x'bd'"},           // ½ is -2 in Java
	} {
		var sb strings.Builder
		appendLiteral(&sb, []byte(c.in))
		if got := sb.String(); got != c.want {
			t.Errorf("appendLiteral(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRandBytesRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[byte]bool{}
	for range 200 {
		for _, c := range randBytes(rng, 64, nodeByteLo, nodeByteHi) {
			if c < nodeByteLo || c > nodeByteHi {
				t.Fatalf("byte %#x outside [%d, %d]", c, nodeByteLo, nodeByteHi)
			}
			seen[c] = true
		}
	}
	if len(seen) != nodeByteHi-nodeByteLo+1 {
		t.Fatalf("%d distinct bytes, want every one of %d", len(seen), nodeByteHi-nodeByteLo+1)
	}
}
