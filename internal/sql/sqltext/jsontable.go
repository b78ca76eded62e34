package sqltext

import (
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// JSON_TABLE (MySQL 8.0's table function) is not in the grammar of the parser Kiln uses, so the
// facade rewrites it before parsing (docs/decisions.md, "JSON_TABLE before the parser"):
//
//	JSON_TABLE(expr, 'path' COLUMNS (...)) [AS] alias
//
// becomes the derived table
//
//	(SELECT expr AS `__kiln_json_table_<hex>`) AS alias
//
// where <hex> is the hex of the JSON form of the parsed path and COLUMNS clause (JSONTableSpec).
// The expression stays SQL text for the parser, so it may read columns of the tables before it
// (the planner binds it laterally) and hold ? placeholders; the rest is checked here, so a syntax
// error in it is a parse error. The planner recognises the derived table by its column's name
// (IsJSONTableMarker) and plans a table function instead; a view's text is turned back into
// JSON_TABLE(...) before it is stored (JSONTableSpec.SQL), so SHOW CREATE VIEW prints SQL that
// MySQL reads.

// JSONTableMarker starts the column alias that carries a JSON_TABLE's specification.
const JSONTableMarker = "__kiln_json_table_"

// JSONTableSpec is a JSON_TABLE's row path and columns, as written (strings decoded).
type JSONTableSpec struct {
	Path string         `json:"p"`
	Cols []JSONTableCol `json:"c"`
}

// JSONTableColKind is what a JSON_TABLE column is.
type JSONTableColKind byte

// The kinds of column.
const (
	JTOrdinality JSONTableColKind = 'o' // name FOR ORDINALITY
	JTPath       JSONTableColKind = 'p' // name type PATH 'path' [on empty] [on error]
	JTExists     JSONTableColKind = 'x' // name type EXISTS PATH 'path'
	JTNested     JSONTableColKind = 'n' // NESTED [PATH] 'path' COLUMNS (...)
)

// JSONTableOn is an ON EMPTY or ON ERROR clause.
type JSONTableOn struct {
	// Kind is 0 when the clause is absent (NULL is the default), else 'n' (NULL), 'd' (DEFAULT)
	// or 'e' (ERROR).
	Kind    byte   `json:"k,omitempty"`
	Default string `json:"d,omitempty"` // DEFAULT's JSON text
}

// JSONTableCol is one entry of a COLUMNS clause.
type JSONTableCol struct {
	Kind    JSONTableColKind `json:"k"`
	Name    string           `json:"n,omitempty"`
	Type    string           `json:"t,omitempty"` // the column type as written (PATH and EXISTS)
	Path    string           `json:"p,omitempty"`
	OnEmpty JSONTableOn      `json:"e,omitempty"`
	OnError JSONTableOn      `json:"r,omitempty"`
	Cols    []JSONTableCol   `json:"c,omitempty"` // NESTED PATH's columns
}

// Encode is the spec's form inside the marker alias.
func (s *JSONTableSpec) Encode() string {
	b, _ := json.Marshal(s) // cannot fail: strings and slices only
	return JSONTableMarker + hex.EncodeToString(b)
}

// IsJSONTableMarker reports whether a select field's alias carries a JSON_TABLE's spec.
func IsJSONTableMarker(alias string) bool { return strings.HasPrefix(alias, JSONTableMarker) }

// DecodeJSONTableSpec reads the spec from a marker alias.
func DecodeJSONTableSpec(alias string) (*JSONTableSpec, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(alias, JSONTableMarker))
	if err != nil {
		return nil, err
	}
	var s JSONTableSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// SQL prints the spec as the part of JSON_TABLE(expr, ...) after the expression, in MySQL's
// syntax (strings single-quoted with quotes doubled, names backquoted).
func (s *JSONTableSpec) SQL() string {
	var b strings.Builder
	b.WriteString(quoteString(s.Path))
	b.WriteString(" COLUMNS(")
	writeCols(&b, s.Cols)
	b.WriteString(")")
	return b.String()
}

func writeCols(b *strings.Builder, cols []JSONTableCol) {
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		switch c.Kind {
		case JTOrdinality:
			b.WriteString(quoteIdent(c.Name) + " FOR ORDINALITY")
		case JTPath, JTExists:
			b.WriteString(quoteIdent(c.Name) + " " + c.Type)
			if c.Kind == JTExists {
				b.WriteString(" EXISTS")
			}
			b.WriteString(" PATH " + quoteString(c.Path))
			writeOn(b, c.OnEmpty, "EMPTY")
			writeOn(b, c.OnError, "ERROR")
		case JTNested:
			b.WriteString("NESTED PATH " + quoteString(c.Path) + " COLUMNS(")
			writeCols(b, c.Cols)
			b.WriteString(")")
		}
	}
}

