package sql

import (
	"crypto/rand"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Builtins that need the session, the parser's special argument forms (time units, TRIM
// directions, GET_FORMAT selectors, USING charsets) or static types: compiled here, on top of the
// pure helpers of package types.

// moreFunc compiles such a function, or returns ok=false if name is not one. args are the
// compiled arguments without the parser's unit/direction/selector nodes.
func (c *compiler) moreFunc(x *ast.FuncCallExpr, name string, args []Expr) (Expr, bool, error) {
	argc := func(lo, hi int) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
		}
		return nil
	}
	mk := func(t types.ColType, fn func(env *Env, row []types.Value, args []Expr) (types.Value, error)) (Expr, bool, error) {
		return &closureExpr{typed: typed{t}, name: name, args: args, fn: fn}, true, nil
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
		return newFuncExpr(funcType("trim", args), "trim", builtins.TrimFunc(lead, trail), args), true, nil
	case "char_func":
		// The parser appends the USING charset (or NULL) as the last argument.
		cs := ""
		if k, ok := args[len(args)-1].(*constExpr); ok && !k.v.IsNull() {
			cs = strings.ToLower(types.ToString(k.v))
		}
		codes := make([]Expr, len(args)-1)
		for i, a := range args[:len(args)-1] {
			codes[i] = hexNumber(a)
		}
		f, _, _, _ := builtins.LookupFunc("char_func")
		e := newFuncExpr(tBytes, "char_func", f, codes)
		if cs == "" || cs == "binary" {
			return e, true, nil
		}
		return c.convertUsing(e, cs, true)
	case "convert":
		if len(args) != 2 {
			return nil, true, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
		}
		k, ok := args[1].(*constExpr)
		if !ok {
			return nil, true, c.errf(sqlerr.ErrNotSupportedYet, "unsupported CONVERT form")
		}
		return c.convertUsing(args[0], strings.ToLower(types.ToString(k.v)), false)
	case "charset", "collation", "coercibility":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		var v types.Value
		switch name {
		case "coercibility":
			v = types.NewInt(int64(coercibility(args[0])))
		case "collation":
			v = types.NewString(c.collationName(args[0]))
		default:
			cs := "binary"
			if coll, ok := types.LookupCollation(c.collationName(args[0])); ok {
				cs = coll.Charset
			}
			v = types.NewString(cs)
		}
		return newConst(v), true, nil
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
		return newConst(types.NewString("NONE")), true, nil
	case ast.DateLiteral, ast.TimeLiteral, ast.TimestampLiteral:
		return c.temporalLiteral(name, args)
	case "extract":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		u := unit()
		return mk(tInt, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			return builtins.Extract(u, v, env.s.DefaultWeekFormat()), nil
		})
	case "week":
		if len(args) != 1 {
			return nil, false, nil
		}
		f, _, _, _ := builtins.LookupFunc("week")
		return mk(tInt, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			return f([]types.Value{v, types.NewInt(int64(env.s.DefaultWeekFormat()))})
		})
	case "timestampdiff":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		u := unit()
		return mk(tInt, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := evalArgs(env, row, a)
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
		t := tDT
		if dt := args[1].Type(); dt.Tp == mysql.TypeDatetime || dt.Tp == mysql.TypeTimestamp {
			t.Frac = max(dt.Frac, 0)
		}
		return mk(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := evalArgs(env, row, a)
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
		return mk(tString, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
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
		fsp := numFsp(args[0])
		t := tDT
		t.Frac = fsp
		if len(args) == 2 {
			t = tString
		}
		return mk(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := evalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return fromUnixtime(env, vs, fsp)
		})
	case "convert_tz":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		t := tDT
		t.Frac = exprFsp(args[0])
		return mk(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := evalArgs(env, row, a)
			if err != nil || null {
				return types.Null, err
			}
			return convertTZ(vs, t.Frac), nil
		})
	case "utc_date":
		return mk(tDate, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			n := env.now().UTC()
			return types.NewDate(types.PackTime(n.Year(), int(n.Month()), n.Day(), 0, 0, 0, 0)), nil
		})
	case "curtime", "current_time", "utc_time":
		fsp := c.constIntArg(args, 0)
		t := tTime
		t.Frac = fsp
		utc := name == "utc_time"
		return mk(t, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			n := env.now()
			if utc {
				n = n.UTC()
			}
			us := int64(n.Hour()*3600+n.Minute()*60+n.Second())*1e6 + int64(truncMicros(n.Nanosecond()/1000, fsp))
			return types.NewDuration(us, fsp), nil
		})
	case "utc_timestamp":
		fsp := c.constIntArg(args, 0)
		t := tDT
		t.Frac = fsp
		return mk(t, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return timeValue(env.now().UTC(), fsp), nil
		})
	case "uuid_short":
		if err := argc(0, 0); err != nil {
			return nil, true, err
		}
		return mk(tUint, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			uuidShort.once.Do(func() {
				sid := toUint64(env.s.SysVar(sysvar.Must("server_id"), true))
				uuidShort.next.Store((sid&255)<<56 + uint64(time.Now().Unix())<<24)
			})
			return types.NewUint(uuidShort.next.Add(1) - 1), nil
		})
	case "random_bytes":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return mk(tBytes, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			n := toIntLenient(v)
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
		return &closureExpr{typed: typed{tInt}, args: args, lazy: true, fn: benchmark}, true, nil
	case "regexp_like", "regexp_instr", "regexp_substr", "regexp_replace":
		return c.regexpFunc(name, args)
	}
	return c.userLockFunc(name, args)
}

