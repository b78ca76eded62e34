package expr

import (
	"crypto/rand"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// The names the binder gives DATE 'x', TIME 'x' and TIMESTAMP 'x' (the parser calls them
// functions with internal names): a name with a space cannot be written as a call.
const (
	LiteralDate      = "date literal"
	LiteralTime      = "time literal"
	LiteralTimestamp = "timestamp literal"
)

// registerSpecial registers the functions the library cannot define alone: they need the session
// (EXTRACT and WEEK read default_week_format), a time unit, a TRIM direction, a GET_FORMAT
// selector, a USING charset, a constant argument's value or static types beyond the library's
// (temporal.go and collation.go hold their evaluation helpers).
func registerSpecial() {
	Register(Builtin{Name: "trim", MinArgs: 1, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		if len(args) < 2 {
			return c.pure() // TRIM(s): the library function
		}
		return NewFunc(FuncType("trim", args), "trim", builtins.TrimFunc(c.TrimLeading, c.TrimTrailing), args), nil
	}})
	Register(Builtin{Name: "char_func", MinArgs: 1, MaxArgs: -1, Build: func(c *Call) (Expr, error) {
		args := c.Args
		// The parser appends the USING charset (or NULL) as the last argument.
		cs := ""
		if k, ok := args[len(args)-1].(*Const); ok && !k.V.IsNull() {
			cs = strings.ToLower(types.ToString(k.V))
		}
		codes := make([]Expr, len(args)-1)
		for i, a := range args[:len(args)-1] {
			codes[i] = HexNumber(a)
		}
		f, _, _, _ := builtins.LookupFunc("char_func")
		e := NewFunc(TBytes, "char_func", f, codes)
		if cs == "" || cs == "binary" {
			return e, nil
		}
		return c.convertUsing(e, cs, true)
	}})
	Register(Builtin{Name: "convert", MinArgs: 2, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		k, ok := args[1].(*Const)
		if !ok {
			return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported CONVERT form")
		}
		return c.convertUsing(args[0], strings.ToLower(types.ToString(k.V)), false)
	}})
	Register(alias(Builtin{MinArgs: 1, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		name, args := c.Name, c.Args
		var v types.Value
		switch name {
		case "coercibility":
			v = types.NewInt(int64(Coercibility(args[0])))
		case "collation":
			v = types.NewString(c.collationName(args[0]))
		default:
			cs := "binary"
			if coll, ok := types.LookupCollation(c.collationName(args[0])); ok {
				cs = coll.Charset
			}
			v = types.NewString(cs)
		}
		return NewConst(v), nil
	}}, "charset", "collation", "coercibility")...)
	Register(Builtin{Name: "any_value", MinArgs: 1, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		args := c.Args
		return args[0], nil
	}})
	Register(Builtin{Name: "name_const", MinArgs: 2, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		return args[1], nil
	}})
	Register(Builtin{Name: "current_role", MinArgs: 0, MaxArgs: 0, Build: func(c *Call) (Expr, error) {
		return NewConst(types.NewString("NONE")), nil
	}})
	Register(alias(Builtin{MinArgs: 1, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		name, args := c.Name, c.Args
		return c.temporalLiteral(name, args)
	}}, LiteralDate, LiteralTime, LiteralTimestamp)...)
	Register(Builtin{Name: "extract", MinArgs: 1, MaxArgs: 1, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		u := c.Unit
		return c.named(c.Type, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			return builtins.Extract(u, v, env.Sess.DefaultWeekFormat()), nil
		})
	}})
	Register(Builtin{Name: "week", MinArgs: 1, MaxArgs: 2, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		args := c.Args
		if len(args) != 1 {
			return c.pure() // WEEK(d, mode): the library function
		}
		f, _, _, _ := builtins.LookupFunc("week")
		return c.named(c.Type, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			return f([]types.Value{v, types.NewInt(int64(env.Sess.DefaultWeekFormat()))})
		})
	}})
	Register(Builtin{Name: "timestampdiff", MinArgs: 2, MaxArgs: 2, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		u := c.Unit
		return c.named(c.Type, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return builtins.TimestampDiff(u, vs[0], vs[1]), nil
		})
	}})
	Register(Builtin{Name: "timestampadd", MinArgs: 2, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		u := c.Unit
		t := TDT
		if dt := args[1].Type(); dt.Tp == mysql.TypeDatetime || dt.Tp == mysql.TypeTimestamp {
			t.Frac = max(dt.Frac, 0)
		}
		return c.named(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return AddInterval(vs[1], vs[0], u, false)
		})
	}})
	Register(Builtin{Name: "get_format", MinArgs: 1, MaxArgs: 1, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		sel := c.FormatSelector
		return c.named(c.Type, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			if f, ok := getFormats[sel][strings.ToUpper(types.ToString(v))]; ok {
				return types.NewString(f), nil
			}
			return types.Null, nil
		})
	}})
	Register(Builtin{Name: "str_to_date", MinArgs: 2, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		return c.strToDate(args)
	}})
	Register(Builtin{Name: "from_unixtime", MinArgs: 1, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		fsp := NumFsp(args[0])
		t := TDT
		t.Frac = fsp
		if len(args) == 2 {
			t = TString
		}
		return c.named(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return FromUnixtime(env, vs, fsp)
		})
	}})
	Register(Builtin{Name: "convert_tz", MinArgs: 3, MaxArgs: 3, Build: func(c *Call) (Expr, error) {
		args := c.Args
		t := TDT
		t.Frac = ExprFsp(args[0])
		return c.named(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return ConvertTZ(vs, t.Frac), nil
		})
	}})
	Register(Builtin{Name: "utc_date", MinArgs: 0, MaxArgs: 0, Type: fixed(TDate), Build: func(c *Call) (Expr, error) {
		return c.named(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			n := env.Now().UTC()
			return types.NewDate(types.PackTime(n.Year(), int(n.Month()), n.Day(), 0, 0, 0, 0)), nil
		})
	}})
	Register(alias(Builtin{MinArgs: 0, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		name, args := c.Name, c.Args
		fsp := c.constIntArg(args, 0)
		t := TTime
		t.Frac = fsp
		utc := name == "utc_time"
		return c.named(t, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			n := env.Now()
			if utc {
				n = n.UTC()
			}
			us := int64(n.Hour()*3600+n.Minute()*60+n.Second())*1e6 + int64(TruncMicros(n.Nanosecond()/1000, fsp))
			return types.NewDuration(us, fsp), nil
		})
	}}, "curtime", "current_time", "utc_time")...)
	Register(Builtin{Name: "utc_timestamp", MinArgs: 0, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		args := c.Args
		fsp := c.constIntArg(args, 0)
		t := TDT
		t.Frac = fsp
		return c.named(t, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return TimeValue(env.Now().UTC(), fsp), nil
		})
	}})
	Register(Builtin{Name: "uuid_short", MinArgs: 0, MaxArgs: 0, Type: fixed(TUint), Build: func(c *Call) (Expr, error) {
		return c.named(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewUint(NextUUIDShort(func() uint64 {
				return ToUint64(env.Sess.SysVar(sysvar.Must("server_id"), true))
			})), nil
		})
	}})
	Register(Builtin{Name: "random_bytes", MinArgs: 1, MaxArgs: 1, Type: fixed(TBytes), Build: func(c *Call) (Expr, error) {
		return c.named(c.Type, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			n := types.ToIntLenient(v)
			if n < 1 || n > 1024 {
				return types.Null, sqlerr.New(sqlerr.ErrDataOutOfRange, "length value is out of range in 'random_bytes'")
			}
			b := make([]byte, n)
			_, _ = rand.Read(b)
			return types.NewBytes(string(b)), nil
		})
	}})
	Register(Builtin{Name: "benchmark", MinArgs: 2, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		return &Closure{Typed: Typed{T: TInt}, Args: args, Lazy: true, Fn: Benchmark}, nil
	}})
}

