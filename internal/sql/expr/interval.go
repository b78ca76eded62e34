package expr

import (
	"strings"
	"time"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// intervalFields is how many values a compound unit's string holds.
var intervalFields = map[string]int{
	"YEAR_MONTH": 2, "DAY_HOUR": 2, "DAY_MINUTE": 3, "DAY_SECOND": 4, "DAY_MICROSECOND": 5,
	"HOUR_MINUTE": 2, "HOUR_SECOND": 3, "HOUR_MICROSECOND": 4, "MINUTE_SECOND": 2,
	"MINUTE_MICROSECOND": 3, "SECOND_MICROSECOND": 2,
}

// intervalAmount converts INTERVAL n unit to months and microseconds. A compound unit's string
// ('1 2:30', '1-6', '5.25') is split into its numbers as MySQL does: any non-digits separate them,
// fewer numbers fill the least significant fields, a leading '-' negates them all, and a
// microseconds field is read as a fraction ('.5' is 500000).
func intervalAmount(n types.Value, unit string) (months, micros int64, ok bool) {
	const sec = int64(1e6)
	nf, compound := intervalFields[unit]
	if !compound {
		if unit == "SECOND" && (n.K == types.KindDecimal || n.K == types.KindFloat || n.K == types.KindString) {
			d := types.ToDecimal(n)
			return 0, d.Shift(6).Round(0).IntPart(), true
		}
		a := types.ToIntLenient(n)
		switch unit {
		case "MICROSECOND":
			return 0, a, true
		case "SECOND":
			return 0, a * sec, true
		case "MINUTE":
			return 0, a * 60 * sec, true
		case "HOUR":
			return 0, a * 3600 * sec, true
		case "DAY":
			return 0, a * 86400 * sec, true
		case "WEEK":
			return 0, a * 7 * 86400 * sec, true
		case "MONTH":
			return a, 0, true
		case "QUARTER":
			return 3 * a, 0, true
		case "YEAR":
			return 12 * a, 0, true
		}
		return 0, 0, false
	}
	s := strings.TrimSpace(types.ToString(n))
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var vals []int64
	var lens []int
	for i := 0; i < len(s) && len(vals) < nf; {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		j := i
		var v int64
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			if j-i < 18 {
				v = v*10 + int64(s[j]-'0')
			}
			j++
		}
		vals = append(vals, v)
		lens = append(lens, j-i)
		i = j
	}
	// Right-align: missing leading fields are zero.
	f := make([]int64, nf)
	copy(f[nf-len(vals):], vals)
	if strings.HasSuffix(unit, "MICROSECOND") && len(vals) == nf {
		// The last field is a fraction of a second: pad it to six digits.
		l := lens[len(lens)-1]
		for ; l < 6; l++ {
			f[nf-1] *= 10
		}
		for ; l > 6; l-- {
			f[nf-1] /= 10
		}
	}
	var fields []int64 // day, hour, minute, second, microsecond
	switch unit {
	case "YEAR_MONTH":
		months = f[0]*12 + f[1]
	case "DAY_HOUR":
		fields = []int64{f[0], f[1], 0, 0, 0}
	case "DAY_MINUTE":
		fields = []int64{f[0], f[1], f[2], 0, 0}
	case "DAY_SECOND":
		fields = []int64{f[0], f[1], f[2], f[3], 0}
	case "DAY_MICROSECOND":
		fields = []int64{f[0], f[1], f[2], f[3], f[4]}
	case "HOUR_MINUTE":
		fields = []int64{0, f[0], f[1], 0, 0}
	case "HOUR_SECOND":
		fields = []int64{0, f[0], f[1], f[2], 0}
	case "HOUR_MICROSECOND":
		fields = []int64{0, f[0], f[1], f[2], f[3]}
	case "MINUTE_SECOND":
		fields = []int64{0, 0, f[0], f[1], 0}
	case "MINUTE_MICROSECOND":
		fields = []int64{0, 0, f[0], f[1], f[2]}
	case "SECOND_MICROSECOND":
		fields = []int64{0, 0, 0, f[0], f[1]}
	}
	if fields != nil {
		micros = (((fields[0]*24+fields[1])*60+fields[2])*60+fields[3])*sec + fields[4]
	}
	if neg {
		months, micros = -months, -micros
	}
	return months, micros, true
}

// AddInterval is DATE_ADD / DATE_SUB (and TIMESTAMPADD): d plus n units. A DATE (or a date-only
// string) stays a date for day-or-larger units; a string keeps its fractional digits and
// microsecond units give six.
func AddInterval(d, n types.Value, unit string, sub bool) (types.Value, error) {
	var dt types.Value
	isDate := false
	switch d.K {
	case types.KindDate:
		dt, isDate = d, true
	case types.KindDatetime:
		dt = d
	default:
		s := types.ToString(d)
		p, perr := types.ParseDatetime(s, 6)
		if perr != nil {
			return types.Null, nil
		}
		dt = types.NewDatetime(p, builtins.TimeFsp(types.NewString(s)))
		isDate = len(strings.TrimSpace(s)) <= 10
	}
	months, micros, ok := intervalAmount(n, unit)
	if !ok {
		return types.Null, sqlerr.New(sqlerr.ErrNotSupportedYet, "INTERVAL unit %s is not supported yet", unit)
	}
	if sub {
		months, micros = -months, -micros
	}
	fsp := int(dt.Frac)
	if strings.HasSuffix(unit, "MICROSECOND") || (unit == "SECOND" && (n.K == types.KindDecimal || n.K == types.KindFloat)) {
		fsp = 6
		if n.K == types.KindDecimal && unit == "SECOND" {
			fsp = max(int(dt.Frac), min(int(n.Frac), 6))
		}
	}
	switch unit {
	case "DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "YEAR_MONTH":
	default:
		isDate = false
	}
	y, mo, day, h, mi, sec, us := types.UnpackTime(dt.I)
	t := goTime(y, mo, day, h, mi, sec, us)
	if months != 0 {
		// MySQL clamps the day to the end of the target month.
		ty, tm := int64(t.Year()), int64(t.Month())-1+months
		ty += tm / 12
		tm %= 12
		if tm < 0 {
			tm += 12
			ty--
		}
		if ty < 0 || ty > 9999 {
			return types.Null, nil
		}
		last := goTime(int(ty), int(tm)+2, 0, 0, 0, 0, 0).Day()
		dd := min(t.Day(), last)
		t = goTime(int(ty), int(tm)+1, dd, t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
	}
	if micros != 0 {
		const maxMicros = int64(10000 * 366 * 86400 * 1e6)
		if micros > maxMicros || micros < -maxMicros {
			return types.Null, nil
		}
		days := micros / (86400 * 1e6)
		t = t.AddDate(0, 0, int(days)).Add(time.Duration(micros%(86400*1e6)) * time.Microsecond)
	}
	if t.Year() < 0 || t.Year() > 9999 {
		return types.Null, nil
	}
	p := types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
	if isDate {
		return types.NewDate(p), nil
	}
	return types.NewDatetime(p, fsp), nil
}

func goTime(y, mo, d, h, mi, s, us int) time.Time {
	return time.Date(y, time.Month(mo), d, h, mi, s, us*1000, time.UTC)
}
