package types

import (
	"bytes"
	"math/rand"
	"testing"
)

func TestCollationLookup(t *testing.T) {
	for _, c := range []struct {
		name string
		id   uint16
	}{{"binary", 63}, {"utf8mb4_bin", 46}, {"utf8mb4_general_ci", 45}, {"utf8mb4_unicode_ci", 224},
		{"utf8mb4_0900_ai_ci", 255}, {"utf8mb4_0900_bin", 309}, {"latin1_swedish_ci", 8}, {"latin1_bin", 47},
		{"utf8mb3_general_ci", 33}, {"ascii_general_ci", 11}} {
		byName, ok := LookupCollation(c.name)
		if !ok || byName.ID != c.id {
			t.Errorf("LookupCollation(%s) = %v %v", c.name, byName, ok)
		}
		byID, ok := CollationByID(c.id)
		if !ok || byID != byName {
			t.Errorf("CollationByID(%d)", c.id)
		}
	}
	if c, ok := LookupCollation("UTF8MB4_BIN"); !ok || c.ID != 46 {
		t.Error("case-insensitive lookup")
	}
	if c, ok := LookupCollation("utf8_general_ci"); !ok || c.ID != 33 {
		t.Error("utf8 alias")
	}
	for cs, want := range map[string]string{"utf8mb4": "utf8mb4_0900_ai_ci", "latin1": "latin1_swedish_ci", "binary": "binary",
		"utf8mb3": "utf8mb3_general_ci", "utf8": "utf8mb3_general_ci", "ascii": "ascii_general_ci"} {
		if c, ok := DefaultCollation(cs); !ok || c.Name != want {
			t.Errorf("DefaultCollation(%s) = %v", cs, c)
		}
	}
	if _, ok := LookupCollation("nope"); ok {
		t.Error("unknown collation found")
	}
}

func TestCollationCompare(t *testing.T) {
	coll := func(n string) *Collation { c, _ := LookupCollation(n); return c }
	cases := []struct {
		coll string
		a, b string
		want int
	}{
		{"binary", "a", "A", 1},
		{"binary", "a", "a ", -1},
		{"utf8mb4_bin", "a", "a   ", 0},
		{"utf8mb4_bin", "a\t", "a", -1},
		{"utf8mb4_bin", "a", "A", 1},
		{"utf8mb4_0900_bin", "a", "a ", -1},
		{"utf8mb4_0900_ai_ci", "abc", "ABC", 0},
		{"utf8mb4_0900_ai_ci", "résumé", "RESUME", 0},
		{"utf8mb4_0900_ai_ci", "a", "a ", -1}, // NO PAD
		{"utf8mb4_0900_ai_ci", "straße", "STRASSE", 0},
		{"utf8mb4_0900_ai_ci", "_", "a", -1},
		{"utf8mb4_0900_ai_ci", "9", "a", -1},
		{"utf8mb4_0900_ai_ci", "a", "b", -1},
		{"utf8mb4_0900_ai_ci", "Z", "a", 1},
		{"utf8mb4_0900_ai_ci", "a\x01b", "ab", 0}, // controls are ignorable
		{"utf8mb4_0900_ai_ci", "中", "z", 1},
		{"utf8mb4_general_ci", "abc", "ABC", 0},
		{"utf8mb4_general_ci", "é", "E", 0},
		{"utf8mb4_general_ci", "a", "a  ", 0}, // PAD SPACE
		{"utf8mb4_general_ci", "_", "a", 1},   // general_ci compares upper-cased code points
		{"utf8mb4_unicode_ci", "a", "A ", 0},
		{"utf8mb4_unicode_ci", "ß", "ss", 0},
		{"latin1_swedish_ci", "abc", "ABC", 0},
		{"latin1_swedish_ci", "Z", "Å", -1},
		{"latin1_swedish_ci", "Å", "Ä", -1},
		{"latin1_swedish_ci", "é", "e", 0},
		{"ascii_general_ci", "Abc", "aBC ", 0},
		{"utf8mb3_general_ci", "x", "X", 0},
	}
	for _, c := range cases {
		if got := coll(c.coll).Compare(c.a, c.b); got != c.want {
			t.Errorf("%s: Compare(%q, %q) = %d, want %d", c.coll, c.a, c.b, got, c.want)
		}
		if got := coll(c.coll).Compare(c.b, c.a); got != -c.want {
			t.Errorf("%s: Compare(%q, %q) = %d, want %d", c.coll, c.b, c.a, got, -c.want)
		}
		if coll(c.coll).Equal(c.a, c.b) != (c.want == 0) {
			t.Errorf("%s: Equal(%q, %q)", c.coll, c.a, c.b)
		}
	}
	var nilColl *Collation
	if nilColl.Compare("a", "b") != -1 || !nilColl.Equal("x", "x") {
		t.Error("nil collation is binary")
	}
}

