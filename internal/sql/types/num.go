package types

import (
	"math"
	"math/big"
	"strconv"

	"github.com/shopspring/decimal"
)

// numStatus says how much of a string MySQL's number parsing accepted.
type numStatus uint8

const (
	numOK       numStatus = iota
	numTrunc              // a number followed by garbage: MySQL's "Data truncated"
	numBad                // no number at all
	numOverflow           // beyond the target's range (the value returned is clipped)
)

// numText is the numeric prefix of a string: [spaces][sign]digits[.digits][e[sign]digits].
type numText struct {
	start, end int // the number's text (no leading spaces)
	neg        bool
	intDigits  string // without sign
	fracDigits string
	exp        int // decimal exponent, clamped to ±1e6
	trailing   bool
}

// scanNumber finds the numeric prefix of s. ok is false if there are no digits.
func scanNumber(s string) (nt numText, ok bool) {
	i := 0
	for i < len(s) && IsSpace(s[i]) {
		i++
	}
	nt.start = i
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		nt.neg = s[i] == '-'
		i++
	}
	st := i
	for i < len(s) && IsDigit(s[i]) {
		i++
	}
	nt.intDigits = s[st:i]
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && IsDigit(s[j]) {
			j++
		}
		if j > i+1 || len(nt.intDigits) > 0 {
			nt.fracDigits = s[i+1 : j]
			i = j
		}
	}
	if len(nt.intDigits) == 0 && len(nt.fracDigits) == 0 {
		nt.end = nt.start
		nt.trailing = TrimSpaces(s) != ""
		return nt, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		eneg := false
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			eneg = s[j] == '-'
			j++
		}
		ds := j
		e := 0
		for j < len(s) && IsDigit(s[j]) {
			if e < 1000000 {
				e = e*10 + int(s[j]-'0')
			}
			j++
		}
		if j > ds {
			if eneg {
				e = -e
			}
			nt.exp = e
			i = j
		}
	}
	nt.end = i
	for k := i; k < len(s); k++ {
		if !IsSpace(s[k]) {
			nt.trailing = true
			break
		}
	}
	return nt, true
}

// parseFloatPrefix reads s's numeric prefix as a double, as MySQL does in numeric context.
func parseFloatPrefix(s string) (float64, numStatus) {
	nt, ok := scanNumber(s)
	if !ok {
		return 0, numBad
	}
	f, err := strconv.ParseFloat(s[nt.start:nt.end], 64)
	if err != nil {
		if math.IsInf(f, 0) {
			if f > 0 {
				return math.MaxFloat64, numOverflow
			}
			return -math.MaxFloat64, numOverflow
		}
		return 0, numBad
	}
	if nt.trailing {
		return f, numTrunc
	}
	return f, numOK
}

// maxDecimalDigits bounds the integer digits a parsed decimal may have before it counts as an
// overflow (MySQL's DECIMAL holds 65).
const maxDecimalDigits = 65

// decimalFromDigits builds ±0.digits×10^(exp+len) i.e. the integer `digits` scaled by 10^exp.
func decimalFromDigits(neg bool, digits string, exp int) decimal.Decimal {
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) <= 18 {
		n, _ := strconv.ParseInt(digits, 10, 64)
		if neg {
			n = -n
		}
		return decimal.New(n, int32(exp))
	}
	b, _ := new(big.Int).SetString(digits, 10)
	if neg {
		b.Neg(b)
	}
	return decimal.NewFromBigInt(b, int32(exp))
}

// parseDecimalPrefix reads s's numeric prefix exactly. Values with more than 65 integer digits
// report numOverflow (and return 0); digits far below the smallest DECIMAL scale are dropped.
func parseDecimalPrefix(s string) (decimal.Decimal, numStatus) {
	nt, ok := scanNumber(s)
	if !ok {
		return decimal.Decimal{}, numBad
	}
	st := numOK
	if nt.trailing {
		st = numTrunc
	}
	d, ov := nt.decimal()
	if ov {
		return d, numOverflow
	}
	return d, st
}