func writeOn(b *strings.Builder, on JSONTableOn, what string) {
	switch on.Kind {
	case 'n':
		b.WriteString(" NULL ON " + what)
	case 'e':
		b.WriteString(" ERROR ON " + what)
	case 'd':
		b.WriteString(" DEFAULT " + quoteString(on.Default) + " ON " + what)
	}
}

// quoteString writes s as a string literal: quotes doubled and backslashes escaped, as the
// parser's own restore writes strings (a view's text is read back in the default sql_mode).
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// HasJSONTable reports, cheaply, whether text may contain JSON_TABLE (any letter case): only
// then does the facade run RewriteJSONTable.
func HasJSONTable(text string) bool {
	// Look at each underscore (IndexByte is vectorised; statements have few of them).
	for i := 4; i+6 <= len(text); {
		j := strings.IndexByte(text[i:len(text)-5], '_')
		if j < 0 {
			return false
		}
		i += j
		if strings.EqualFold(text[i-4:i+6], "json_table") {
			return true
		}
		i++
	}
	return false
}

// UnmarkJSONTable turns the derived tables of RewriteJSONTable back into JSON_TABLE's words in a
// parser's error message, whose "near" text quotes the rewritten statement: "AS `<marker>`)"
// becomes ", 'path' COLUMNS(...))", so the message reads as the statement was written. Text
// without a marker is returned as it is.
func UnmarkJSONTable(msg string) string {
	if !strings.Contains(msg, JSONTableMarker) {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, "`"+JSONTableMarker)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		j := strings.IndexByte(msg[i+1:], '`')
		if j < 0 {
			b.WriteString(msg)
			return b.String()
		}
		j += i + 1
		spec, err := DecodeJSONTableSpec(msg[i+1 : j])
		if err != nil {
			b.WriteString(msg[:j+1])
			msg = msg[j+1:]
			continue
		}
		head := msg[:i]
		if strings.HasSuffix(head, "AS ") {
			head = strings.TrimRight(strings.TrimSuffix(head, "AS "), " ") + ", "
		}
		b.WriteString(head)
		b.WriteString(spec.SQL())
		msg = msg[j+1:]
	}
}

// RewriteJSONTable replaces each JSON_TABLE(...) [AS] alias of text (outside strings, quoted
// names and comments) with the derived table described above. It returns text unchanged when
// there is none; a malformed JSON_TABLE is a syntax error (1064), a missing alias 3667.
func RewriteJSONTable(text string, mode Mode) (string, error) {
	lx := &lexer{src: text, mode: mode}
	var out strings.Builder
	last := 0
	for {
		t := lx.next()
		if t.kind == tokEOF {
			break
		}
		if t.kind == tokError {
			return text, nil // an unterminated string or comment: the parser reports it
		}
		if t.kind != tokWord || !strings.EqualFold(t.text, "json_table") {
			continue
		}
		if t.start > 0 && text[t.start-1] == '.' {
			continue // a qualified name
		}
		save := lx.pos
		if p := lx.next(); p.kind != tokPunct || p.text != "(" {
			lx.pos = save
			continue
		}
		repl, end, err := rewriteOne(lx, text)
		if err != nil {
			return "", err
		}
		out.WriteString(text[last:t.start])
		out.WriteString(repl)
		last = end
		lx.pos = end
	}
	if last == 0 {
		return text, nil
	}
	out.WriteString(text[last:])
	return out.String(), nil
}