// TestCollationKeyConsistency: Key order == Compare order for random strings, per collation.
func TestCollationKeyConsistency(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range collations {
		strs := make([]string, 300)
		keys := make([][]byte, len(strs))
		for i := range strs {
			strs[i] = randString(r, 8)
			keys[i] = c.Key([]byte{0xAB}, strs[i])[1:] // Key appends
		}
		for i := range strs {
			for j := range strs {
				want := c.Compare(strs[i], strs[j])
				if got := sign(bytes.Compare(keys[i], keys[j])); got != want {
					t.Fatalf("%s: %q vs %q: key %d, Compare %d\n%x\n%x", c.Name, strs[i], strs[j], got, want, keys[i], keys[j])
				}
			}
		}
	}
}

func BenchmarkCompareString0900(b *testing.B) {
	c := collUTF8MB4Default
	x, y := "The Quick Brown Fox jumps over", "the quick brown fox jumps OVER!"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Compare(x, y)
	}
}

func BenchmarkCompareStringBin(b *testing.B) {
	c, _ := LookupCollation("utf8mb4_bin")
	x, y := "The Quick Brown Fox jumps over", "The Quick Brown Fox jumps over "
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Compare(x, y)
	}
}

func BenchmarkCompareInt(b *testing.B) {
	x, y := NewInt(12345), NewInt(12346)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Compare(x, y, nil)
	}
}

func BenchmarkCompareValueString(b *testing.B) {
	x, y := NewString("alice@example.com"), NewString("ALICE@example.com")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Compare(x, y, collUTF8MB4Default)
	}
}

// TestCollationKeyASCIIFastPath pins Key's bytes on the inputs its ASCII fast path handles
// (ignorables, space runs under PAD SPACE, ASCII mixed with expansions and non-ASCII) against the
// character-by-character encoding it replaced.
func TestCollationKeyASCIIFastPath(t *testing.T) {
	inputs := []string{"", "a", "abc-123", "  a", "a  b", "a   ", "a\x01b", "a\tb", "ß1ß", "é é", "中a b",
		"68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441",
		"The Quick Brown Fox jumps over", "x\u00a0y", "a\U0001F600b c"}
	for _, c := range collations {
		if c.kind != ckWeighted {
			continue
		}
		for _, in := range inputs {
			want := slowWeightKey(c.w, nil, in, c.PadSpace)
			if got := c.Key(nil, in); !bytes.Equal(got, want) {
				t.Errorf("%s: Key(%q) = %x, want %x", c.Name, in, got, want)
			}
			if got := c.Key([]byte{1, 2}, in); !bytes.Equal(got[2:], want) || got[0] != 1 || got[1] != 2 {
				t.Errorf("%s: Key(prefix, %q) = %x", c.Name, in, got)
			}
		}
	}
}

// slowWeightKey is weighter.key without the ASCII fast path.
func slowWeightKey(w *weighter, buf []byte, s string, pad bool) []byte {
	w.init()
	it := witer{w: w, s: s}
	run := 0
	for {
		x, ok := it.next()
		if !ok {
			break
		}
		if pad && x == w.space {
			run++
			continue
		}
		if run > 0 {
			buf = appendWeight(buf, w.space)
			if x < w.space {
				buf = append(buf, runBelow)
				buf = appendRunCount(buf, run, false)
			} else {
				buf = append(buf, runAbove)
				buf = appendRunCount(buf, run, true)
			}
			run = 0
		}
		buf = appendWeight(buf, x)
	}
	if pad {
		buf = appendWeight(buf, w.space)
		return append(buf, runEnd)
	}
	return append(buf, 0, 0)
}

// BenchmarkByteOrderedSysbenchC is the check a sort makes of every value of a _ci sort column
// before it compares bytes (sysbench's c: 120 digits and dashes).
func BenchmarkByteOrderedSysbenchC(b *testing.B) {
	s := "68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441"
	for b.Loop() {
		if !collUTF8MB4Default.ByteOrdered(s) {
			b.Fatal("not byte-ordered")
		}
	}
}

// BenchmarkKeySysbenchC is the collation key of sysbench's c column (CHAR(120), digits and
// dashes), which oltp_read_only's ORDER BY c and DISTINCT c compute per row.
func BenchmarkKeySysbenchC(b *testing.B) {
	s := "68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		collUTF8MB4Default.Key(nil, s)
	}
}

