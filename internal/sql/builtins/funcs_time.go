package builtins

import (
	"math"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Date and time functions beyond the basic set of funcs.go. Functions that need the session (time
// zone, current time, sql_mode) are compiled in package sql on top of the helpers here.

func registerTimeFuncs(t map[string]funcDef) {
	for name, d := range map[string]funcDef{
		"sec_to_time": {1, 1, fnSecToTime, nil},
		"time_to_sec": {1, 1, fnTimeToSec, nil},
		"makedate":    {2, 2, fnMakeDate, nil},
		"maketime":    {3, 3, fnMakeTime, nil},
		"time":        {1, 1, fnTime, nil},
		"weekofyear": {1, 1, fnDatePart(func(y, m, d int) int64 {
			w, _ := types.CalcWeek(y, m, d, weekModes[3])
			return int64(w)
		}, true), nil},
		"yearweek":    {1, 2, fnYearWeek, nil},
		"period_add":  {2, 2, fnPeriodAdd, nil},
		"period_diff": {2, 2, fnPeriodDiff, nil},
		"from_days":   {1, 1, fnFromDays, nil},
		"to_seconds":  {1, 1, fnToSeconds, nil},
		"addtime":     {2, 2, fnAddTime(false), nil},
		"subtime":     {2, 2, fnAddTime(true), nil},
		"timediff":    {2, 2, fnTimeDiff, nil},
		"timestamp":   {1, 2, fnTimestamp, nil},
		"time_format": {2, 2, fnTimeFormat, nil},
	} {
		t[name] = d
	}
}

const maxDayNumber = 3652424 // 9999-12-31

// dateFromDaynr is the inverse of calcDaynr; day numbers outside 366..9999-12-31 give the zero
// date, as MySQL's get_date_from_daynr.
func dateFromDaynr(n int64) (y, m, d int) {
	if n < 366 || n > maxDayNumber {
		return 0, 0, 0
	}
	y = int(n * 100 / 36525)
	for y > 0 && types.CalcDaynr(y, 1, 1) > n {
		y--
	}
	for types.CalcDaynr(y+1, 1, 1) <= n {
		y++
	}
	m = 1
	for m < 12 && types.CalcDaynr(y, m+1, 1) <= n {
		m++
	}
	return y, m, int(n-types.CalcDaynr(y, m, 1)) + 1
}

// timeFsp is the fractional precision MySQL gives a function's result from an argument: an
// integer 0, a decimal its scale, anything else 6.
func timeFsp(v types.Value) int {
	switch v.K {
	case types.KindInt, types.KindUint, types.KindNull:
		return 0
	case types.KindDecimal:
		return min(types.DecScale(v), 6)
	case types.KindDate:
		return 0
	case types.KindDatetime, types.KindDuration:
		return int(v.Frac)
	case types.KindString, types.KindBytes:
		return fracDigits(v.S)
	}
	return 6
}

// fracDigits counts the fraction digits of a temporal string ('10:00:00.25' has 2), at most 6.
func fracDigits(s string) int {
	s = types.TrimSpaces(s)
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return 0
	}
	n := 0
	for j := i + 1; j < len(s) && types.IsDigit(s[j]); j++ {
		n++
	}
	return min(n, 6)
}

func timeWarn(v types.Value, text string) (types.Value, error) {
	return warnResult(v, sqlerr.ErrTruncatedWrongValue, "Truncated incorrect time value: '%s'", text)
}

// durationResult clips a TIME to ±838:59:59 with MySQL's truncation warning.
func durationResult(us int64, fsp int, text func() string) (types.Value, error) {
	us = types.RoundDuration(us, fsp)
	c, err := types.ClipDuration(us)
	if err != nil {
		return timeWarn(types.NewDuration(c, fsp), text())
	}
	return types.NewDuration(c, fsp), nil
}

// fnSecToTime is SEC_TO_TIME(seconds).
func fnSecToTime(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull {
		return types.Null, nil
	}
	fsp := timeFsp(a)
	if a.K == types.KindFloat || a.K == types.KindString || a.K == types.KindBytes {
		fsp = 6
	}
	d := types.ToDecimal(a)
	limit := decimal.New(types.MaxDurationMicros/types.MicrosPerSec+1, 0)
	if d.Abs().GreaterThanOrEqual(limit) {
		return timeWarn(types.NewDuration(int64(d.Sign())*types.MaxDurationMicros, fsp), types.ToString(a))
	}
	us := d.Shift(6).Truncate(0).IntPart()
	return durationResult(us, fsp, func() string { return types.ToString(a) })
}

// fnTimeToSec is TIME_TO_SEC(t): whole seconds, negative for negative times.
func fnTimeToSec(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	us, ok := durationArg(args[0])
	if !ok {
		return types.Null, nil
	}
	return types.NewInt(us / types.MicrosPerSec), nil
}

// fnMakeDate is MAKEDATE(year, dayofyear).
func fnMakeDate(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	y, n := intArg(args[0]), intArg(args[1])
	if y < 0 || y > 9999 || n <= 0 {
		return types.Null, nil
	}
	if y < 100 {
		y = int64(types.TwoDigitYear(int(y)))
	}
	days := types.CalcDaynr(int(y), 1, 1) + n - 1
	if days <= 0 || days > maxDayNumber {
		return types.Null, nil
	}
	yy, m, d := dateFromDaynr(days)
	return types.NewDate(types.PackTime(yy, m, d, 0, 0, 0, 0)), nil
}

// fnMakeTime is MAKETIME(hour, minute, second).
func fnMakeTime(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	h, mi := intArg(args[0]), intArg(args[1])
	if args[0].K == types.KindUint && h < 0 {
		h = math.MaxInt64
	}
	sec := types.ToDecimal(args[2])
	fsp := timeFsp(args[2])
	if args[2].K == types.KindFloat || args[2].K == types.KindString || args[2].K == types.KindBytes {
		fsp = 6
	}
	if mi < 0 || mi > 59 || sec.Sign() < 0 || sec.GreaterThanOrEqual(decimal.New(60, 0)) {
		return types.Null, nil
	}
	whole := sec.Truncate(0).IntPart()
	text := func() string {
		return types.ToString(types.NewInt(h)) + ":" + string(types.AppendPad(nil, mi, 2)) + ":" + string(types.AppendPad(nil, whole, 2))
	}
	if h > 838 || h < -838 {
		return timeWarn(types.NewDuration(pickSign(h < 0)*types.MaxDurationMicros, fsp), text())
	}
	us := (max(h, -h)*3600+mi*60)*types.MicrosPerSec + sec.Shift(6).Truncate(0).IntPart()
	if h < 0 {
		us = -us
	}
	return durationResult(us, fsp, text)
}

func pickSign(neg bool) int64 {
	if neg {
		return -1
	}
	return 1
}

// fnTime is TIME(expr): the time part of a datetime or time.
func fnTime(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull {
		return types.Null, nil
	}
	us, ok := durationArg(a)
	if !ok {
		return warnResult(types.Null, sqlerr.ErrTruncatedWrongValue, "Truncated incorrect time value: '%s'", types.ToString(a))
	}
	return types.NewDuration(us, timeFsp(a)), nil
}

// fnYearWeek is YEARWEEK(date[, mode]): year*100 + week, the week counted in its own year.
func fnYearWeek(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	p, ok := datetimeArg(args[0])
	if !ok {
		return types.Null, nil
	}
	y, m, d, _, _, _, _ := types.UnpackTime(p)
	if m == 0 || d == 0 {
		return types.Null, nil
	}
	mode := int64(0)
	if len(args) > 1 {
		mode = intArg(args[1])
	}
	w, wy := types.CalcWeek(y, m, d, weekModes[mode&7]|types.WeekYear)
	return types.NewInt(int64(wy*100 + w)), nil
}

// Periods are YYMM or YYYYMM; two-digit years are 1970-2069.

func periodToMonth(p int64) int64 {
	if p == 0 {
		return 0
	}
	y := p / 100
	if y < 70 {
		y += 2000
	} else if y < 100 {
		y += 1900
	}
	return y*12 + p%100 - 1
}

func monthToPeriod(m int64) int64 {
	if m == 0 {
		return 0
	}
	y := m / 12
	if y < 100 {
		if y < 70 {
			y += 2000
		} else {
			y += 1900
		}
	}
	return y*100 + m%12 + 1
}

func validPeriod(p int64) bool { return p > 0 && p%100 != 0 && p%100 <= 12 }

func fnPeriodAdd(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	p, n := intArg(args[0]), intArg(args[1])
	if p == 0 {
		return types.NewInt(0), nil
	}
	if !validPeriod(p) {
		return types.Null, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to period_add")
	}
	return types.NewInt(monthToPeriod(periodToMonth(p) + n)), nil
}

func fnPeriodDiff(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	a, b := intArg(args[0]), intArg(args[1])
	if !validPeriod(a) || !validPeriod(b) {
		return types.Null, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to period_diff")
	}
	return types.NewInt(periodToMonth(a) - periodToMonth(b)), nil
}

// fnFromDays is FROM_DAYS(n); small day numbers give '0000-00-00' as in MySQL.
func fnFromDays(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	y, m, d := dateFromDaynr(intArg(args[0]))
	return types.NewDate(types.PackTime(y, m, d, 0, 0, 0, 0)), nil
}

// fnToSeconds is TO_SECONDS(expr): seconds since year 0.
func fnToSeconds(args []types.Value) (types.Value, error) {
	p, ok := datetimeArg(args[0])
	if !ok {
		return types.Null, nil
	}
	y, m, d, h, mi, s, _ := types.UnpackTime(p)
	if m == 0 || d == 0 {
		return types.Null, nil
	}
	return types.NewInt(types.CalcDaynr(y, m, d)*86400 + int64(h*3600+mi*60+s)), nil
}

// temporalArg reads a TIME or DATETIME argument as MySQL's get_time does: strings of 12 or more
// characters that hold a full datetime are datetimes, other strings times; isDT tells which.
func temporalArg(v types.Value) (val int64, isDT bool, ok bool) {
	switch v.K {
	case types.KindDuration:
		return v.I, false, true
	case types.KindDate, types.KindDatetime:
		return v.I, true, true
	case types.KindString, types.KindBytes:
		s := types.TrimSpaces(v.S)
		if len(s) >= 12 {
			if p, _, err := types.ParseDatetimeMode(s, 6, true); err == nil {
				return p, true, true
			}
		}
		us, err := types.ParseDuration(s, 6)
		return us, false, err == nil || err == types.ErrDurationRange
	case types.KindInt, types.KindUint, types.KindFloat, types.KindDecimal:
		if n, _, _, ok := types.SplitNumber(v); ok && n > 8385959 {
			if p, ok := types.NumberAsDatetime(v); ok {
				return p, true, true
			}
		}
		us, ok := types.NumberAsDuration(v)
		return us, false, ok
	}
	return 0, false, false
}

// datetimeMicros converts a packed datetime to microseconds since year 0 (via the day number).
func datetimeMicros(p int64) int64 {
	y, m, d, h, mi, s, us := types.UnpackTime(p)
	return (types.CalcDaynr(y, m, d)*86400+int64(h*3600+mi*60+s))*types.MicrosPerSec + int64(us)
}

// microsDatetime is the inverse of datetimeMicros; ok is false outside years 0..9999.
func microsDatetime(t int64) (int64, bool) {
	if t < 0 {
		return 0, false
	}
	days := t / (86400 * types.MicrosPerSec)
	rest := t % (86400 * types.MicrosPerSec)
	if days > maxDayNumber {
		return 0, false
	}
	y, m, d := dateFromDaynr(days)
	if m == 0 {
		return 0, false
	}
	secs := rest / types.MicrosPerSec
	return types.PackTime(y, m, d, int(secs/3600), int(secs/60%60), int(secs%60), int(rest%types.MicrosPerSec)), true
}

// fnAddTime is ADDTIME / SUBTIME(expr1, expr2): expr1 a time or datetime, expr2 a time.
func fnAddTime(sub bool) Func {
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		a, aDT, ok1 := temporalArg(args[0])
		b, bDT, ok2 := temporalArg(args[1])
		if !ok1 || !ok2 || bDT {
			return types.Null, nil
		}
		fsp := max(timeFsp(args[0]), timeFsp(args[1]))
		if sub {
			b = -b
		}
		// A string (or number) first argument gives a string result, as in MySQL.
		str := args[0].K != types.KindDuration && args[0].K != types.KindDate && args[0].K != types.KindDatetime
		if aDT {
			r, ok := microsDatetime(datetimeMicros(a) + b)
			if !ok {
				return types.Null, nil
			}
			if str {
				return types.NewString(string(types.AppendDatetime(nil, r, fsp))), nil
			}
			return types.NewDatetime(r, fsp), nil
		}
		res, err := durationResult(a+b, fsp, func() string { return string(types.AppendDuration(nil, a+b, fsp)) })
		if str && !res.IsNull() {
			s := types.NewString(string(types.AppendDuration(nil, res.I, fsp)))
			if w, ok := err.(*FuncWarning); ok {
				w.Value = s
				return s, w
			}
			return s, err
		}
		return res, err
	}
}

