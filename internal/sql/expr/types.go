package expr

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// NumType is the type of a number computed from an operand of type t (unary minus, ABS...).
func NumType(t types.ColType) types.ColType {
	switch t.Tp {
	case mysql.TypeNewDecimal, mysql.TypeDouble, mysql.TypeFloat:
		return t
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar, mysql.TypeBlob:
		return TDouble
	}
	return TInt
}

// IsNumType reports whether t is an integer, decimal or floating-point type.
func IsNumType(t types.ColType) bool {
	return IsIntType(t) || t.Tp == mysql.TypeNewDecimal || t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat
}

// NumericContext wraps an ENUM or SET operand so that it evaluates to its index or bitmask, as
// MySQL does wherever a number is expected; other operands are returned as they are.
func NumericContext(e Expr) Expr {
	e = HexNumber(e)
	t := e.Type()
	if t.Tp != mysql.TypeEnum && t.Tp != mysql.TypeSet {
		return e
	}
	return &Closure{Typed: Typed{TUint}, Args: []Expr{e}, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		v, err := a[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return v, err
		}
		if t.Tp == mysql.TypeEnum {
			return types.NewUint(uint64(types.EnumIndex(&t, v.S))), nil
		}
		return types.NewUint(types.SetMask(&t, v.S)), nil
	}}
}

// RowLen is the number of columns e has: a row constructor's items, else 1.
func RowLen(e Expr) int {
	if r, ok := e.(*Row); ok {
		return len(r.Items)
	}
	return 1
}

// IsIntType reports whether t is an integer type (YEAR and BIT included).
func IsIntType(t types.ColType) bool {
	switch t.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong, mysql.TypeYear, mysql.TypeBit:
		return true
	}
	return false
}

// ArithType is the result type of l op r for + - * / DIV %.
func ArithType(op opcode.Op, l, r types.ColType) types.ColType {
	isDec := func(t types.ColType) bool { return t.Tp == mysql.TypeNewDecimal }
	isFloat := func(t types.ColType) bool {
		return t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat || (!IsIntType(t) && !isDec(t) && t.Tp != mysql.TypeNull)
	}
	switch {
	case op == opcode.IntDiv:
		return TInt
	case isFloat(l) || isFloat(r):
		return TDouble
	case op == opcode.Div:
		t := TDecimal
		t.Frac = max(l.Frac, 0) + 4
		return t
	case isDec(l) || isDec(r):
		t := TDecimal
		if op == opcode.Mul {
			t.Frac = max(l.Frac, 0) + max(r.Frac, 0)
		} else {
			t.Frac = max(max(l.Frac, r.Frac), 0)
		}
		return t
	case l.Unsigned || r.Unsigned:
		return TUint
	}
	return TInt
}

// IsStringType reports whether t is a string type (ENUM and SET included).
func IsStringType(t types.ColType) bool {
	switch t.Tp {
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar, mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob,
		mysql.TypeEnum, mysql.TypeSet:
		return true
	}
	return false
}

// IsCI reports whether c is case-insensitive.
func IsCI(c *types.Collation) bool { return strings.HasSuffix(c.Name, "_ci") }

// UnifyTypes is the result type of IF/CASE/COALESCE branches.
func UnifyTypes(es ...Expr) types.ColType {
	res := TNull
	for _, e := range es {
		t := e.Type()
		if t.Tp == mysql.TypeNull {
			continue
		}
		if res.Tp == mysql.TypeNull {
			res = t
			continue
		}
		switch {
		case IsStringType(res) || IsStringType(t):
			if res.Collation == "binary" && IsStringType(res) || t.Collation == "binary" && IsStringType(t) {
				res = TBytes
			} else {
				res = TString
			}
		case res.Tp == t.Tp:
			if t.Frac > res.Frac {
				res.Frac = t.Frac
			}
		case res.Tp == mysql.TypeDouble || t.Tp == mysql.TypeDouble || res.Tp == mysql.TypeFloat || t.Tp == mysql.TypeFloat:
			res = TDouble
		case res.Tp == mysql.TypeNewDecimal || t.Tp == mysql.TypeNewDecimal:
			d := TDecimal
			d.Frac = max(res.Frac, t.Frac, 0)
			res = d
		case IsIntType(res) && IsIntType(t):
			res = TInt
		default:
			res = TString
		}
	}
	return res
}