var uuidShort struct {
	once sync.Once
	next atomic.Uint64
}

// truncMicros truncates microseconds to fsp digits.
func truncMicros(us, fsp int) int {
	div := 1
	for i := fsp; i < 6; i++ {
		div *= 10
	}
	return us / div * div
}

// benchmark is BENCHMARK(count, expr): evaluates expr count times and returns 0; a negative count
// is NULL with a warning. A killed statement stops it.
func benchmark(env *Env, row []types.Value, a []Expr) (types.Value, error) {
	cv, err := a[0].Eval(env, row)
	if err != nil || cv.IsNull() {
		return types.Null, err
	}
	var n uint64
	if cv.K == types.KindUint {
		n = cv.U()
	} else if i := toIntLenient(cv); i >= 0 {
		n = uint64(i)
	} else {
		env.warn(sqlerr.New(sqlerr.ErrWrongValueForType, "Incorrect count value: '%d' for function benchmark", i))
		return types.Null, nil
	}
	if _, ok := a[1].(*rowExpr); ok {
		return types.Null, sqlerr.New(sqlerr.ErrOperandColumns, "Operand should contain 1 column(s)")
	}
	for i := uint64(0); i < n; i++ {
		if i&1023 == 0 {
			if err := env.interrupted(); err != nil {
				return types.Null, err
			}
		}
		if _, err := a[1].Eval(env, row); err != nil {
			return types.Null, err
		}
	}
	return types.NewInt(0), nil
}

// getFormats is GET_FORMAT's table.
var getFormats = map[ast.GetFormatSelectorType]map[string]string{
	ast.GetFormatSelectorDate: {"USA": "%m.%d.%Y", "JIS": "%Y-%m-%d", "ISO": "%Y-%m-%d", "EUR": "%d.%m.%Y", "INTERNAL": "%Y%m%d"},
	ast.GetFormatSelectorDatetime: {"USA": "%Y-%m-%d %H.%i.%s", "JIS": "%Y-%m-%d %H:%i:%s", "ISO": "%Y-%m-%d %H:%i:%s",
		"EUR": "%Y-%m-%d %H.%i.%s", "INTERNAL": "%Y%m%d%H%i%s"},
	ast.GetFormatSelectorTime: {"USA": "%h:%i:%s %p", "JIS": "%H:%i:%s", "ISO": "%H:%i:%s", "EUR": "%H.%i.%s", "INTERNAL": "%H%i%s"},
}