// fnTimeDiff is TIMEDIFF(a, b): both times or both datetimes, else NULL.
func fnTimeDiff(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	a, aDT, ok1 := temporalArg(args[0])
	b, bDT, ok2 := temporalArg(args[1])
	if !ok1 || !ok2 || aDT != bDT {
		return types.Null, nil
	}
	fsp := max(timeFsp(args[0]), timeFsp(args[1]))
	var d int64
	if aDT {
		d = datetimeMicros(a) - datetimeMicros(b)
	} else {
		d = a - b
	}
	return durationResult(d, fsp, func() string { return string(types.AppendDuration(nil, d, fsp)) })
}

// fnTimestamp is TIMESTAMP(expr[, time]).
func fnTimestamp(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	p, ok := datetimeArg(args[0])
	if !ok {
		return warnResult(types.Null, sqlerr.ErrTruncatedWrongValue, "Incorrect datetime value: '%s'", types.ToString(args[0]))
	}
	fsp := timeFsp(args[0])
	if len(args) == 1 {
		return types.NewDatetime(p, fsp), nil
	}
	b, bDT, ok := temporalArg(args[1])
	if !ok || bDT {
		return types.Null, nil
	}
	fsp = max(fsp, timeFsp(args[1]))
	r, ok := microsDatetime(datetimeMicros(p) + b)
	if !ok {
		return types.Null, nil
	}
	return types.NewDatetime(r, fsp), nil
}