// CastValue is CAST(v AS t): never an error for bad data, a warning and the best value instead.
func CastValue(env *Env, v types.Value, t types.ColType) (types.Value, error) {
	switch t.Tp {
	case mysql.TypeLonglong:
		if t.Unsigned {
			if v.K == types.KindInt {
				return types.NewUint(uint64(v.I)), nil
			}
			if v.K == types.KindUint {
				return v, nil
			}
			f := types.ToFloat(v)
			if f < 0 {
				return types.NewUint(uint64(types.ToIntLenient(v))), nil
			}
			return types.NewUint(ToUint64(v)), nil
		}
		if v.K == types.KindUint {
			return types.NewInt(int64(v.U())), nil
		}
		return types.NewInt(types.ToIntLenient(v)), nil
	case mysql.TypeDouble, mysql.TypeFloat:
		return types.NewFloat(types.ToFloat(v)), nil
	case mysql.TypeVarString:
		s := types.ToString(v)
		if t.Len > 0 && len([]rune(s)) > t.Len {
			s = string([]rune(s)[:t.Len])
		}
		if t.Collation == "binary" {
			return types.NewBytes(s), nil
		}
		return types.NewString(s), nil
	}
	out, _, err := types.Convert(v, &t, types.ConvertCtx{Strict: false})
	if err != nil {
		env.Warn(sqlerr.As(err))
		return types.Null, nil
	}
	return out, nil
}

// TimeValue is t as a DATETIME with fsp fractional digits (truncated).
func TimeValue(t time.Time, fsp int) types.Value {
	micro := t.Nanosecond() / 1000
	if fsp < 6 {
		div := 1
		for i := fsp; i < 6; i++ {
			div *= 10
		}
		micro = micro / div * div
	}
	return types.NewDatetime(types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), micro), fsp)
}

// FuncType is the static result type of a pure builtin.
func FuncType(name string, args []Expr) types.ColType {
	switch name {
	case "length", "octet_length", "char_length", "character_length", "instr", "locate", "position",
		"ascii", "strcmp", "sign", "year", "month", "day", "dayofmonth", "hour", "minute", "second",
		"dayofweek", "dayofyear", "weekday", "datediff", "to_days", "bit_length", "week", "quarter",
		"microsecond", "ord", "field", "find_in_set", "bit_count", "interval", "time_to_sec", "period_add",
		"period_diff", "to_seconds", "weekofyear", "yearweek", "is_ipv4", "is_ipv6", "is_ipv4_compat",
		"is_ipv4_mapped", "is_uuid":
		return TInt
	case "crc32", "inet_aton":
		return TUint
	case "abs", "mod":
		if len(args) > 0 {
			return NumType(args[0].Type())
		}
	case "round", "truncate", "floor", "ceil", "ceiling":
		if len(args) > 0 {
			t := NumType(args[0].Type())
			if name == "floor" || name == "ceil" || name == "ceiling" {
				if t.Tp == mysql.TypeNewDecimal || IsIntType(t) {
					return TInt
				}
			}
			if t.Tp == mysql.TypeNewDecimal && len(args) > 1 {
				if k, ok := args[1].(*Const); ok {
					t.Frac = max(int(types.ToIntLenient(k.V)), 0)
				}
			} else if t.Tp == mysql.TypeNewDecimal {
				t.Frac = 0
			}
			return t
		}
	case "sqrt", "pow", "power", "exp", "ln", "log", "log2", "log10", "pi", "sin", "cos", "tan", "rand", "radians",
		"degrees", "atan", "atan2", "asin", "acos", "cot":
		return TDouble
	case "greatest", "least":
		return UnifyTypes(args...)
	case "date", "last_day", "makedate", "from_days":
		return TDate
	case "time":
		t := TTime
		t.Frac = ExprFsp(args[0])
		return t
	case "sec_to_time":
		t := TTime
		t.Frac = NumFsp(args[0])
		return t
	case "maketime":
		t := TTime
		t.Frac = NumFsp(args[2])
		return t
	case "timediff":
		t := TTime
		t.Frac = max(ExprFsp(args[0]), ExprFsp(args[1]))
		return t
	case "timestamp":
		t := TDT
		t.Frac = ExprFsp(args[0])
		if len(args) > 1 {
			t.Frac = max(t.Frac, ExprFsp(args[1]))
		}
		return t
	case "addtime", "subtime":
		fsp := max(ExprFsp(args[0]), ExprFsp(args[1]))
		switch args[0].Type().Tp {
		case mysql.TypeDuration:
			t := TTime
			t.Frac = fsp
			return t
		case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDate:
			t := TDT
			t.Frac = fsp
			return t
		}
		return TString
	case "char_func", "from_base64", "inet6_aton", "uuid_to_bin", "unhex":
		return TBytes
	case "hex", "md5", "sha1", "sha", "sha2", "inet6_ntoa", "inet_ntoa", "bin_to_uuid", "to_base64", "conv", "bin",
		"oct", "format", "date_format", "time_format", "dayname", "monthname":
		return TString
	}
	if len(args) > 0 {
		for _, a := range args {
			if a.Type().Collation == "binary" && IsStringType(a.Type()) {
				return TBytes
			}
		}
	}
	if t, ok := stringFuncType(name, args); ok {
		return t
	}
	return TString
}

