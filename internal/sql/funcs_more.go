package sql

import (
	"crypto/rand"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Builtins that need the session, the parser's special argument forms (time units, TRIM
// directions, GET_FORMAT selectors, USING charsets) or static types: compiled here, on top of the
// pure helpers of package types.

// moreFunc compiles such a function, or returns ok=false if name is not one. args are the
// compiled arguments without the parser's unit/direction/selector nodes.
func (c *compiler) moreFunc(x *ast.FuncCallExpr, name string, args []expr.Expr) (expr.Expr, bool, error) {
	argc := func(lo, hi int) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
		}
		return nil
	}
	mk := func(t types.ColType, fn func(env *expr.Env, row []types.Value, args []expr.Expr) (types.Value, error)) (expr.Expr, bool, error) {
		return &expr.Closure{Typed: expr.Typed{T: t}, Name: name, Args: args, Fn: fn}, true, nil
	}
	unit := func() string {
		for _, a := range x.Args {
			if tu, ok := a.(*ast.TimeUnitExpr); ok {
				return strings.ToUpper(tu.Unit.String())
			}
		}
		return ""
	}
	switch name {
	case "trim":
		if len(args) < 2 {
			return nil, false, nil // TRIM(s): the pure function
		}
		lead, trail := true, true
		for _, a := range x.Args {
			if d, ok := a.(*ast.TrimDirectionExpr); ok {
				lead = d.Direction != ast.TrimTrailing
				trail = d.Direction != ast.TrimLeading
			}
		}
		return expr.NewFunc(expr.FuncType("trim", args), "trim", builtins.TrimFunc(lead, trail), args), true, nil
	case "char_func":
		// The parser appends the USING charset (or NULL) as the last argument.
		cs := ""
		if k, ok := args[len(args)-1].(*expr.Const); ok && !k.V.IsNull() {
			cs = strings.ToLower(types.ToString(k.V))
		}
		codes := make([]expr.Expr, len(args)-1)
		for i, a := range args[:len(args)-1] {
			codes[i] = expr.HexNumber(a)
		}
		f, _, _, _ := builtins.LookupFunc("char_func")
		e := expr.NewFunc(expr.TBytes, "char_func", f, codes)
		if cs == "" || cs == "binary" {
			return e, true, nil
		}
		return c.convertUsing(e, cs, true)
	case "convert":
		if len(args) != 2 {
			return nil, true, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
		}
		k, ok := args[1].(*expr.Const)
		if !ok {
			return nil, true, c.errf(sqlerr.ErrNotSupportedYet, "unsupported CONVERT form")
		}
		return c.convertUsing(args[0], strings.ToLower(types.ToString(k.V)), false)
	case "charset", "collation", "coercibility":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		var v types.Value
		switch name {
		case "coercibility":
			v = types.NewInt(int64(expr.Coercibility(args[0])))
		case "collation":
			v = types.NewString(c.collationName(args[0]))
		default:
			cs := "binary"
			if coll, ok := types.LookupCollation(c.collationName(args[0])); ok {
				cs = coll.Charset
			}
			v = types.NewString(cs)
		}
		return expr.NewConst(v), true, nil
	case "any_value":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return args[0], true, nil
	case "name_const":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		return args[1], true, nil
	case "current_role":
		return expr.NewConst(types.NewString("NONE")), true, nil
	case ast.DateLiteral, ast.TimeLiteral, ast.TimestampLiteral:
		return c.temporalLiteral(name, args)
	case "extract":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		u := unit()
		return mk(expr.TInt, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			return builtins.Extract(u, v, env.Sess.DefaultWeekFormat()), nil
		})
	case "week":
		if len(args) != 1 {
			return nil, false, nil
		}
		f, _, _, _ := builtins.LookupFunc("week")
		return mk(expr.TInt, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			return f([]types.Value{v, types.NewInt(int64(env.Sess.DefaultWeekFormat()))})
		})
	case "timestampdiff":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		u := unit()
		return mk(expr.TInt, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			vs, null, err := expr.EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return builtins.TimestampDiff(u, vs[0], vs[1]), nil
		})
	case "timestampadd":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		u := unit()
		t := expr.TDT
		if dt := args[1].Type(); dt.Tp == mysql.TypeDatetime || dt.Tp == mysql.TypeTimestamp {
			t.Frac = max(dt.Frac, 0)
		}
		return mk(t, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			vs, null, err := expr.EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return addInterval(vs[1], vs[0], u, false)
		})
	case "get_format":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		var sel ast.GetFormatSelectorType
		for _, a := range x.Args {
			if g, ok := a.(*ast.GetFormatSelectorExpr); ok {
				sel = g.Selector
			}
		}
		return mk(expr.TString, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			if f, ok := getFormats[sel][strings.ToUpper(types.ToString(v))]; ok {
				return types.NewString(f), nil
			}
			return types.Null, nil
		})
	case "str_to_date":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		return c.strToDate(args)
	case "from_unixtime":
		if err := argc(1, 2); err != nil {
			return nil, true, err
		}
		fsp := expr.NumFsp(args[0])
		t := expr.TDT
		t.Frac = fsp
		if len(args) == 2 {
			t = expr.TString
		}
		return mk(t, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			vs, null, err := expr.EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return expr.FromUnixtime(env, vs, fsp)
		})
	case "convert_tz":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		t := expr.TDT
		t.Frac = expr.ExprFsp(args[0])
		return mk(t, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			vs, null, err := expr.EvalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return expr.ConvertTZ(vs, t.Frac), nil
		})
	case "utc_date":
		return mk(expr.TDate, func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
			n := env.Now().UTC()
			return types.NewDate(types.PackTime(n.Year(), int(n.Month()), n.Day(), 0, 0, 0, 0)), nil
		})
	case "curtime", "current_time", "utc_time":
		fsp := c.constIntArg(args, 0)
		t := expr.TTime
		t.Frac = fsp
		utc := name == "utc_time"
		return mk(t, func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
			n := env.Now()
			if utc {
				n = n.UTC()
			}
			us := int64(n.Hour()*3600+n.Minute()*60+n.Second())*1e6 + int64(expr.TruncMicros(n.Nanosecond()/1000, fsp))
			return types.NewDuration(us, fsp), nil
		})
	case "utc_timestamp":
		fsp := c.constIntArg(args, 0)
		t := expr.TDT
		t.Frac = fsp
		return mk(t, func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
			return expr.TimeValue(env.Now().UTC(), fsp), nil
		})
	case "uuid_short":
		if err := argc(0, 0); err != nil {
			return nil, true, err
		}
		return mk(expr.TUint, func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
			return types.NewUint(expr.NextUUIDShort(func() uint64 {
				return expr.ToUint64(env.Sess.SysVar(sysvar.Must("server_id"), true))
			})), nil
		})
	case "random_bytes":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return mk(expr.TBytes, func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			n := expr.ToIntLenient(v)
			if n < 1 || n > 1024 {
				return types.Null, sqlerr.New(sqlerr.ErrDataOutOfRange, "length value is out of range in 'random_bytes'")
			}
			b := make([]byte, n)
			_, _ = rand.Read(b)
			return types.NewBytes(string(b)), nil
		})
	case "benchmark":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		return &expr.Closure{Typed: expr.Typed{T: expr.TInt}, Args: args, Lazy: true, Fn: expr.Benchmark}, true, nil
	case "regexp_like", "regexp_instr", "regexp_substr", "regexp_replace":
		return c.regexpFunc(name, args)
	}
	return c.userLockFunc(name, args)
}