// fnTimeFormat is TIME_FORMAT(time, format): hours may exceed 23; date specifiers that need a
// calendar give NULL, the others zeros.
func fnTimeFormat(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	var us int64
	switch a := args[0]; a.K {
	case types.KindDate, types.KindDatetime:
		_, _, _, h, mi, s, u := types.UnpackTime(a.I)
		us = (int64(h)*3600+int64(mi)*60+int64(s))*types.MicrosPerSec + int64(u)
	default:
		var ok bool
		if us, ok = durationArg(a); !ok {
			return types.Null, nil
		}
	}
	neg, h, mi, s, frac := types.DurationParts(us)
	out, ok := formatParts(nil, timeParts{h: h, mi: int(mi), s: int(s), us: int(frac), neg: neg, isTime: true}, types.ToString(args[1]))
	if !ok {
		return types.Null, nil
	}
	return types.NewString(string(out)), nil
}

// ---- helpers for the session-aware time functions of package sql ----

// TimeFsp is the fractional precision MySQL gives a time function's result from its argument.
func TimeFsp(v types.Value) int { return timeFsp(v) }

// DatetimeArg converts v to a packed datetime as the date functions read their arguments.
func DatetimeArg(v types.Value) (int64, bool) { return datetimeArg(v) }

// TimestampDiff is TIMESTAMPDIFF(unit, a, b) for the unit's name (MICROSECOND ... YEAR).
func TimestampDiff(unit string, a, b types.Value) types.Value {
	if a.IsNull() || b.IsNull() {
		return types.Null
	}
	p1, ok1 := datetimeArg(a)
	p2, ok2 := datetimeArg(b)
	if !ok1 || !ok2 {
		return types.Null
	}
	diff := datetimeMicros(p2) - datetimeMicros(p1)
	switch unit {
	case "MICROSECOND":
		return types.NewInt(diff)
	case "SECOND":
		return types.NewInt(diff / types.MicrosPerSec)
	case "MINUTE":
		return types.NewInt(diff / (60 * types.MicrosPerSec))
	case "HOUR":
		return types.NewInt(diff / (3600 * types.MicrosPerSec))
	case "DAY":
		return types.NewInt(diff / (86400 * types.MicrosPerSec))
	case "WEEK":
		return types.NewInt(diff / (7 * 86400 * types.MicrosPerSec))
	}
	// Months: whole months between the two, counting a month only once the later value's day and
	// time have reached the earlier one's.
	beg, end, sign := p1, p2, int64(1)
	if diff < 0 {
		beg, end, sign = p2, p1, -1
	}
	y1, m1, d1, h1, mi1, s1, us1 := types.UnpackTime(beg)
	y2, m2, d2, h2, mi2, s2, us2 := types.UnpackTime(end)
	months := int64((y2-y1)*12 + m2 - m1)
	t1 := int64(h1*3600+mi1*60+s1)*types.MicrosPerSec + int64(us1)
	t2 := int64(h2*3600+mi2*60+s2)*types.MicrosPerSec + int64(us2)
	if d2 < d1 || (d2 == d1 && t2 < t1) {
		months--
	}
	switch unit {
	case "QUARTER":
		return types.NewInt(sign * (months / 3))
	case "YEAR":
		return types.NewInt(sign * (months / 12))
	}
	return types.NewInt(sign * months)
}

