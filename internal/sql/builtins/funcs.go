// Package builtins is the library of pure SQL functions: string, numeric, date and time, hashing,
// network and UUID functions, each a Func over evaluated arguments, found by name with its arity
// (LookupFunc; LookupFuncCollation for those that compare strings under a collation), and the
// size rules that bound a result by max_allowed_packet before it is built (funcsize.go).
//
// A builtin is pure: it sees only its arguments (and a collation fixed when it is looked up), never
// a session, so it must not import internal/sql; a function that needs the session (NOW, DATABASE,
// LAST_INSERT_ID, the session's time zone, user variables...) stays in the facade, which compiles
// calls and checks their arity. Values, conversion, comparison, arithmetic, time and JSON are
// internal/sql/types', which this package builds on. A builtin never panics on bad input: it
// returns NULL, a MySQL error, or a value with a warning (FuncWarning).
package builtins

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Func is a pure builtin function. Arguments arrive evaluated; the arity was checked against
// LookupFunc's bounds.
type Func func(args []types.Value) (types.Value, error)

// FuncWarning is returned as the error of a Func when MySQL returns a value together with a
// warning (STR_TO_DATE of a bad value, FORMAT with an unknown locale...): the caller records Warn
// and uses Value.
type FuncWarning struct {
	Value types.Value
	Warn  *sqlerr.Error
}

func (w *FuncWarning) Error() string { return w.Warn.Message }

// warnResult returns v with a warning.
func warnResult(v types.Value, code uint16, format string, args ...any) (types.Value, error) {
	return v, &FuncWarning{Value: v, Warn: sqlerr.New(code, format, args...)}
}

type funcDef struct {
	min, max int // max -1: variadic
	f        Func
	// withColl, when set, builds the function for a comparison collation (string search and
	// comparison functions); f is then withColl(utf8mb4_0900_ai_ci).
	withColl func(c *types.Collation) Func
}

// maxResultLen bounds REPEAT/LPAD/SPACE results for callers that call a Func directly; the
// session's max_allowed_packet (NULL with warning 1301) is checked before, see funcsize.go.
const maxResultLen = MaxResultBytes

var funcTable map[string]funcDef

