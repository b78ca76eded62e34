package types

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

type collKind uint8

const (
	ckBinary   collKind = iota // bytewise, NO PAD (binary, utf8mb4_0900_bin)
	ckBinPad                   // bytewise, PAD SPACE (the _bin collations of PAD SPACE charsets)
	ckWeighted                 // per-character weights (the _ci collations)
)

// Collation compares character strings. Strings are UTF-8 whatever the charset; UTF-8 byte order
// is code point order, which is what MySQL's _bin collations compare.
type Collation struct {
	Name     string
	ID       uint16
	Charset  string
	PadSpace bool // trailing spaces are insignificant (MySQL PAD SPACE)
	Default  bool // the charset's default collation
	kind     collKind
	w        *weighter
}

var (
	collBinary = &Collation{Name: "binary", ID: 63, Charset: "binary", Default: true, kind: ckBinary}

	wGeneral = &weighter{build: generalWeights}
	wUCA     = &weighter{build: ducetWeights}
	wSwedish = &weighter{build: swedishWeights}
	wASCII   = &weighter{build: asciiCIWeights}

	collUTF8MB4Default = &Collation{Name: "utf8mb4_0900_ai_ci", ID: 255, Charset: "utf8mb4", Default: true, kind: ckWeighted, w: wUCA}

	collations = []*Collation{
		collBinary,
		collUTF8MB4Default,
		{Name: "utf8mb4_bin", ID: 46, Charset: "utf8mb4", PadSpace: true, kind: ckBinPad},
		{Name: "utf8mb4_general_ci", ID: 45, Charset: "utf8mb4", PadSpace: true, kind: ckWeighted, w: wGeneral},
		{Name: "utf8mb4_unicode_ci", ID: 224, Charset: "utf8mb4", PadSpace: true, kind: ckWeighted, w: wUCA},
		{Name: "utf8mb4_0900_bin", ID: 309, Charset: "utf8mb4", kind: ckBinary},
		{Name: "latin1_swedish_ci", ID: 8, Charset: "latin1", PadSpace: true, Default: true, kind: ckWeighted, w: wSwedish},
		{Name: "latin1_bin", ID: 47, Charset: "latin1", PadSpace: true, kind: ckBinPad},
		{Name: "utf8mb3_general_ci", ID: 33, Charset: "utf8mb3", PadSpace: true, Default: true, kind: ckWeighted, w: wGeneral},
		{Name: "utf8mb3_bin", ID: 83, Charset: "utf8mb3", PadSpace: true, kind: ckBinPad},
		{Name: "ascii_general_ci", ID: 11, Charset: "ascii", PadSpace: true, Default: true, kind: ckWeighted, w: wASCII},
		{Name: "ascii_bin", ID: 65, Charset: "ascii", PadSpace: true, kind: ckBinPad},
	}
	// Built in variable initialization (not init) so that other package-level variables can look
	// collations up.
	collByName, collByID, collDef = indexCollations()
)

func indexCollations() (byName map[string]*Collation, byID map[uint16]*Collation, def map[string]*Collation) {
	byName, byID, def = map[string]*Collation{}, map[uint16]*Collation{}, map[string]*Collation{}
	for _, c := range collations {
		byName[c.Name] = c
		byID[c.ID] = c
		if c.Default {
			def[c.Charset] = c
		}
	}
	// MySQL 8 still accepts the utf8 alias of utf8mb3.
	byName["utf8_general_ci"] = byName["utf8mb3_general_ci"]
	byName["utf8_bin"] = byName["utf8mb3_bin"]
	def["utf8"] = def["utf8mb3"]
	return
}

// LookupCollation finds a collation by name (case-insensitive).
func LookupCollation(name string) (*Collation, bool) {
	c, ok := collByName[name]
	if !ok {
		c, ok = collByName[strings.ToLower(name)]
	}
	return c, ok
}

// CollationByID finds a collation by its MySQL id.
func CollationByID(id uint16) (*Collation, bool) {
	c, ok := collByID[id]
	return c, ok
}

