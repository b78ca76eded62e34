package sql

import (
	"strings"

	"github.com/kiln-db/kiln/internal/sql/ddl"
)

// Expression defaults (MySQL 8.0.13+: `c INT DEFAULT (3 + 5)`). The TiDB parser takes only a
// literal, CURRENT_TIMESTAMP, or a function call (in parentheses or not) after DEFAULT, so
// `DEFAULT (3 + 5)` is a syntax error to it; a function call's arguments, though, may be any
// expression. exprDefaultRewrite wraps each `DEFAULT ( ... )` of a CREATE or ALTER statement in
// a pseudo-function call, `DEFAULT (__kiln_default_expr( ... ))`, which sql/ddl's setDefault
// unwraps (ddl.ExprDefaultFunc): in MySQL 8 any parenthesised default is an expression default
// (`DEFAULT ('abc')` too, which is why a TEXT column may have it), so the rewritten statement is
// parsed first. If it does not parse (DEFAULT(col), the function, in a view's SELECT), the
// statement is parsed as written, so syntax errors read as before. Other statements are not
// scanned.

// exprDefaultRewrite returns text with every DEFAULT (...) outside strings, quoted names and
// comments wrapped, and whether it is a CREATE/ALTER statement that had one.
func exprDefaultRewrite(text string) (string, bool) {
	head := strings.TrimLeft(text, " \t\r\n")
	if !(len(head) >= 6 && strings.EqualFold(head[:6], "CREATE") || len(head) >= 5 && strings.EqualFold(head[:5], "ALTER")) {
		return "", false
	}
	if !strings.Contains(text, "(") {
		return "", false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := skipQuoted(text, i)
			b.WriteString(text[i:j])
			i = j
		case c == '#' || (c == '-' && strings.HasPrefix(text[i:], "-- ")):
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = len(text) - i
			}
			b.WriteString(text[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				b.WriteString(text[i:])
				i = len(text)
				continue
			}
			b.WriteString(text[i : i+2+j+2])
			i += 2 + j + 2
		case isWordByte(c):
			j := i
			for j < len(text) && isWordByte(text[j]) {
				j++
			}
			word := text[i:j]
			b.WriteString(word)
			i = j
			if !strings.EqualFold(word, "DEFAULT") || (i-len(word) > 0 && (text[i-len(word)-1] == '.' || text[i-len(word)-1] == '@')) {
				continue
			}
			k := i
			for k < len(text) && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n') {
				k++
			}
			if k >= len(text) || text[k] != '(' {
				continue
			}
			m := matchParen(text, k)
			if m < 0 {
				continue
			}
			b.WriteString(text[i:k])
			b.WriteString("(" + ddl.ExprDefaultFunc + "(")
			b.WriteString(text[k+1 : m])
			b.WriteString("))")
			i = m + 1
			changed = true
		default:
			b.WriteByte(c)
			i++
		}
	}
	if !changed {
		return "", false
	}
	return b.String(), true
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// skipQuoted returns the offset after the quoted string or name starting at i (a doubled quote
// or, outside backquotes, a backslash escapes the next byte); len(text) if it does not end.
func skipQuoted(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch {
		case text[j] == '\\' && q != '`':
			j++
		case text[j] == q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(text)
}

// matchParen returns the offset of the parenthesis closing the one at k, or -1.
func matchParen(text string, k int) int {
	depth := 0
	for j := k; j < len(text); {
		switch text[j] {
		case '\'', '"', '`':
			j = skipQuoted(text, j)
			continue
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
		j++
	}
	return -1
}
