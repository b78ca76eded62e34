package types

import (
	"math"
	"testing"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

func TestCompare(t *testing.T) {
	ci := collUTF8MB4Default
	cases := []struct {
		a, b Value
		coll *Collation
		want int
	}{
		{NewInt(1), NewInt(2), nil, -1},
		{NewInt(-1), NewUint(math.MaxUint64), nil, -1},
		{NewUint(math.MaxUint64), NewInt(math.MaxInt64), nil, 1},
		{NewUint(5), NewInt(5), nil, 0},
		{NewInt(math.MaxInt64), NewInt(math.MaxInt64 - 1), nil, 1},
		{NewInt(9007199254740993), decV("9007199254740992.5", 1), nil, 1}, // exact, not via float
		{decV("1.50", 2), decV("1.5", 1), nil, 0},
		{NewInt(1), NewFloat(1.5), nil, -1},
		{decV("0.1", 1), NewFloat(0.1), nil, 0},
		{NewString("10"), NewInt(9), nil, 1},         // as doubles, not strings
		{NewString("10abc"), NewInt(10), nil, 0},     // numeric prefix
		{NewString("abc"), NewInt(0), nil, 0},        // no prefix: 0
		{NewString("1e1"), NewFloat(10), nil, 0},     // exponent
		{NewString("abc"), NewString("ABC"), ci, 0},  // collation
		{NewString("abc"), NewString("ABC"), nil, 1}, // binary
		{NewString("abc"), NewBytes("ABC"), ci, 1},   // binary wins
		{dateV("2024-01-02"), dt("2024-01-02 00:00:00"), nil, 0},
		{dateV("2024-01-02"), dt("2024-01-02 00:00:01"), nil, -1},
		{dt("2024-01-02 03:04:05"), NewString("2024-01-02 03:04:05"), nil, 0},
		{dateV("2024-01-02"), NewString("2024-1-2"), nil, 0},
		{NewString("2024-01-03"), dateV("2024-01-02"), nil, 1},
		{dateV("2024-01-02"), NewInt(20240102), nil, 0},
		{dt("2024-01-02 00:00:00"), NewInt(20240102), nil, 0},
		{dt("2024-01-02 03:04:05"), NewInt(20240102030405), nil, 0},
		{durV("10:00:00"), NewString("9:59:59"), nil, 1},
		{durV("-01:00:00"), durV("00:00:01"), nil, -1},
		{durV("00:01:00"), NewInt(100), nil, 0},
		{dateV("2024-01-02"), NewString("not a date"), nil, -1}, // compared as text
		{NewFloat(math.Copysign(0, -1)), NewFloat(0), nil, 0},
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b, c.coll); got != c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Compare(c.b, c.a, c.coll); got != -c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestArith(t *testing.T) {
	type op func(a, b Value) (Value, error)
	add, sub, mul, div, idiv, mod := Add, Sub, Mul, Div, IntDiv, Mod
	cases := []struct {
		name string
		f    op
		a, b Value
		want string // text; "NULL"; or "" when an error is expected
		kind Kind
	}{
		{"+", add, NewInt(1), NewInt(2), "3", KindInt},
		{"+", add, NewInt(math.MaxInt64), NewInt(1), "", 0},
		{"+", add, NewInt(math.MinInt64), NewInt(-1), "", 0},
		{"-", sub, NewInt(math.MinInt64), NewInt(1), "", 0},
		{"-", sub, NewInt(-1), NewInt(math.MaxInt64), "-9223372036854775808", KindInt},
		{"+", add, NewUint(math.MaxUint64), NewInt(-1), "18446744073709551614", KindUint},
		{"+", add, NewUint(math.MaxUint64), NewInt(1), "", 0},
		{"-", sub, NewUint(1), NewInt(2), "", 0}, // BIGINT UNSIGNED out of range
		{"-", sub, NewUint(3), NewInt(2), "1", KindUint},
		{"+", add, NewUint(1), NewInt(-2), "", 0},
		{"*", mul, NewInt(3037000500), NewInt(3037000500), "", 0},
		{"*", mul, NewInt(-4611686018427387904), NewInt(2), "-9223372036854775808", KindInt},
		{"*", mul, NewInt(-3), NewInt(4), "-12", KindInt},
		{"*", mul, NewUint(1 << 32), NewUint(1 << 31), "9223372036854775808", KindUint},
		{"+", add, decV("1.5", 1), NewInt(1), "2.5", KindDecimal},
		{"+", add, decV("1.25", 2), decV("1.5", 1), "2.75", KindDecimal},
		{"-", sub, decV("1.00", 2), decV("1.5", 1), "-0.50", KindDecimal},
		{"*", mul, decV("1.25", 2), decV("1.5", 1), "1.875", KindDecimal},
		{"+", add, NewFloat(1.5), NewInt(1), "2.5", KindFloat},
		{"+", add, NewString("1.5"), NewInt(1), "2.5", KindFloat},
		{"+", add, NewString("abc"), NewInt(1), "1", KindFloat},
		{"+", add, decV("1.5", 1), NewFloat(1), "2.5", KindFloat},
		{"*", mul, NewFloat(1e300), NewFloat(1e300), "", 0},
		{"+", add, Null, NewInt(1), "NULL", KindNull},
		{"/", div, NewInt(1), NewInt(3), "0.3333", KindDecimal},
		{"/", div, NewInt(2), NewInt(3), "0.6667", KindDecimal},
		{"/", div, NewInt(-2), NewInt(3), "-0.6667", KindDecimal},
		{"/", div, NewInt(6), NewInt(3), "2.0000", KindDecimal},
		{"/", div, decV("1.00", 2), NewInt(3), "0.333333", KindDecimal},
		{"/", div, NewInt(1), NewInt(0), "NULL", KindNull},
		{"/", div, NewFloat(1), NewFloat(4), "0.25", KindFloat},
		{"/", div, NewFloat(1), NewInt(0), "NULL", KindNull},
		{"/", div, NewString("1"), NewString("4"), "0.25", KindFloat},
		{"DIV", idiv, NewInt(7), NewInt(2), "3", KindInt},
		{"DIV", idiv, NewInt(-7), NewInt(2), "-3", KindInt},
		{"DIV", idiv, NewInt(7), NewInt(0), "NULL", KindNull},
		{"DIV", idiv, NewInt(math.MinInt64), NewInt(-1), "", 0},
		{"DIV", idiv, decV("5.5", 1), NewInt(2), "2", KindInt},
		{"DIV", idiv, NewFloat(-7.9), NewInt(2), "-3", KindInt},
		{"DIV", idiv, NewUint(math.MaxUint64), NewInt(2), "9223372036854775807", KindUint},
		{"%", mod, NewInt(7), NewInt(3), "1", KindInt},
		{"%", mod, NewInt(-7), NewInt(3), "-1", KindInt},
		{"%", mod, NewInt(7), NewInt(-3), "1", KindInt},
		{"%", mod, NewInt(7), NewInt(0), "NULL", KindNull},
		{"%", mod, NewInt(math.MinInt64), NewInt(-1), "0", KindInt},
		{"%", mod, decV("7.5", 1), NewInt(2), "1.5", KindDecimal},
		{"%", mod, decV("-7.5", 1), NewInt(2), "-1.5", KindDecimal},
		{"%", mod, NewFloat(-7.5), NewFloat(2), "-1.5", KindFloat},
		{"+", add, dateV("2024-01-02"), NewInt(1), "20240103", KindInt},
		{"+", add, dt("2024-01-02 03:04:05.5"), NewInt(0), "20240102030405.500000", KindDecimal},
		{"*", mul, durV("01:00:00"), NewInt(2), "20000", KindInt},
	}
	for _, c := range cases {
		got, err := c.f(c.a, c.b)
		name := c.a.String() + " " + c.name + " " + c.b.String()
		if c.want == "" {
			if !sqlerr.Is(err, sqlerr.ErrDataOutOfRange) {
				t.Errorf("%s: want 1690, got %v, %v", name, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s := got.String(); s != c.want || got.K != c.kind {
			t.Errorf("%s = %s (kind %d), want %s (kind %d)", name, s, got.K, c.want, c.kind)
		}
	}
	_, err := Add(NewInt(math.MaxInt64), NewInt(1))
	if e := sqlerr.As(err); e.Message != "BIGINT value is out of range in '(9223372036854775807 + 1)'" {
		t.Errorf("message %q", e.Message)
	}
	_, err = Sub(NewUint(1), NewInt(2))
	if e := sqlerr.As(err); e.Message != "BIGINT UNSIGNED value is out of range in '(1 - 2)'" {
		t.Errorf("message %q", e.Message)
	}
	negs := []struct {
		a    Value
		want string
	}{
		{NewInt(5), "-5"}, {NewUint(1 << 63), "-9223372036854775808"}, {decV("1.50", 2), "-1.50"},
		{NewFloat(2.5), "-2.5"}, {NewString("3"), "-3"}, {Null, "NULL"},
	}
	for _, c := range negs {
		if got, err := Neg(c.a); err != nil || got.String() != c.want {
			t.Errorf("Neg(%v) = %v, %v", c.a, got, err)
		}
	}
	for _, a := range []Value{NewInt(math.MinInt64), NewUint(1<<63 + 1)} {
		if _, err := Neg(a); !sqlerr.Is(err, sqlerr.ErrDataOutOfRange) {
			t.Errorf("Neg(%v) should overflow", a)
		}
	}
}

func BenchmarkAddInt(b *testing.B) {
	x, y := NewInt(12345), NewInt(678)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = Add(x, y)
	}
}

// The signed-integer fast paths of *, % and DIV give what the general integer path gives, result
// and error alike, at the edges of BIGINT.
func TestArithIntFastPath(t *testing.T) {
	vals := []int64{0, 1, -1, 2, -2, 3, -3, 7, -7, 10, 1 << 31, -(1 << 31), 1<<32 + 1, 3037000499, 3037000500,
		-3037000500, math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, math.MaxInt64 / 2, math.MinInt64 / 2}
	ops := []struct {
		name string
		op   arithOp
	}{{"*", opMul}, {"%", opMod}, {"DIV", opIntDiv}}
	for _, o := range ops {
		for _, x := range vals {
			for _, y := range vals {
				a, b := NewInt(x), NewInt(y)
				got, gerr := arith(o.op, a, b)
				want, werr := intArith(o.op, a, b, a, b)
				if (gerr == nil) != (werr == nil) || got != want {
					t.Errorf("%d %s %d = %v (err %v), want %v (err %v)", x, o.name, y, got, gerr, want, werr)
				}
			}
		}
	}
}