// rewriteOne reads one JSON_TABLE call after its opening parenthesis and its alias, returning the
// replacement text and the offset after the alias.
func rewriteOne(lx *lexer, text string) (string, int, error) {
	// The expression: everything up to the first comma outside parentheses.
	exprStart := lx.pos
	depth := 0
	var exprEnd int
	for {
		t := lx.next()
		switch {
		case t.kind == tokEOF || t.kind == tokError:
			return "", 0, syntaxErr(text, len(text))
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			if depth == 0 {
				return "", 0, syntaxErr(text, t.start)
			}
			depth--
		case t.kind == tokPunct && t.text == "," && depth == 0:
			exprEnd = t.start
		}
		if exprEnd != 0 {
			break
		}
	}
	// A JSON_TABLE inside the expression is not rewritten: it could only be in a subquery, which
	// MySQL refuses there (1210), so the parser's syntax error is as good an answer, and the
	// rewrite stays one linear pass however deeply calls are nested.
	exprText := strings.TrimSpace(text[exprStart:exprEnd])
	if exprText == "" {
		return "", 0, syntaxErr(text, exprEnd)
	}
	p := &specParser{lx: lx, text: text}
	spec := &JSONTableSpec{}
	var err error
	if spec.Path, err = p.str(); err != nil {
		return "", 0, err
	}
	if spec.Cols, err = p.columns(0); err != nil {
		return "", 0, err
	}
	if err := p.punct(")"); err != nil {
		return "", 0, err
	}
	// [AS] alias
	t := lx.next()
	hasAs := t.kind == tokWord && strings.EqualFold(t.text, "as")
	if hasAs {
		t = lx.next()
	}
	var alias string
	switch {
	case t.kind == tokQuoted:
		alias = t.text
	case t.kind == tokWord && !notAlias[strings.ToUpper(t.text)]:
		alias = t.text
	case hasAs:
		return "", 0, syntaxErr(text, t.start)
	default:
		return "", 0, sqlerr.New(sqlerr.ErrTFMustHaveAlias, "Every table function must have an alias")
	}
	repl := "(SELECT " + exprText + " AS `" + spec.Encode() + "`) AS " + quoteIdent(alias)
	return repl, t.end, nil
}

// notAlias are the words that may follow a table reference: after JSON_TABLE(...) they mean the
// alias is missing.
var notAlias = map[string]bool{"WHERE": true, "JOIN": true, "INNER": true, "CROSS": true, "LEFT": true,
	"RIGHT": true, "NATURAL": true, "STRAIGHT_JOIN": true, "ON": true, "USING": true, "GROUP": true,
	"ORDER": true, "HAVING": true, "LIMIT": true, "WINDOW": true, "UNION": true, "EXCEPT": true,
	"INTERSECT": true, "FOR": true, "LOCK": true, "INTO": true, "PARTITION": true, "USE": true,
	"IGNORE": true, "FORCE": true, "FULL": true, "OUTER": true, "SET": true, "VALUES": true}

// specParser reads the row path and COLUMNS clause of a JSON_TABLE.
type specParser struct {
	lx   *lexer
	text string
}

// maxNested bounds NESTED PATH clauses inside one another while parsing (MySQL allows 16 NESTED
// PATHs in all; the planner counts them, this only keeps the recursion bounded).
const maxNested = 64

func (p *specParser) fail(t token) error { return syntaxErr(p.text, t.start) }

func (p *specParser) word(w string) error {
	t := p.lx.next()
	if t.kind != tokWord || !strings.EqualFold(t.text, w) {
		return p.fail(t)
	}
	return nil
}

func (p *specParser) punct(s string) error {
	t := p.lx.next()
	if t.kind != tokPunct || t.text != s {
		return p.fail(t)
	}
	return nil
}

func (p *specParser) str() (string, error) {
	t := p.lx.next()
	if t.kind != tokString {
		return "", p.fail(t)
	}
	return t.text, nil
}

func (p *specParser) peekWord(w string) bool {
	save := p.lx.pos
	t := p.lx.next()
	p.lx.pos = save
	return t.kind == tokWord && strings.EqualFold(t.text, w)
}