// DefaultCollation returns a charset's default collation (MySQL 8's: utf8mb4_0900_ai_ci for
// utf8mb4).
func DefaultCollation(charset string) (*Collation, bool) {
	c, ok := collDef[charset]
	if !ok {
		c, ok = collDef[strings.ToLower(charset)]
	}
	return c, ok
}

// IsBinary reports whether c compares raw bytes with no padding (binary, utf8mb4_0900_bin).
func (c *Collation) IsBinary() bool { return c == nil || c.kind == ckBinary }

// Reversible reports whether Key's output can be decoded back into the string it came from
// (modulo trailing spaces for PAD SPACE collations).
func (c *Collation) Reversible() bool { return c == nil || c.kind != ckWeighted }

// Equal reports whether a and b are equal under c.
func (c *Collation) Equal(a, b string) bool {
	if c == nil || c.kind == ckBinary {
		return a == b
	}
	return c.Compare(a, b) == 0
}

// Compare compares a and b under c (nil: binary) and returns -1, 0 or 1.
func (c *Collation) Compare(a, b string) int {
	if c == nil || c.kind == ckBinary {
		return strings.Compare(a, b)
	}
	if c.kind == ckBinPad {
		return comparePadBytes(a, b)
	}
	// Identical byte prefixes produce identical weights: skip them, backing up to a rune start.
	n := min(len(a), len(b))
	k := 0
	for k < n && a[k] == b[k] {
		k++
	}
	if k == len(a) && k == len(b) {
		return 0
	}
	if k < n {
		// Two different characters that the collation orders as their bytes decide (both are
		// ASCII, so the equal prefix ends on a character boundary in both strings).
		c.w.init()
		ord := &c.w.byteOrd[0]
		if c.PadSpace {
			ord = &c.w.byteOrd[1]
		}
		if ord[a[k]]&ord[b[k]] != 0 {
			if a[k] < b[k] {
				return -1
			}
			return 1
		}
	}
	for k > 0 && ((k < len(a) && isCont(a[k])) || (k < len(b) && isCont(b[k]))) {
		k--
	}
	return c.w.compare(a[k:], b[k:], c.PadSpace)
}

func isCont(c byte) bool { return c&0xC0 == 0x80 }

// ByteOrdered reports whether s is made only of characters that c orders as their bytes: between
// two strings for which it holds, Compare is strings.Compare and Equal is ==, so a sort or a
// DISTINCT over such strings needs no collation keys. Always true for a NO PAD binary collation;
// for a PAD SPACE one, true when no byte is a space or below it; for a weighted one, true for
// strings of ASCII characters in the weighter's byteOrd set (utf8mb4_0900_ai_ci: digits,
// lower-case letters, '-', space and more; '_' weighs less than the digits it follows).
func (c *Collation) ByteOrdered(s string) bool {
	switch {
	case c == nil || c.kind == ckBinary:
		return true
	case c.kind == ckBinPad:
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' {
				return false
			}
		}
		return true
	}
	c.w.init()
	ord := &c.w.byteOrd[0]
	if c.PadSpace {
		ord = &c.w.byteOrd[1]
	}
	// Eight bytes a step: one branch for eight lookups (a sort checks every value of its column).
	for len(s) >= 8 {
		if ord[s[0]]&ord[s[1]]&ord[s[2]]&ord[s[3]]&ord[s[4]]&ord[s[5]]&ord[s[6]]&ord[s[7]] == 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if ord[s[i]] == 0 {
			return false
		}
	}
	return true
}

// comparePadBytes compares bytewise as if the shorter string were padded with spaces.
func comparePadBytes(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	if len(a) == len(b) {
		return 0
	}
	sign := 1
	rest := b[n:]
	if len(a) > len(b) {
		sign = -1
		rest = a[n:]
	}
	// The shorter string (spaces) against the longer one's tail.
	for i := 0; i < len(rest); i++ {
		if rest[i] != ' ' {
			if rest[i] > ' ' {
				return -sign
			}
			return sign
		}
	}
	return 0
}