func init() {
	funcTable = map[string]funcDef{
		"concat":           {1, -1, fnConcat, nil},
		"concat_ws":        {2, -1, fnConcatWS, nil},
		"substring":        {2, 3, fnSubstring, nil},
		"substr":           {2, 3, fnSubstring, nil},
		"mid":              {3, 3, fnSubstring, nil},
		"left":             {2, 2, fnLeft, nil},
		"right":            {2, 2, fnRight, nil},
		"length":           {1, 1, fnLength, nil},
		"octet_length":     {1, 1, fnLength, nil},
		"char_length":      {1, 1, fnCharLength, nil},
		"character_length": {1, 1, fnCharLength, nil},
		"lower":            {1, 1, fnLower, nil},
		"lcase":            {1, 1, fnLower, nil},
		"upper":            {1, 1, fnUpper, nil},
		"ucase":            {1, 1, fnUpper, nil},
		"trim":             {1, 1, fnTrim(true, true), nil},
		"ltrim":            {1, 1, fnTrim(true, false), nil},
		"rtrim":            {1, 1, fnTrim(false, true), nil},
		"replace":          {3, 3, fnReplace, nil},
		"reverse":          {1, 1, fnReverse, nil},
		"repeat":           {2, 2, fnRepeat, nil},
		"lpad":             {3, 3, fnPad(true), nil},
		"rpad":             {3, 3, fnPad(false), nil},
		"instr":            {2, 2, nil, fnInstr},
		"locate":           {2, 3, nil, fnLocate},
		"position":         {2, 2, nil, fnLocate},
		"ascii":            {1, 1, fnASCII, nil},
		"hex":              {1, 1, fnHex, nil},
		"unhex":            {1, 1, fnUnhex, nil},
		"space":            {1, 1, fnSpace, nil},
		"strcmp":           {2, 2, nil, fnStrcmp},
		"abs":              {1, 1, fnAbs, nil},
		"round":            {1, 2, fnRound(false), nil},
		"truncate":         {2, 2, fnRound(true), nil},
		"floor":            {1, 1, fnFloorCeil(true), nil},
		"ceil":             {1, 1, fnFloorCeil(false), nil},
		"ceiling":          {1, 1, fnFloorCeil(false), nil},
		"mod":              {2, 2, func(a []types.Value) (types.Value, error) { return types.Mod(a[0], a[1]) }, nil},
		"sign":             {1, 1, fnSign, nil},
		"sqrt":             {1, 1, fnFloat1("sqrt", math.Sqrt, func(x float64) bool { return x >= 0 }), nil},
		"exp":              {1, 1, fnFloat1("exp", math.Exp, nil), nil},
		"ln":               {1, 1, fnFloat1("ln", math.Log, positive), nil},
		"log2":             {1, 1, fnFloat1("log2", math.Log2, positive), nil},
		"log10":            {1, 1, fnFloat1("log10", math.Log10, positive), nil},
		"log":              {1, 2, fnLog, nil},
		"pow":              {2, 2, fnPow, nil},
		"power":            {2, 2, fnPow, nil},
		"pi":               {0, 0, fnPi, nil},
		"greatest":         {2, -1, nil, fnGreatestLeast(1)},
		"least":            {2, -1, nil, fnGreatestLeast(-1)},
		"crc32":            {1, 1, fnCRC32, nil},
		"md5":              {1, 1, fnMD5, nil},
		"sha1":             {1, 1, fnSHA1, nil},
		"sha":              {1, 1, fnSHA1, nil},
		"sha2":             {2, 2, fnSHA2, nil},
		"date":             {1, 1, fnDate, nil},
		"year":             {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(y) }, false), nil},
		"month":            {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(m) }, false), nil},
		"day":              {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(d) }, false), nil},
		"dayofmonth":       {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(d) }, false), nil},
		"quarter":          {1, 1, fnDatePart(func(y, m, d int) int64 { return int64((m + 2) / 3) }, false), nil},
		"dayofweek":        {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(types.CalcWeekday(types.CalcDaynr(y, m, d), true) + 1) }, true), nil},
		"weekday":          {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(types.CalcWeekday(types.CalcDaynr(y, m, d), false)) }, true), nil},
		"dayofyear":        {1, 1, fnDatePart(func(y, m, d int) int64 { return types.CalcDaynr(y, m, d) - types.CalcDaynr(y, 1, 1) + 1 }, true), nil},
		"to_days":          {1, 1, fnDatePart(func(y, m, d int) int64 { return types.CalcDaynr(y, m, d) }, true), nil},
		"hour":             {1, 1, fnTimePart(func(h, m, s, us int64) int64 { return h }), nil},
		"minute":           {1, 1, fnTimePart(func(h, m, s, us int64) int64 { return m }), nil},
		"second":           {1, 1, fnTimePart(func(h, m, s, us int64) int64 { return s }), nil},
		"microsecond":      {1, 1, fnTimePart(func(h, m, s, us int64) int64 { return us }), nil},
		"monthname":        {1, 1, fnMonthName, nil},
		"dayname":          {1, 1, fnDayName, nil},
		"week":             {1, 2, fnWeek, nil},
		"last_day":         {1, 1, fnLastDay, nil},
		"datediff":         {2, 2, fnDatediff, nil},
		"date_format":      {2, 2, fnDateFormat, nil},
	}
	registerStringFuncs(funcTable)
	registerTimeFuncs(funcTable)
	utf8mb4Default, _ := types.DefaultCollation("utf8mb4")
	for name, d := range funcTable {
		if d.withColl != nil {
			d.f = d.withColl(utf8mb4Default)
			funcTable[name] = d
		}
	}
}

// LookupFunc returns the builtin function name (lower case) and its arity bounds (maxArgs -1:
// variadic). String comparison and search functions (INSTR, LOCATE, POSITION, STRCMP, GREATEST,
// LEAST) compare with utf8mb4_0900_ai_ci; LookupFuncCollation picks another collation.
func LookupFunc(name string) (f Func, minArgs, maxArgs int, ok bool) {
	d, ok := funcTable[name]
	if !ok {
		return nil, 0, 0, false
	}
	return d.f, d.min, d.max, true
}

// LookupFuncCollation is LookupFunc with the collation the arguments' coercibility resolved to.
func LookupFuncCollation(name string, coll *types.Collation) (f Func, minArgs, maxArgs int, ok bool) {
	d, ok := funcTable[name]
	if !ok {
		return nil, 0, 0, false
	}
	if d.withColl != nil && coll != nil {
		return d.withColl(coll), d.min, d.max, true
	}
	return d.f, d.min, d.max, true
}

// FuncUsesCollation reports whether the function's result depends on a collation.
func FuncUsesCollation(name string) bool {
	d, ok := funcTable[name]
	return ok && d.withColl != nil
}

func anyNull(args []types.Value) bool {
	for i := range args {
		if args[i].K == types.KindNull {
			return true
		}
	}
	return false
}

func strVal(s string, bin bool) types.Value {
	if bin {
		return types.NewBytes(s)
	}
	return types.NewString(s)
}

func intArg(v types.Value) int64 {
	i, _ := types.ToInt(v)
	return i
}

// ---- string functions ----

func fnConcat(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	bin := false
	n := 0
	for i := range args {
		bin = bin || args[i].K == types.KindBytes
		n += len(args[i].S)
	}
	buf := make([]byte, 0, n+16)
	for i := range args {
		buf = appendStr(buf, args[i])
	}
	return strVal(string(buf), bin), nil
}

func appendStr(buf []byte, v types.Value) []byte {
	if v.K == types.KindString || v.K == types.KindBytes {
		return append(buf, v.S...)
	}
	return types.AppendText(buf, v)
}