// columns reads COLUMNS ( column [, column]... ).
func (p *specParser) columns(depth int) ([]JSONTableCol, error) {
	if depth > maxNested {
		return nil, p.fail(p.lx.next())
	}
	if err := p.word("columns"); err != nil {
		return nil, err
	}
	if err := p.punct("("); err != nil {
		return nil, err
	}
	var cols []JSONTableCol
	for {
		c, err := p.column(depth)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
		t := p.lx.next()
		if t.kind == tokPunct && t.text == ")" {
			return cols, nil
		}
		if t.kind != tokPunct || t.text != "," {
			return nil, p.fail(t)
		}
	}
}

func (p *specParser) column(depth int) (JSONTableCol, error) {
	var c JSONTableCol
	t := p.lx.next()
	if t.kind == tokWord && strings.EqualFold(t.text, "nested") {
		c.Kind = JTNested
		if p.peekWord("path") {
			p.lx.next()
		}
		var err error
		if c.Path, err = p.str(); err != nil {
			return c, err
		}
		c.Cols, err = p.columns(depth + 1)
		return c, err
	}
	if t.kind != tokWord && t.kind != tokQuoted {
		return c, p.fail(t)
	}
	c.Name = t.text
	if p.peekWord("for") {
		p.lx.next()
		c.Kind = JTOrdinality
		return c, p.word("ordinality")
	}
	// The type: its tokens up to EXISTS or PATH outside parentheses, kept as written.
	typeStart, typeEnd, depthP := -1, -1, 0
	for {
		save := p.lx.pos
		t := p.lx.next()
		if t.kind == tokEOF || t.kind == tokError {
			return c, p.fail(t)
		}
		if depthP == 0 && t.kind == tokWord && (strings.EqualFold(t.text, "path") || strings.EqualFold(t.text, "exists")) && typeStart >= 0 {
			p.lx.pos = save
			break
		}
		if t.kind == tokPunct {
			switch t.text {
			case "(":
				depthP++
			case ")":
				depthP--
			case ",":
				if depthP == 0 {
					return c, p.fail(t)
				}
			}
			if depthP < 0 {
				return c, p.fail(t)
			}
		}
		if typeStart < 0 {
			typeStart = t.start
		}
		typeEnd = t.end
	}
	c.Type = p.text[typeStart:typeEnd]
	c.Kind = JTPath
	if p.peekWord("exists") {
		p.lx.next()
		c.Kind = JTExists
	}
	if err := p.word("path"); err != nil {
		return c, err
	}
	var err error
	if c.Path, err = p.str(); err != nil {
		return c, err
	}
	if c.Kind == JTExists {
		return c, nil
	}
	// [on_empty] [on_error], in either order (MySQL accepts ON ERROR first, deprecated).
	for i := 0; i < 2; i++ {
		save := p.lx.pos
		t := p.lx.next()
		var on JSONTableOn
		switch {
		case t.kind == tokWord && strings.EqualFold(t.text, "null"):
			on.Kind = 'n'
		case t.kind == tokWord && strings.EqualFold(t.text, "error"):
			on.Kind = 'e'
		case t.kind == tokWord && strings.EqualFold(t.text, "default"):
			on.Kind = 'd'
			d := p.lx.next()
			switch d.kind {
			case tokString:
				on.Default = d.text
			case tokNumber:
				on.Default = d.text
			case tokPunct:
				if d.text != "-" && d.text != "+" {
					return c, p.fail(d)
				}
				n := p.lx.next()
				if n.kind != tokNumber {
					return c, p.fail(n)
				}
				on.Default = strings.TrimPrefix(d.text, "+") + n.text
			default:
				return c, p.fail(d)
			}
		default:
			p.lx.pos = save
			return c, nil
		}
		if err := p.word("on"); err != nil {
			return c, err
		}
		w := p.lx.next()
		switch {
		case w.kind == tokWord && strings.EqualFold(w.text, "empty") && c.OnEmpty.Kind == 0:
			c.OnEmpty = on
		case w.kind == tokWord && strings.EqualFold(w.text, "error") && c.OnError.Kind == 0:
			c.OnError = on
		default:
			return c, p.fail(w)
		}
	}
	return c, nil
}

