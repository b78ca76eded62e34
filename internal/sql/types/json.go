package types

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON values are kept as their normalized text (KindString): what MySQL prints for a JSON value.
// Normalization follows MySQL 8: object keys sorted by length then bytes, the last of duplicate keys
// wins, ", " and ": " separators, integers kept exact, other numbers printed as doubles (1e2 is
// 100.0). The document form (JSONDoc) is a tree of Go values: nil (null), bool, string,
// json.Number, []any and map[string]any.

// ErrInvalidJSON is the parse error of ParseJSON; its message says where the text went wrong.
type ErrInvalidJSON struct {
	Msg string
	Pos int
}

func (e *ErrInvalidJSON) Error() string { return e.Msg }

// ParseJSON parses s as one JSON document.
func ParseJSON(s string) (any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &ErrInvalidJSON{Msg: "The document is empty.", Pos: 0}
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		pos := int(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pos = int(se.Offset)
			if pos > 0 {
				pos--
			}
		}
		return nil, &ErrInvalidJSON{Msg: "Invalid value.", Pos: pos}
	}
	if dec.More() {
		return nil, &ErrInvalidJSON{Msg: "The document root must not be followed by other values.", Pos: int(dec.InputOffset())}
	}
	if _, err := dec.Token(); err == nil {
		return nil, &ErrInvalidJSON{Msg: "The document root must not be followed by other values.", Pos: int(dec.InputOffset())}
	}
	return v, nil
}

// NormalizeJSON parses s and returns MySQL's text for it.
func NormalizeJSON(s string) (string, error) {
	v, err := ParseJSON(s)
	if err != nil {
		return "", err
	}
	return JSONText(v), nil
}

// JSONText renders a document as MySQL prints JSON values.
func JSONText(v any) string {
	var b bytes.Buffer
	appendJSON(&b, v)
	return b.String()
}

// JSONKeyLess orders object keys as MySQL stores them: shorter keys first, then bytewise.
func JSONKeyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return JSONKeyLess(keys[i], keys[j]) })
	return keys
}

func appendJSON(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		appendJSONString(b, x)
	case json.Number:
		b.WriteString(jsonNumberText(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			appendJSON(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			appendJSONString(b, k)
			b.WriteString(": ")
			appendJSON(b, x[k])
		}
		b.WriteByte('}')
	default:
		appendJSONString(b, fmt.Sprint(x))
	}
}

// jsonNumberText prints an integer literal as is and any other number as a double.
func jsonNumberText(n json.Number) string {
	s := string(n)
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return jsonDoubleText(f)
}

func jsonDoubleText(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "null"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if strings.Contains(s, "e+") {
		// MySQL prints 1e20 as 1e20, and integral doubles below that as 100.0.
		mant, exp, _ := strings.Cut(s, "e+")
		if e, _ := strconv.Atoi(exp); e < 17 {
			s = strconv.FormatFloat(f, 'f', -1, 64)
		} else {
			s = mant + "e" + exp
		}
	}
	if !strings.ContainsAny(s, ".eN") {
		s += ".0"
	}
	return s
}

func appendJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		i += size
	}
	b.WriteByte('"')
}

// JSONTypeName is JSON_TYPE's answer for a document.
func JSONTypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		return "BOOLEAN"
	case string:
		return "STRING"
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return "INTEGER"
		}
		if _, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return "UNSIGNED INTEGER"
		}
		return "DOUBLE"
	case []any:
		return "ARRAY"
	case map[string]any:
		return "OBJECT"
	}
	return "OPAQUE"
}

// JSONUnquote is JSON_UNQUOTE of a document: a string's contents, anything else its JSON text.
func JSONUnquote(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return JSONText(v)
}

// ---- paths ----

// A JSONPath is a parsed path expression: $ followed by legs.
type JSONPath struct {
	legs []pathLeg
	text string
}

type legKind uint8

const (
	legKey      legKind = iota // .name or ."name"
	legAnyKey                  // .*
	legIndex                   // [n], [last], [last-n]
	legAnyIndex                // [*]
	legRange                   // [n to m]
	legAnyDepth                // **
)

