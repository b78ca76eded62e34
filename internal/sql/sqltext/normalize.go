// Package sqltext owns the lexical normalisation of statement text for the facade's plan cache
// (issue 12): a statement that differs from an earlier one only in its literals is recognised
// without parsing, and runs on the earlier statement's parse and plan with its literals as
// parameters.
//
// Its duties, in the order Normalize performs them:
//  1. Decide eligibility from the text alone: a SELECT, INSERT, REPLACE, UPDATE or DELETE (the
//     first statement of a multi-statement text: the rest is returned unread; comments are kept,
//     as written, in the key) without optimizer hints, executable comments,
//     placeholders, charset introducers, identifiers beyond ASCII
//     (string contents may be any UTF-8: the facade has converted the text) or anything else whose
//     meaning this small lexer cannot be sure of. Anything in doubt is "not eligible": the
//     statement is parsed as always. Being wrong here would change a statement's meaning, so
//     the lexer refuses rather than guesses.
//  2. Replace each literal (numbers, strings, hex literals) by `?` in the parameter text, which
//     the parser reads as a prepared statement.
//  3. Build the cache key: the parameter text plus each literal's kind, so that two texts share
//     an entry only if the same parse accepts both (LIMIT 5 and LIMIT 'a' do not share one).
//     The literals of an INSERT's or REPLACE's VALUES lists have one kind in the key (ValueList):
//     there every literal is a value of the row, the parse is the same whatever its kind, and
//     the row's conversion sees the argument itself, so 'abc' and x'616263' rows share an entry
//     (LinkBench's payloads are either, row by row). Not if the lists hold a subquery (its LIMIT
//     takes integers only) or COLLATE (refused for a binary string): then they keep their kinds.
//  4. Return the literals, decoded as the parser decodes them (string escapes, hex digits), for
//     the caller to turn into parameter values.
//
// What it must not do: know about sessions, catalogs or plans. Whether a parameterised statement
// really means what the literal one meant (select-list literals name columns, ORDER BY 1 is a
// position, LIKE 'a%' may use an index) is the caller's check, made once per key on the parsed
// statement and its plan.
package sqltext

import (
	"strings"
	"unsafe"
)

// Kind is a literal's lexical kind; it is part of the cache key.
type Kind byte

// The kinds of literal the lexer replaces.
const (
	Int     Kind = 'i' // decimal digits that fit in int64
	Decimal Kind = 'd' // digits with a point, or an integer too large for int64
	Float   Kind = 'f' // a number with an exponent
	String  Kind = 's' // '...' or "..." (not under ANSI_QUOTES)
	Hex     Kind = 'x' // X'..' or 0x..

	// ValueList stands in the key for the kind of a literal in INSERT's VALUES lists (duty 3);
	// the Literal keeps its own kind.
	ValueList Kind = 'v'
)

// Literal is one literal of the text, in order.
type Literal struct {
	Kind Kind
	// Text is the number as written, a string's decoded content, or a hex literal's bytes.
	Text string
}

// Mode is what of sql_mode changes lexing.
type Mode struct {
	NoBackslashEscapes bool // backslash is an ordinary character in strings
	ANSIQuotes         bool // "..." is an identifier
}

// MaxLiterals bounds the literals of a cached SELECT, UPDATE or DELETE; MaxInsertLiterals those of
// an INSERT or REPLACE, whose many-row VALUES lists (bulk loads, LinkBench's 1,024-row batches)
// are where parsing costs most: the protocol's limit on parameters.
const (
	MaxLiterals       = 64
	MaxInsertLiterals = 65535
)

// Normalized is the result of Normalize for an eligible text.
type Normalized struct {
	Key   string // ParamText and the literal kinds
	Param string // the text with each literal replaced by ?
	Lits  []Literal
	// Rest is the text after the first statement's semicolon when more statements follow it
	// (a multi-statement text, e.g. LinkStoreMysql's "INSERT ...; commit;"): Key, Param and
	// Lits are those of the first statement alone, and the caller parses Rest. Empty when the
	// text holds one statement.
	Rest string
}