// temporalLiteral is DATE 'x', TIME 'x' and TIMESTAMP 'x': parsed strictly when compiled.
func (c *Call) temporalLiteral(name string, args []Expr) (Expr, error) {
	k, ok := args[0].(*Const)
	if len(args) != 1 || !ok {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported temporal literal")
	}
	s := types.ToString(k.V)
	fsp := builtins.TimeFsp(types.NewString(s))
	switch name {
	case LiteralDate:
		p, err := types.ParseDatetime(s, 6)
		y, m, d, h, mi, sec, us := types.UnpackTime(p)
		if err != nil || h+mi+sec+us != 0 || strings.ContainsAny(strings.TrimSpace(s), " T:") {
			return nil, sqlerr.New(sqlerr.ErrIncorrectValue, "Incorrect DATE value: '%s'", s)
		}
		return NewConst(types.NewDate(types.PackTime(y, m, d, 0, 0, 0, 0))), nil
	case LiteralTime:
		us, err := types.ParseDuration(s, fsp)
		if err != nil {
			return nil, sqlerr.New(sqlerr.ErrIncorrectValue, "Incorrect TIME value: '%s'", s)
		}
		e := NewConst(types.NewDuration(us, fsp))
		e.T.Frac = fsp
		return e, nil
	}
	p, err := types.ParseDatetime(s, fsp)
	if err != nil {
		return nil, sqlerr.New(sqlerr.ErrIncorrectValue, "Incorrect DATETIME value: '%s'", s)
	}
	return NewConst(types.NewDatetime(p, fsp)), nil
}