// syntaxErr is the parser's 1064 at offset off of text.
func syntaxErr(text string, off int) error {
	off = min(max(off, 0), len(text))
	line := 1 + strings.Count(text[:off], "\n")
	near := strings.TrimRight(text[off:], "; \t\r\n")
	return sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line %d", near, line)
}

// A small lexer over statement text: words, quoted names, strings, numbers and punctuation, with
// comments and blanks skipped. Enough to find JSON_TABLE's parts; the parser reads the rest.
type tokKind uint8

const (
	tokEOF tokKind = iota
	tokError
	tokWord
	tokQuoted // `name` (or "name" under ANSI_QUOTES), unquoted
	tokString // 'text' (or "text"), decoded
	tokNumber
	tokPunct
)

type token struct {
	kind       tokKind
	text       string
	start, end int
}

type lexer struct {
	src  string
	pos  int
	mode Mode
}

func (l *lexer) next() token {
	s := l.src
	for l.pos < len(s) {
		c := s[l.pos]
		switch {
		case isBlank(c) || c == '\f' || c == '\v':
			l.pos++
			continue
		case c == '#' || c == '-' && l.pos+2 < len(s) && s[l.pos+1] == '-' && (isBlank(s[l.pos+2]) || s[l.pos+2] == '\f'):
			j := strings.IndexByte(s[l.pos:], '\n')
			if j < 0 {
				l.pos = len(s)
			} else {
				l.pos += j + 1
			}
			continue
		case c == '/' && l.pos+1 < len(s) && s[l.pos+1] == '*':
			if l.pos+2 < len(s) && s[l.pos+2] == '!' {
				// An executable comment's text is SQL: lex it, skipping the version digits.
				l.pos += 3
				for l.pos < len(s) && isDigit(s[l.pos]) {
					l.pos++
				}
				continue
			}
			j := strings.Index(s[l.pos+2:], "*/")
			if j < 0 {
				return token{kind: tokError, start: l.pos, end: len(s)}
			}
			l.pos += 2 + j + 2
			continue
		case c == '*' && l.pos+1 < len(s) && s[l.pos+1] == '/':
			l.pos += 2 // the end of an executable comment
			continue
		}
		break
	}
	start := l.pos
	if l.pos >= len(s) {
		return token{kind: tokEOF, start: len(s), end: len(s)}
	}
	c := s[l.pos]
	switch {
	case c == '`' || c == '"' && l.mode.ANSIQuotes:
		name, n, ok := readQuotedName(s[l.pos:], c)
		if !ok {
			return token{kind: tokError, start: start, end: len(s)}
		}
		l.pos += n
		return token{kind: tokQuoted, text: name, start: start, end: l.pos}
	case c == '\'' || c == '"':
		str, n, ok := readString(s[l.pos:], l.mode.NoBackslashEscapes)
		if !ok {
			return token{kind: tokError, start: start, end: len(s)}
		}
		l.pos += n
		return token{kind: tokString, text: str, start: start, end: l.pos}
	case isDigit(c) || c == '.' && l.pos+1 < len(s) && isDigit(s[l.pos+1]):
		j := l.pos
		for j < len(s) && (isWordByte(s[j]) || s[j] == '.' || (s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E')) {
			j++
		}
		l.pos = j
		return token{kind: tokNumber, text: s[start:j], start: start, end: j}
	case isWordByte(c) || c >= 0x80:
		j := l.pos
		for j < len(s) && (isWordByte(s[j]) || s[j] >= 0x80) {
			j++
		}
		l.pos = j
		return token{kind: tokWord, text: s[start:j], start: start, end: j}
	}
	l.pos++
	return token{kind: tokPunct, text: s[start:l.pos], start: start, end: l.pos}
}

// readQuotedName reads a quoted identifier (q doubled inside stands for itself).
func readQuotedName(s string, q byte) (string, int, bool) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(s[i])
		i++
	}
	return "", 0, false
}
