package types

import (
	"math"
	"math/bits"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// DivPrecisionIncrement is MySQL's div_precision_increment: the scale '/' adds to its dividend's.
const DivPrecisionIncrement = 4

// maxDecimalScale is MySQL's DECIMAL_MAX_SCALE.
const maxDecimalScale = 30

type arithOp uint8

const (
	opAdd arithOp = iota
	opSub
	opMul
	opDiv
	opIntDiv
	opMod
)

var opText = [...]string{" + ", " - ", " * ", " / ", " DIV ", " % "}

// Add returns a + b (NULL if either is NULL).
func Add(a, b Value) (Value, error) { return arith(opAdd, a, b) }

// Sub returns a - b.
func Sub(a, b Value) (Value, error) { return arith(opSub, a, b) }

// Mul returns a * b.
func Mul(a, b Value) (Value, error) { return arith(opMul, a, b) }

// Div returns a / b: DECIMAL for exact operands (scale of a + DivPrecisionIncrement), DOUBLE when
// either is a double or a string. Division by zero returns NULL; the caller adds warning 1365.
func Div(a, b Value) (Value, error) { return arith(opDiv, a, b) }

// IntDiv returns a DIV b, truncated to a BIGINT; NULL for division by zero.
func IntDiv(a, b Value) (Value, error) { return arith(opIntDiv, a, b) }

// Mod returns a % b with the sign of a; NULL for a zero divisor.
func Mod(a, b Value) (Value, error) { return arith(opMod, a, b) }

// Neg returns -a.
func Neg(a Value) (Value, error) {
	a = NumericValue(a)
	switch a.K {
	case KindNull:
		return Null, nil
	case KindInt:
		if a.I == math.MinInt64 {
			return Null, RangeErr("BIGINT", "-(", a, ")")
		}
		return NewInt(-a.I), nil
	case KindUint:
		u := uint64(a.I)
		if u > 1<<63 {
			return Null, RangeErr("BIGINT", "-(", a, ")")
		}
		return NewInt(int64(-u)), nil
	case KindFloat:
		return Value{K: KindFloat, F: -a.F, Frac: a.Frac}, nil
	case KindDecimal:
		return NewDecimal(a.D.Neg(), int(a.Frac)), nil
	}
	return Null, nil
}

func RangeErr(typ, pre string, a Value, post string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrDataOutOfRange, "%s value is out of range in '%s%s%s'", typ, pre, a.String(), post)
}

func opErr(typ string, op arithOp, a, b Value) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrDataOutOfRange, "%s value is out of range in '(%s%s%s)'", typ, a.String(), opText[op], b.String())
}

func arith(op arithOp, a, b Value) (Value, error) {
	if a.K == KindNull || b.K == KindNull {
		return Null, nil
	}
	if a.K == KindInt && b.K == KindInt && op <= opSub {
		// The hot path: two signed integers.
		var r int64
		if op == opAdd {
			r = a.I + b.I
			if (a.I >= 0) == (b.I >= 0) && (r >= 0) != (a.I >= 0) {
				return Null, opErr("BIGINT", op, a, b)
			}
		} else {
			r = a.I - b.I
			if (a.I >= 0) != (b.I >= 0) && (r >= 0) != (a.I >= 0) {
				return Null, opErr("BIGINT", op, a, b)
			}
		}
		return NewInt(r), nil
	}
	if a.K == KindInt && b.K == KindInt {
		// Two signed integers under *, % and DIV (WHERE id % 10 = 0 runs per row of a scan): the
		// results intArith gives, without widening; overflow and zero divisors take its path.
		x, y := a.I, b.I
		switch op {
		case opMul:
			if r := x * y; x == 0 || r/x == y && !(x == -1 && y == math.MinInt64) {
				return NewInt(r), nil
			}
		case opMod:
			if y != 0 {
				return NewInt(x % y), nil // Go's % truncates as MySQL's: the sign is the dividend's
			}
		case opIntDiv:
			if y != 0 && !(x == math.MinInt64 && y == -1) {
				return NewInt(x / y), nil
			}
		}
	}
	na, nb := NumericValue(a), NumericValue(b)
	switch {
	case na.K == KindFloat || nb.K == KindFloat:
		return floatArith(op, a, b, na.F, nb.F, na, nb)
	case na.K == KindDecimal || nb.K == KindDecimal || op == opDiv:
		return decimalArith(op, a, b, na, nb)
	}
	return intArith(op, a, b, na, nb)
}

func floatArith(op arithOp, a, b Value, fa, fb float64, na, nb Value) (Value, error) {
	if na.K != KindFloat {
		fa = ToFloat(na)
	}
	if nb.K != KindFloat {
		fb = ToFloat(nb)
	}
	var r float64
	switch op {
	case opAdd:
		r = fa + fb
	case opSub:
		r = fa - fb
	case opMul:
		r = fa * fb
	case opDiv:
		if fb == 0 {
			return Null, nil
		}
		r = fa / fb
	case opIntDiv:
		if fb == 0 {
			return Null, nil
		}
		q := math.Trunc(fa / fb)
		if math.IsInf(q, 0) || q >= 9223372036854775808.0 || q < -9223372036854775808.0 {
			return Null, opErr("BIGINT", op, a, b)
		}
		return NewInt(int64(q)), nil
	case opMod:
		if fb == 0 {
			return Null, nil
		}
		r = math.Mod(fa, fb)
	}
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return Null, opErr("DOUBLE", op, a, b)
	}
	return NewFloat(r), nil
}

