package types

import (
	"math"
	"strings"
	"time"
)

func CmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

func CmpUint(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

func CmpFloat(a, b float64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

type KindClass uint8

const (
	classNull KindClass = iota
	ClassNum
	ClassStr
	ClassTime
)

func ClassOf(k Kind) KindClass {
	switch k {
	case KindInt, KindUint, KindFloat, KindDecimal:
		return ClassNum
	case KindString, KindBytes:
		return ClassStr
	case KindDate, KindDatetime, KindDuration:
		return ClassTime
	}
	return classNull
}

// Compare compares two non-NULL values with MySQL's rules and returns -1, 0 or 1: integers
// exactly (signed against unsigned too), integers against decimals exactly, anything against a
// double as doubles, strings against numbers as doubles (the string's numeric prefix), strings
// with coll (nil: binary; a binary string on either side makes it binary), temporal values against
// strings and numbers by converting those to the temporal type (falling back to comparing as
// doubles / text when that fails), DATE against DATETIME by instant. Callers handle NULL; here NULL
// sorts first.
func Compare(a, b Value, coll *Collation) int {
	if a.K == b.K {
		switch a.K {
		case KindInt, KindDate, KindDatetime, KindDuration:
			return CmpInt(a.I, b.I)
		case KindUint:
			return CmpUint(uint64(a.I), uint64(b.I))
		case KindFloat:
			return CmpFloat(a.F, b.F)
		case KindString:
			if coll == nil {
				return strings.Compare(a.S, b.S)
			}
			return coll.Compare(a.S, b.S)
		case KindBytes:
			return strings.Compare(a.S, b.S)
		case KindDecimal:
			return a.D.Cmp(b.D)
		case KindNull:
			return 0
		}
	}
	return compareMixed(a, b, coll)
}

func compareMixed(a, b Value, coll *Collation) int {
	ca, cb := ClassOf(a.K), ClassOf(b.K)
	switch {
	case ca == classNull || cb == classNull:
		return CmpInt(int64(ca), int64(cb)) // NULL first
	case ca == ClassNum && cb == ClassNum:
		return compareNum(a, b)
	case ca == ClassStr && cb == ClassStr:
		return strings.Compare(a.S, b.S) // one side is binary
	case ca == ClassTime && cb == ClassTime:
		return compareTimes(a, b)
	case ca == ClassTime:
		return compareTimeOther(a, b, coll)
	case cb == ClassTime:
		return -compareTimeOther(b, a, coll)
	}
	// string against number: as doubles
	return CmpFloat(ToFloat(a), ToFloat(b))
}

func compareNum(a, b Value) int {
	if a.K == KindFloat || b.K == KindFloat {
		return CmpFloat(ToFloat(a), ToFloat(b))
	}
	if a.K == KindDecimal || b.K == KindDecimal {
		return ToDecimal(a).Cmp(ToDecimal(b))
	}
	// int against uint
	if a.K == KindInt {
		if a.I < 0 {
			return -1
		}
		return CmpUint(uint64(a.I), uint64(b.I))
	}
	if b.I < 0 {
		return 1
	}
	return CmpUint(uint64(a.I), uint64(b.I))
}

// DurationToDatetime adds a TIME to the current date.
func DurationToDatetime(us int64) int64 {
	now := time.Now()
	t := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).Add(time.Duration(us) * time.Microsecond)
	return PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
}

func compareTimes(a, b Value) int {
	ad, bd := a.K == KindDuration, b.K == KindDuration
	switch {
	case ad && bd, !ad && !bd:
		return CmpInt(a.I, b.I)
	case ad:
		return CmpInt(DurationToDatetime(a.I), b.I)
	default:
		return CmpInt(a.I, DurationToDatetime(b.I))
	}
}

// compareTimeOther compares a temporal a with a string or number b.
func compareTimeOther(a, b Value, coll *Collation) int {
	if b.K == KindString || b.K == KindBytes {
		if a.K == KindDuration {
			if us, err := parseDuration(b.S, 6); err == nil || err == ErrDurationRange {
				return CmpInt(a.I, us)
			}
		} else if p, _, err := parseDatetime(b.S, 6); err == nil {
			return CmpInt(a.I, p)
		}
		return strings.Compare(ToString(a), b.S)
	}
	// a number
	if a.K == KindDuration {
		if us, ok := NumberAsDuration(b); ok {
			return CmpInt(a.I, us)
		}
	} else if p, ok := NumberAsDatetime(b); ok {
		return CmpInt(a.I, p)
	}
	return compareNum(NumericValue(a), b)
}

// SplitNumber returns the integer part and microseconds of a non-negative number.
func SplitNumber(v Value) (n int64, us int, neg bool, ok bool) {
	switch v.K {
	case KindInt:
		if v.I < 0 {
			return -v.I, 0, true, v.I != math.MinInt64
		}
		return v.I, 0, false, true
	case KindUint:
		return v.I, 0, false, v.I >= 0
	case KindFloat, KindDecimal:
		d := ToDecimal(v)
		neg = d.Sign() < 0
		d = d.Abs()
		if d.GreaterThan(DecMaxInt64) {
			return 0, 0, neg, false
		}
		ip := d.Truncate(0)
		frac := d.Sub(ip).Shift(6).Round(0).IntPart()
		if frac >= MicrosPerSec {
			frac = MicrosPerSec - 1
		}
		return ip.IntPart(), int(frac), neg, true
	}
	return 0, 0, false, false
}

func NumberAsDatetime(v Value) (int64, bool) {
	n, us, neg, ok := SplitNumber(v)
	if !ok || neg {
		return 0, false
	}
	p, _, err := numberToDatetime(n, us, 6)
	return p, err == nil
}

func NumberAsDuration(v Value) (int64, bool) {
	n, us, neg, ok := SplitNumber(v)
	if !ok {
		return 0, false
	}
	d, err := numberToDuration(n, us, neg, 6)
	return d, err == nil
}