func fnConcatWS(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	bin := args[0].K == types.KindBytes
	var buf []byte
	first := true
	for _, a := range args[1:] {
		if a.K == types.KindNull {
			continue
		}
		bin = bin || a.K == types.KindBytes
		if !first {
			buf = appendStr(buf, args[0])
		}
		first = false
		buf = appendStr(buf, a)
	}
	return strVal(string(buf), bin), nil
}

// chars gives character positions in non-binary strings and byte positions in binary ones.
type chars struct {
	s   string
	bin bool
}

func charsOf(v types.Value) chars { return chars{types.ToString(v), v.K == types.KindBytes} }

func (c chars) len() int {
	if c.bin {
		return len(c.s)
	}
	return utf8.RuneCountInString(c.s)
}

// offset returns the byte offset of character i (clamped to len(s)).
func (c chars) offset(i int) int {
	if c.bin {
		return min(max(i, 0), len(c.s))
	}
	if i <= 0 {
		return 0
	}
	off := types.CharOffset(c.s, i)
	if off < 0 {
		return len(c.s)
	}
	return off
}

func (c chars) sub(from, to int) types.Value { return strVal(c.s[c.offset(from):c.offset(to)], c.bin) }

func fnSubstring(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	c := charsOf(args[0])
	pos := intArg(args[1])
	n := c.len()
	var start int
	switch {
	case pos == 0 || pos > int64(n) || pos < -int64(n):
		return strVal("", c.bin), nil
	case pos > 0:
		start = int(pos - 1)
	default:
		start = n + int(pos)
	}
	end := n
	if len(args) == 3 {
		l := intArg(args[2])
		if l <= 0 {
			return strVal("", c.bin), nil
		}
		if l < int64(n-start) {
			end = start + int(l)
		}
	}
	return c.sub(start, end), nil
}

func fnLeft(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	c := charsOf(args[0])
	n := intArg(args[1])
	if n <= 0 {
		return strVal("", c.bin), nil
	}
	if n > int64(len(c.s)) {
		n = int64(len(c.s))
	}
	return c.sub(0, int(n)), nil
}

func fnRight(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	c := charsOf(args[0])
	n := intArg(args[1])
	if n <= 0 {
		return strVal("", c.bin), nil
	}
	l := c.len()
	if n >= int64(l) {
		return strVal(c.s, c.bin), nil
	}
	return c.sub(l-int(n), l), nil
}

func fnLength(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	if args[0].K == types.KindString || args[0].K == types.KindBytes {
		return types.NewInt(int64(len(args[0].S))), nil
	}
	return types.NewInt(int64(len(types.ToString(args[0])))), nil
}

func fnCharLength(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	return types.NewInt(int64(charsOf(args[0]).len())), nil
}

func fnLower(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull || a.K == types.KindBytes {
		return a, nil
	}
	return types.NewString(strings.ToLower(types.ToString(a))), nil
}

func fnUpper(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull || a.K == types.KindBytes {
		return a, nil
	}
	return types.NewString(strings.ToUpper(types.ToString(a))), nil
}

func fnTrim(left, right bool) Func {
	return func(args []types.Value) (types.Value, error) {
		a := args[0]
		if a.K == types.KindNull {
			return types.Null, nil
		}
		s := types.ToString(a)
		if left {
			s = strings.TrimLeft(s, " ")
		}
		if right {
			s = strings.TrimRight(s, " ")
		}
		return strVal(s, a.K == types.KindBytes), nil
	}
}

func fnReplace(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	s, from, to := types.ToString(args[0]), types.ToString(args[1]), types.ToString(args[2])
	bin := args[0].K == types.KindBytes || args[1].K == types.KindBytes || args[2].K == types.KindBytes
	if from == "" {
		return strVal(s, bin), nil
	}
	return strVal(strings.ReplaceAll(s, from, to), bin), nil
}

func fnReverse(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull {
		return types.Null, nil
	}
	s := types.ToString(a)
	out := make([]byte, len(s))
	if a.K == types.KindBytes {
		for i := 0; i < len(s); i++ {
			out[len(s)-1-i] = s[i]
		}
		return types.NewBytes(string(out)), nil
	}
	j := len(s)
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		copy(out[j-size:j], s[i:i+size])
		j -= size
		i += size
	}
	return types.NewString(string(out)), nil
}

func fnRepeat(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	s := types.ToString(args[0])
	n := intArg(args[1])
	bin := args[0].K == types.KindBytes
	if n <= 0 || s == "" {
		return strVal("", bin), nil
	}
	if n > maxResultLen/int64(len(s)) {
		return types.Null, nil
	}
	return strVal(strings.Repeat(s, int(n)), bin), nil
}