func (nt *numText) decimal() (decimal.Decimal, bool) {
	digits := nt.intDigits + nt.fracDigits
	exp := nt.exp - len(nt.fracDigits)
	// Strip leading zeros to measure the magnitude.
	k := 0
	for k < len(digits) && digits[k] == '0' {
		k++
	}
	digits = digits[k:]
	if digits == "" {
		return decimal.Decimal{}, false
	}
	// Drop trailing zeros into the exponent, then bound the work.
	j := len(digits)
	for j > 1 && digits[j-1] == '0' {
		j--
	}
	exp += len(digits) - j
	digits = digits[:j]
	if len(digits)+exp > maxDecimalDigits {
		return decimal.Decimal{}, true
	}
	if len(digits)+exp < -80 {
		// Far below any DECIMAL scale: keep a nonzero stand-in so that rounding reports the loss.
		return decimalFromDigits(nt.neg, "1", -81), false
	}
	if exp < -80 {
		// Keep ~80 fractional digits: more than any DECIMAL scale, so rounding stays exact.
		cut := -80 - exp
		digits = digits[:len(digits)-cut]
		exp = -80
		if digits == "" {
			return decimal.Decimal{}, false
		}
	}
	return decimalFromDigits(nt.neg, digits, exp), false
}

// parseIntPrefix reads s's leading integer (no fraction or exponent), clipping on overflow, as
// MySQL's strtoll10 does for CAST(str AS SIGNED).
func parseIntPrefix(s string) (int64, numStatus) {
	i := 0
	for i < len(s) && IsSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	st := i
	var u uint64
	over := false
	for i < len(s) && IsDigit(s[i]) {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			over = true
		} else {
			u = u*10 + d
		}
		i++
	}
	if i == st {
		return 0, numBad
	}
	status := numOK
	if TrimSpaces(s[i:]) != "" {
		status = numTrunc
	}
	if neg {
		if over || u > 1<<63 {
			return math.MinInt64, numOverflow
		}
		return -int64(u), status
	}
	if over || u > math.MaxInt64 {
		return math.MaxInt64, numOverflow
	}
	return int64(u), status
}

// parseUintPrefix is parseIntPrefix for CAST(str AS UNSIGNED): negative numbers wrap.
func parseUintPrefix(s string) (uint64, numStatus) {
	t := TrimSpaces(s)
	if t != "" && t[0] == '-' {
		i, st := parseIntPrefix(s)
		return uint64(i), st
	}
	i := 0
	for i < len(s) && IsSpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '+' {
		i++
	}
	st := i
	var u uint64
	for i < len(s) && IsDigit(s[i]) {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			return math.MaxUint64, numOverflow
		}
		u = u*10 + d
		i++
	}
	if i == st {
		return 0, numBad
	}
	if TrimSpaces(s[i:]) != "" {
		return u, numTrunc
	}
	return u, numOK
}

var (
	DecMaxInt64 = decimal.NewFromInt(math.MaxInt64)
	DecMinInt64 = decimal.NewFromInt(math.MinInt64)
)

// decimalWithMicros builds n + us/1e6 with fsp decimals.
func decimalWithMicros(n int64, us int, neg bool, fsp int) decimal.Decimal {
	d := decimal.New(n, 0)
	if us != 0 {
		d = d.Add(decimal.New(int64(us), -6))
	}
	if neg {
		d = d.Neg()
	}
	return d.Round(int32(fsp))
}

// NumericValue converts v to the number MySQL uses in numeric context: ints, decimals and floats
// stay, strings become doubles (by their numeric prefix), dates become YYYYMMDD, datetimes
// YYYYMMDDhhmmss and times [-]HHMMSS (DECIMAL when they have fractional seconds).
func NumericValue(v Value) Value {
	switch v.K {
	case KindString, KindBytes:
		f, _ := parseFloatPrefix(v.S)
		return NewFloat(f)
	case KindDate:
		n, _ := datetimeNumber(v.I, true)
		return NewInt(n)
	case KindDatetime:
		n, us := datetimeNumber(v.I, false)
		if v.Frac == 0 {
			return NewInt(n)
		}
		return NewDecimal(decimalWithMicros(n, us, false, int(v.Frac)), int(v.Frac))
	case KindDuration:
		n, us, neg := durationNumber(v.I)
		if v.Frac == 0 {
			if neg {
				n = -n
			}
			return NewInt(n)
		}
		return NewDecimal(decimalWithMicros(n, us, neg, int(v.Frac)), int(v.Frac))
	}
	return v
}