func (s *Session) defaultWeekFormat() int {
	return int(toIntLenient(s.getSysVar(sysvar.Must("default_week_format"), false)))
}

// exprFsp is the fractional-seconds precision a time function gives a result computed from e: a
// constant's own digits, an integer 0, a decimal its scale, a temporal value its fsp, else 6.
func exprFsp(e Expr) int {
	if k, ok := e.(*constExpr); ok {
		if k.v.K == types.KindFloat {
			return 6
		}
		return builtins.TimeFsp(k.v)
	}
	t := e.Type()
	switch {
	case isIntType(t), t.Tp == mysql.TypeNull, t.Tp == mysql.TypeDate:
		return 0
	case t.Tp == mysql.TypeNewDecimal, t.Tp == mysql.TypeDatetime, t.Tp == mysql.TypeTimestamp, t.Tp == mysql.TypeDuration:
		return min(max(t.Frac, 0), 6)
	}
	return 6
}

// numFsp is the fractional precision a time function gives a result computed from the number e
// (FROM_UNIXTIME, SEC_TO_TIME, MAKETIME's seconds): an integer 0, a decimal its scale, else 6.
func numFsp(e Expr) int {
	t := e.Type()
	if k, ok := e.(*constExpr); ok {
		t = typeOfValue(k.v)
	}
	switch {
	case isIntType(t), t.Tp == mysql.TypeNull:
		return 0
	case t.Tp == mysql.TypeNewDecimal:
		return min(max(t.Frac, 0), 6)
	}
	return 6
}

// temporalLiteral is DATE 'x', TIME 'x' and TIMESTAMP 'x': parsed strictly when compiled.
func (c *compiler) temporalLiteral(name string, args []Expr) (Expr, bool, error) {
	k, ok := args[0].(*constExpr)
	if len(args) != 1 || !ok {
		return nil, true, c.errf(sqlerr.ErrNotSupportedYet, "unsupported temporal literal")
	}
	s := types.ToString(k.v)
	fsp := builtins.TimeFsp(types.NewString(s))
	switch name {
	case ast.DateLiteral:
		p, err := types.ParseDatetime(s, 6)
		y, m, d, h, mi, sec, us := types.UnpackTime(p)
		if err != nil || h+mi+sec+us != 0 || strings.ContainsAny(strings.TrimSpace(s), " T:") {
			return nil, true, c.errf(sqlerr.ErrIncorrectValue, "Incorrect DATE value: '%s'", s)
		}
		return newConst(types.NewDate(types.PackTime(y, m, d, 0, 0, 0, 0))), true, nil
	case ast.TimeLiteral:
		us, err := types.ParseDuration(s, fsp)
		if err != nil {
			return nil, true, c.errf(sqlerr.ErrIncorrectValue, "Incorrect TIME value: '%s'", s)
		}
		e := newConst(types.NewDuration(us, fsp))
		e.t.Frac = fsp
		return e, true, nil
	}
	p, err := types.ParseDatetime(s, fsp)
	if err != nil {
		return nil, true, c.errf(sqlerr.ErrIncorrectValue, "Incorrect DATETIME value: '%s'", s)
	}
	return newConst(types.NewDatetime(p, fsp)), true, nil
}