type pathLeg struct {
	kind     legKind
	key      string
	idx      int  // index, or range start
	fromLast bool // idx counts back from the last element
	idx2     int  // range end
	last2    bool
}

// String returns the path's text without surrounding blanks.
func (p *JSONPath) String() string { return strings.TrimSpace(p.text) }

// Wild reports whether the path can select several values (*, ** or a range).
func (p *JSONPath) Wild() bool {
	for _, l := range p.legs {
		if l.kind == legAnyKey || l.kind == legAnyIndex || l.kind == legAnyDepth || l.kind == legRange {
			return true
		}
	}
	return false
}

// ErrBadPath is returned for a malformed path expression (MySQL's 3143).
var ErrBadPath = errors.New("invalid JSON path expression")

// ParseJSONPath parses a MySQL JSON path expression.
func ParseJSONPath(s string) (*JSONPath, error) {
	p := &JSONPath{text: s}
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
	}
	skip()
	if i >= len(s) || s[i] != '$' {
		return nil, ErrBadPath
	}
	i++
	for {
		skip()
		if i >= len(s) {
			return p, nil
		}
		switch s[i] {
		case '.':
			i++
			skip()
			if i < len(s) && s[i] == '*' {
				i++
				p.legs = append(p.legs, pathLeg{kind: legAnyKey})
				continue
			}
			if i < len(s) && s[i] == '"' {
				j := i + 1
				for j < len(s) && s[j] != '"' {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				if j >= len(s) {
					return nil, ErrBadPath
				}
				var key string
				if err := json.Unmarshal([]byte(s[i:j+1]), &key); err != nil {
					return nil, ErrBadPath
				}
				p.legs = append(p.legs, pathLeg{kind: legKey, key: key})
				i = j + 1
				continue
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' && s[j] != ' ' && s[j] != '*' {
				j++
			}
			if j == i {
				return nil, ErrBadPath
			}
			key := s[i:j]
			if c := key[0]; c >= '0' && c <= '9' {
				return nil, ErrBadPath
			}
			p.legs = append(p.legs, pathLeg{kind: legKey, key: key})
			i = j
		case '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, ErrBadPath
			}
			body := strings.TrimSpace(s[i+1 : i+j])
			i += j + 1
			if body == "*" {
				p.legs = append(p.legs, pathLeg{kind: legAnyIndex})
				continue
			}
			if from, to, ok := strings.Cut(body, " to "); ok {
				a, al, err1 := parseArrayIndex(strings.TrimSpace(from))
				b, bl, err2 := parseArrayIndex(strings.TrimSpace(to))
				if err1 != nil || err2 != nil {
					return nil, ErrBadPath
				}
				p.legs = append(p.legs, pathLeg{kind: legRange, idx: a, fromLast: al, idx2: b, last2: bl})
				continue
			}
			n, last, err := parseArrayIndex(body)
			if err != nil {
				return nil, ErrBadPath
			}
			p.legs = append(p.legs, pathLeg{kind: legIndex, idx: n, fromLast: last})
		case '*':
			if i+1 < len(s) && s[i+1] == '*' {
				i += 2
				p.legs = append(p.legs, pathLeg{kind: legAnyDepth})
				if i >= len(s) {
					return nil, ErrBadPath // ** must be followed by a leg
				}
				continue
			}
			return nil, ErrBadPath
		default:
			return nil, ErrBadPath
		}
	}
}

func parseArrayIndex(s string) (int, bool, error) {
	if s == "last" {
		return 0, true, nil
	}
	if rest, ok := strings.CutPrefix(s, "last"); ok {
		rest = strings.TrimSpace(rest)
		if r, ok := strings.CutPrefix(rest, "-"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(r))
			if err != nil || n < 0 {
				return 0, false, ErrBadPath
			}
			return n, true, nil
		}
		return 0, false, ErrBadPath
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, false, ErrBadPath
	}
	return n, false, nil
}