// Extract is EXTRACT(unit FROM v) for the unit's name (YEAR, DAY_HOUR, MINUTE_MICROSECOND...);
// weekMode is default_week_format's behaviour for WEEK.
func Extract(unit string, v types.Value, weekMode int) types.Value {
	if v.IsNull() {
		return types.Null
	}
	switch unit {
	case "YEAR", "YEAR_MONTH", "QUARTER", "MONTH", "WEEK", "DAY":
		p, ok := datetimeArg(v)
		if !ok {
			return types.Null
		}
		y, m, d, _, _, _, _ := types.UnpackTime(p)
		switch unit {
		case "YEAR":
			return types.NewInt(int64(y))
		case "YEAR_MONTH":
			return types.NewInt(int64(y*100 + m))
		case "QUARTER":
			return types.NewInt(int64((m + 2) / 3))
		case "MONTH":
			return types.NewInt(int64(m))
		case "WEEK":
			if m == 0 || d == 0 {
				return types.Null
			}
			w, _ := types.CalcWeek(y, m, d, weekModes[weekMode&7])
			return types.NewInt(int64(w))
		}
		return types.NewInt(int64(d))
	}
	// Time units read the value as a TIME: a datetime keeps its day, a TIME has day 0 and any
	// number of hours, and its sign applies to the result.
	var day, h, mi, s, us int64
	sign := int64(1)
	t, isDT, ok := temporalArg(v)
	if !ok {
		return types.Null
	}
	if isDT {
		_, _, d, hh, mm, ss, u := types.UnpackTime(t)
		day, h, mi, s, us = int64(d), int64(hh), int64(mm), int64(ss), int64(u)
	} else {
		var neg bool
		neg, h, mi, s, us = types.DurationParts(t)
		if neg {
			sign = -1
		}
	}
	var r int64
	switch unit {
	case "DAY_HOUR":
		r = day*100 + h
	case "DAY_MINUTE":
		r = day*10000 + h*100 + mi
	case "DAY_SECOND":
		r = day*1000000 + h*10000 + mi*100 + s
	case "HOUR":
		r = h
	case "HOUR_MINUTE":
		r = h*100 + mi
	case "HOUR_SECOND":
		r = h*10000 + mi*100 + s
	case "MINUTE":
		r = mi
	case "MINUTE_SECOND":
		r = mi*100 + s
	case "SECOND":
		r = s
	case "MICROSECOND":
		r = us
	case "DAY_MICROSECOND":
		r = (day*1000000+h*10000+mi*100+s)*1000000 + us
	case "HOUR_MICROSECOND":
		r = (h*10000+mi*100+s)*1000000 + us
	case "MINUTE_MICROSECOND":
		r = (mi*100+s)*1000000 + us
	case "SECOND_MICROSECOND":
		r = s*1000000 + us
	default:
		return types.Null
	}
	return types.NewInt(r * sign)
}