// strToDate is STR_TO_DATE(s, format): the result type follows a constant format (DATE, TIME or
// DATETIME, fsp 6 with %f); a variable format gives DATETIME(6). Values that do not match, zero
// dates and dates with zero parts (under NO_ZERO_DATE / NO_ZERO_IN_DATE) and invalid dates are
// NULL with warning 1411.
func (c *compiler) strToDate(args []Expr) (Expr, bool, error) {
	kind, fsp := types.KindDatetime, 6
	if k, ok := args[1].(*constExpr); ok && !k.v.IsNull() {
		kind, fsp = builtins.StrToDateKind(types.ToString(k.v))
	}
	var t types.ColType
	switch kind {
	case types.KindDate:
		t = tDate
	case types.KindDuration:
		t = tTime
		t.Frac = fsp
	default:
		t = tDT
		t.Frac = fsp
	}
	typeName := map[types.Kind]string{types.KindDate: "date", types.KindDuration: "time", types.KindDatetime: "datetime"}[kind]
	return &closureExpr{typed: typed{t}, args: args, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
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
			env.warn(sqlerr.New(sqlerr.ErrWrongValueForType, "Incorrect datetime value: '%s' for function str_to_date", s))
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
			case zero && env.s.SQLModeHas("NO_ZERO_DATE"):
				return bad()
			case !zero && (f.Month == 0 || f.Day == 0) && env.s.SQLModeHas("NO_ZERO_IN_DATE"):
				return bad()
			case f.Month > 0 && f.Day > daysIn(f.Year, f.Month) && !env.s.SQLModeHas("ALLOW_INVALID_DATES"):
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
			env.warn(sqlerr.New(sqlerr.ErrTruncatedWrongValue, "Truncated incorrect %s value: '%s'", typeName, s))
		}
		return v, nil
	}}, true, nil
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// maxUnixTime is the largest FROM_UNIXTIME argument (3001-01-19 03:14:07.999999 UTC).
const maxUnixTime = 32536771199

// fromUnixtime is FROM_UNIXTIME(ts[, format]) in the session time zone.
func fromUnixtime(env *Env, vs []types.Value, fsp int) (types.Value, error) {
	ts := vs[0]
	var sec, us int64
	switch ts.K {
	case types.KindInt:
		sec = ts.I
	case types.KindUint:
		if ts.U() > maxUnixTime {
			return types.Null, nil
		}
		sec = ts.I
	default:
		d := types.ToDecimal(ts)
		if d.Sign() < 0 || d.GreaterThanOrEqual(types.ToDecimal(types.NewInt(maxUnixTime+1))) {
			return types.Null, nil
		}
		whole := d.Truncate(0)
		sec = whole.IntPart()
		us = d.Sub(whole).Shift(6).Truncate(0).IntPart()
	}
	if sec < 0 || sec > maxUnixTime {
		return types.Null, nil
	}
	us = int64(truncMicros(int(us), fsp))
	t := time.Unix(sec, us*1000).In(env.s.Location())
	p := types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), int(us))
	if len(vs) == 1 {
		return types.NewDatetime(p, fsp), nil
	}
	f, _, _, _ := builtins.LookupFunc("date_format")
	return f([]types.Value{types.NewDatetime(p, fsp), vs[1]})
}

// tzCache holds the named time zones CONVERT_TZ loaded.
var tzCache sync.Map // lower-case name → *time.Location (nil: unknown)

// lookupTZ resolves a CONVERT_TZ zone: an offset '+HH:MM' (-13:59 to +14:00), SYSTEM, or a named
// zone of the system's time zone database; nil when unknown.
func lookupTZ(name string) *time.Location {
	if len(name) > 0 && (name[0] == '+' || name[0] == '-') {
		h, m, ok := strings.Cut(name[1:], ":")
		if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
			return nil
		}
		hh, mm := atoiSmall(h), atoiSmall(m)
		off := hh*60 + mm
		if hh < 0 || mm < 0 || mm > 59 || (name[0] == '+' && off > 14*60) || (name[0] == '-' && off > 13*60+59) {
			return nil
		}
		if name[0] == '-' {
			off = -off
		}
		return time.FixedZone(name, off*60)
	}
	key := strings.ToLower(name)
	if l, ok := tzCache.Load(key); ok {
		return l.(*time.Location)
	}
	loc, err := sysvar.ParseTimeZone(name)
	if err != nil || name == "" || name == "Local" {
		loc = nil
	}
	tzCache.Store(key, loc)
	return loc
}

