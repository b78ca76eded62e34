package expr

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Regular expressions: REGEXP / RLIKE and the REGEXP_LIKE, REGEXP_INSTR, REGEXP_SUBSTR and
// REGEXP_REPLACE functions. MySQL 8 uses ICU; Kiln uses Go's RE2 engine, which has the same
// syntax for the common subset (classes, POSIX brackets, anchors, \b, \d, \w, \s, quantifiers,
// non-greedy quantifiers, groups) but no back-references, look-around, possessive quantifiers or
// atomic groups (those patterns fail with error 3690 or 3689). Case sensitivity follows the
// collation of the arguments (case-insensitive for _ci collations, sensitive for _cs, _bin and
// binary strings) unless match_type says otherwise. Positions count characters.

// regexpErr maps a Go pattern error to MySQL's ICU error.
func regexpErr(err error) error {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return sqlerr.New(sqlerr.ErrRegexpIllegalArgument, "Illegal argument to a regular expression.")
	}
	switch se.Code {
	case syntax.ErrMissingParen, syntax.ErrUnexpectedParen:
		return sqlerr.New(sqlerr.ErrRegexpMismatchedParen, "Mismatched parenthesis in regular expression.")
	case syntax.ErrMissingBracket:
		return sqlerr.New(sqlerr.ErrRegexpMissingCloseBracket, "The regular expression contains an unclosed bracket expression.")
	case syntax.ErrInvalidCharRange:
		return sqlerr.New(sqlerr.ErrRegexpInvalidRange, "The regular expression contains an [x-y] character range where x comes after y.")
	case syntax.ErrInvalidEscape:
		if len(se.Expr) == 2 && se.Expr[1] >= '1' && se.Expr[1] <= '9' {
			return sqlerr.New(sqlerr.ErrRegexpUnimplemented, "Unimplemented functionality in regular expression.")
		}
		return sqlerr.New(sqlerr.ErrRegexpBadEscapeSequence, "Unrecognized escape sequence in regular expression.")
	case syntax.ErrInvalidRepeatSize:
		return sqlerr.New(sqlerr.ErrRegexpBadInterval, "Incorrect description of a {min,max} interval.")
	case syntax.ErrInvalidPerlOp, syntax.ErrInvalidNamedCapture:
		return sqlerr.New(sqlerr.ErrRegexpUnimplemented, "Unimplemented functionality in regular expression.")
	case syntax.ErrLarge, syntax.ErrNestingDepth:
		return sqlerr.New(sqlerr.ErrRegexpPatternTooBig, "The regular expression pattern exceeds limits on size or complexity.")
	}
	return sqlerr.New(sqlerr.ErrRegexpRuleSyntax, "Syntax error in regular expression on line 1, character 1.")
}

// CompileRegexp compiles pattern with the flags of match_type (c i m n u) on top of the
// collation's case sensitivity; fn names the function for error 1210.
func (env *Env) CompileRegexp(pattern string, ci bool, matchType string, fn string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, sqlerr.New(sqlerr.ErrRegexpIllegalArgument, "Illegal argument to a regular expression.")
	}
	multi, dotAll := false, false
	for _, r := range matchType {
		switch r {
		case 'c':
			ci = false
		case 'i':
			ci = true
		case 'm':
			multi = true
		case 'n':
			dotAll = true
		case 'u':
			// Unix lines: Go only ever treats \n as a line terminator.
		default:
			return nil, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to %s", fn)
		}
	}
	var flags string
	if ci {
		flags += "i"
	}
	if multi {
		flags += "m"
	}
	if dotAll {
		flags += "s"
	}
	if flags != "" {
		pattern = "(?" + flags + ")" + pattern
	}
	re, err := env.regexp(pattern)
	if err != nil {
		return nil, regexpErr(err)
	}
	return re, nil
}

