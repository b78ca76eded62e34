package types

import (
	"encoding/binary"
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

// latin1Len and latin1Enc hold, for every byte read as latin1, the length of its UTF-8 encoding (1-3)
// and the encoding itself in the low bytes of a little-endian word. Tables for all 256 bytes keep
// Latin1Decode free of branches on the data: on random payloads (LinkBench's) a branch per byte on
// "is it ASCII" is mispredicted about half the time.
var latin1Len, latin1Enc = func() (n [256]uint8, enc [256]uint32) {
	for c := range 256 {
		r := rune(c)
		if c >= 0x80 && c < 0xA0 {
			r = cp1252High[c-0x80]
		}
		var b [4]byte
		n[c] = uint8(utf8.EncodeRune(b[:], r))
		enc[c] = binary.LittleEndian.Uint32(b[:])
	}
	return n, enc
}()

// Latin1Decode turns latin1 bytes into UTF-8: one pass to size the result, one to fill it, and
// one allocation (a bulk load decodes every payload assigned to a latin1 column). The fill stores
// four bytes per character and moves on by the character's length, so the result has three spare
// bytes of capacity past its end.
func Latin1Decode(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		n += int(latin1Len[s[i]])
	}
	if n == len(s) {
		return s
	}
	out := make([]byte, n+3)
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		binary.LittleEndian.PutUint32(out[j:], latin1Enc[c])
		j += int(latin1Len[c])
	}
	return unsafe.String(unsafe.SliceData(out), n)
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