func DecScale(v Value) int {
	if v.K == KindDecimal {
		if v.Frac >= 0 {
			return int(v.Frac)
		}
		if e := v.D.Exponent(); e < 0 {
			return int(-e)
		}
	}
	return 0
}

// decimalFits checks MySQL's 65-digit DECIMAL limit on a result's integer part.
func decimalFits(d decimal.Decimal) bool {
	n := d.NumDigits() + int(d.Exponent())
	return n <= maxDecimalDigits
}

func decimalArith(op arithOp, a, b Value, na, nb Value) (Value, error) {
	da, db := ToDecimal(na), ToDecimal(nb)
	sa, sb := DecScale(na), DecScale(nb)
	var r decimal.Decimal
	var scale int
	switch op {
	case opAdd:
		r, scale = da.Add(db), max(sa, sb)
	case opSub:
		r, scale = da.Sub(db), max(sa, sb)
	case opMul:
		r, scale = da.Mul(db), min(sa+sb, maxDecimalScale)
		if sa+sb > maxDecimalScale {
			r = r.Round(maxDecimalScale)
		}
	case opDiv:
		if db.IsZero() {
			return Null, nil
		}
		scale = min(sa+DivPrecisionIncrement, maxDecimalScale)
		r = da.DivRound(db, int32(scale))
	case opIntDiv:
		if db.IsZero() {
			return Null, nil
		}
		q, _ := da.QuoRem(db, 0)
		w, ok := decimalToWide(q)
		if ok {
			w, ok = w.fit(math.MinInt64, math.MaxInt64)
		}
		unsigned := na.K == KindUint || nb.K == KindUint
		if unsigned && ok && !(w.neg && w.mag != 0) {
			return NewUint(w.mag), nil
		}
		if !ok {
			return Null, opErr("BIGINT", op, a, b)
		}
		return w.value(false), nil
	case opMod:
		if db.IsZero() {
			return Null, nil
		}
		_, r = da.QuoRem(db, 0)
		scale = max(sa, sb)
	}
	if !decimalFits(r) {
		return Null, opErr("DECIMAL", op, a, b)
	}
	return NewDecimal(r, scale), nil
}

func toWide(v Value) wideInt {
	if v.K == KindUint {
		return wideInt{false, uint64(v.I)}
	}
	return wideFromInt(v.I)
}

// addWide adds two sign-magnitude integers; ok is false when the magnitude overflows 64 bits.
func addWide(x, y wideInt) (wideInt, bool) {
	if x.neg == y.neg {
		s, carry := bits.Add64(x.mag, y.mag, 0)
		return wideInt{x.neg, s}, carry == 0
	}
	if x.mag >= y.mag {
		return wideInt{x.neg, x.mag - y.mag}, true
	}
	return wideInt{y.neg, y.mag - x.mag}, true
}

func intArith(op arithOp, a, b Value, na, nb Value) (Value, error) {
	unsigned := na.K == KindUint || nb.K == KindUint
	x, y := toWide(na), toWide(nb)
	var r wideInt
	ok := true
	switch op {
	case opAdd:
		r, ok = addWide(x, y)
	case opSub:
		y.neg = !y.neg
		r, ok = addWide(x, y)
	case opMul:
		hi, lo := bits.Mul64(x.mag, y.mag)
		r, ok = wideInt{x.neg != y.neg, lo}, hi == 0
	case opIntDiv:
		if y.mag == 0 {
			return Null, nil
		}
		r = wideInt{x.neg != y.neg, x.mag / y.mag}
	case opMod:
		if y.mag == 0 {
			return Null, nil
		}
		r = wideInt{x.neg, x.mag % y.mag}
		// MySQL: the result is unsigned when the dividend is.
		unsigned = na.K == KindUint
	}
	if r.mag == 0 {
		r.neg = false
	}
	if ok {
		if unsigned {
			_, ok = r.fit(0, math.MaxUint64)
		} else {
			_, ok = r.fit(math.MinInt64, math.MaxInt64)
		}
	}
	if !ok {
		typ := "BIGINT"
		if unsigned {
			typ = "BIGINT UNSIGNED"
		}
		return Null, opErr(typ, op, a, b)
	}
	return r.value(unsigned), nil
}

// RoundInt rounds (trunc: truncates) the integer a (KindInt or KindUint) to d < 0 decimal places,
// as ROUND and TRUNCATE do: half away from zero. ok is false when the result does not fit a's
// type.
func RoundInt(a Value, d int64, trunc bool) (Value, bool) {
	w := toWide(a)
	if -d >= 20 {
		return a0(a), true
	}
	p := pow10u[-d]
	q, r := w.mag/p, w.mag%p
	if !trunc && r >= p-r {
		q++
	}
	hi, lo := mulU(q, p)
	res := wideInt{w.neg && lo != 0, lo}
	ok := hi == 0
	if ok {
		if a.K == KindUint {
			_, ok = res.fit(0, math.MaxUint64)
		} else {
			_, ok = res.fit(math.MinInt64, math.MaxInt64)
		}
	}
	if !ok {
		return Null, false
	}
	return res.value(a.K == KindUint), true
}

var pow10u = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < 20; i++ {
		t[i] = t[i-1] * 10
	}
	return
}()

func a0(a Value) Value {
	if a.K == KindUint {
		return NewUint(0)
	}
	return NewInt(0)
}

func mulU(a, b uint64) (hi, lo uint64) {
	if a == 0 || b == 0 {
		return 0, 0
	}
	lo = a * b
	if lo/b != a {
		return 1, lo
	}
	return 0, lo
}