// Normalize reports whether text is eligible, and if so its parameter text, key and literals.
func Normalize(text string, mode Mode) (Normalized, bool) {
	maxLits := eligibleVerb(text)
	if maxLits == 0 {
		return Normalized{}, false
	}
	var b strings.Builder
	// The text, and the key's kinds after it: a literal takes at least two bytes with its separator.
	b.Grow(len(text) + len(text)/2 + 8)
	var kindsBuf [16]byte // the kinds end up in the key: a short statement's stay on the stack
	kinds := kindsBuf[:0]
	var lits []Literal
	prevWord := "" // the last word before the current position (charset introducers)
	// The VALUES lists of an INSERT or REPLACE: from the word VALUES (or VALUE) at parenthesis
	// depth 0 to the next word at depth 0 (ON DUPLICATE KEY UPDATE, AS alias) or the end;
	// vals.from and vals.to index kinds.
	var vals valuesRegion
	isInsert := maxLits == MaxInsertLiterals
	var hexes *hexArena
	if isInsert {
		hexes = &hexArena{}
		// A many-row INSERT's literals, about one per comma: sized once instead of grown a
		// dozen times (a 1,024-row INSERT has thousands).
		if n := min(strings.Count(text, ",")+1, maxLits); n > len(kindsBuf) {
			lits = make([]Literal, 0, n)
			kinds = make([]byte, 0, n)
		}
	}
	depth := 0
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			if c == '"' && mode.ANSIQuotes {
				return Normalized{}, false
			}
			if i > 0 && (isWordByte(text[i-1]) || text[i-1] == '@') {
				return Normalized{}, false // N'x', _utf8'x', x'..' handled below, @'var'
			}
			if strings.HasPrefix(prevWord, "_") {
				return Normalized{}, false // _utf8mb4 'x': an introducer
			}
			s, n, ok := readString(text[i:], mode.NoBackslashEscapes)
			if !ok {
				return Normalized{}, false
			}
			lits = append(lits, Literal{Kind: String, Text: s})
			kinds = append(kinds, byte(String))
			b.WriteByte('?')
			i += n
			prevWord = ""
		case c == '`':
			j := i + 1
			for {
				k := strings.IndexByte(text[j:], '`')
				if k < 0 {
					return Normalized{}, false
				}
				j += k + 1
				if j < len(text) && text[j] == '`' {
					j++ // a doubled backtick inside the name
					continue
				}
				break
			}
			b.WriteString(text[i:j])
			i = j
			prevWord = ""
		case isDigit(c) || c == '.' && i+1 < len(text) && isDigit(text[i+1]):
			if i > 0 && (isWordByte(text[i-1]) || text[i-1] == '.' || text[i-1] == '`') {
				return Normalized{}, false // t1.5, `a`.5: not a number here
			}
			lit, n, ok := readNumber(text[i:])
			if !ok {
				return Normalized{}, false
			}
			lits = append(lits, lit)
			kinds = append(kinds, byte(lit.Kind))
			b.WriteByte('?')
			i += n
			prevWord = ""
		case (c == 'x' || c == 'X') && i+1 < len(text) && text[i+1] == '\'' && (i == 0 || !isWordByte(text[i-1])):
			lit, n, ok := readHexQuoted(text[i:], hexes)
			if !ok {
				return Normalized{}, false
			}
			lits = append(lits, lit)
			kinds = append(kinds, byte(Hex))
			b.WriteByte('?')
			i += n
			prevWord = ""
		case isWordByte(c):
			j := i
			for j < len(text) && isWordByte(text[j]) {
				j++
			}
			prevWord = text[i:j]
			if isInsert {
				vals.word(prevWord, depth, len(kinds))
			}
			b.WriteString(prevWord)
			i = j
		case c == '?' || c == '\\':
			return Normalized{}, false
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			// A comment is kept in the key as written (ORMs tag statements with them); optimizer
			// hints /*+ */ and executable comments /*! */ are statement text: parse those.
			end := strings.Index(text[i+2:], "*/")
			if end < 0 || i+2 < len(text) && (text[i+2] == '!' || text[i+2] == '+') {
				return Normalized{}, false
			}
			j := i + 2 + end + 2
			b.WriteString(text[i:j])
			i = j
		case c == '#' || c == '-' && i+2 < len(text) && text[i+1] == '-' && isBlank(text[i+2]):
			// "# ..." and "-- ..." comments run to the end of the line, kept in the key as written.
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = len(text) - i
			}
			b.WriteString(text[i : i+j])
			i += j
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			return Normalized{}, false // a--b: two minus signs, or a comment at the text's end: parse it
		case c == ';':
			b.WriteByte(c)
			i++
			if strings.TrimSpace(text[i:]) != "" {
				// Several statements: the first ends here; the caller parses the others.
				key, param := finishKey(&b, vals.key(kinds))
				return Normalized{Key: key, Param: param, Lits: lits, Rest: text[i:]}, true
			}
		default:
			if c >= 0x80 {
				return Normalized{}, false // identifiers beyond ASCII: parse them
			}
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				prevWord = ""
			}
			switch c {
			case '(':
				depth++
			case ')':
				depth--
			}
			b.WriteByte(c)
			i++
		}
		if len(lits) > maxLits {
			return Normalized{}, false
		}
	}
	key, param := finishKey(&b, vals.key(kinds))
	return Normalized{Key: key, Param: param, Lits: lits}, true
}

