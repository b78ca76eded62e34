package types

import "testing"

func TestLatin1RoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	u := Latin1Decode(string(all))
	for _, r := range u {
		if !Latin1Has(r) {
			t.Fatalf("decoded %U is not in latin1's repertoire", r)
		}
	}
	if back := Latin1Encode(u); back != string(all) {
		t.Fatalf("bytes 0x00-0xFF do not round-trip: % x", back)
	}
	for _, c := range []struct{ in, want string }{
		{"\u20ac", "\x80"}, {"é", "\xe9"}, {"ascii", "ascii"}, {"日本", "??"}, {"\u0081", "\x81"},
	} {
		if got := Latin1Encode(c.in); got != c.want {
			t.Errorf("Latin1Encode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLatin1DecodeMatchesRunes: the table-driven decoder gives what decoding byte by byte through
// the runes gives, for strings ending in each kind of character (1, 2 and 3 UTF-8 bytes).
func TestLatin1DecodeMatchesRunes(t *testing.T) {
	ref := func(s string) string {
		var out []rune
		for i := 0; i < len(s); i++ {
			c := s[i]
			r := rune(c)
			if c >= 0x80 && c < 0xA0 {
				r = cp1252High[c-0x80]
			}
			out = append(out, r)
		}
		return string(out)
	}
	for _, s := range []string{"", "a", "\x80", "\xe9", "a\x80", "a\xe9", "\xe9\x80\xff\x00z", "abc\x9f", "\x81\x8d"} {
		if got, want := Latin1Decode(s), ref(s); got != want {
			t.Errorf("Latin1Decode(%q) = %q, want %q", s, got, want)
		}
	}
	for n := range 300 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte((i*131 + n*7) % 256)
		}
		if got, want := Latin1Decode(string(b)), ref(string(b)); got != want {
			t.Fatalf("Latin1Decode(% x) = %q, want %q", b, got, want)
		}
	}
}

// BenchmarkLatin1Decode is a LinkBench payload (random bytes, most of them above 0x7F, as its
// loader binds them) and an ASCII one of the same length, decoded into UTF-8.
func BenchmarkLatin1Decode(b *testing.B) {
	random := make([]byte, 256)
	x := uint32(1)
	for i := range random {
		x = x*1664525 + 1013904223
		random[i] = byte(x >> 24)
	}
	ascii := make([]byte, 256)
	for i := range ascii {
		ascii[i] = 'a' + byte(i%26)
	}
	for _, c := range []struct {
		name string
		s    string
	}{{"random", string(random)}, {"ascii", string(ascii)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				_ = Latin1Decode(c.s)
			}
		})
	}
}