// TestByteOrdered: for every collation, between two strings that ByteOrdered accepts, Compare is
// the strings' byte order and equality is byte equality; and Compare (with its early exit at the
// first differing byte-ordered characters) always agrees with the order of the collation keys.
// Random strings over all of ASCII plus a few multi-byte characters, and over the characters
// generated keys use. utf8mb4_0900_ai_ci must order digits, lower-case letters and '-' as
// their bytes: sysbench's ORDER BY c relies on it (its c values are digits and dashes).
func TestByteOrdered(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	ascii := make([]string, 0, 136)
	for c := 0; c < 128; c++ {
		ascii = append(ascii, string(rune(c)))
	}
	ascii = append(ascii, "é", "É", "ß", "中", "\u00a0", "\xff", "\xe2\x82", "ǅ")
	var keyish []string
	for _, c := range "0123456789-_abcdefghijklmnopqrstuvwxyz AZ" {
		keyish = append(keyish, string(c))
	}
	gen := func(alpha []string) string {
		n := r.Intn(7)
		var b []byte
		for i := 0; i < n; i++ {
			b = append(b, alpha[r.Intn(len(alpha))]...)
		}
		return string(b)
	}
	sign := func(x int) int { return min(max(x, -1), 1) }
	for _, c := range collations {
		for i := 0; i < 20000; i++ {
			alpha := ascii
			if i%2 == 1 {
				alpha = keyish
			}
			a, b := gen(alpha), gen(alpha)
			if i%3 == 0 && len(a) > 0 {
				b = a[:r.Intn(len(a))] + b // a shared prefix: the early exit's case
			}
			got := sign(c.Compare(a, b))
			if want := sign(bytes.Compare(c.Key(nil, a), c.Key(nil, b))); got != want {
				t.Fatalf("%s: Compare(%q, %q) = %d, keys say %d", c.Name, a, b, got, want)
			}
			if c.ByteOrdered(a) && c.ByteOrdered(b) && got != sign(bytes.Compare([]byte(a), []byte(b))) {
				t.Fatalf("%s: %q and %q are byte-ordered, but Compare = %d", c.Name, a, b, got)
			}
		}
	}
	for _, s := range []string{"", "68487932199-96439406143-93774651418", "abc-xyz-09", "a b"} {
		if !collUTF8MB4Default.ByteOrdered(s) {
			t.Errorf("utf8mb4_0900_ai_ci: ByteOrdered(%q) = false", s)
		}
	}
	for _, s := range []string{"aB", "é", "a\x00"} {
		if collUTF8MB4Default.ByteOrdered(s) {
			t.Errorf("utf8mb4_0900_ai_ci: ByteOrdered(%q) = true", s)
		}
	}
}

// BenchmarkSortSysbenchC compares what sorting 100 of sysbench's c values costs per row: a
// collation key (the keyed sort) against the ByteOrdered check (the bytewise sort).
func BenchmarkSortSysbenchC(b *testing.B) {
	s := "68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441"
	b.Run("key", func(b *testing.B) {
		buf := make([]byte, 0, 512)
		for i := 0; i < b.N; i++ {
			buf = collUTF8MB4Default.Key(buf[:0], s)
		}
	})
	b.Run("byteordered", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if !collUTF8MB4Default.ByteOrdered(s) {
				b.Fatal("not byte-ordered")
			}
		}
	})
}

// TestByteOrderedLong: ByteOrdered (eight bytes a step, then the tail) agrees with a check of each
// byte alone, for strings of 0-40 bytes with at most one byte outside the set, at any position.
func TestByteOrderedLong(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	const in, out = "0123456789-abcxyz", "A_~\x80é"
	for _, c := range collations {
		if c.kind == ckBinary || c.kind == ckBinPad {
			continue // no weighter: ByteOrdered does not look bytes up
		}
		c.w.init()
		for pad := 0; pad < 2; pad++ {
			ord := &c.w.byteOrd[pad]
			for i := 0; i < 5000; i++ {
				b := make([]byte, r.Intn(41))
				for j := range b {
					b[j] = in[r.Intn(len(in))]
				}
				if len(b) > 0 && i%2 == 0 {
					b[r.Intn(len(b))] = out[r.Intn(len(out))]
				}
				want := true
				for _, x := range b {
					want = want && ord[x] == 1
				}
				cc := *c
				cc.PadSpace = pad == 1
				if got := cc.ByteOrdered(string(b)); got != want {
					t.Fatalf("%s pad %d: ByteOrdered(%q) = %v, want %v", c.Name, pad, b, got, want)
				}
			}
		}
	}
}
