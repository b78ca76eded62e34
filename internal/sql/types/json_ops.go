package types

import (
	"bytes"
	"strconv"
	"unicode"
)

// Document helpers for JSON_SEARCH, JSON_ARRAY_APPEND, JSON_ARRAY_INSERT, JSON_OVERLAPS,
// JSON_PRETTY and MEMBER OF.

// JSONEqual compares two documents as MySQL's JSON comparison does for equality: numbers by value,
// arrays element-wise, objects member-wise.
func JSONEqual(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !JSONEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !JSONEqual(v, w) {
				return false
			}
		}
		return true
	}
	return jsonScalarEqual(a, b)
}

// JSONOverlaps is JSON_OVERLAPS: two objects share a member (key and value), two arrays share an
// element, an array contains the other (non-array) value, or two non-arrays are equal.
func JSONOverlaps(a, b any) bool {
	aa, aArr := a.([]any)
	ba, bArr := b.([]any)
	switch {
	case aArr || bArr:
		if !aArr {
			aa = []any{a}
		}
		if !bArr {
			ba = []any{b}
		}
		for _, x := range aa {
			for _, y := range ba {
				if JSONEqual(x, y) {
					return true
				}
			}
		}
		return false
	}
	am, aObj := a.(map[string]any)
	bm, bObj := b.(map[string]any)
	if aObj && bObj {
		for k, v := range am {
			if w, ok := bm[k]; ok && JSONEqual(v, w) {
				return true
			}
		}
		return false
	}
	return JSONEqual(a, b)
}

// JSONMemberOf is v MEMBER OF (doc): v is an element of the array doc, or equals a non-array doc.
func JSONMemberOf(v, doc any) bool {
	if arr, ok := doc.([]any); ok {
		for _, e := range arr {
			if JSONEqual(v, e) {
				return true
			}
		}
		return false
	}
	return JSONEqual(v, doc)
}

// JSONPretty is JSON_PRETTY: two-space indentation, one member or element per line.
func JSONPretty(v any) string {
	var b bytes.Buffer
	appendPretty(&b, v, 0)
	return b.String()
}

func appendPretty(b *bytes.Buffer, v any, depth int) {
	indent := func(d int) {
		b.WriteByte('\n')
		for i := 0; i < d; i++ {
			b.WriteString("  ")
		}
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			appendPretty(b, e, depth+1)
		}
		indent(depth)
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			appendJSONString(b, k)
			b.WriteString(": ")
			appendPretty(b, x[k], depth+1)
		}
		indent(depth)
		b.WriteByte('}')
	default:
		appendJSON(b, v)
	}
}

// JSONPathKey is a member leg as MySQL prints it in a path: .name for an identifier, ."..."
// otherwise.
func JSONPathKey(k string) string {
	ident := k != ""
	for i, r := range k {
		if !(r == '_' || r == '$' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			ident = false
			break
		}
	}
	if ident {
		return "." + k
	}
	var b bytes.Buffer
	appendJSONString(&b, k)
	return "." + b.String()
}

// FoundValue is a value a path selected, with the concrete path that reaches it.
type FoundValue struct {
	Path string
	V    any
}

// FindPaths is Find with the concrete path of each value ($[1].a for $[*].a).
func (p *JSONPath) FindPaths(doc any) []FoundValue {
	var out []FoundValue
	findPathLegs(doc, p.legs, "$", &out)
	return out
}

func findPathLegs(v any, legs []pathLeg, at string, out *[]FoundValue) {
	if len(legs) == 0 {
		*out = append(*out, FoundValue{at, v})
		return
	}
	l, rest := legs[0], legs[1:]
	idx := func(i int) string { return at + "[" + strconv.Itoa(i) + "]" }
	switch l.kind {
	case legKey:
		if m, ok := v.(map[string]any); ok {
			if c, ok := m[l.key]; ok {
				findPathLegs(c, rest, at+JSONPathKey(l.key), out)
			}
		}
	case legAnyKey:
		if m, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				findPathLegs(m[k], rest, at+JSONPathKey(k), out)
			}
		}
	case legIndex:
		a, ok := v.([]any)
		if !ok {
			if resolveIndex(l.idx, l.fromLast, 1) == 0 {
				findPathLegs(v, rest, at, out)
			}
			return
		}
		if i := resolveIndex(l.idx, l.fromLast, len(a)); i >= 0 && i < len(a) {
			findPathLegs(a[i], rest, idx(i), out)
		}
	case legAnyIndex:
		if a, ok := v.([]any); ok {
			for i, e := range a {
				findPathLegs(e, rest, idx(i), out)
			}
		}
	case legRange:
		if a, ok := v.([]any); ok {
			from := max(resolveIndex(l.idx, l.fromLast, len(a)), 0)
			to := min(resolveIndex(l.idx2, l.last2, len(a)), len(a)-1)
			for i := from; i <= to; i++ {
				findPathLegs(a[i], rest, idx(i), out)
			}
		}
	case legAnyDepth:
		findPathLegs(v, rest, at, out)
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				findPathLegs(e, legs, idx(i), out)
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				findPathLegs(x[k], legs, at+JSONPathKey(k), out)
			}
		}
	}
}