func fnPad(left bool) Func {
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		bin := args[0].K == types.KindBytes || args[2].K == types.KindBytes
		c := chars{types.ToString(args[0]), bin}
		pad := chars{types.ToString(args[2]), bin}
		n := intArg(args[1])
		if n < 0 || n > maxResultLen {
			return types.Null, nil
		}
		l := c.len()
		if int64(l) >= n {
			return c.sub(0, int(n)), nil
		}
		pl := pad.len()
		if pl == 0 {
			return types.Null, nil
		}
		need := int(n) - l
		var b strings.Builder
		b.Grow(len(c.s) + need*len(pad.s)/pl + 4)
		if !left {
			b.WriteString(c.s)
		}
		for need > 0 {
			if need >= pl {
				b.WriteString(pad.s)
				need -= pl
			} else {
				b.WriteString(pad.s[:pad.offset(need)])
				need = 0
			}
		}
		if left {
			b.WriteString(c.s)
		}
		return strVal(b.String(), bin), nil
	}
}

// locate returns the 1-based character position of sub in s at or after character from (0-based),
// or 0, comparing with coll (binary when either side is binary).
func locate(s, sub types.Value, from int, coll *types.Collation) int64 {
	bin := s.K == types.KindBytes || sub.K == types.KindBytes
	hs := chars{types.ToString(s), bin}
	nd := chars{types.ToString(sub), bin}
	if from < 0 || from > hs.len() {
		return 0
	}
	if bin || coll.Reversible() { // bytewise: binary or _bin
		off := hs.offset(from)
		i := strings.Index(hs.s[off:], nd.s)
		if i < 0 {
			return 0
		}
		if bin {
			return int64(off + i + 1)
		}
		return int64(from + utf8.RuneCountInString(hs.s[off:off+i]) + 1)
	}
	n := nd.len()
	if n == 0 {
		return int64(from + 1)
	}
	// Character-by-character comparison under the collation.
	off := hs.offset(from)
	pos := from
	for off < len(hs.s) {
		end := types.CharOffset(hs.s[off:], n)
		if end < 0 {
			end = len(hs.s) - off
		}
		if coll.Compare(hs.s[off:off+end], nd.s) == 0 {
			return int64(pos + 1)
		}
		_, size := utf8.DecodeRuneInString(hs.s[off:])
		off += size
		pos++
	}
	return 0
}

func fnInstr(coll *types.Collation) Func {
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		return types.NewInt(locate(args[0], args[1], 0, coll)), nil
	}
}

func fnLocate(coll *types.Collation) Func {
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		from := 0
		if len(args) == 3 {
			p := intArg(args[2])
			if p < 1 || p > math.MaxInt32 {
				return types.NewInt(0), nil
			}
			from = int(p - 1)
		}
		return types.NewInt(locate(args[1], args[0], from, coll)), nil
	}
}

func fnStrcmp(coll *types.Collation) Func {
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		a, b := types.ToString(args[0]), types.ToString(args[1])
		c := coll
		if args[0].K == types.KindBytes || args[1].K == types.KindBytes {
			c = nil
		}
		return types.NewInt(int64(c.Compare(a, b))), nil
	}
}

func fnASCII(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	s := types.ToString(args[0])
	if s == "" {
		return types.NewInt(0), nil
	}
	return types.NewInt(int64(s[0])), nil
}

func fnHex(args []types.Value) (types.Value, error) {
	a := args[0]
	switch a.K {
	case types.KindNull:
		return types.Null, nil
	case types.KindString, types.KindBytes:
		return types.NewString(strings.ToUpper(hex.EncodeToString([]byte(a.S)))), nil
	case types.KindInt, types.KindUint:
		return types.NewString(strings.ToUpper(hexUint(uint64(a.I)))), nil
	case types.KindFloat, types.KindDecimal:
		u, _ := types.ToUint(a)
		return types.NewString(strings.ToUpper(hexUint(u))), nil
	}
	return types.NewString(strings.ToUpper(hex.EncodeToString([]byte(types.ToString(a))))), nil
}

func hexUint(u uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	i := len(b)
	for {
		i--
		b[i] = digits[u&15]
		u >>= 4
		if u == 0 {
			break
		}
	}
	return string(b[i:])
}

func fnUnhex(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	s := types.ToString(args[0])
	if len(s)%2 == 1 {
		s = "0" + s
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return types.Null, nil
	}
	return types.NewBytes(string(b)), nil
}

func fnSpace(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	n := intArg(args[0])
	if n <= 0 {
		return types.NewString(""), nil
	}
	if n > maxResultLen {
		return types.Null, nil
	}
	return types.NewString(strings.Repeat(" ", int(n))), nil
}

// ---- math ----

func fnAbs(args []types.Value) (types.Value, error) {
	a := types.NumericValue(args[0])
	switch a.K {
	case types.KindInt:
		if a.I == math.MinInt64 {
			return types.Null, types.RangeErr("BIGINT", "abs(", a, ")")
		}
		if a.I < 0 {
			return types.NewInt(-a.I), nil
		}
	case types.KindFloat:
		return types.Value{K: types.KindFloat, F: math.Abs(a.F), Frac: a.Frac}, nil
	case types.KindDecimal:
		return types.NewDecimal(a.D.Abs(), int(a.Frac)), nil
	}
	return a, nil
}

