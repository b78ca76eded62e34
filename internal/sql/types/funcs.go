package types

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash/crc32"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Func is a pure builtin function. Arguments arrive evaluated; the arity was checked against
// LookupFunc's bounds.
type Func func(args []Value) (Value, error)

// FuncWarning is returned as the error of a Func when MySQL returns a value together with a
// warning (STR_TO_DATE of a bad value, FORMAT with an unknown locale...): the caller records Warn
// and uses Value.
type FuncWarning struct {
	Value Value
	Warn  *sqlerr.Error
}

func (w *FuncWarning) Error() string { return w.Warn.Message }

// warnResult returns v with a warning.
func warnResult(v Value, code uint16, format string, args ...any) (Value, error) {
	return v, &FuncWarning{Value: v, Warn: sqlerr.New(code, format, args...)}
}

type funcDef struct {
	min, max int // max -1: variadic
	f        Func
	// withColl, when set, builds the function for a comparison collation (string search and
	// comparison functions); f is then withColl(utf8mb4_0900_ai_ci).
	withColl func(c *Collation) Func
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
		"mod":              {2, 2, func(a []Value) (Value, error) { return Mod(a[0], a[1]) }, nil},
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
		"dayofweek":        {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(calcWeekday(calcDaynr(y, m, d), true) + 1) }, true), nil},
		"weekday":          {1, 1, fnDatePart(func(y, m, d int) int64 { return int64(calcWeekday(calcDaynr(y, m, d), false)) }, true), nil},
		"dayofyear":        {1, 1, fnDatePart(func(y, m, d int) int64 { return calcDaynr(y, m, d) - calcDaynr(y, 1, 1) + 1 }, true), nil},
		"to_days":          {1, 1, fnDatePart(func(y, m, d int) int64 { return calcDaynr(y, m, d) }, true), nil},
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
	for name, d := range funcTable {
		if d.withColl != nil {
			d.f = d.withColl(collUTF8MB4Default)
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
func LookupFuncCollation(name string, coll *Collation) (f Func, minArgs, maxArgs int, ok bool) {
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

func anyNull(args []Value) bool {
	for i := range args {
		if args[i].K == KindNull {
			return true
		}
	}
	return false
}

func strVal(s string, bin bool) Value {
	if bin {
		return NewBytes(s)
	}
	return NewString(s)
}

func intArg(v Value) int64 {
	i, _ := ToInt(v)
	return i
}

// ---- string functions ----

func fnConcat(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	bin := false
	n := 0
	for i := range args {
		bin = bin || args[i].K == KindBytes
		n += len(args[i].S)
	}
	buf := make([]byte, 0, n+16)
	for i := range args {
		buf = appendStr(buf, args[i])
	}
	return strVal(string(buf), bin), nil
}

func appendStr(buf []byte, v Value) []byte {
	if v.K == KindString || v.K == KindBytes {
		return append(buf, v.S...)
	}
	return AppendText(buf, v)
}

func fnConcatWS(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	bin := args[0].K == KindBytes
	var buf []byte
	first := true
	for _, a := range args[1:] {
		if a.K == KindNull {
			continue
		}
		bin = bin || a.K == KindBytes
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

func charsOf(v Value) chars { return chars{ToString(v), v.K == KindBytes} }

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
	off := charOffset(c.s, i)
	if off < 0 {
		return len(c.s)
	}
	return off
}

func (c chars) sub(from, to int) Value { return strVal(c.s[c.offset(from):c.offset(to)], c.bin) }

func fnSubstring(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
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

func fnLeft(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
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

func fnRight(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
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

func fnLength(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	if args[0].K == KindString || args[0].K == KindBytes {
		return NewInt(int64(len(args[0].S))), nil
	}
	return NewInt(int64(len(ToString(args[0])))), nil
}

func fnCharLength(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	return NewInt(int64(charsOf(args[0]).len())), nil
}

func fnLower(args []Value) (Value, error) {
	a := args[0]
	if a.K == KindNull || a.K == KindBytes {
		return a, nil
	}
	return NewString(strings.ToLower(ToString(a))), nil
}

func fnUpper(args []Value) (Value, error) {
	a := args[0]
	if a.K == KindNull || a.K == KindBytes {
		return a, nil
	}
	return NewString(strings.ToUpper(ToString(a))), nil
}

func fnTrim(left, right bool) Func {
	return func(args []Value) (Value, error) {
		a := args[0]
		if a.K == KindNull {
			return Null, nil
		}
		s := ToString(a)
		if left {
			s = strings.TrimLeft(s, " ")
		}
		if right {
			s = strings.TrimRight(s, " ")
		}
		return strVal(s, a.K == KindBytes), nil
	}
}

func fnReplace(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	s, from, to := ToString(args[0]), ToString(args[1]), ToString(args[2])
	bin := args[0].K == KindBytes || args[1].K == KindBytes || args[2].K == KindBytes
	if from == "" {
		return strVal(s, bin), nil
	}
	return strVal(strings.ReplaceAll(s, from, to), bin), nil
}

func fnReverse(args []Value) (Value, error) {
	a := args[0]
	if a.K == KindNull {
		return Null, nil
	}
	s := ToString(a)
	out := make([]byte, len(s))
	if a.K == KindBytes {
		for i := 0; i < len(s); i++ {
			out[len(s)-1-i] = s[i]
		}
		return NewBytes(string(out)), nil
	}
	j := len(s)
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		copy(out[j-size:j], s[i:i+size])
		j -= size
		i += size
	}
	return NewString(string(out)), nil
}

func fnRepeat(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	s := ToString(args[0])
	n := intArg(args[1])
	bin := args[0].K == KindBytes
	if n <= 0 || s == "" {
		return strVal("", bin), nil
	}
	if n > maxResultLen/int64(len(s)) {
		return Null, nil
	}
	return strVal(strings.Repeat(s, int(n)), bin), nil
}

func fnPad(left bool) Func {
	return func(args []Value) (Value, error) {
		if anyNull(args) {
			return Null, nil
		}
		bin := args[0].K == KindBytes || args[2].K == KindBytes
		c := chars{ToString(args[0]), bin}
		pad := chars{ToString(args[2]), bin}
		n := intArg(args[1])
		if n < 0 || n > maxResultLen {
			return Null, nil
		}
		l := c.len()
		if int64(l) >= n {
			return c.sub(0, int(n)), nil
		}
		pl := pad.len()
		if pl == 0 {
			return Null, nil
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
func locate(s, sub Value, from int, coll *Collation) int64 {
	bin := s.K == KindBytes || sub.K == KindBytes
	hs := chars{ToString(s), bin}
	nd := chars{ToString(sub), bin}
	if from < 0 || from > hs.len() {
		return 0
	}
	if bin || coll.IsBinary() || coll.kind == ckBinPad {
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
		end := charOffset(hs.s[off:], n)
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

func fnInstr(coll *Collation) Func {
	return func(args []Value) (Value, error) {
		if anyNull(args) {
			return Null, nil
		}
		return NewInt(locate(args[0], args[1], 0, coll)), nil
	}
}

func fnLocate(coll *Collation) Func {
	return func(args []Value) (Value, error) {
		if anyNull(args) {
			return Null, nil
		}
		from := 0
		if len(args) == 3 {
			p := intArg(args[2])
			if p < 1 || p > math.MaxInt32 {
				return NewInt(0), nil
			}
			from = int(p - 1)
		}
		return NewInt(locate(args[1], args[0], from, coll)), nil
	}
}

func fnStrcmp(coll *Collation) Func {
	return func(args []Value) (Value, error) {
		if anyNull(args) {
			return Null, nil
		}
		a, b := ToString(args[0]), ToString(args[1])
		c := coll
		if args[0].K == KindBytes || args[1].K == KindBytes {
			c = nil
		}
		return NewInt(int64(c.Compare(a, b))), nil
	}
}

func fnASCII(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	s := ToString(args[0])
	if s == "" {
		return NewInt(0), nil
	}
	return NewInt(int64(s[0])), nil
}

func fnHex(args []Value) (Value, error) {
	a := args[0]
	switch a.K {
	case KindNull:
		return Null, nil
	case KindString, KindBytes:
		return NewString(strings.ToUpper(hex.EncodeToString([]byte(a.S)))), nil
	case KindInt, KindUint:
		return NewString(strings.ToUpper(hexUint(uint64(a.I)))), nil
	case KindFloat, KindDecimal:
		u, _ := ToUint(a)
		return NewString(strings.ToUpper(hexUint(u))), nil
	}
	return NewString(strings.ToUpper(hex.EncodeToString([]byte(ToString(a))))), nil
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

func fnUnhex(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	s := ToString(args[0])
	if len(s)%2 == 1 {
		s = "0" + s
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return Null, nil
	}
	return NewBytes(string(b)), nil
}

func fnSpace(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	n := intArg(args[0])
	if n <= 0 {
		return NewString(""), nil
	}
	if n > maxResultLen {
		return Null, nil
	}
	return NewString(strings.Repeat(" ", int(n))), nil
}

// ---- math ----

func fnAbs(args []Value) (Value, error) {
	a := numericValue(args[0])
	switch a.K {
	case KindInt:
		if a.I == math.MinInt64 {
			return Null, rangeErr("BIGINT", "abs(", a, ")")
		}
		if a.I < 0 {
			return NewInt(-a.I), nil
		}
	case KindFloat:
		return Value{K: KindFloat, F: math.Abs(a.F), Frac: a.Frac}, nil
	case KindDecimal:
		return NewDecimal(a.D.Abs(), int(a.Frac)), nil
	}
	return a, nil
}

func fnSign(args []Value) (Value, error) {
	a := numericValue(args[0])
	switch a.K {
	case KindNull:
		return Null, nil
	case KindInt:
		return NewInt(int64(cmpInt(a.I, 0))), nil
	case KindUint:
		return NewInt(int64(cmpUint(uint64(a.I), 0))), nil
	case KindFloat:
		return NewInt(int64(cmpFloat(a.F, 0))), nil
	case KindDecimal:
		return NewInt(int64(a.D.Sign())), nil
	}
	return Null, nil
}

var pow10u = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < 20; i++ {
		t[i] = t[i-1] * 10
	}
	return
}()

// fnRound implements ROUND (half away from zero for exact values, half to even for doubles, as
// MySQL's rint) and TRUNCATE.
func fnRound(trunc bool) Func {
	name := "round"
	if trunc {
		name = "truncate"
	}
	return func(args []Value) (Value, error) {
		if anyNull(args) {
			return Null, nil
		}
		a := numericValue(args[0])
		d := int64(0)
		if len(args) == 2 {
			d = intArg(args[1])
		}
		d = max(min(d, 30), -100)
		switch a.K {
		case KindInt, KindUint:
			if d >= 0 {
				return a, nil
			}
			w := toWide(a)
			if -d >= 20 {
				return a0(a), nil
			}
			p := pow10u[-d]
			q, r := w.mag/p, w.mag%p
			if !trunc && r >= p-r {
				q++
			}
			hi, lo := mulU(q, p)
			res := wideInt{w.neg && lo != 0, lo}
			ok := hi == 0
			if ok {
				if a.K == KindUint {
					_, ok = res.fit(0, math.MaxUint64)
				} else {
					_, ok = res.fit(math.MinInt64, math.MaxInt64)
				}
			}
			if !ok {
				return Null, rangeErr(pick(a.K == KindUint, "BIGINT UNSIGNED", "BIGINT"), name+"(", args[0], ")")
			}
			return res.value(a.K == KindUint), nil
		case KindDecimal:
			var r decimal.Decimal
			if trunc {
				r = a.D.Truncate(int32(d))
			} else {
				r = a.D.Round(int32(d))
			}
			return NewDecimal(r, int(max(d, 0))), nil
		case KindFloat:
			// MySQL prints the result with d decimals (my_fcvt).
			r := roundFloat(a.F, int(d))
			if trunc {
				r = truncFloat(a.F, int(d))
			}
			return Value{K: KindFloat, F: r, Frac: int8(max(d, 0))}, nil
		}
		return Null, nil
	}
}

func a0(a Value) Value {
	if a.K == KindUint {
		return NewUint(0)
	}
	return NewInt(0)
}

func mulU(a, b uint64) (hi, lo uint64) {
	if a == 0 || b == 0 {
		return 0, 0
	}
	lo = a * b
	if lo/b != a {
		return 1, lo
	}
	return 0, lo
}

func fnFloorCeil(floor bool) Func {
	return func(args []Value) (Value, error) {
		a := numericValue(args[0])
		switch a.K {
		case KindFloat:
			if floor {
				return NewFloat(math.Floor(a.F)), nil
			}
			return NewFloat(math.Ceil(a.F)), nil
		case KindDecimal:
			var r decimal.Decimal
			if floor {
				r = a.D.Floor()
			} else {
				r = a.D.Ceil()
			}
			if r.GreaterThanOrEqual(decMinInt64) && r.LessThanOrEqual(decMaxInt64) {
				return NewInt(r.IntPart()), nil
			}
			return NewDecimal(r, 0), nil
		}
		return a, nil
	}
}

func positive(x float64) bool { return x > 0 }

// fnFloat1 wraps a one-argument double function; outside its domain the result is NULL (MySQL
// adds a warning), overflow is error 1690.
func fnFloat1(name string, f func(float64) float64, domain func(float64) bool) Func {
	return func(args []Value) (Value, error) {
		if args[0].K == KindNull {
			return Null, nil
		}
		x := ToFloat(args[0])
		if domain != nil && !domain(x) {
			return Null, nil
		}
		r := f(x)
		if math.IsInf(r, 0) {
			return Null, rangeErr("DOUBLE", name+"(", args[0], ")")
		}
		if math.IsNaN(r) {
			return Null, nil
		}
		return NewFloat(r), nil
	}
}

func fnLog(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	if len(args) == 1 {
		x := ToFloat(args[0])
		if x <= 0 {
			return Null, nil
		}
		return NewFloat(math.Log(x)), nil
	}
	b, x := ToFloat(args[0]), ToFloat(args[1])
	if x <= 0 || b <= 0 || b == 1 {
		return Null, nil
	}
	return NewFloat(math.Log(x) / math.Log(b)), nil
}

func fnPow(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	r := math.Pow(ToFloat(args[0]), ToFloat(args[1]))
	if math.IsInf(r, 0) {
		return Null, sqlerr.New(sqlerr.ErrDataOutOfRange, "DOUBLE value is out of range in 'pow(%s,%s)'", args[0].String(), args[1].String())
	}
	if math.IsNaN(r) {
		return Null, nil
	}
	return NewFloat(r), nil
}

// fnPi returns π, which MySQL prints with 6 decimals.
func fnPi([]Value) (Value, error) { return Value{K: KindFloat, F: math.Pi, Frac: 6}, nil }

// fnGreatestLeast returns the largest (dir 1) or smallest (dir -1) argument, comparing as MySQL
// does: all integers as integers, exact numbers as decimals, any double or string/number mix as
// doubles, all strings by the collation, all temporal as temporal.
func fnGreatestLeast(dir int) func(c *Collation) Func {
	return func(coll *Collation) Func {
		return func(args []Value) (Value, error) {
			if anyNull(args) {
				return Null, nil
			}
			allStr, allTime, anyNum, anyFloat, anyDec, anyBin, allUint := true, true, false, false, false, false, true
			for _, a := range args {
				switch classOf(a.K) {
				case classStr:
					allTime = false
					anyBin = anyBin || a.K == KindBytes
				case classNum:
					allStr, allTime, anyNum = false, false, true
					anyFloat = anyFloat || a.K == KindFloat
					anyDec = anyDec || a.K == KindDecimal
				case classTime:
					allStr = false
				}
				allUint = allUint && a.K == KindUint
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
					better(i, Compare(args[i], args[best], nil))
				}
				return args[best], nil
			case anyFloat || (anyNum && !allStr && !allTime && hasStrOrTime(args)):
				f := ToFloat(args[0])
				for i := 1; i < len(args); i++ {
					g := ToFloat(args[i])
					if cmpFloat(g, f)*dir > 0 {
						best, f = i, g
					}
				}
				return NewFloat(f), nil
			case anyDec:
				d := ToDecimal(args[0])
				scale := 0
				for _, a := range args {
					scale = max(scale, decScale(a))
				}
				for i := 1; i < len(args); i++ {
					e := ToDecimal(args[i])
					if e.Cmp(d)*dir > 0 {
						best, d = i, e
					}
				}
				return NewDecimal(d, scale), nil
			}
			for i := 1; i < len(args); i++ {
				better(i, Compare(args[i], args[best], nil))
			}
			r := args[best]
			if !allUint && r.K == KindUint && uint64(r.I) <= math.MaxInt64 {
				r = NewInt(r.I)
			}
			return r, nil
		}
	}
}

func hasStrOrTime(args []Value) bool {
	for _, a := range args {
		if c := classOf(a.K); c == classStr || c == classTime {
			return true
		}
	}
	return false
}

func fnCRC32(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	return NewUint(uint64(crc32.ChecksumIEEE([]byte(ToString(args[0]))))), nil
}

func fnMD5(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	h := md5.Sum([]byte(ToString(args[0])))
	return NewString(hex.EncodeToString(h[:])), nil
}

func fnSHA1(args []Value) (Value, error) {
	if args[0].K == KindNull {
		return Null, nil
	}
	h := sha1.Sum([]byte(ToString(args[0])))
	return NewString(hex.EncodeToString(h[:])), nil
}

func fnSHA2(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	b := []byte(ToString(args[0]))
	switch intArg(args[1]) {
	case 224:
		h := sha256.Sum224(b)
		return NewString(hex.EncodeToString(h[:])), nil
	case 256, 0:
		h := sha256.Sum256(b)
		return NewString(hex.EncodeToString(h[:])), nil
	case 384:
		h := sha512.Sum384(b)
		return NewString(hex.EncodeToString(h[:])), nil
	case 512:
		h := sha512.Sum512(b)
		return NewString(hex.EncodeToString(h[:])), nil
	}
	return Null, nil
}

// ---- date and time ----

// datetimeArg converts v to a packed datetime as MySQL's get_date does; ok is false for values
// that are not dates (the functions then return NULL with a warning in MySQL).
func datetimeArg(v Value) (int64, bool) {
	switch v.K {
	case KindDate, KindDatetime:
		return v.I, true
	case KindString, KindBytes:
		p, _, err := parseDatetimeMode(v.S, 6, true)
		return p, err == nil
	case KindDuration:
		return durationToDatetime(v.I), true
	case KindInt, KindUint, KindFloat, KindDecimal:
		return numberAsDatetime(v)
	}
	return 0, false
}

// durationArg converts v to a TIME as MySQL's get_time does.
func durationArg(v Value) (int64, bool) {
	switch v.K {
	case KindDuration:
		return v.I, true
	case KindDate, KindDatetime:
		_, _, _, h, mi, s, us := UnpackTime(v.I)
		return (int64(h)*3600+int64(mi)*60+int64(s))*microsPerSec + int64(us), true
	case KindString, KindBytes:
		us, err := parseDuration(v.S, 6)
		return us, err == nil || err == errDurationRange
	case KindInt, KindUint, KindFloat, KindDecimal:
		return numberAsDuration(v)
	}
	return 0, false
}

func fnDate(args []Value) (Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok || args[0].K == KindNull {
		return Null, nil
	}
	return NewDate(p), nil
}

// fnDatePart extracts from a date; needValid makes zero dates (and dates with zero parts) NULL.
func fnDatePart(f func(y, m, d int) int64, needValid bool) Func {
	return func(args []Value) (Value, error) {
		p, ok := datetimeArg(args[0])
		if !ok {
			return Null, nil
		}
		y, m, d, _, _, _, _ := UnpackTime(p)
		if needValid && (m == 0 || d == 0) {
			return Null, nil
		}
		return NewInt(f(y, m, d)), nil
	}
}

func fnTimePart(f func(h, m, s, us int64) int64) Func {
	return func(args []Value) (Value, error) {
		us, ok := durationArg(args[0])
		if !ok {
			return Null, nil
		}
		_, h, mi, s, frac := durationParts(us)
		return NewInt(f(h, mi, s, frac)), nil
	}
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

var dayNames = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

func fnMonthName(args []Value) (Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok {
		return Null, nil
	}
	_, m, _, _, _, _, _ := UnpackTime(p)
	if m == 0 {
		return Null, nil
	}
	return NewString(monthNames[m-1]), nil
}

func fnDayName(args []Value) (Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok {
		return Null, nil
	}
	y, m, d, _, _, _, _ := UnpackTime(p)
	if m == 0 || d == 0 {
		return Null, nil
	}
	return NewString(dayNames[calcWeekday(calcDaynr(y, m, d), false)]), nil
}

// weekModes maps WEEK()'s mode to calc_week's behaviour flags.
var weekModes = [8]int{
	weekFirstWeekday, weekMondayFirst, weekFirstWeekday | weekYear, weekMondayFirst | weekYear,
	0, weekMondayFirst | weekFirstWeekday, weekYear, weekMondayFirst | weekFirstWeekday | weekYear,
}

func fnWeek(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	p, ok := datetimeArg(args[0])
	if !ok {
		return Null, nil
	}
	mode := int64(0) // default_week_format
	if len(args) == 2 {
		mode = intArg(args[1])
	}
	y, m, d, _, _, _, _ := UnpackTime(p)
	if m == 0 || d == 0 {
		return Null, nil
	}
	w, _ := calcWeek(y, m, d, weekModes[mode&7])
	return NewInt(int64(w)), nil
}

func fnLastDay(args []Value) (Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok {
		return Null, nil
	}
	y, m, d, _, _, _, _ := UnpackTime(p)
	if m == 0 || d == 0 {
		return Null, nil
	}
	return NewDate(PackTime(y, m, daysInMonth(y, m), 0, 0, 0, 0)), nil
}

func fnDatediff(args []Value) (Value, error) {
	p1, ok1 := datetimeArg(args[0])
	p2, ok2 := datetimeArg(args[1])
	if !ok1 || !ok2 {
		return Null, nil
	}
	y1, m1, d1, _, _, _, _ := UnpackTime(p1)
	y2, m2, d2, _, _, _, _ := UnpackTime(p2)
	if m1 == 0 || d1 == 0 || m2 == 0 || d2 == 0 {
		return Null, nil
	}
	return NewInt(calcDaynr(y1, m1, d1) - calcDaynr(y2, m2, d2)), nil
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

func fnDateFormat(args []Value) (Value, error) {
	if anyNull(args) {
		return Null, nil
	}
	p, ok := datetimeArg(args[0])
	if !ok {
		return Null, nil
	}
	if args[0].K == KindDuration {
		// A TIME formats with a zero date, its hours kept modulo nothing (MySQL's TIME→DATETIME
		// conversion for DATE_FORMAT uses the time only).
		_, h, mi, s, us := durationParts(args[0].I)
		p = PackTime(0, 0, 0, int(h%24), int(mi), int(s), int(us))
	}
	out, ok := formatDate(nil, p, ToString(args[1]))
	if !ok {
		return Null, nil
	}
	return NewString(string(out)), nil
}

// formatDate implements DATE_FORMAT's specifiers; ok is false when the format needs a real date
// (names, weekdays, weeks) and p has zero month or day.
func formatDate(buf []byte, p int64, f string) ([]byte, bool) {
	y, mo, d, h, mi, s, us := UnpackTime(p)
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
			buf = append(buf, dayNames[calcWeekday(calcDaynr(y, mo, d), false)][:3]...)
		case 'b':
			if mo == 0 || t.isTime {
				return nil, false
			}
			buf = append(buf, monthNames[mo-1][:3]...)
		case 'c':
			buf = appendPad(buf, int64(mo), 1)
		case 'D':
			if t.isTime {
				return nil, false
			}
			buf = appendPad(buf, int64(d), 1)
			buf = append(buf, daySuffix(d)...)
		case 'd':
			buf = appendPad(buf, int64(d), 2)
		case 'e':
			buf = appendPad(buf, int64(d), 1)
		case 'f':
			buf = appendPad(buf, int64(us), 6)
		case 'H':
			buf = appendPad(buf, h, 2)
		case 'h', 'I':
			buf = appendPad(buf, h12, 2)
		case 'i':
			buf = appendPad(buf, int64(mi), 2)
		case 'j':
			if zero {
				return nil, false
			}
			buf = appendPad(buf, calcDaynr(y, mo, d)-calcDaynr(y, 1, 1)+1, 3)
		case 'k':
			buf = appendPad(buf, h, 1)
		case 'l':
			buf = appendPad(buf, h12, 1)
		case 'M':
			if mo == 0 || t.isTime {
				return nil, false
			}
			buf = append(buf, monthNames[mo-1]...)
		case 'm':
			buf = appendPad(buf, int64(mo), 2)
		case 'p':
			buf = append(buf, pick(h%24 < 12, "AM", "PM")...)
		case 'r':
			buf = appendPad(buf, h12, 2)
			buf = append(buf, ':')
			buf = appendPad(buf, int64(mi), 2)
			buf = append(buf, ':')
			buf = appendPad(buf, int64(s), 2)
			buf = append(buf, pick(h%24 < 12, " AM", " PM")...)
		case 'S', 's':
			buf = appendPad(buf, int64(s), 2)
		case 'T':
			buf = appendPad(buf, h, 2)
			buf = append(buf, ':')
			buf = appendPad(buf, int64(mi), 2)
			buf = append(buf, ':')
			buf = appendPad(buf, int64(s), 2)
		case 'U', 'u', 'V', 'v', 'X', 'x':
			if zero {
				return nil, false
			}
			var beh int
			switch f[i] {
			case 'U':
				beh = weekFirstWeekday
			case 'u':
				beh = weekMondayFirst
			case 'V', 'X':
				beh = weekYear | weekFirstWeekday
			case 'v', 'x':
				beh = weekMondayFirst | weekYear
			}
			w, wy := calcWeek(y, mo, d, beh)
			if f[i] == 'X' || f[i] == 'x' {
				buf = appendPad(buf, int64(wy), 4)
			} else {
				buf = appendPad(buf, int64(w), 2)
			}
		case 'W':
			if zero {
				return nil, false
			}
			buf = append(buf, dayNames[calcWeekday(calcDaynr(y, mo, d), false)]...)
		case 'w':
			if zero {
				return nil, false
			}
			buf = appendPad(buf, int64(calcWeekday(calcDaynr(y, mo, d), true)), 1)
		case 'Y':
			buf = appendPad(buf, int64(y), 4)
		case 'y':
			buf = appendPad(buf, int64(y%100), 2)
		default:
			buf = append(buf, f[i])
		}
	}
	return buf, true
}