// finishKey appends a NUL and the literals' kinds to the parameterised text in b: the key is the
// whole, the parameterised text its beginning, one allocation for both.
func finishKey(b *strings.Builder, kinds []byte) (key, param string) {
	n := b.Len()
	b.WriteByte(0)
	b.Write(kinds)
	key = b.String()
	return key, key[:n]
}

// valuesRegion follows an INSERT's text to find the literals of its VALUES lists.
type valuesRegion struct {
	state    byte // 0 before VALUES, 1 inside the lists, 2 after them
	from, to int  // the lists' literals: kinds[from:to] (to is set when state becomes 2)
	subquery bool // a SELECT or COLLATE inside the lists: their literals keep their kinds
}

// word sees a word of the text at parenthesis depth, after n literals.
func (v *valuesRegion) word(w string, depth, n int) {
	switch {
	case v.state == 0 && depth == 0 && (strings.EqualFold(w, "VALUES") || strings.EqualFold(w, "VALUE")):
		v.state, v.from = 1, n
	case v.state == 1 && depth == 0:
		v.state, v.to = 2, n
	case v.state == 1 && (strings.EqualFold(w, "SELECT") || strings.EqualFold(w, "COLLATE")):
		v.subquery = true // a subquery's LIMIT takes integers; COLLATE refuses binary strings
	}
}

// key is the kinds part of the cache key (it may change kinds).
func (v *valuesRegion) key(kinds []byte) []byte {
	if v.state == 0 || v.subquery {
		return kinds
	}
	to := v.to
	if v.state == 1 {
		to = len(kinds)
	}
	for i := v.from; i < to; i++ {
		kinds[i] = byte(ValueList)
	}
	return kinds
}

// eligibleVerb returns how many literals a text may hold to be cached, by its first word (0: its
// statements are not cached).
func eligibleVerb(text string) int {
	i := 0
	for {
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if !strings.HasPrefix(text[i:], "/*") || strings.HasPrefix(text[i:], "/*!") || strings.HasPrefix(text[i:], "/*+") {
			break
		}
		end := strings.Index(text[i+2:], "*/")
		if end < 0 {
			return 0
		}
		i += 2 + end + 2 // a leading comment: the verb follows it
	}
	j := i
	for j < len(text) && isWordByte(text[j]) {
		j++
	}
	switch strings.ToUpper(text[i:j]) {
	case "SELECT", "UPDATE", "DELETE":
		return MaxLiterals
	case "INSERT", "REPLACE":
		return MaxInsertLiterals
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// isWordByte is a byte of an unquoted identifier or keyword (ASCII only: the caller refuses
// anything else).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '$'
}

// readString reads a quoted string at the start of s: its decoded content and its length in s.
func readString(s string, noBackslash bool) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == q:
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, true
		case c == '\\' && !noBackslash:
			if i+1 >= len(s) {
				return "", 0, false
			}
			b.WriteString(unescape(s[i+1]))
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, false
}

// unescape is MySQL's meaning of a backslash followed by c in a string literal.
func unescape(c byte) string {
	switch c {
	case '0':
		return "\x00"
	case 'b':
		return "\b"
	case 'n':
		return "\n"
	case 'r':
		return "\r"
	case 't':
		return "\t"
	case 'Z':
		return "\x1a"
	case '%', '_':
		return "\\" + string(rune(c)) // kept with its backslash, for LIKE
	}
	return string([]byte{c}) // a byte, not a rune: the first byte of a UTF-8 sequence stays one
}