// Key appends s's sort key: bytes.Compare of two keys equals Compare of the strings, and keys are
// self-delimiting so that more key columns can follow.
//
// Encodings: binary (NO PAD) escapes 0x00 as 00 FF and ends with 00 01. PAD SPACE collations
// encode each maximal run of spaces that is followed by another character as
// SPACE, 01, count (next character below space) or SPACE, 03, ^count (above space), and end with
// SPACE, 02: that orders a string exactly as if it were padded with infinitely many spaces, so
// 'a\t' < 'a' = 'a  ' < 'a!'. Weighted collations do the same over 2- or 3-byte weight tokens
// (NO PAD ones end with 00 00).
func (c *Collation) Key(buf []byte, s string) []byte {
	if c == nil || c.kind == ckBinary {
		return appendEscaped(buf, s)
	}
	if c.kind == ckBinPad {
		return appendPadBytesKey(buf, s)
	}
	return c.w.key(buf, s, c.PadSpace)
}

func appendEscaped(buf []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			buf = append(buf, s...)
			break
		}
		buf = append(buf, s[:i]...)
		buf = append(buf, 0, 0xFF)
		s = s[i+1:]
	}
	return append(buf, 0, 1)
}

func appendRunCount(buf []byte, k int, invert bool) []byte {
	var tmp [5]byte
	n := 1
	if k < 0xFF {
		tmp[0] = byte(k)
	} else {
		tmp[0] = 0xFF
		binary.BigEndian.PutUint32(tmp[1:], uint32(k))
		n = 5
	}
	if invert {
		for i := 0; i < n; i++ {
			tmp[i] = ^tmp[i]
		}
	}
	return append(buf, tmp[:n]...)
}

const (
	runBelow = 0x01 // run of spaces followed by a character that sorts below space
	runEnd   = 0x02 // end of string (= infinite spaces)
	runAbove = 0x03 // run of spaces followed by a character that sorts above space
)