// getFormats is GET_FORMAT's table.
var getFormats = map[ast.GetFormatSelectorType]map[string]string{
	ast.GetFormatSelectorDate: {"USA": "%m.%d.%Y", "JIS": "%Y-%m-%d", "ISO": "%Y-%m-%d", "EUR": "%d.%m.%Y", "INTERNAL": "%Y%m%d"},
	ast.GetFormatSelectorDatetime: {"USA": "%Y-%m-%d %H.%i.%s", "JIS": "%Y-%m-%d %H:%i:%s", "ISO": "%Y-%m-%d %H:%i:%s",
		"EUR": "%Y-%m-%d %H.%i.%s", "INTERNAL": "%Y%m%d%H%i%s"},
	ast.GetFormatSelectorTime: {"USA": "%h:%i:%s %p", "JIS": "%H:%i:%s", "ISO": "%H:%i:%s", "EUR": "%H.%i.%s", "INTERNAL": "%H%i%s"},
}

func (s *Session) defaultWeekFormat() int {
	return int(expr.ToIntLenient(s.getSysVar(sysvar.Must("default_week_format"), false)))
}

// temporalLiteral is DATE 'x', TIME 'x' and TIMESTAMP 'x': parsed strictly when compiled.
func (c *compiler) temporalLiteral(name string, args []expr.Expr) (expr.Expr, bool, error) {
	k, ok := args[0].(*expr.Const)
	if len(args) != 1 || !ok {
		return nil, true, c.errf(sqlerr.ErrNotSupportedYet, "unsupported temporal literal")
	}
	s := types.ToString(k.V)
	fsp := builtins.TimeFsp(types.NewString(s))
	switch name {
	case ast.DateLiteral:
		p, err := types.ParseDatetime(s, 6)
		y, m, d, h, mi, sec, us := types.UnpackTime(p)
		if err != nil || h+mi+sec+us != 0 || strings.ContainsAny(strings.TrimSpace(s), " T:") {
			return nil, true, c.errf(sqlerr.ErrIncorrectValue, "Incorrect DATE value: '%s'", s)
		}
		return expr.NewConst(types.NewDate(types.PackTime(y, m, d, 0, 0, 0, 0))), true, nil
	case ast.TimeLiteral:
		us, err := types.ParseDuration(s, fsp)
		if err != nil {
			return nil, true, c.errf(sqlerr.ErrIncorrectValue, "Incorrect TIME value: '%s'", s)
		}
		e := expr.NewConst(types.NewDuration(us, fsp))
		e.T.Frac = fsp
		return e, true, nil
	}
	p, err := types.ParseDatetime(s, fsp)
	if err != nil {
		return nil, true, c.errf(sqlerr.ErrIncorrectValue, "Incorrect DATETIME value: '%s'", s)
	}
	return expr.NewConst(types.NewDatetime(p, fsp)), true, nil
}