// StrToDate parses s with a STR_TO_DATE format. ok is false when s does not match; trailing is
// true when non-blank text was left over (MySQL then warns but keeps the value).
func StrToDate(s, format string) (t DateTimeFields, trailing bool, ok bool) {
	p := strToDateParser{s: s}
	if !p.parse(format) {
		return t, false, false
	}
	f := &p.f
	if f.yearday > 0 {
		days := types.CalcDaynr(f.Year, 1, 1) + int64(f.yearday) - 1
		if days <= 0 || days > maxDayNumber {
			return t, false, false
		}
		f.Year, f.Month, f.Day = dateFromDaynr(days)
	}
	if f.weekNum >= 0 && f.weekday > 0 {
		// %V/%v need %X/%x of the same kind; %U/%u go with %Y.
		if (f.strictWeek && (f.weekYear < 0 || f.strictWeekNumberYearType != f.sundayFirst)) ||
			(!f.strictWeek && f.weekYear >= 0) {
			return t, false, false
		}
		year := f.Year
		if f.strictWeek {
			year = f.weekYear
		}
		// The day number of the first day of week 1, then the week and the day within it.
		days := types.CalcDaynr(year, 1, 1)
		wd := int64(types.CalcWeekday(days, f.sundayFirst))
		if f.sundayFirst {
			if wd != 0 {
				days += 7
			}
			days += -wd + int64(f.weekNum-1)*7 + int64(f.weekday%7)
		} else {
			if wd > 3 {
				days += 7
			}
			days += -wd + int64(f.weekNum-1)*7 + int64(f.weekday-1)
		}
		if days <= 0 || days > maxDayNumber {
			return t, false, false
		}
		f.Year, f.Month, f.Day = dateFromDaynr(days)
	}
	if f.hour12 {
		if f.Hour > 12 || f.Hour < 1 {
			return t, false, false
		}
		f.Hour = f.Hour%12 + f.pm
	}
	if f.Year > 9999 || f.Month > 12 || f.Day > 31 || f.Hour > 23 || f.Minute > 59 || f.Second > 59 {
		return t, false, false
	}
	rest := strings.TrimLeft(p.s[p.i:], " \t\n\r\v\f")
	return f.DateTimeFields, rest != "", true
}

