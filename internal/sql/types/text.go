package types

import (
	"math"
	"strconv"

	"github.com/shopspring/decimal"
)

// AppendText appends v as MySQL's text protocol renders it. NULL appends nothing (the protocol
// sends NULL as its own marker); Value.String shows it as "NULL".
//
// Floats follow MySQL 8's my_gcvt as used by the text protocol: the shortest digits that round-trip
// (6 significant digits for FLOAT values), printed in plain notation unless the value is an integer
// of 16 or more digits or its magnitude is below 1e-15, in which case MySQL's exponent form is
// used: 1e15, 1.2345e20, 1e-16, -1.5e-20 (no '+', no zero padding). So 1e14 → "100000000000000",
// 1.5e-7 → "0.00000015", 0.1 → "0.1", 1/3 → "0.3333333333333333". A positive Frac prints exactly
// that many decimals (DOUBLE(M,D) columns).
func AppendText(buf []byte, v Value) []byte {
	switch v.K {
	case KindInt:
		return strconv.AppendInt(buf, v.I, 10)
	case KindUint:
		return strconv.AppendUint(buf, uint64(v.I), 10)
	case KindFloat:
		return appendFloat(buf, v.F, int(v.Frac))
	case KindDecimal:
		return appendDecimal(buf, v.D, int(v.Frac))
	case KindString, KindBytes:
		return append(buf, v.S...)
	case KindDate:
		return appendDate(buf, v.I)
	case KindDatetime:
		return AppendDatetime(buf, v.I, int(v.Frac))
	case KindDuration:
		return AppendDuration(buf, v.I, int(v.Frac))
	}
	return buf
}

// appendFloat implements MySQL's float text rendering (see AppendText).
func appendFloat(buf []byte, f float64, frac int) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// MySQL never produces these; my_gcvt prints "0" on overflow.
		return append(buf, '0')
	}
	if frac > 0 {
		return strconv.AppendFloat(buf, f, 'f', frac, 64)
	}
	prec := -1
	if frac == FracFloat32 {
		prec = 5
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], math.Abs(f), 'e', prec, 64)
	// e is d[.ddd]e±XX
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	for nd > 1 && digits[nd-1] == '0' {
		nd--
	}
	if math.Signbit(f) {
		buf = append(buf, '-')
	}
	if nd == 1 && digits[0] == '0' {
		return append(buf, '0')
	}
	decpt := exp + 1 // value = 0.DIGITS × 10^decpt
	if decpt >= -14 && (decpt <= 15 || nd > decpt) {
		switch {
		case decpt <= 0:
			buf = append(buf, '0', '.')
			for j := decpt; j < 0; j++ {
				buf = append(buf, '0')
			}
			buf = append(buf, digits[:nd]...)
		case decpt >= nd:
			buf = append(buf, digits[:nd]...)
			for j := nd; j < decpt; j++ {
				buf = append(buf, '0')
			}
		default:
			buf = append(buf, digits[:decpt]...)
			buf = append(buf, '.')
			buf = append(buf, digits[decpt:nd]...)
		}
		return buf
	}
	buf = append(buf, digits[0])
	if nd > 1 {
		buf = append(buf, '.')
		buf = append(buf, digits[1:nd]...)
	}
	buf = append(buf, 'e')
	return strconv.AppendInt(buf, int64(exp), 10)
}

// DecimalDigits returns the decimal digits of |coefficient(d)| appended to buf.
func DecimalDigits(buf []byte, d decimal.Decimal) []byte {
	if d.NumDigits() <= 18 { // no big.Int copy
		n := d.CoefficientInt64()
		if n < 0 {
			n = -n
		}
		return strconv.AppendInt(buf, n, 10)
	}
	c := d.Coefficient()
	if c.IsInt64() {
		n := c.Int64()
		if n < 0 {
			return strconv.AppendUint(buf, uint64(-n), 10)
		}
		return strconv.AppendUint(buf, uint64(n), 10)
	}
	return c.Abs(c).Append(buf, 10)
}

// appendDecimal prints d with exactly frac decimals (rounding half away from zero when d has more);
// frac < 0 prints d's own scale.
func appendDecimal(buf []byte, d decimal.Decimal, frac int) []byte {
	exp := int(d.Exponent())
	if frac < 0 {
		frac = 0
		if exp < 0 {
			frac = -exp
		}
	}
	if -exp > frac {
		d = d.Round(int32(frac))
		exp = int(d.Exponent())
	}
	if d.Sign() < 0 {
		buf = append(buf, '-')
	}
	var tmp [80]byte
	digits := DecimalDigits(tmp[:0], d)
	if exp >= 0 {
		if !(len(digits) == 1 && digits[0] == '0') {
			buf = append(buf, digits...)
			for i := 0; i < exp; i++ {
				buf = append(buf, '0')
			}
		} else {
			buf = append(buf, '0')
		}
		if frac > 0 {
			buf = append(buf, '.')
			for i := 0; i < frac; i++ {
				buf = append(buf, '0')
			}
		}
		return buf
	}
	scale := -exp // digits after the point in digits
	if len(digits) > scale {
		buf = append(buf, digits[:len(digits)-scale]...)
	} else {
		buf = append(buf, '0')
	}
	if frac == 0 {
		return buf
	}
	buf = append(buf, '.')
	if len(digits) < scale {
		for i := len(digits); i < scale; i++ {
			buf = append(buf, '0')
		}
		buf = append(buf, digits...)
	} else {
		buf = append(buf, digits[len(digits)-scale:]...)
	}
	for i := scale; i < frac; i++ {
		buf = append(buf, '0')
	}
	return buf
}