// stringFuncType is MySQL's result type of the string functions whose length follows from their
// arguments' (Item_str_conv, Item_func_trim, Item_func_concat, Item_func_substr, Item_func_left
// ...): VARCHAR of the argument's length for UPPER/LOWER/TRIM/REVERSE, the sum for CONCAT, the
// taken part for SUBSTRING/LEFT/RIGHT with constant bounds, in the character set and collation
// of the string arguments (a column's wins over a literal's, by coercibility), so a latin1
// column's UPPER stays latin1. ok is false where a length is not known (the caller's default).
func stringFuncType(name string, args []Expr) (types.ColType, bool) {
	var n int
	switch name {
	case "upper", "lower", "ucase", "lcase", "trim", "ltrim", "rtrim", "reverse":
		l, ok := charLength(args[0])
		if !ok {
			return TString, false
		}
		n = l
	case "concat":
		for _, a := range args {
			l, ok := charLength(a)
			if !ok {
				return TString, false
			}
			n += l
		}
	case "substring", "substr", "mid", "left", "right":
		l, ok := charLength(args[0])
		if !ok || len(args) < 2 {
			return TString, false
		}
		n = l
		p, ok := constInt(args[1])
		if !ok {
			return TString, false
		}
		if name == "left" || name == "right" {
			n = min(n, max(int(p), 0))
			break
		}
		switch {
		case p > 0:
			n = max(l-int(p)+1, 0)
		case p < 0:
			n = min(l, int(-p))
		default:
			n = 0
		}
		if len(args) > 2 {
			c, ok := constInt(args[2])
			if !ok {
				return TString, false
			}
			n = min(n, max(int(c), 0))
		}
	default:
		return TString, false
	}
	t := TString
	t.Len = n
	// The collation: that of the string arguments that are not literals, when they agree.
	var coll *types.ColType
	for _, a := range args {
		at := a.Type()
		if _, isConst := a.(*Const); isConst || !IsStringType(at) || at.Collation == "" {
			continue
		}
		if coll != nil && coll.Collation != at.Collation {
			return t, true
		}
		coll = &at
	}
	if coll != nil {
		t.Charset, t.Collation = coll.Charset, coll.Collation
	}
	return t, true
}

// charLength is the most characters e's value has as a string, when its type tells.
func charLength(e Expr) (int, bool) {
	t := e.Type()
	if k, ok := e.(*Const); ok {
		switch k.V.K {
		case types.KindString:
			return utf8.RuneCountInString(k.V.S), true
		case types.KindInt, types.KindUint, types.KindDecimal:
			return len(types.AppendText(nil, k.V)), true
		}
		return 0, false
	}
	switch t.Tp {
	case mysql.TypeVarString, mysql.TypeVarchar, mysql.TypeString:
		if t.Len >= 0 {
			return t.Len, true
		}
	case mysql.TypeTiny:
		return 4, true
	case mysql.TypeShort:
		return 6, true
	case mysql.TypeInt24:
		return 9, true
	case mysql.TypeLong:
		return 11, true
	case mysql.TypeNewDecimal:
		if t.Len > 0 {
			return t.Len + boolInt(!t.Unsigned) + boolInt(t.Frac > 0), true
		}
	}
	return 0, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// constInt is e's value when e is an integer literal.
func constInt(e Expr) (int64, bool) {
	k, ok := e.(*Const)
	if !ok || k.V.K != types.KindInt {
		return 0, false
	}
	return k.V.I, true
}

func opFromString(s string) opcode.Op {
	for _, op := range []opcode.Op{opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE} {
		if op.String() == s {
			return op
		}
	}
	return opcode.EQ
}