func fnSign(args []types.Value) (types.Value, error) {
	a := types.NumericValue(args[0])
	switch a.K {
	case types.KindNull:
		return types.Null, nil
	case types.KindInt:
		return types.NewInt(int64(types.CmpInt(a.I, 0))), nil
	case types.KindUint:
		return types.NewInt(int64(types.CmpUint(uint64(a.I), 0))), nil
	case types.KindFloat:
		return types.NewInt(int64(types.CmpFloat(a.F, 0))), nil
	case types.KindDecimal:
		return types.NewInt(int64(a.D.Sign())), nil
	}
	return types.Null, nil
}

// fnRound implements ROUND (half away from zero for exact values, half to even for doubles, as
// MySQL's rint) and TRUNCATE.
func fnRound(trunc bool) Func {
	name := "round"
	if trunc {
		name = "truncate"
	}
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		a := types.NumericValue(args[0])
		d := int64(0)
		if len(args) == 2 {
			d = intArg(args[1])
		}
		d = max(min(d, 30), -100)
		switch a.K {
		case types.KindInt, types.KindUint:
			if d >= 0 {
				return a, nil
			}
			r, ok := types.RoundInt(a, d, trunc)
			if !ok {
				return types.Null, types.RangeErr(types.Pick(a.K == types.KindUint, "BIGINT UNSIGNED", "BIGINT"), name+"(", args[0], ")")
			}
			return r, nil
		case types.KindDecimal:
			var r decimal.Decimal
			if trunc {
				r = a.D.Truncate(int32(d))
			} else {
				r = a.D.Round(int32(d))
			}
			return types.NewDecimal(r, int(max(d, 0))), nil
		case types.KindFloat:
			// MySQL prints the result with d decimals (my_fcvt).
			r := types.RoundFloat(a.F, int(d))
			if trunc {
				r = types.TruncFloat(a.F, int(d))
			}
			return types.Value{K: types.KindFloat, F: r, Frac: int8(max(d, 0))}, nil
		}
		return types.Null, nil
	}
}

func fnFloorCeil(floor bool) Func {
	return func(args []types.Value) (types.Value, error) {
		a := types.NumericValue(args[0])
		switch a.K {
		case types.KindFloat:
			if floor {
				return types.NewFloat(math.Floor(a.F)), nil
			}
			return types.NewFloat(math.Ceil(a.F)), nil
		case types.KindDecimal:
			var r decimal.Decimal
			if floor {
				r = a.D.Floor()
			} else {
				r = a.D.Ceil()
			}
			if r.GreaterThanOrEqual(types.DecMinInt64) && r.LessThanOrEqual(types.DecMaxInt64) {
				return types.NewInt(r.IntPart()), nil
			}
			return types.NewDecimal(r, 0), nil
		}
		return a, nil
	}
}

func positive(x float64) bool { return x > 0 }

// fnFloat1 wraps a one-argument double function; outside its domain the result is NULL (MySQL
// adds a warning), overflow is error 1690.
func fnFloat1(name string, f func(float64) float64, domain func(float64) bool) Func {
	return func(args []types.Value) (types.Value, error) {
		if args[0].K == types.KindNull {
			return types.Null, nil
		}
		x := types.ToFloat(args[0])
		if domain != nil && !domain(x) {
			return types.Null, nil
		}
		r := f(x)
		if math.IsInf(r, 0) {
			return types.Null, types.RangeErr("DOUBLE", name+"(", args[0], ")")
		}
		if math.IsNaN(r) {
			return types.Null, nil
		}
		return types.NewFloat(r), nil
	}
}

func fnLog(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	if len(args) == 1 {
		x := types.ToFloat(args[0])
		if x <= 0 {
			return types.Null, nil
		}
		return types.NewFloat(math.Log(x)), nil
	}
	b, x := types.ToFloat(args[0]), types.ToFloat(args[1])
	if x <= 0 || b <= 0 || b == 1 {
		return types.Null, nil
	}
	return types.NewFloat(math.Log(x) / math.Log(b)), nil
}

func fnPow(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	r := math.Pow(types.ToFloat(args[0]), types.ToFloat(args[1]))
	if math.IsInf(r, 0) {
		return types.Null, sqlerr.New(sqlerr.ErrDataOutOfRange, "DOUBLE value is out of range in 'pow(%s,%s)'", args[0].String(), args[1].String())
	}
	if math.IsNaN(r) {
		return types.Null, nil
	}
	return types.NewFloat(r), nil
}

// fnPi returns π, which MySQL prints with 6 decimals.
func fnPi([]types.Value) (types.Value, error) {
	return types.Value{K: types.KindFloat, F: math.Pi, Frac: 6}, nil
}

