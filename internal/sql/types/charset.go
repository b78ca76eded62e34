package types

import (
	"unicode/utf8"
	"unsafe"
)

// MySQL's latin1 is Windows-1252 with the five bytes that code page leaves undefined mapped to the
// C1 controls of the same value, so every byte 0x00-0xFF round-trips through Kiln's UTF-8 strings.

// cp1252High maps bytes 0x80-0x9F to the characters MySQL's latin1 gives them.
var cp1252High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

var cp1252Rev = func() map[rune]byte {
	m := make(map[rune]byte, 32)
	for i, r := range cp1252High {
		m[r] = byte(0x80 + i)
	}
	return m
}()

// latin1UTF8 holds the UTF-8 encoding of bytes 0x80-0xFF read as latin1: n bytes of b (2 or 3).
var latin1UTF8 = func() (t [128]struct {
	n uint8
	b [3]byte
}) {
	for i := range t {
		c := 0x80 + i
		r := rune(c)
		if c < 0xA0 {
			r = cp1252High[c-0x80]
		}
		t[i].n = uint8(utf8.EncodeRune(t[i].b[:], r))
	}
	return t
}()

// Latin1Decode turns latin1 bytes into UTF-8: one pass to size the result, one to fill it, and
// one allocation (a bulk load decodes every payload assigned to a latin1 column, and LinkBench's
// random payloads are mostly bytes above 0x7F: the fill writes into the result directly).
func Latin1Decode(s string) string {
	extra := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			extra += int(latin1UTF8[c-0x80].n) - 1
		}
	}
	if extra == 0 {
		return s
	}
	out := make([]byte, len(s)+extra)
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 {
			out[j] = c
			j++
			continue
		}
		e := &latin1UTF8[c-0x80]
		out[j], out[j+1] = e.b[0], e.b[1]
		if e.n == 3 {
			out[j+2] = e.b[2]
		}
		j += int(e.n)
	}
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// Latin1Encode turns UTF-8 into latin1; characters latin1 lacks become '?', as MySQL converts.
func Latin1Encode(s string) string {
	if isASCII(s) {
		return s
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x80:
			out = append(out, byte(r))
		case r >= 0xA0 && r <= 0xFF:
			out = append(out, byte(r))
		default:
			if c, ok := cp1252Rev[r]; ok {
				out = append(out, c)
			} else {
				out = append(out, '?')
			}
		}
	}
	return string(out)
}

// Latin1Has reports whether r is one of the 256 characters a latin1 column can hold.
func Latin1Has(r rune) bool {
	if r <= 0x7F || (r >= 0xA0 && r <= 0xFF) {
		return true
	}
	_, ok := cp1252Rev[r]
	return ok
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