// JSONSearch walks doc (depth first, in document order) and returns the paths of the string
// scalars match accepts, each once.
func JSONSearch(doc any, at string, match func(string) bool, out *[]string, seen map[string]bool) {
	switch x := doc.(type) {
	case string:
		if match(x) && !seen[at] {
			seen[at] = true
			*out = append(*out, at)
		}
	case []any:
		for i, e := range x {
			JSONSearch(e, at+"["+strconv.Itoa(i)+"]", match, out, seen)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			JSONSearch(x[k], at+JSONPathKey(k), match, out, seen)
		}
	}
}

// Update applies fn to the value the (non-wild) path selects and returns the new document; doc
// is returned unchanged when the path selects nothing.
func (p *JSONPath) Update(doc any, fn func(v any) any) any {
	return updateLegs(doc, p.legs, fn)
}

func updateLegs(v any, legs []pathLeg, fn func(any) any) any {
	if len(legs) == 0 {
		return fn(v)
	}
	l, rest := legs[0], legs[1:]
	switch l.kind {
	case legKey:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		c, ok := m[l.key]
		if !ok {
			return v
		}
		n := cloneMap(m)
		n[l.key] = updateLegs(c, rest, fn)
		return n
	case legIndex:
		a, ok := v.([]any)
		if !ok {
			if resolveIndex(l.idx, l.fromLast, 1) == 0 {
				return updateLegs(v, rest, fn)
			}
			return v
		}
		i := resolveIndex(l.idx, l.fromLast, len(a))
		if i < 0 || i >= len(a) {
			return v
		}
		n := append([]any{}, a...)
		n[i] = updateLegs(a[i], rest, fn)
		return n
	}
	return v
}

// ArrayInsert is JSON_ARRAY_INSERT's step: the path must end in an array index (ok false
// otherwise); val is inserted there when the parent is an array (appended past its end).
func (p *JSONPath) ArrayInsert(doc any, val any) (any, bool) {
	if len(p.legs) == 0 || p.legs[len(p.legs)-1].kind != legIndex {
		return doc, false
	}
	last := p.legs[len(p.legs)-1]
	parent := &JSONPath{legs: p.legs[:len(p.legs)-1]}
	return parent.Update(doc, func(v any) any {
		a, ok := v.([]any)
		if !ok {
			return v
		}
		i := min(max(resolveIndex(last.idx, last.fromLast, len(a)), 0), len(a))
		n := make([]any, 0, len(a)+1)
		n = append(n, a[:i]...)
		n = append(n, val)
		return append(n, a[i:]...)
	}), true
}

// LikeMatcher returns a LIKE matcher for pattern (%, _ and the escape character), comparing
// case-sensitively.
func LikeMatcher(pattern string, esc rune) func(string) bool {
	p := []rune(pattern)
	return func(s string) bool { return LikeRunes([]rune(s), p, esc) }
}

// LikeRunes matches SQL LIKE patterns with % and _ (backtracking on the last %, linear in
// practice); esc escapes the next pattern character.
func LikeRunes(s, p []rune, esc rune) bool {
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			c := p[pi]
			switch {
			case c == esc && pi+1 < len(p):
				if s[si] == p[pi+1] {
					si++
					pi += 2
					continue
				}
			case c == '%':
				starP, starS = pi, si
				pi++
				continue
			case c == '_':
				si++
				pi++
				continue
			default:
				if s[si] == c {
					si++
					pi++
					continue
				}
			}
		}
		if starP >= 0 {
			starS++
			si = starS
			pi = starP + 1
			continue
		}
		return false
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