// strToDate is STR_TO_DATE(s, format): the result type follows a constant format (DATE, TIME or
// DATETIME, fsp 6 with %f); a variable format gives DATETIME(6). Values that do not match, zero
// dates and dates with zero parts (under NO_ZERO_DATE / NO_ZERO_IN_DATE) and invalid dates are
// NULL with warning 1411.
func (c *Call) strToDate(args []Expr) (Expr, error) {
	kind, fsp := types.KindDatetime, 6
	if k, ok := args[1].(*Const); ok && !k.V.IsNull() {
		kind, fsp = builtins.StrToDateKind(types.ToString(k.V))
	}
	var t types.ColType
	switch kind {
	case types.KindDate:
		t = TDate
	case types.KindDuration:
		t = TTime
		t.Frac = fsp
	default:
		t = TDT
		t.Frac = fsp
	}
	typeName := map[types.Kind]string{types.KindDate: "date", types.KindDuration: "time", types.KindDatetime: "datetime"}[kind]
	return &Closure{Typed: Typed{T: t}, Args: args, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		sv, err := a[0].Eval(env, row)
		if err != nil || sv.IsNull() {
			return types.Null, err
		}
		fv, err := a[1].Eval(env, row)
		if err != nil || fv.IsNull() {
			return types.Null, err
		}
		s := types.ToString(sv)
		bad := func() (types.Value, error) {
			env.Warn(sqlerr.New(sqlerr.ErrWrongValueForType, "Incorrect datetime value: '%s' for function str_to_date", s))
			return types.Null, nil
		}
		f, trailing, ok := builtins.StrToDate(s, types.ToString(fv))
		if !ok {
			return bad()
		}
		var v types.Value
		if kind == types.KindDuration {
			us := int64(f.Hour*3600+f.Minute*60+f.Second)*1e6 + int64(f.Micro)
			v = types.NewDuration(us, fsp)
		} else {
			zero := f.Year == 0 && f.Month == 0 && f.Day == 0
			switch {
			case zero && env.Sess.SQLModeHas("NO_ZERO_DATE"):
				return bad()
			case !zero && (f.Month == 0 || f.Day == 0) && env.Sess.SQLModeHas("NO_ZERO_IN_DATE"):
				return bad()
			case f.Month > 0 && f.Day > DaysIn(f.Year, f.Month) && !env.Sess.SQLModeHas("ALLOW_INVALID_DATES"):
				return bad()
			}
			p := types.PackTime(f.Year, f.Month, f.Day, f.Hour, f.Minute, f.Second, f.Micro)
			if kind == types.KindDate {
				v = types.NewDate(p)
			} else {
				v = types.NewDatetime(p, fsp)
			}
		}
		if trailing {
			env.Warn(sqlerr.New(sqlerr.ErrTruncatedWrongValue, "Truncated incorrect %s value: '%s'", typeName, s))
		}
		return v, nil
	}}, nil
}