func resolveIndex(n int, fromLast bool, length int) int {
	if fromLast {
		return length - 1 - n
	}
	return n
}

// Find returns the values the path selects in doc, in document order.
func (p *JSONPath) Find(doc any) []any {
	var out []any
	findLegs(doc, p.legs, &out)
	return out
}

func findLegs(v any, legs []pathLeg, out *[]any) {
	if len(legs) == 0 {
		*out = append(*out, v)
		return
	}
	l, rest := legs[0], legs[1:]
	switch l.kind {
	case legKey:
		if m, ok := v.(map[string]any); ok {
			if c, ok := m[l.key]; ok {
				findLegs(c, rest, out)
			}
		}
	case legAnyKey:
		if m, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				findLegs(m[k], rest, out)
			}
		}
	case legIndex:
		a, ok := v.([]any)
		if !ok {
			// MySQL treats a scalar as a one-element array for [0] / [last].
			if resolveIndex(l.idx, l.fromLast, 1) == 0 {
				findLegs(v, rest, out)
			}
			return
		}
		if i := resolveIndex(l.idx, l.fromLast, len(a)); i >= 0 && i < len(a) {
			findLegs(a[i], rest, out)
		}
	case legAnyIndex:
		if a, ok := v.([]any); ok {
			for _, e := range a {
				findLegs(e, rest, out)
			}
		}
	case legRange:
		if a, ok := v.([]any); ok {
			from := max(resolveIndex(l.idx, l.fromLast, len(a)), 0)
			to := min(resolveIndex(l.idx2, l.last2, len(a)), len(a)-1)
			for i := from; i <= to; i++ {
				findLegs(a[i], rest, out)
			}
		}
	case legAnyDepth:
		findLegs(v, rest, out)
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				findLegs(e, legs, out)
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				findLegs(x[k], legs, out)
			}
		}
	}
}

// JSONModify is how JSON_SET, JSON_INSERT and JSON_REPLACE treat a path.
type JSONModify uint8

const (
	JSONSet     JSONModify = iota // replace or add
	JSONInsert                    // add only
	JSONReplace                   // replace only
)

// Modify applies one path/value pair to doc and returns the new document. The path must not be
// wild (the caller reports 3149).
func (p *JSONPath) Modify(doc any, val any, mode JSONModify) any {
	if len(p.legs) == 0 {
		if mode == JSONInsert {
			return doc
		}
		return val
	}
	return modifyLegs(doc, p.legs, val, mode)
}

func modifyLegs(v any, legs []pathLeg, val any, mode JSONModify) any {
	l, rest := legs[0], legs[1:]
	switch l.kind {
	case legKey:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		c, exists := m[l.key]
		if len(rest) == 0 {
			if (exists && mode == JSONInsert) || (!exists && mode == JSONReplace) {
				return v
			}
			n := cloneMap(m)
			n[l.key] = val
			return n
		}
		if !exists {
			return v
		}
		n := cloneMap(m)
		n[l.key] = modifyLegs(c, rest, val, mode)
		return n
	case legIndex:
		a, isArr := v.([]any)
		if !isArr {
			// A scalar or object is auto-wrapped: [0] is itself, other indexes append.
			i := resolveIndex(l.idx, l.fromLast, 1)
			if i == 0 {
				if len(rest) == 0 {
					if mode == JSONInsert {
						return v
					}
					return val
				}
				return modifyLegs(v, rest, val, mode)
			}
			if len(rest) == 0 && mode != JSONReplace {
				return []any{v, val}
			}
			return v
		}
		i := resolveIndex(l.idx, l.fromLast, len(a))
		if i < 0 {
			return v
		}
		if i >= len(a) {
			if len(rest) == 0 && mode != JSONReplace {
				n := append(append([]any{}, a...), val)
				return n
			}
			return v
		}
		n := append([]any{}, a...)
		if len(rest) == 0 {
			if mode == JSONInsert {
				return v
			}
			n[i] = val
			return n
		}
		n[i] = modifyLegs(a[i], rest, val, mode)
		return n
	}
	return v
}