// RegexpEval is REGEXP_LIKE, REGEXP_INSTR, REGEXP_SUBSTR or REGEXP_REPLACE (name) of the
// evaluated arguments vs; ci is the case-insensitivity of the operands' collation.
func RegexpEval(env *Env, name string, vs []types.Value, ci bool) (types.Value, error) {
	subject := types.ToString(vs[0])
	bin := vs[0].K == types.KindBytes || vs[1].K == types.KindBytes
	if bin {
		ci = false
	}
	// Optional arguments by position: pos, occurrence, return_option (INSTR), match_type.
	opt := vs[2:]
	if name == "regexp_replace" {
		opt = vs[3:]
	}
	pos, occ, retOpt := int64(1), int64(1), int64(0)
	if name == "regexp_replace" {
		occ = 0
	}
	matchType := ""
	nums := map[string]int{"regexp_like": 0, "regexp_instr": 3, "regexp_substr": 2, "regexp_replace": 2}[name]
	for i, v := range opt {
		if i >= nums {
			matchType = types.ToString(v)
			break
		}
		n := types.ToIntLenient(v)
		switch i {
		case 0:
			pos = n
		case 1:
			occ = n
		case 2:
			retOpt = n
		}
	}
	re, err := env.CompileRegexp(types.ToString(vs[1]), ci, matchType, name)
	if err != nil {
		return types.Null, err
	}
	if name == "regexp_like" {
		return BoolVal(re.MatchString(subject)), nil
	}
	// The byte offset of character pos.
	nchars := utf8.RuneCountInString(subject)
	if bin {
		nchars = len(subject)
	}
	if pos < 1 || pos > int64(nchars)+1 {
		return types.Null, sqlerr.New(sqlerr.ErrRegexpIndexOutOfBounds, "Index out of bounds in regular expression search.")
	}
	start := charByteOffset(subject, int(pos-1), bin)
	if name == "regexp_instr" && retOpt != 0 && retOpt != 1 {
		return types.Null, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to regexp_instr: return_option must be 1 or 0.")
	}
	charPos := func(byteOff int) int64 {
		if bin {
			return int64(byteOff + 1)
		}
		return int64(utf8.RuneCountInString(subject[:byteOff]) + 1)
	}
	if name == "regexp_replace" {
		repl := types.ToString(vs[2])
		var out strings.Builder
		out.WriteString(subject[:start])
		last := start
		n := int64(0)
		for _, m := range re.FindAllStringSubmatchIndex(subject[start:], -1) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += start
				}
			}
			n++
			if occ > 0 && n != occ {
				continue
			}
			out.WriteString(subject[last:m[0]])
			if err := expandICU(&out, repl, subject, m); err != nil {
				return types.Null, err
			}
			// Each match may add the whole replacement: stop as soon as the result passes
			// max_allowed_packet rather than after building all of it.
			if out.Len() > MinMaxAllowedPacket && env.ResultTooLarge(name, int64(out.Len()+len(subject)-m[1])) {
				return types.Null, nil
			}
			last = m[1]
			if occ > 0 {
				break
			}
		}
		out.WriteString(subject[last:])
		return strValue(out.String(), vs[0].K == types.KindBytes), nil
	}
	if occ < 1 {
		occ = 1
	}
	matches := re.FindAllStringIndex(subject[start:], int(min(occ, 1<<30)))
	if int64(len(matches)) < occ {
		if name == "regexp_substr" {
			return types.Null, nil
		}
		return types.NewInt(0), nil
	}
	m := matches[occ-1]
	m0, m1 := m[0]+start, m[1]+start
	if name == "regexp_substr" {
		return strValue(subject[m0:m1], vs[0].K == types.KindBytes), nil
	}
	if retOpt == 1 {
		return types.NewInt(charPos(m1)), nil
	}
	return types.NewInt(charPos(m0)), nil
}

func strValue(s string, bin bool) types.Value {
	if bin {
		return types.NewBytes(s)
	}
	return types.NewString(s)
}

// charByteOffset is the byte offset of character n (bytes for binary strings).
func charByteOffset(s string, n int, bin bool) int {
	if bin {
		return min(n, len(s))
	}
	off := 0
	for i := 0; i < n && off < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}

// expandICU appends ICU's replacement text: $n inserts group n (digits taken while they name an
// existing group), \c inserts c literally.
func expandICU(out *strings.Builder, repl, subject string, m []int) error {
	groups := len(m)/2 - 1
	for i := 0; i < len(repl); i++ {
		ch := repl[i]
		switch {
		case ch == '\\' && i+1 < len(repl):
			i++
			out.WriteByte(repl[i])
		case ch == '$':
			j := i + 1
			if j >= len(repl) || repl[j] < '0' || repl[j] > '9' {
				return sqlerr.New(sqlerr.ErrRegexpIllegalArgument, "Illegal argument to a regular expression.")
			}
			n := int(repl[j] - '0')
			j++
			for j < len(repl) && repl[j] >= '0' && repl[j] <= '9' {
				next, _ := strconv.Atoi(repl[i+1 : j+1])
				if next > groups {
					break
				}
				n = next
				j++
			}
			if n > groups {
				return sqlerr.New(sqlerr.ErrRegexpIndexOutOfBounds, "Index out of bounds in regular expression search.")
			}
			if m[2*n] >= 0 {
				out.WriteString(subject[m[2*n]:m[2*n+1]])
			}
			i = j - 1
		default:
			out.WriteByte(ch)
		}
	}
	return nil
}