// strToDate is STR_TO_DATE(s, format): the result type follows a constant format (DATE, TIME or
// DATETIME, fsp 6 with %f); a variable format gives DATETIME(6). Values that do not match, zero
// dates and dates with zero parts (under NO_ZERO_DATE / NO_ZERO_IN_DATE) and invalid dates are
// NULL with warning 1411.
func (c *compiler) strToDate(args []expr.Expr) (expr.Expr, bool, error) {
	kind, fsp := types.KindDatetime, 6
	if k, ok := args[1].(*expr.Const); ok && !k.V.IsNull() {
		kind, fsp = builtins.StrToDateKind(types.ToString(k.V))
	}
	var t types.ColType
	switch kind {
	case types.KindDate:
		t = expr.TDate
	case types.KindDuration:
		t = expr.TTime
		t.Frac = fsp
	default:
		t = expr.TDT
		t.Frac = fsp
	}
	typeName := map[types.Kind]string{types.KindDate: "date", types.KindDuration: "time", types.KindDatetime: "datetime"}[kind]
	return &expr.Closure{Typed: expr.Typed{T: t}, Args: args, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
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
			case f.Month > 0 && f.Day > expr.DaysIn(f.Year, f.Month) && !env.Sess.SQLModeHas("ALLOW_INVALID_DATES"):
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
	}}, true, nil
}

// lower-case name → *time.Location (nil: unknown)

// convertUsing is CONVERT(e USING cs) (and CHAR(... USING cs), from binary): characters the target
// charset cannot hold become '?'; malformed input is NULL with warning 1300.
func (c *compiler) convertUsing(e expr.Expr, cs string, fromBinary bool) (expr.Expr, bool, error) {
	if cs == "utf8" {
		cs = "utf8mb3"
	}
	coll, ok := types.DefaultCollation(cs)
	if !ok {
		return nil, true, c.errf(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", cs)
	}
	if cs == "binary" {
		return &expr.Closure{Typed: expr.Typed{T: expr.TBytes}, Args: []expr.Expr{e}, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			return types.NewBytes(types.ToString(v)), nil
		}}, true, nil
	}
	t := expr.TString
	t.Charset, t.Collation = coll.Charset, coll.Name
	if lt := e.Type(); expr.IsStringType(lt) && lt.Len > 0 {
		t.Len = lt.Len
	}
	return &expr.Closure{Typed: expr.Typed{T: t}, Args: []expr.Expr{e}, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
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
	}}, true, nil
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
func (c *compiler) collationName(e expr.Expr) string {
	t := e.Type()
	switch {
	case expr.IsJSONType(t):
		return "utf8mb4_bin"
	case !expr.IsStringType(t):
		return "binary"
	case t.Collation == "binary":
		return "binary"
	}
	switch e.(type) {
	case *expr.Collate, *expr.Col:
		if t.Collation != "" {
			return t.Collation
		}
	}
	if t.Collation != "" && t.Collation != expr.TString.Collation {
		return t.Collation
	}
	return c.s.connCollation().Name
}
