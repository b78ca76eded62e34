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
