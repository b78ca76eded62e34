package sql

import (
	"math"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// parseDecimalValue turns a decimal literal into a KindDecimal with the literal's scale.
func parseDecimalValue(s string) (types.Value, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return types.Null, err
	}
	frac := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		e := strings.IndexAny(s, "eE")
		if e < 0 {
			e = len(s)
		}
		frac = e - i - 1
	}
	return types.NewDecimal(d, frac), nil
}

// toIntLenient converts to int64 the way a LIMIT or a CAST does: rounding, clamping, never failing.
func toIntLenient(v types.Value) int64 {
	switch v.K {
	case types.KindInt:
		return v.I
	case types.KindUint:
		if v.U() > math.MaxInt64 {
			return math.MaxInt64
		}
		return v.I
	case types.KindNull:
		return 0
	}
	if i, err := types.ToInt(v); err == nil {
		return i
	}
	f := types.ToFloat(v)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(f))
}

// addInterval is DATE_ADD / DATE_SUB for the common units.
func addInterval(d, n types.Value, unit string, sub bool) (types.Value, error) {
	var dt types.Value
	var err error
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
		dt = types.NewDatetime(p, 0)
		isDate = len(strings.TrimSpace(s)) <= 10
	}
	amount := toIntLenient(n)
	if sub {
		amount = -amount
	}
	y, mo, day, h, mi, sec, us := types.UnpackTime(dt.I)
	t := goTime(y, mo, day, h, mi, sec, us)
	switch unit {
	case "MICROSECOND":
		t = t.Add(durationOf(amount, 1e3))
		isDate = false
	case "SECOND":
		t = t.Add(durationOf(amount, 1e9))
		isDate = false
	case "MINUTE":
		t = t.Add(durationOf(amount, 60e9))
		isDate = false
	case "HOUR":
		t = t.Add(durationOf(amount, 3600e9))
		isDate = false
	case "DAY":
		t = t.AddDate(0, 0, int(amount))
	case "WEEK":
		t = t.AddDate(0, 0, 7*int(amount))
	case "MONTH", "QUARTER", "YEAR":
		months := int(amount)
		if unit == "QUARTER" {
			months *= 3
		} else if unit == "YEAR" {
			months *= 12
		}
		// MySQL clamps the day to the end of the target month.
		ty, tm := t.Year(), int(t.Month())-1+months
		ty += tm / 12
		tm %= 12
		if tm < 0 {
			tm += 12
			ty--
		}
		last := goTime(ty, tm+2, 0, 0, 0, 0, 0).Day()
		dd := min(t.Day(), last)
		t = goTime(ty, tm+1, dd, t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
	default:
		return types.Null, sqlerr.New(sqlerr.ErrNotSupportedYet, "INTERVAL unit %s is not supported yet", unit)
	}
	if t.Year() < 0 || t.Year() > 9999 {
		return types.Null, err
	}
	p := types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
	if isDate {
		return types.NewDate(p), nil
	}
	return types.NewDatetime(p, int(dt.Frac)), nil
}

func goTime(y, mo, d, h, mi, s, us int) time.Time {
	return time.Date(y, time.Month(mo), d, h, mi, s, us*1000, time.UTC)
}

func durationOf(n int64, unitNs float64) time.Duration { return time.Duration(float64(n) * unitNs) }