// convertUsing is CONVERT(e USING cs) (and CHAR(... USING cs), from binary): characters the target
// charset cannot hold become '?'; malformed input is NULL with warning 1300.
func (c *Call) convertUsing(e Expr, cs string, fromBinary bool) (Expr, error) {
	if cs == "utf8" {
		cs = "utf8mb3"
	}
	coll, ok := types.DefaultCollation(cs)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", cs)
	}
	if cs == "binary" {
		return &Closure{Typed: Typed{T: TBytes}, Args: []Expr{e}, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			return types.NewBytes(types.ToString(v)), nil
		}}, nil
	}
	t := TString
	t.Charset, t.Collation = coll.Charset, coll.Name
	if lt := e.Type(); IsStringType(lt) && lt.Len > 0 {
		t.Len = lt.Len
	}
	return &Closure{Typed: Typed{T: t}, Args: []Expr{e}, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		v, err := a[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return types.Null, err
		}
		s := types.ToString(v)
		if !utf8.ValidString(s) {
			// MySQL 8 evaluates a conversion of malformed input to NULL, naming up to three bytes
			// from the first bad one.
			i := 0
			for i < len(s) {
				r, size := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && size <= 1 {
					break
				}
				i += size
			}
			bad := s[i:min(i+3, len(s))]
			env.Warn(sqlerr.New(sqlerr.ErrInvalidCharacterString, "Invalid %s character string: '%s'", cs, strings.ToUpper(hexString([]byte(bad)))))
			return types.Null, nil
		}
		return types.NewString(strings.Map(func(r rune) rune {
			switch {
			case cs == "ascii" && r > 127,
				cs == "latin1" && !types.Latin1Has(r),
				cs == "utf8mb3" && r > 0xFFFF:
				return '?'
			}
			return r
		}, s)), nil
	}}, nil
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// collationName is COLLATION(e): an explicit COLLATE's or a column's collation, binary for
// non-strings, the connection collation for other strings.
func (c *Call) collationName(e Expr) string {
	t := e.Type()
	switch {
	case IsJSONType(t):
		return "utf8mb4_bin"
	case !IsStringType(t):
		return "binary"
	case t.Collation == "binary":
		return "binary"
	}
	switch e.(type) {
	case *Collate, *Col:
		if t.Collation != "" {
			return t.Collation
		}
	}
	if t.Collation != "" && t.Collation != TString.Collation {
		return t.Collation
	}
	return c.ConnCollation.Name
}

// getFormats is GET_FORMAT's table.
var getFormats = map[string]map[string]string{
	"DATE": {"USA": "%m.%d.%Y", "JIS": "%Y-%m-%d", "ISO": "%Y-%m-%d", "EUR": "%d.%m.%Y", "INTERNAL": "%Y%m%d"},
	"DATETIME": {"USA": "%Y-%m-%d %H.%i.%s", "JIS": "%Y-%m-%d %H:%i:%s", "ISO": "%Y-%m-%d %H:%i:%s",
		"EUR": "%Y-%m-%d %H.%i.%s", "INTERNAL": "%Y%m%d%H%i%s"},
	"TIME": {"USA": "%h:%i:%s %p", "JIS": "%H:%i:%s", "ISO": "%H:%i:%s", "EUR": "%H.%i.%s", "INTERNAL": "%H%i%s"},
}