func appendPadBytesKey(buf []byte, s string) []byte {
	s = strings.TrimRight(s, " ")
	for i := 0; i < len(s); {
		if s[i] != ' ' {
			j := strings.IndexByte(s[i:], ' ')
			if j < 0 {
				buf = append(buf, s[i:]...)
				break
			}
			buf = append(buf, s[i:i+j]...)
			i += j
			continue
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		// s is trimmed, so a character follows the run.
		if s[j] < ' ' {
			buf = append(buf, ' ', runBelow)
			buf = appendRunCount(buf, j-i, false)
		} else {
			buf = append(buf, ' ', runAbove)
			buf = appendRunCount(buf, j-i, true)
		}
		i = j
	}
	return append(buf, ' ', runEnd)
}

// decodePadBytesKey inverts appendPadBytesKey (trailing spaces are gone).
func decodePadBytesKey(b []byte) (s []byte, rest []byte, ok bool) {
	var out []byte
	for i := 0; i < len(b); {
		if b[i] != ' ' {
			out = append(out, b[i])
			i++
			continue
		}
		if i+1 >= len(b) {
			return nil, nil, false
		}
		switch b[i+1] {
		case runEnd:
			return out, b[i+2:], true
		case runBelow, runAbove:
			inv := b[i+1] == runAbove
			i += 2
			if i >= len(b) {
				return nil, nil, false
			}
			first := b[i]
			if inv {
				first = ^first
			}
			var k int
			if first < 0xFF {
				k = int(first)
				i++
			} else {
				if i+5 > len(b) {
					return nil, nil, false
				}
				var tmp [4]byte
				copy(tmp[:], b[i+1:i+5])
				if inv {
					for j := range tmp {
						tmp[j] = ^tmp[j]
					}
				}
				k = int(binary.BigEndian.Uint32(tmp[:]))
				i += 5
			}
			if k <= 0 || k > len(b)*1024 {
				return nil, nil, false
			}
			for ; k > 0; k-- {
				out = append(out, ' ')
			}
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// decodeEscaped inverts appendEscaped.
func decodeEscaped(b []byte) (s []byte, rest []byte, ok bool) {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		if i+1 >= len(b) {
			return nil, nil, false
		}
		switch b[i+1] {
		case 0xFF:
			out = append(out, b[:i+1]...)
			b = b[i+2:]
			i = -1
		case 0x01:
			out = append(out, b[:i]...)
			if out == nil {
				out = []byte{}
			}
			return out, b[i+2:], true
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// SplitKey reads the key Key wrote at the start of b and returns the rest of b after it. For a
// Reversible collation it also returns the string the key was built from (without its trailing
// spaces under PAD SPACE); for a weighted one s is nil. ok is false when b does not start with a
// valid key of c.
func (c *Collation) SplitKey(b []byte) (s, rest []byte, ok bool) {
	if c == nil || c.kind == ckBinary {
		return decodeEscaped(b)
	}
	if c.kind == ckBinPad {
		return decodePadBytesKey(b)
	}
	rest, ok = c.w.skipKey(b, c.PadSpace)
	return nil, rest, ok
}

// ---- weighted collations ----

const expFlag = 1 << 31

// weighter maps characters to primary weights: 0 means ignorable, values with expFlag index
// expansions (several weights for one character).
type weighter struct {
	build func(r rune) []uint32
	once  sync.Once
	ascii [128]uint32
	bmp   []uint32
	exp   [][]uint32
	space uint32
	// byteOrd[pad] marks the ASCII characters that this weighter orders as their bytes: each has
	// one non-zero weight, and the weights strictly increase with the byte values across the set.
	// Between two strings made only of them, comparing weight sequences is comparing bytes, and
	// equal weights are equal bytes (see Collation.ByteOrdered). Under PAD SPACE (pad = 1) the set
	// also leaves out the space and every character weighing no more than it, so that a string's
	// extension sorts after it as its padding would. Bytes >= 0x80 are never in the set. 1 marks a
	// member, 0 the rest: bytes, not bools, so that a check can AND eight lookups without a branch.
	byteOrd [2][256]uint8
}

func (w *weighter) init() {
	w.once.Do(func() {
		w.bmp = make([]uint32, 0x10000)
		for r := rune(0); r < 0x10000; r++ {
			ws := w.build(r)
			var x uint32
			switch len(ws) {
			case 0:
			case 1:
				x = ws[0]
			default:
				x = expFlag | uint32(len(w.exp))
				w.exp = append(w.exp, ws)
			}
			w.bmp[r] = x
			if r < 128 {
				w.ascii[r] = x
			}
		}
		w.space = w.ascii[' ']
		w.initByteOrd()
	})
}

// initByteOrd chooses byteOrd: the heaviest subsequence of the ASCII characters (in byte order)
// whose weights strictly increase, where digits, lower-case letters, '-', '_' and the space weigh
// most (the characters of generated keys and of sysbench's strings; a case-insensitive collation
// can keep only one case of each letter).
func (w *weighter) initByteOrd() {
	var score, prev [128]int
	bestEnd := -1
	for c := 0; c < 128; c++ {
		prev[c] = -1
		x := w.ascii[c]
		if x == 0 || x&expFlag != 0 {
			continue
		}
		v := 1
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == ' ' {
			v = 64
		}
		score[c] = v
		for b := 0; b < c; b++ {
			if score[b] > 0 && w.ascii[b] < x && score[b]+v > score[c] {
				score[c], prev[c] = score[b]+v, b
			}
		}
		if bestEnd < 0 || score[c] > score[bestEnd] {
			bestEnd = c
		}
	}
	for c := bestEnd; c >= 0; c = prev[c] {
		w.byteOrd[0][c] = 1
		if w.ascii[c] > w.space {
			w.byteOrd[1][c] = 1
		}
	}
}

type witer struct {
	w    *weighter
	s    string
	i    int
	pend []uint32
}

func (it *witer) next() (uint32, bool) {
	for {
		if len(it.pend) > 0 {
			x := it.pend[0]
			it.pend = it.pend[1:]
			return x, true
		}
		if it.i >= len(it.s) {
			return 0, false
		}
		var x uint32
		if c := it.s[it.i]; c < utf8.RuneSelf {
			x = it.w.ascii[c]
			it.i++
		} else {
			r, size := utf8.DecodeRuneInString(it.s[it.i:])
			it.i += size
			if r < 0x10000 {
				x = it.w.bmp[r]
			} else {
				ws := it.w.build(r)
				if len(ws) == 0 {
					continue
				}
				x, it.pend = ws[0], ws[1:]
			}
		}
		if x == 0 {
			continue
		}
		if x&expFlag != 0 {
			it.pend = it.w.exp[x&^expFlag]
			continue
		}
		return x, true
	}
}

func (w *weighter) compare(a, b string, pad bool) int {
	w.init()
	ia, ib := witer{w: w, s: a}, witer{w: w, s: b}
	for {
		// ASCII fast path: single weights, no expansions.
		if ia.i < len(a) && ib.i < len(b) && len(ia.pend) == 0 && len(ib.pend) == 0 {
			if ca, cb := a[ia.i], b[ib.i]; ca < utf8.RuneSelf && cb < utf8.RuneSelf {
				if wa, wb := w.ascii[ca], w.ascii[cb]; wa != 0 && wb != 0 {
					if wa != wb {
						if wa < wb {
							return -1
						}
						return 1
					}
					ia.i++
					ib.i++
					continue
				}
			}
		}
		wa, oka := ia.next()
		wb, okb := ib.next()
		if oka && okb {
			if wa != wb {
				if wa < wb {
					return -1
				}
				return 1
			}
			continue
		}
		if !oka && !okb {
			return 0
		}
		sign := 1 // a is the longer one
		rest, x := &ia, wa
		if !oka {
			sign, rest, x = -1, &ib, wb
		}
		if !pad {
			return sign
		}
		for ok := true; ok; x, ok = rest.next() {
			if x != w.space {
				if x > w.space {
					return sign
				}
				return -sign
			}
		}
		return 0
	}
}

func appendWeight(buf []byte, x uint32) []byte {
	if x < 0xE000 {
		return append(buf, byte(x>>8), byte(x))
	}
	return append(buf, 0xE0+byte(x>>16), byte(x>>8), byte(x))
}

func (w *weighter) key(buf []byte, s string, pad bool) []byte {
	w.init()
	// One growth up front: most weights are two bytes per character, and growing from a nil or
	// short buffer character by character was a third of this function's cost in profiles.
	buf = slices.Grow(buf, 2*len(s)+4)
	it := witer{w: w, s: s}
	run := 0
	for {
		// ASCII fast path: single two-byte weights written directly. Anything else (non-ASCII,
		// expansions, wide weights, a space under PAD SPACE or a pending space run) falls through
		// to the general step below for one character, which produces the same bytes.
		if run == 0 && len(it.pend) == 0 {
			for it.i < len(s) {
				c := s[it.i]
				if c >= utf8.RuneSelf {
					break
				}
				x := w.ascii[c]
				if x == 0 {
					it.i++ // ignorable
					continue
				}
				if x >= 0xE000 || (pad && x == w.space) { // expFlag is above 0xE000 too
					break
				}
				buf = append(buf, byte(x>>8), byte(x))
				it.i++
			}
		}
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

// foldBase returns r's base character (first rune of its decomposition) and the decomposition's
// other non-mark runes.
func decompose(r rune, compat bool) []rune {
	var tmp [32]byte
	var src [4]byte
	n := utf8.EncodeRune(src[:], r)
	f := norm.NFD
	if compat {
		f = norm.NFKD
	}
	d := f.Append(tmp[:0], src[:n]...)
	var out []rune
	for len(d) > 0 {
		x, size := utf8.DecodeRune(d)
		d = d[size:]
		if unicode.Is(unicode.Mn, x) && len(out) > 0 {
			continue
		}
		out = append(out, x)
	}
	return out
}

func generalWeights(r rune) []uint32 {
	if r > 0xFFFF {
		return []uint32{0xFFFD + 1}
	}
	if r == 'ß' {
		return []uint32{'S' + 1}
	}
	base := r
	if r >= 0x80 {
		if d := decompose(r, false); len(d) > 0 {
			base = d[0]
		}
	}
	return []uint32{uint32(unicode.ToUpper(base)) + 1}
}

func asciiCIWeights(r rune) []uint32 {
	if r < 0x80 {
		return []uint32{uint32(unicode.ToUpper(r)) + 1}
	}
	return []uint32{uint32(r) + 1}
}

func swedishWeights(r rune) []uint32 {
	switch r {
	case 'Å', 'å':
		return []uint32{4*('Z'+1) + 1}
	case 'Ä', 'ä', 'Æ', 'æ':
		return []uint32{4*('Z'+1) + 2}
	case 'Ö', 'ö', 'Ø', 'ø':
		return []uint32{4*('Z'+1) + 3}
	case 'Ü', 'ü':
		return []uint32{4 * ('Y' + 1)}
	}
	base := r
	if r >= 0x80 && r <= 0xFF {
		if d := decompose(r, false); len(d) > 0 {
			base = d[0]
		}
	}
	if base <= 0xFF {
		base = unicode.ToUpper(base)
		if base > 0xFF {
			base = r
		}
	}
	return []uint32{4 * (uint32(base) + 1)}
}

// CollationKeyVersion identifies the weights that Key writes for the weighted (_ci) collations.
// Index definitions record the version they were built with (Index.KeyVersion), so that a Kiln
// with different weights refuses an index whose keys it would read wrong instead of missing rows.
//
//	1: Kiln 0.1's approximations (ASCII in UCA order, other characters by folded code point)
//	2: UCA primary weights from golang.org/x/text/collate (CLDR root, UCA 6.2.0) for the UCA
//	   collations; unchanged tables for general_ci, latin1_swedish_ci and ascii_general_ci
const CollationKeyVersion = 2

// ducet is the root collator at primary strength (case, accents and width ignored), the source of
// the UCA collations' weights; a Collator is not safe for concurrent use.
var ducet struct {
	sync.Mutex
	c   *collate.Collator
	buf collate.Buffer
}

// ducetWeights returns the UCA primary weights of r (nil if r is ignorable): what
// utf8mb4_0900_ai_ci compares. Variable characters (spaces, punctuation) are not ignorable, as in
// MySQL's UCA 9.0.0 collations.
func ducetWeights(r rune) []uint32 {
	ducet.Lock()
	defer ducet.Unlock()
	if ducet.c == nil {
		ducet.c = collate.New(language.Und, collate.IgnoreCase, collate.IgnoreDiacritics, collate.IgnoreWidth)
	}
	var src [4]byte
	n := utf8.EncodeRune(src[:], r)
	k := ducet.c.Key(&ducet.buf, src[:n])
	var out []uint32
	for i := 0; i < len(k); {
		// x/text writes primaries in 2 bytes, or 3 with the top bit set for those above 0x7FFF.
		if k[i]&0x80 != 0 && i+2 < len(k) {
			out = append(out, uint32(k[i]&0x7F)<<16|uint32(k[i+1])<<8|uint32(k[i+2]))
			i += 3
			continue
		}
		if i+1 >= len(k) {
			break
		}
		out = append(out, uint32(k[i])<<8|uint32(k[i+1]))
		i += 2
	}
	ducet.buf.Reset()
	return out
}

// skipKey steps over a weight-string key.
func (w *weighter) skipKey(b []byte, pad bool) ([]byte, bool) {
	w.init()
	var sp [3]byte
	spn := len(appendWeight(sp[:0], w.space))
	for i := 0; i < len(b); {
		n := 2
		if b[i] >= 0xE0 {
			n = 3
		}
		if i+n > len(b) {
			return nil, false
		}
		tok := b[i : i+n]
		i += n
		if !pad {
			if n == 2 && tok[0] == 0 && tok[1] == 0 {
				return b[i:], true
			}
			continue
		}
		if n != spn || tok[0] != sp[0] || tok[1] != sp[1] || (n == 3 && tok[2] != sp[2]) {
			continue
		}
		if i >= len(b) {
			return nil, false
		}
		ctl := b[i]
		i++
		switch ctl {
		case runEnd:
			return b[i:], true
		case runBelow, runAbove:
			if i >= len(b) {
				return nil, false
			}
			first := b[i]
			if ctl == runAbove {
				first = ^first
			}
			if first == 0xFF {
				i += 5
			} else {
				i++
			}
		default:
			return nil, false
		}
	}
	return nil, false
}