// fnGreatestLeast returns the largest (dir 1) or smallest (dir -1) argument, comparing as MySQL
// does: all integers as integers, exact numbers as decimals, any double or string/number mix as
// doubles, all strings by the collation, all temporal as temporal.
func fnGreatestLeast(dir int) func(c *types.Collation) Func {
	return func(coll *types.Collation) Func {
		return func(args []types.Value) (types.Value, error) {
			if anyNull(args) {
				return types.Null, nil
			}
			allStr, allTime, anyNum, anyFloat, anyDec, anyBin, allUint := true, true, false, false, false, false, true
			for _, a := range args {
				switch types.ClassOf(a.K) {
				case types.ClassStr:
					allTime = false
					anyBin = anyBin || a.K == types.KindBytes
				case types.ClassNum:
					allStr, allTime, anyNum = false, false, true
					anyFloat = anyFloat || a.K == types.KindFloat
					anyDec = anyDec || a.K == types.KindDecimal
				case types.ClassTime:
					allStr = false
				}
				allUint = allUint && a.K == types.KindUint
			}
			best := 0
			better := func(i int, c int) {
				if c*dir > 0 {
					best = i
				}
			}
			switch {
			case allStr:
				c := coll
				if anyBin {
					c = nil
				}
				for i := 1; i < len(args); i++ {
					better(i, c.Compare(args[i].S, args[best].S))
				}
				return args[best], nil
			case allTime:
				for i := 1; i < len(args); i++ {
					better(i, types.Compare(args[i], args[best], nil))
				}
				return args[best], nil
			case anyFloat || (anyNum && !allStr && !allTime && hasStrOrTime(args)):
				f := types.ToFloat(args[0])
				for i := 1; i < len(args); i++ {
					g := types.ToFloat(args[i])
					if types.CmpFloat(g, f)*dir > 0 {
						best, f = i, g
					}
				}
				return types.NewFloat(f), nil
			case anyDec:
				d := types.ToDecimal(args[0])
				scale := 0
				for _, a := range args {
					scale = max(scale, types.DecScale(a))
				}
				for i := 1; i < len(args); i++ {
					e := types.ToDecimal(args[i])
					if e.Cmp(d)*dir > 0 {
						best, d = i, e
					}
				}
				return types.NewDecimal(d, scale), nil
			}
			for i := 1; i < len(args); i++ {
				better(i, types.Compare(args[i], args[best], nil))
			}
			r := args[best]
			if !allUint && r.K == types.KindUint && uint64(r.I) <= math.MaxInt64 {
				r = types.NewInt(r.I)
			}
			return r, nil
		}
	}
}

func hasStrOrTime(args []types.Value) bool {
	for _, a := range args {
		if c := types.ClassOf(a.K); c == types.ClassStr || c == types.ClassTime {
			return true
		}
	}
	return false
}

func fnCRC32(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	return types.NewUint(uint64(crc32.ChecksumIEEE([]byte(types.ToString(args[0]))))), nil
}

func fnMD5(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	h := md5.Sum([]byte(types.ToString(args[0])))
	return types.NewString(hex.EncodeToString(h[:])), nil
}

func fnSHA1(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	h := sha1.Sum([]byte(types.ToString(args[0])))
	return types.NewString(hex.EncodeToString(h[:])), nil
}

func fnSHA2(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	b := []byte(types.ToString(args[0]))
	switch intArg(args[1]) {
	case 224:
		h := sha256.Sum224(b)
		return types.NewString(hex.EncodeToString(h[:])), nil
	case 256, 0:
		h := sha256.Sum256(b)
		return types.NewString(hex.EncodeToString(h[:])), nil
	case 384:
		h := sha512.Sum384(b)
		return types.NewString(hex.EncodeToString(h[:])), nil
	case 512:
		h := sha512.Sum512(b)
		return types.NewString(hex.EncodeToString(h[:])), nil
	}
	return types.Null, nil
}

// ---- date and time ----

// datetimeArg converts v to a packed datetime as MySQL's get_date does; ok is false for values
// that are not dates (the functions then return NULL with a warning in MySQL).
func datetimeArg(v types.Value) (int64, bool) {
	switch v.K {
	case types.KindDate, types.KindDatetime:
		return v.I, true
	case types.KindString, types.KindBytes:
		p, _, err := types.ParseDatetimeMode(v.S, 6, true)
		return p, err == nil
	case types.KindDuration:
		return types.DurationToDatetime(v.I), true
	case types.KindInt, types.KindUint, types.KindFloat, types.KindDecimal:
		return types.NumberAsDatetime(v)
	}
	return 0, false
}

// durationArg converts v to a TIME as MySQL's get_time does.
func durationArg(v types.Value) (int64, bool) {
	switch v.K {
	case types.KindDuration:
		return v.I, true
	case types.KindDate, types.KindDatetime:
		_, _, _, h, mi, s, us := types.UnpackTime(v.I)
		return (int64(h)*3600+int64(mi)*60+int64(s))*types.MicrosPerSec + int64(us), true
	case types.KindString, types.KindBytes:
		us, err := types.ParseDuration(v.S, 6)
		return us, err == nil || err == types.ErrDurationRange
	case types.KindInt, types.KindUint, types.KindFloat, types.KindDecimal:
		return types.NumberAsDuration(v)
	}
	return 0, false
}