// DateTimeFields are the fields STR_TO_DATE fills.
type DateTimeFields struct {
	Year, Month, Day, Hour, Minute, Second, Micro int
}

type strToDateFields struct {
	DateTimeFields
	yearday                  int
	weekNum, weekYear        int
	weekday                  int // 1 = Monday .. 7 = Sunday, 0 unset
	sundayFirst, strictWeek  bool
	strictWeekNumberYearType bool
	hour12                   bool
	pm                       int
}

type strToDateParser struct {
	s string
	i int
	f strToDateFields
}

func (p *strToDateParser) skipSpaces() {
	for p.i < len(p.s) && types.IsSpace(p.s[p.i]) {
		p.i++
	}
}

// num reads up to n digits (an optional sign first, as my_strtoll10); none reads as 0.
func (p *strToDateParser) num(n int) int {
	end := min(p.i+n, len(p.s))
	v := 0
	j := p.i
	neg := false
	if j < end && (p.s[j] == '-' || p.s[j] == '+') {
		neg = p.s[j] == '-'
		j++
	}
	st := j
	for j < end && types.IsDigit(p.s[j]) {
		v = v*10 + int(p.s[j]-'0')
		j++
	}
	if j == st {
		return 0
	}
	p.i = j
	if neg {
		return -v
	}
	return v
}

// name matches one of names (case-insensitively) at the cursor, returning its index.
func (p *strToDateParser) name(names []string, n int) int {
	for k, nm := range names {
		if n > 0 {
			nm = nm[:n]
		}
		if len(p.s)-p.i >= len(nm) && strings.EqualFold(p.s[p.i:p.i+len(nm)], nm) {
			p.i += len(nm)
			return k
		}
	}
	return -1
}