func atoiSmall(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// convertTZ is CONVERT_TZ(dt, from, to): NULL for an unknown zone or a zero date; values outside
// the TIMESTAMP range are returned unconverted, as MySQL does.
func convertTZ(vs []types.Value, fsp int) types.Value {
	p, ok := builtins.DatetimeArg(vs[0])
	if !ok {
		return types.Null
	}
	from, to := lookupTZ(types.ToString(vs[1])), lookupTZ(types.ToString(vs[2]))
	if from == nil || to == nil {
		return types.Null
	}
	y, mo, d, h, mi, s, us := types.UnpackTime(p)
	if mo == 0 || d == 0 {
		return types.Null
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, us*1000, from)
	if u := t.Unix(); u >= 0 && u <= 1<<31-1 {
		t = t.In(to)
		p = types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), us)
	}
	return types.NewDatetime(p, fsp)
}

// convertUsing is CONVERT(e USING cs) (and CHAR(... USING cs), from binary): characters the target
// charset cannot hold become '?'; malformed input is NULL with warning 1300.
func (c *compiler) convertUsing(e Expr, cs string, fromBinary bool) (Expr, bool, error) {
	if cs == "utf8" {
		cs = "utf8mb3"
	}
	coll, ok := types.DefaultCollation(cs)
	if !ok {
		return nil, true, c.errf(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", cs)
	}
	if cs == "binary" {
		return &closureExpr{typed: typed{tBytes}, args: []Expr{e}, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			return types.NewBytes(types.ToString(v)), nil
		}}, true, nil
	}
	t := tString
	t.Charset, t.Collation = coll.Charset, coll.Name
	if lt := e.Type(); isStringType(lt) && lt.Len > 0 {
		t.Len = lt.Len
	}
	return &closureExpr{typed: typed{t}, args: []Expr{e}, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
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
			env.warn(sqlerr.New(sqlerr.ErrInvalidCharacterString, "Invalid %s character string: '%s'", cs, strings.ToUpper(hexString([]byte(bad)))))
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
func (c *compiler) collationName(e Expr) string {
	t := e.Type()
	switch {
	case isJSONType(t):
		return "utf8mb4_bin"
	case !isStringType(t):
		return "binary"
	case t.Collation == "binary":
		return "binary"
	}
	switch e.(type) {
	case *collateExpr, *colExpr:
		if t.Collation != "" {
			return t.Collation
		}
	}
	if t.Collation != "" && t.Collation != tString.Collation {
		return t.Collation
	}
	return c.s.connCollation().Name
}

// coercibility is COERCIBILITY(e): 0 explicit COLLATE, 2 a column, 4 a literal string, 5 numbers
// and temporal values, 6 NULL; a string function of other expressions takes the lowest of its
// string arguments'.
func coercibility(e Expr) int {
	t := e.Type()
	switch x := e.(type) {
	case *collateExpr:
		return 0
	case *colExpr:
		if isStringType(t) {
			return 2
		}
		return 5
	case *constExpr:
		switch {
		case x.v.IsNull():
			return 6
		case isStringType(t):
			return 4
		}
		return 5
	case *funcExpr:
		if isStringType(t) {
			return minCoercibility(x.args)
		}
	case *closureExpr:
		if isStringType(t) {
			return minCoercibility(x.args)
		}
	}
	if t.Tp == mysql.TypeNull {
		return 6
	}
	if isStringType(t) {
		return 4
	}
	return 5
}

func minCoercibility(args []Expr) int {
	m := 4
	for _, a := range args {
		if isStringType(a.Type()) {
			m = min(m, coercibility(a))
		}
	}
	return m
}

// collateExpr is e COLLATE name: e's value with an explicit collation.
type collateExpr struct {
	typed
	e Expr
}

func (x *collateExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	return x.e.Eval(env, row)
}