func fnDate(args []types.Value) (types.Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok || args[0].K == types.KindNull {
		return types.Null, nil
	}
	return types.NewDate(p), nil
}

// fnDatePart extracts from a date; needValid makes zero dates (and dates with zero parts) NULL.
func fnDatePart(f func(y, m, d int) int64, needValid bool) Func {
	return func(args []types.Value) (types.Value, error) {
		p, ok := datetimeArg(args[0])
		if !ok {
			return types.Null, nil
		}
		y, m, d, _, _, _, _ := types.UnpackTime(p)
		if needValid && (m == 0 || d == 0) {
			return types.Null, nil
		}
		return types.NewInt(f(y, m, d)), nil
	}
}

func fnTimePart(f func(h, m, s, us int64) int64) Func {
	return func(args []types.Value) (types.Value, error) {
		us, ok := durationArg(args[0])
		if !ok {
			return types.Null, nil
		}
		_, h, mi, s, frac := types.DurationParts(us)
		return types.NewInt(f(h, mi, s, frac)), nil
	}
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

var dayNames = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

func fnMonthName(args []types.Value) (types.Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok {
		return types.Null, nil
	}
	_, m, _, _, _, _, _ := types.UnpackTime(p)
	if m == 0 {
		return types.Null, nil
	}
	return types.NewString(monthNames[m-1]), nil
}

func fnDayName(args []types.Value) (types.Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok {
		return types.Null, nil
	}
	y, m, d, _, _, _, _ := types.UnpackTime(p)
	if m == 0 || d == 0 {
		return types.Null, nil
	}
	return types.NewString(dayNames[types.CalcWeekday(types.CalcDaynr(y, m, d), false)]), nil
}

// weekModes maps WEEK()'s mode to calc_week's behaviour flags.
var weekModes = [8]int{
	types.WeekFirstWeekday, types.WeekMondayFirst, types.WeekFirstWeekday | types.WeekYear, types.WeekMondayFirst | types.WeekYear,
	0, types.WeekMondayFirst | types.WeekFirstWeekday, types.WeekYear, types.WeekMondayFirst | types.WeekFirstWeekday | types.WeekYear,
}

func fnWeek(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	p, ok := datetimeArg(args[0])
	if !ok {
		return types.Null, nil
	}
	mode := int64(0) // default_week_format
	if len(args) == 2 {
		mode = intArg(args[1])
	}
	y, m, d, _, _, _, _ := types.UnpackTime(p)
	if m == 0 || d == 0 {
		return types.Null, nil
	}
	w, _ := types.CalcWeek(y, m, d, weekModes[mode&7])
	return types.NewInt(int64(w)), nil
}

func fnLastDay(args []types.Value) (types.Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok {
		return types.Null, nil
	}
	y, m, d, _, _, _, _ := types.UnpackTime(p)
	if m == 0 || d == 0 {
		return types.Null, nil
	}
	return types.NewDate(types.PackTime(y, m, types.DaysInMonth(y, m), 0, 0, 0, 0)), nil
}

func fnDatediff(args []types.Value) (types.Value, error) {
	p1, ok1 := datetimeArg(args[0])
	p2, ok2 := datetimeArg(args[1])
	if !ok1 || !ok2 {
		return types.Null, nil
	}
	y1, m1, d1, _, _, _, _ := types.UnpackTime(p1)
	y2, m2, d2, _, _, _, _ := types.UnpackTime(p2)
	if m1 == 0 || d1 == 0 || m2 == 0 || d2 == 0 {
		return types.Null, nil
	}
	return types.NewInt(types.CalcDaynr(y1, m1, d1) - types.CalcDaynr(y2, m2, d2)), nil
}

func daySuffix(d int) string {
	if d >= 11 && d <= 13 {
		return "th"
	}
	switch d % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

func fnDateFormat(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	p, ok := datetimeArg(args[0])
	if !ok {
		return types.Null, nil
	}
	if args[0].K == types.KindDuration {
		// A TIME formats with a zero date, its hours kept modulo nothing (MySQL's TIME→DATETIME
		// conversion for DATE_FORMAT uses the time only).
		_, h, mi, s, us := types.DurationParts(args[0].I)
		p = types.PackTime(0, 0, 0, int(h%24), int(mi), int(s), int(us))
	}
	out, ok := formatDate(nil, p, types.ToString(args[1]))
	if !ok {
		return types.Null, nil
	}
	return types.NewString(string(out)), nil
}

// formatDate implements DATE_FORMAT's specifiers; ok is false when the format needs a real date
// (names, weekdays, weeks) and p has zero month or day.
func formatDate(buf []byte, p int64, f string) ([]byte, bool) {
	y, mo, d, h, mi, s, us := types.UnpackTime(p)
	return formatParts(buf, timeParts{y: y, mo: mo, d: d, h: int64(h), mi: mi, s: s, us: us}, f)
}

// timeParts is a date and time to format; isTime marks a TIME (TIME_FORMAT), whose hours may
// exceed 23 and which may be negative.
type timeParts struct {
	y, mo, d  int
	h         int64
	mi, s, us int
	neg       bool
	isTime    bool
}

// formatParts formats t with DATE_FORMAT's specifiers. For a TIME the date specifiers that need a
// calendar (names, weeks, day of year) make the result NULL (ok false), as in MySQL.
func formatParts(buf []byte, t timeParts, f string) ([]byte, bool) {
	y, mo, d, h, mi, s, us := t.y, t.mo, t.d, t.h, t.mi, t.s, t.us
	zero := mo == 0 || d == 0 || t.isTime
	h12 := (h%24+11)%12 + 1
	if t.neg {
		buf = append(buf, '-')
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 == len(f) {
			buf = append(buf, c)
			continue
		}
		i++
		switch f[i] {
		case 'a':
			if zero {
				return nil, false
			}
			buf = append(buf, dayNames[types.CalcWeekday(types.CalcDaynr(y, mo, d), false)][:3]...)
		case 'b':
			if mo == 0 || t.isTime {
				return nil, false
			}
			buf = append(buf, monthNames[mo-1][:3]...)
		case 'c':
			buf = types.AppendPad(buf, int64(mo), 1)
		case 'D':
			if t.isTime {
				return nil, false
			}
			buf = types.AppendPad(buf, int64(d), 1)
			buf = append(buf, daySuffix(d)...)
		case 'd':
			buf = types.AppendPad(buf, int64(d), 2)
		case 'e':
			buf = types.AppendPad(buf, int64(d), 1)
		case 'f':
			buf = types.AppendPad(buf, int64(us), 6)
		case 'H':
			buf = types.AppendPad(buf, h, 2)
		case 'h', 'I':
			buf = types.AppendPad(buf, h12, 2)
		case 'i':
			buf = types.AppendPad(buf, int64(mi), 2)
		case 'j':
			if zero {
				return nil, false
			}
			buf = types.AppendPad(buf, types.CalcDaynr(y, mo, d)-types.CalcDaynr(y, 1, 1)+1, 3)
		case 'k':
			buf = types.AppendPad(buf, h, 1)
		case 'l':
			buf = types.AppendPad(buf, h12, 1)
		case 'M':
			if mo == 0 || t.isTime {
				return nil, false
			}
			buf = append(buf, monthNames[mo-1]...)
		case 'm':
			buf = types.AppendPad(buf, int64(mo), 2)
		case 'p':
			buf = append(buf, types.Pick(h%24 < 12, "AM", "PM")...)
		case 'r':
			buf = types.AppendPad(buf, h12, 2)
			buf = append(buf, ':')
			buf = types.AppendPad(buf, int64(mi), 2)
			buf = append(buf, ':')
			buf = types.AppendPad(buf, int64(s), 2)
			buf = append(buf, types.Pick(h%24 < 12, " AM", " PM")...)
		case 'S', 's':
			buf = types.AppendPad(buf, int64(s), 2)
		case 'T':
			buf = types.AppendPad(buf, h, 2)
			buf = append(buf, ':')
			buf = types.AppendPad(buf, int64(mi), 2)
			buf = append(buf, ':')
			buf = types.AppendPad(buf, int64(s), 2)
		case 'U', 'u', 'V', 'v', 'X', 'x':
			if zero {
				return nil, false
			}
			var beh int
			switch f[i] {
			case 'U':
				beh = types.WeekFirstWeekday
			case 'u':
				beh = types.WeekMondayFirst
			case 'V', 'X':
				beh = types.WeekYear | types.WeekFirstWeekday
			case 'v', 'x':
				beh = types.WeekMondayFirst | types.WeekYear
			}
			w, wy := types.CalcWeek(y, mo, d, beh)
			if f[i] == 'X' || f[i] == 'x' {
				buf = types.AppendPad(buf, int64(wy), 4)
			} else {
				buf = types.AppendPad(buf, int64(w), 2)
			}
		case 'W':
			if zero {
				return nil, false
			}
			buf = append(buf, dayNames[types.CalcWeekday(types.CalcDaynr(y, mo, d), false)]...)
		case 'w':
			if zero {
				return nil, false
			}
			buf = types.AppendPad(buf, int64(types.CalcWeekday(types.CalcDaynr(y, mo, d), true)), 1)
		case 'Y':
			buf = types.AppendPad(buf, int64(y), 4)
		case 'y':
			buf = types.AppendPad(buf, int64(y%100), 2)
		default:
			buf = append(buf, f[i])
		}
	}
	return buf, true
}

// FuncNames lists the library's functions (sorted): the SQL layer's builtin registry registers
// each of them.
func FuncNames() []string {
	names := make([]string, 0, len(funcTable))
	for n := range funcTable {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