// readNumber reads a number at the start of s.
func readNumber(s string) (Literal, int, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'b' || s[1] == 'X' || s[1] == 'B') {
		if s[1] != 'x' {
			return Literal{}, 0, false // 0b.. bit literals, 0X/0B: identifiers in MySQL
		}
		j := 2
		for j < len(s) && isHex(s[j]) {
			j++
		}
		if j == 2 || j < len(s) && isWordByte(s[j]) {
			return Literal{}, 0, false
		}
		digits := s[2:j]
		if len(digits)%2 == 1 {
			digits = "0" + digits
		}
		return Literal{Kind: Hex, Text: decodeHex(digits)}, j, true
	}
	j := 0
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	kind := Int
	if j < len(s) && s[j] == '.' {
		kind = Decimal
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k >= len(s) || !isDigit(s[k]) {
			return Literal{}, 0, false // 1e, 1ea: identifiers or errors; let the parser say
		}
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		kind, j = Float, k
	}
	if j < len(s) && (isWordByte(s[j]) || s[j] == '.') {
		return Literal{}, 0, false // 123abc is an identifier; 1.2.3 is not a number
	}
	text := s[:j]
	if kind == Int && !fitsInt64(text) {
		kind = Decimal // the parser makes these uint64 or DECIMAL: the caller decides which
	}
	return Literal{Kind: kind, Text: text}, j, true
}

// fitsInt64 reports whether decimal digits denote a value <= MaxInt64.
func fitsInt64(digits string) bool {
	d := strings.TrimLeft(digits, "0")
	const max = "9223372036854775807"
	return len(d) < len(max) || len(d) == len(max) && d <= max
}

// readHexQuoted reads X'..' at the start of s, decoding into a's buffer (nil: an allocation of
// its own).
func readHexQuoted(s string, a *hexArena) (Literal, int, bool) {
	end := strings.IndexByte(s[2:], '\'')
	if end < 0 {
		return Literal{}, 0, false
	}
	digits := s[2 : 2+end]
	if len(digits)%2 == 1 {
		return Literal{}, 0, false // an error in MySQL: the parser reports it
	}
	var text string
	var ok bool
	if a != nil {
		text, ok = a.decode(digits, len(s))
	} else {
		text, ok = decodeHexChecked(digits)
	}
	if !ok {
		return Literal{}, 0, false
	}
	return Literal{Kind: Hex, Text: text}, 2 + end + 1, true
}

// hexArena holds the decoded bytes of a bulk INSERT's hex literals, a chunk for many of them (a
// 1,024-row INSERT of LinkBench's nodes has 1,024 payloads: one allocation each was 1,024 of
// its statement's 1,027). Each literal is a string over its part of a chunk, whose bytes are never
// written again once a string refers to them. Only INSERT and REPLACE use it: their literals are
// converted and encoded into rows, so a chunk does not outlive the statement by much; a literal
// that other statements keep (SET @v = x'..') gets an allocation of its own.
type hexArena struct{ buf []byte }

// hexArenaChunk bounds a chunk: a statement with a few short literals in a long text does not get
// half its length.
const hexArenaChunk = 64 << 10

// decode is decodeHexChecked into the arena; rest is the length of the text from the literal on,
// which bounds what the statement's hex literals can still need.
func (a *hexArena) decode(digits string, rest int) (string, bool) {
	n := len(digits) / 2
	if n == 0 {
		return "", true
	}
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, min(rest/2, hexArenaChunk)))
	}
	start := len(a.buf)
	dst := a.buf[start : start+n]
	if !decodeHexInto(dst, digits) {
		return "", false // nothing refers to dst: the next literal may take it
	}
	a.buf = a.buf[:start+n]
	return unsafe.String(&dst[0], n), true
}

// decodeHexChecked decodes an even number of hex digits, checking them in the same pass.
func decodeHexChecked(digits string) (string, bool) {
	if len(digits) == 0 {
		return "", true
	}
	dst := make([]byte, len(digits)/2)
	if !decodeHexInto(dst, digits) {
		return "", false
	}
	return unsafe.String(&dst[0], len(dst)), true
}

// decodeHexInto decodes the 2*len(dst) hex digits into dst and reports whether they all were
// hex digits: the payloads of a bulk INSERT are mostly hex literals, so this runs over most of
// its text.
func decodeHexInto(dst []byte, digits string) bool {
	digits = digits[:2*len(dst)]
	for i := range dst {
		hi, lo := hexValue[digits[2*i]], hexValue[digits[2*i+1]]
		if hi|lo > 0x0f {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

// hexValue is a hex digit's value, or 0xff for a byte that is not one.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = byte(c-'a'+10), byte(c-'a'+10)
	}
	return t
}()

func decodeHex(digits string) string {
	s, _ := decodeHexChecked(digits)
	return s
}

func hexVal(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