// Remove deletes what the (non-wild) path selects.
func (p *JSONPath) Remove(doc any) any {
	if len(p.legs) == 0 {
		return doc
	}
	return removeLegs(doc, p.legs)
}

func removeLegs(v any, legs []pathLeg) any {
	l, rest := legs[0], legs[1:]
	switch l.kind {
	case legKey:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		c, exists := m[l.key]
		if !exists {
			return v
		}
		n := cloneMap(m)
		if len(rest) == 0 {
			delete(n, l.key)
		} else {
			n[l.key] = removeLegs(c, rest)
		}
		return n
	case legIndex:
		a, ok := v.([]any)
		if !ok {
			return v
		}
		i := resolveIndex(l.idx, l.fromLast, len(a))
		if i < 0 || i >= len(a) {
			return v
		}
		if len(rest) == 0 {
			n := append(append([]any{}, a[:i]...), a[i+1:]...)
			return n
		}
		n := append([]any{}, a...)
		n[i] = removeLegs(a[i], rest)
		return n
	}
	return v
}

func cloneMap(m map[string]any) map[string]any {
	n := make(map[string]any, len(m)+1)
	for k, v := range m {
		n[k] = v
	}
	return n
}

// JSONContains is JSON_CONTAINS(target, candidate): MySQL's containment rules.
func JSONContains(target, cand any) bool {
	switch t := target.(type) {
	case []any:
		if ca, ok := cand.([]any); ok {
			for _, c := range ca {
				if !JSONContains(t, c) {
					return false
				}
			}
			return true
		}
		for _, e := range t {
			if JSONContains(e, cand) {
				return true
			}
		}
		return false
	case map[string]any:
		cm, ok := cand.(map[string]any)
		if !ok {
			return false
		}
		for k, cv := range cm {
			tv, ok := t[k]
			if !ok || !JSONContains(tv, cv) {
				return false
			}
		}
		return true
	}
	return jsonScalarEqual(target, cand)
}

func jsonScalarEqual(a, b any) bool {
	if an, ok := a.(json.Number); ok {
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		af, _ := strconv.ParseFloat(string(an), 64)
		bf, _ := strconv.ParseFloat(string(bn), 64)
		return af == bf
	}
	return a == b
}

// JSONNumber returns the document form of a number's text.
func JSONNumber(s string) any { return json.Number(s) }

// JSONLength is JSON_LENGTH: elements of an array, members of an object, 1 for a scalar.
func JSONLength(v any) int {
	switch x := v.(type) {
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	return 1
}

// JSONDepth is JSON_DEPTH.
func JSONDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, JSONDepth(e))
		}
		if len(x) == 0 {
			return 1
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, JSONDepth(e))
		}
		if len(x) == 0 {
			return 1
		}
		return d + 1
	}
	return 1
}

// JSONKeys returns an object's keys in MySQL's order, or nil if v is not an object.
func JSONKeys(v any) []any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := []any{}
	for _, k := range sortedKeys(m) {
		out = append(out, k)
	}
	return out
}

// JSONMergePatch is RFC 7396 merge (JSON_MERGE_PATCH).
func JSONMergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	n := cloneMap(tm)
	for k, v := range pm {
		if v == nil {
			delete(n, k)
			continue
		}
		n[k] = JSONMergePatch(n[k], v)
	}
	return n
}

// JSONMergePreserve is JSON_MERGE_PRESERVE: arrays concatenate, objects merge recursively, and
// scalars are wrapped into arrays.
func JSONMergePreserve(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		n := cloneMap(am)
		for k, v := range bm {
			if old, ok := n[k]; ok {
				n[k] = JSONMergePreserve(old, v)
			} else {
				n[k] = v
			}
		}
		return n
	}
	wrap := func(v any) []any {
		if x, ok := v.([]any); ok {
			return x
		}
		return []any{v}
	}
	return append(append([]any{}, wrap(a)...), wrap(b)...)
}