func (p *strToDateParser) parse(format string) bool {
	f := &p.f
	f.weekNum, f.weekYear = -1, -1
	for fi := 0; fi < len(format) && p.i < len(p.s); fi++ {
		p.skipSpaces()
		if p.i >= len(p.s) {
			break
		}
		c := format[fi]
		if c != '%' || fi+1 == len(format) {
			if types.IsSpace(c) {
				continue
			}
			if p.s[p.i] != c {
				return false
			}
			p.i++
			continue
		}
		fi++
		switch format[fi] {
		case 'Y':
			st := p.i
			f.Year = p.num(4)
			if p.i-st <= 2 {
				f.Year = types.TwoDigitYear(f.Year)
			}
		case 'y':
			f.Year = types.TwoDigitYear(p.num(2))
		case 'm', 'c':
			f.Month = p.num(2)
		case 'M':
			k := p.name(monthNames[:], 0)
			if k < 0 {
				return false
			}
			f.Month = k + 1
		case 'b':
			k := p.name(monthNames[:], 3)
			if k < 0 {
				return false
			}
			f.Month = k + 1
		case 'd', 'e':
			f.Day = p.num(2)
		case 'D':
			f.Day = p.num(2)
			p.i = min(p.i+2, len(p.s)) // the English suffix
		case 'h', 'I', 'l':
			f.hour12 = true
			f.Hour = p.num(2)
		case 'H', 'k':
			f.Hour = p.num(2)
		case 'i':
			f.Minute = p.num(2)
		case 's', 'S':
			f.Second = p.num(2)
		case 'f':
			st := p.i
			v := p.num(6)
			for n := p.i - st; n < 6; n++ {
				v *= 10
			}
			f.Micro = v
		case 'p':
			if len(p.s)-p.i < 2 || !f.hour12 {
				return false
			}
			switch strings.ToUpper(p.s[p.i : p.i+2]) {
			case "AM":
				f.pm = 0
			case "PM":
				f.pm = 12
			default:
				return false
			}
			p.i += 2
		case 'W':
			k := p.name(dayNames[:], 0)
			if k < 0 {
				return false
			}
			f.weekday = k + 1
		case 'a':
			k := p.name(dayNames[:], 3)
			if k < 0 {
				return false
			}
			f.weekday = k + 1
		case 'w':
			w := p.num(1)
			if w < 0 || w > 6 {
				return false
			}
			f.weekday = w
			if w == 0 {
				f.weekday = 7
			}
		case 'j':
			f.yearday = p.num(3)
		case 'U', 'u', 'V', 'v':
			ch := format[fi]
			f.sundayFirst = ch == 'U' || ch == 'V'
			f.strictWeek = ch == 'V' || ch == 'v'
			f.weekNum = p.num(2)
			if f.weekNum < 0 || (f.strictWeek && f.weekNum == 0) || f.weekNum > 53 {
				return false
			}
		case 'X', 'x':
			f.strictWeekNumberYearType = format[fi] == 'X'
			f.weekYear = p.num(4)
		case 'r':
			sub := strToDateParser{s: p.s, i: p.i, f: p.f}
			if !sub.parse("%I:%i:%S %p") {
				return false
			}
			p.i, p.f = sub.i, sub.f
		case 'T':
			sub := strToDateParser{s: p.s, i: p.i, f: p.f}
			if !sub.parse("%H:%i:%S") {
				return false
			}
			p.i, p.f = sub.i, sub.f
		case '.':
			for p.i < len(p.s) && types.IsPunct(p.s[p.i]) {
				p.i++
			}
		case '@':
			for p.i < len(p.s) && (p.s[p.i]|0x20 >= 'a' && p.s[p.i]|0x20 <= 'z') {
				p.i++
			}
		case '#':
			for p.i < len(p.s) && types.IsDigit(p.s[p.i]) {
				p.i++
			}
		case '%':
			if p.s[p.i] != '%' {
				return false
			}
			p.i++
		default:
			return false
		}
	}
	if f.Year < 0 || f.Month < 0 || f.Day < 0 || f.Hour < 0 || f.Minute < 0 || f.Second < 0 {
		return false
	}
	return true
}

// StrToDateKind is the result type STR_TO_DATE gives a format: KindDate when it has only date
// parts (or none), KindDuration for only time parts, else KindDatetime; fsp 6 with %f.
func StrToDateKind(format string) (types.Kind, int) {
	date, tm, frac := false, false, false
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		switch format[i] {
		case 'Y', 'y', 'm', 'c', 'd', 'e', 'M', 'b', 'D', 'j', 'a', 'W', 'U', 'u', 'V', 'v', 'X', 'x', 'w':
			date = true
		case 'f':
			frac, tm = true, true
		case 'H', 'h', 'I', 'i', 'k', 'l', 'p', 'S', 's', 'r', 'T':
			tm = true
		}
	}
	fsp := 0
	if frac {
		fsp = 6
	}
	switch {
	case date && tm:
		return types.KindDatetime, fsp
	case tm:
		return types.KindDuration, fsp
	}
	return types.KindDate, 0
}
