package types

import (
	"math"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

type convCase struct {
	v      Value
	t      *ColType
	strict bool
	want   string // AppendText of the result (ignored when err != 0)
	err    uint16
	warns  string // "W1265 N1265": levels and codes, in order
	kind   Kind   // checked when not KindNull
}

func warnString(ws []sqlerr.Warning) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, w.Level[:1]+itoa(int(w.Code)))
	}
	return strings.Join(parts, " ")
}

func itoa(i int) string { return NewInt(int64(i)).String() }

func runConvCases(t *testing.T, cases []convCase) {
	t.Helper()
	for _, c := range cases {
		got, warns, err := Convert(c.v, c.t, ConvertCtx{Strict: c.strict, Column: "c", Row: 1})
		name := c.t.SQL() + " <- " + c.v.String()
		if c.strict {
			name += " (strict)"
		}
		if c.err != 0 {
			if !sqlerr.Is(err, c.err) {
				t.Errorf("%s: err = %v, want code %d", name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
			continue
		}
		s := string(AppendText(nil, got))
		if got.K == KindNull {
			s = "NULL"
		}
		if s != c.want {
			t.Errorf("%s: got %q (%#v), want %q", name, s, got, c.want)
		}
		if ws := warnString(warns); ws != c.warns {
			t.Errorf("%s: warnings %q (%v), want %q", name, ws, warns, c.warns)
		}
		if c.kind != KindNull && got.K != c.kind {
			t.Errorf("%s: kind %d, want %d", name, got.K, c.kind)
		}
	}
}

func TestConvertIntegers(t *testing.T) {
	runConvCases(t, []convCase{
		{v: NewString("5"), t: tInt, want: "5", kind: KindInt},
		{v: NewString(" 12 "), t: tInt, want: "12"},
		{v: NewString("12abc"), t: tInt, want: "12", warns: "W1265"},
		{v: NewString("12abc"), t: tInt, strict: true, err: 1265},
		{v: NewString("abc"), t: tInt, want: "0", warns: "W1366"},
		{v: NewString("abc"), t: tInt, strict: true, err: 1366},
		{v: NewString(""), t: tInt, strict: true, err: 1366},
		{v: NewString("1.5"), t: tInt, want: "2"},
		{v: NewString("2.5"), t: tInt, want: "3"},
		{v: NewString("-2.5"), t: tInt, want: "-3"},
		{v: NewString("1.4999"), t: tInt, want: "1"},
		{v: NewString("1e3"), t: tInt, want: "1000"},
		{v: NewString(".5"), t: tInt, want: "1"},
		{v: NewString("0x1A"), t: tInt, want: "0", warns: "W1265"},
		{v: NewString("1e400"), t: tInt, want: "2147483647", warns: "W1264"},
		{v: NewInt(127), t: tTiny, want: "127"},
		{v: NewInt(128), t: tTiny, want: "127", warns: "W1264"},
		{v: NewInt(-129), t: tTiny, want: "-128", warns: "W1264"},
		{v: NewInt(128), t: tTiny, strict: true, err: 1264},
		{v: NewInt(-1), t: tUTiny, want: "0", warns: "W1264"},
		{v: NewInt(255), t: tUTiny, want: "255", kind: KindUint},
		{v: NewInt(32768), t: tShort, want: "32767", warns: "W1264"},
		{v: NewInt(8388608), t: tMedium, want: "8388607", warns: "W1264"},
		{v: NewInt(-2147483649), t: tInt, want: "-2147483648", warns: "W1264"},
		{v: NewInt(4294967295), t: tUInt, want: "4294967295"},
		{v: NewFloat(2.5), t: tInt, want: "2"}, // rint: half to even
		{v: NewFloat(3.5), t: tInt, want: "4"},
		{v: NewFloat(-2.5), t: tInt, want: "-2"},
		{v: NewFloat(1e19), t: tBig, want: "9223372036854775807", warns: "W1264"},
		{v: NewFloat(-1e30), t: tUBig, want: "0", warns: "W1264"},
		{v: decV("2.5", 1), t: tInt, want: "3"},
		{v: decV("-2.5", 1), t: tInt, want: "-3"},
		{v: NewUint(math.MaxUint64), t: tBig, want: "9223372036854775807", warns: "W1264"},
		{v: NewUint(math.MaxUint64), t: tUBig, want: "18446744073709551615"},
		{v: NewString("18446744073709551615"), t: tUBig, want: "18446744073709551615"},
		{v: NewString("18446744073709551616"), t: tUBig, want: "18446744073709551615", warns: "W1264"},
		{v: NewString("-9223372036854775808"), t: tBig, want: "-9223372036854775808"},
		{v: NewString("-9223372036854775809"), t: tBig, want: "-9223372036854775808", warns: "W1264"},
		{v: dt("2024-01-02 03:04:05"), t: tBig, want: "20240102030405"},
		{v: dateV("2024-01-02"), t: tInt, want: "20240102"},
		{v: durV("-01:02:03"), t: tInt, want: "-10203"},
		{v: NewInt(5), t: tBool, want: "5"},
		{v: Null, t: tInt, want: "NULL"},
	})
}

func TestConvertYear(t *testing.T) {
	runConvCases(t, []convCase{
		{v: NewInt(0), t: tYear, want: "0"},
		{v: NewInt(5), t: tYear, want: "2005"},
		{v: NewInt(70), t: tYear, want: "1970"},
		{v: NewInt(2024), t: tYear, want: "2024"},
		{v: NewInt(2155), t: tYear, want: "2155"},
		{v: NewInt(1900), t: tYear, want: "0", warns: "W1264"},
		{v: NewInt(2156), t: tYear, strict: true, err: 1264},
		{v: NewString("0"), t: tYear, want: "2000"},
		{v: NewString("00"), t: tYear, want: "2000"},
		{v: NewString("0000"), t: tYear, want: "0"},
		{v: NewString("99"), t: tYear, want: "1999"},
		{v: NewString("1999"), t: tYear, want: "1999"},
		{v: NewString("abc"), t: tYear, strict: true, err: 1366},
		{v: dateV("2024-05-06"), t: tYear, want: "2024"},
		{v: NewFloat(2024.4), t: tYear, want: "2024"},
	})
}

func TestConvertFloats(t *testing.T) {
	runConvCases(t, []convCase{
		{v: NewString("1.5"), t: tDouble, want: "1.5", kind: KindFloat},
		{v: NewString("abc"), t: tDouble, want: "0", warns: "W1265"},
		{v: NewString("abc"), t: tDouble, strict: true, err: 1265},
		{v: NewString("1.5x"), t: tDouble, want: "1.5", warns: "W1265"},
		{v: NewString("1e400"), t: tDouble, want: "1.7976931348623157e308", warns: "W1264"},
		{v: NewInt(-7), t: tDouble, want: "-7"},
		{v: decV("0.1", 1), t: tDouble, want: "0.1"},
		{v: NewFloat(3.14159265), t: tFloat, want: "3.14159"},
		{v: NewFloat(1e39), t: tFloat, want: "3.40282e38", warns: "W1264"},
		{v: NewFloat(1e39), t: tFloat, strict: true, err: 1264},
		{v: NewFloat(12345.678), t: tDouble72, want: "12345.68"},
		{v: NewFloat(123456), t: tDouble72, want: "99999.99", warns: "W1264"},
		{v: dt("2024-01-02 03:04:05"), t: tDouble, want: "20240102030405"},
	})
}

func TestConvertDecimal(t *testing.T) {
	runConvCases(t, []convCase{
		{v: NewString("1.234"), t: tDec102, want: "1.23", warns: "N1265", kind: KindDecimal},
		{v: NewString("1.234"), t: tDec102, strict: true, want: "1.23", warns: "N1265"},
		{v: NewString("1.235"), t: tDec102, want: "1.24", warns: "N1265"},
		{v: NewString("-1.235"), t: tDec102, want: "-1.24", warns: "N1265"},
		{v: NewString("1.2"), t: tDec102, want: "1.20"},
		{v: NewFloat(0.1), t: tDec102, want: "0.10"},
		{v: NewFloat(2.675), t: tDec102, want: "2.68", warns: "N1265"}, // the double's shortest form is 2.675
		{v: NewInt(123456), t: tDec52, want: "999.99", warns: "W1264"},
		{v: NewInt(-123456), t: tDec52, want: "-999.99", warns: "W1264"},
		{v: NewInt(123456), t: tDec52, strict: true, err: 1264},
		{v: NewString("999.995"), t: tDec52, want: "999.99", warns: "W1264"},
		{v: NewString("abc"), t: tDec102, want: "0.00", warns: "W1366"},
		{v: NewString("abc"), t: tDec102, strict: true, err: 1366},
		{v: NewString("12.5abc"), t: tDec102, want: "12.50", warns: "W1265"},
		{v: NewString("1e100"), t: tDec102, want: "99999999.99", warns: "W1264"},
		{v: NewString("-1e100"), t: tDec102, want: "-99999999.99", warns: "W1264"},
		{v: NewString("1e-100"), t: tDec102, want: "0.00", warns: "N1265"},
		{v: decV("-0.004", 3), t: tDec102, want: "0.00", warns: "N1265"},
		{v: NewUint(math.MaxUint64), t: tDec300, want: "18446744073709551615"},
		{v: NewString("12345678901234567890123456789012345.123456789012345678901234567890"), t: tDec6530, want: "12345678901234567890123456789012345.123456789012345678901234567890"},
		{v: NewFloat(math.Inf(1)), t: tDec102, want: "99999999.99", warns: "W1264"},
	})
}

func TestConvertStrings(t *testing.T) {
	long := strings.Repeat("a", 300)
	cjk := strings.Repeat("中", 100)
	runConvCases(t, []convCase{
		{v: NewString("héllo"), t: tVarchar5, want: "héllo", kind: KindString},
		{v: NewString("héllo!"), t: tVarchar5, want: "héllo", warns: "W1265"}, // 1406 only when strict
		{v: NewString("héllo!"), t: tVarchar5, strict: true, err: 1406},
		{v: NewString("abc     "), t: tVarchar5, want: "abc  ", warns: "N1265"},
		{v: NewString("abc     "), t: tVarchar5, strict: true, want: "abc  ", warns: "N1265"},
		{v: NewString("ab   "), t: tChar5, want: "ab"},
		{v: NewString("abcde   "), t: tChar5, strict: true, want: "abcde"},
		{v: NewString("abcdef   "), t: tChar5, strict: true, err: 1406},
		{v: NewString("abcdef"), t: tChar5, want: "abcde", warns: "W1265"},
		{v: NewInt(42), t: tVarchar5, want: "42"},
		{v: NewFloat(1.5), t: tVarchar5, want: "1.5"},
		{v: decV("1.50", 2), t: tVarchar5, want: "1.50"},
		{v: dt("2024-01-02 03:04:05"), t: tVarchar64, want: "2024-01-02 03:04:05"},
		{v: NewString("ab"), t: tBinary4, want: "ab\x00\x00", kind: KindBytes},
		{v: NewString("abcde"), t: tBinary4, strict: true, err: 1406},
		{v: NewString("abcdef"), t: tVarbin5, want: "abcde", warns: "W1265"},
		{v: NewString("ab  "), t: tVarbin5, want: "ab  "},
		{v: NewString("中"), t: tLatin1, strict: true, err: 1366},
		{v: NewString("a中b"), t: tLatin1, want: "a?b", warns: "W1366"},
		{v: NewString("é"), t: tLatin1, want: "é"},
		{v: NewString("é"), t: tASCII, want: "?", warns: "W1366"},
		{v: NewString("😀"), t: tUTF8MB3, strict: true, err: 1366},
		{v: NewBytes("\xff"), t: tVarchar5, strict: true, err: 1366},
		{v: NewString(long), t: tTinyText, strict: true, err: 1406},
		{v: NewString(long), t: tTinyText, want: long[:255], warns: "W1265"},
		{v: NewString(cjk), t: tTinyText, want: cjk[:255], warns: "W1265"},
		{v: NewString(long), t: tText, want: long},
		{v: NewString(long), t: tBlob, want: long, kind: KindBytes},
	})
	_, _, err := Convert(NewString("中"), tLatin1, ConvertCtx{Strict: true, Column: "c", Row: 3})
	if e := sqlerr.As(err); e.Message != `Incorrect string value: '\xE4\xB8\xAD' for column 'c' at row 3` {
		t.Errorf("message %q", e.Message)
	}
}

func TestConvertTemporal(t *testing.T) {
	runConvCases(t, []convCase{
		{v: NewString("2024-01-02"), t: tDate, want: "2024-01-02", kind: KindDate},
		{v: NewString("2024-01-02 10:00:00"), t: tDate, want: "2024-01-02", warns: "N1265"},
		{v: NewString("2024-01-02 10:00:00"), t: tDate, strict: true, want: "2024-01-02", warns: "N1265"},
		{v: NewString("2024-02-30"), t: tDate, strict: true, err: 1292},
		{v: NewString("2024-02-30"), t: tDate, want: "0000-00-00", warns: "W1265"},
		{v: NewString("0000-00-00"), t: tDate, want: "0000-00-00"},
		{v: NewInt(20240102), t: tDate, want: "2024-01-02"},
		{v: NewInt(123), t: tDate, want: "2000-01-23"}, // YYMMDD
		{v: NewInt(100), t: tDate, strict: true, err: 1292},
		{v: NewInt(20241301), t: tDate, strict: true, err: 1292},
		{v: dt("2024-01-02 23:59:59.9"), t: tDate, want: "2024-01-02", warns: "N1265"},
		{v: NewString("2024-01-02 03:04:05.5678"), t: tDatetime3, want: "2024-01-02 03:04:05.568", kind: KindDatetime},
		{v: NewString("2024-01-02 03:04:05.5678"), t: tDatetime, want: "2024-01-02 03:04:06"},
		{v: NewFloat(20240102030405.5), t: &ColType{Tp: mysql.TypeDatetime, Frac: 1}, want: "2024-01-02 03:04:05.5"},
		{v: decV("20240102030405.123456", 6), t: tDatetime6, want: "2024-01-02 03:04:05.123456"},
		{v: dt("2024-12-31 23:59:59.999999"), t: tDatetime, want: "2025-01-01 00:00:00"},
		{v: dateV("2024-01-02"), t: tDatetime, want: "2024-01-02 00:00:00"},
		{v: NewString("2024-01-02"), t: tDatetime3, want: "2024-01-02 00:00:00.000"},
		{v: NewString("2039-01-01"), t: tTimestamp, strict: true, err: 1292},
		{v: NewString("2039-01-01"), t: tTimestamp, want: "0000-00-00 00:00:00", warns: "W1264"},
		{v: NewString("1970-01-01 00:00:00"), t: tTimestamp, want: "0000-00-00 00:00:00", warns: "W1264"},
		{v: NewString("2038-01-19 03:14:07"), t: tTimestamp, want: "2038-01-19 03:14:07"},
		{v: NewString("garbage"), t: tDatetime, strict: true, err: 1292},
		{v: NewString("12:34:56"), t: tTime, want: "12:34:56", kind: KindDuration},
		{v: NewString("839:00:00"), t: tTime, strict: true, err: 1292},
		{v: NewString("839:00:00"), t: tTime, want: "838:59:59", warns: "W1264"},
		{v: NewString("abc"), t: tTime, want: "00:00:00", warns: "W1265"},
		{v: NewInt(123456), t: tTime, want: "12:34:56"},
		{v: NewInt(-123456), t: tTime, want: "-12:34:56"},
		{v: NewInt(126000), t: tTime, strict: true, err: 1292},
		{v: NewString("12:34:56.789"), t: tTime2, want: "12:34:56.79"},
		{v: dt("2024-01-02 03:04:05"), t: tTime, want: "03:04:05"},
		{v: NewFloat(123456.5), t: &ColType{Tp: mysql.TypeDuration, Frac: 1}, want: "12:34:56.5"},
		{v: NewFloat(-1.5), t: &ColType{Tp: mysql.TypeDuration, Frac: 1}, want: "-00:00:01.5"},
	})
	_, _, err := Convert(NewString("2024-02-30"), tDate, ConvertCtx{Strict: true, Column: "d", Row: 2})
	if e := sqlerr.As(err); e.Message != "Incorrect date value: '2024-02-30' for column 'd' at row 2" {
		t.Errorf("message %q", e.Message)
	}
}

var (
	tEnum = &ColType{Tp: mysql.TypeEnum, Elems: []string{"a", "b"}, Collation: "utf8mb4_0900_ai_ci"}
	tSet  = &ColType{Tp: mysql.TypeSet, Elems: []string{"a", "b", "c"}, Collation: "utf8mb4_0900_ai_ci"}
	tJSON = &ColType{Tp: mysql.TypeJSON, Collation: "binary"}
)

func TestConvertOther(t *testing.T) {
	runConvCases(t, []convCase{
		{v: NewInt(255), t: tBit8, want: "255", kind: KindUint},
		{v: NewInt(256), t: tBit8, want: "255", warns: "W1406"},
		{v: NewInt(256), t: tBit8, strict: true, err: 1406},
		{v: NewBytes("\x05"), t: tBit8, want: "5"},
		{v: NewBytes("\x01\x02"), t: tBit8, strict: true, err: 1406},
		{v: NewInt(1), t: tEnum, want: "a", kind: KindString},
		{v: NewString("B "), t: tEnum, want: "b"},
		{v: NewString("2"), t: tEnum, want: "b"},
		{v: NewString("c"), t: tEnum, strict: true, err: sqlerr.ErrWarnDataTruncated},
		{v: NewString("c"), t: tEnum, want: "", warns: "W1265"},
		{v: NewInt(0), t: tEnum, strict: true, err: sqlerr.ErrWarnDataTruncated},
		{v: NewString("b,a,b"), t: tSet, want: "a,b"},
		{v: NewInt(5), t: tSet, want: "a,c"},
		{v: NewInt(8), t: tSet, strict: true, err: sqlerr.ErrWarnDataTruncated},
		{v: NewString("a,z"), t: tSet, want: "a", warns: "W1265"},
		{v: NewString(`{"b": 1,"a" :[1, 2.50]}`), t: tJSON, want: `{"a": [1, 2.5], "b": 1}`},
		{v: NewString(`[1,`), t: tJSON, err: sqlerr.ErrInvalidJSONText},
		{v: NewString(`1 2`), t: tJSON, err: sqlerr.ErrInvalidJSONText},
	})
	_, _, err := Convert(NewInt(300), tTiny, ConvertCtx{Strict: true, Column: "x", Row: 7})
	if e := sqlerr.As(err); e.Message != "Out of range value for column 'x' at row 7" || e.State != "22003" {
		t.Errorf("1264: %+v", e)
	}
	_, _, err = Convert(NewString("abc"), tInt, ConvertCtx{Strict: true, Column: "c"})
	if e := sqlerr.As(err); e.Message != "Incorrect integer value: 'abc' for column 'c' at row 1" {
		t.Errorf("1366: %+v", e)
	}
	_, _, err = Convert(NewString("toolong"), tVarchar5, ConvertCtx{Strict: true, Column: "c", Row: 1})
	if e := sqlerr.As(err); e.Message != "Data too long for column 'c' at row 1" {
		t.Errorf("1406: %+v", e)
	}
}

func TestCasts(t *testing.T) {
	ints := []struct {
		v    Value
		want int64
		warn bool
	}{
		{NewInt(-3), -3, false},
		{NewUint(math.MaxUint64), -1, false},
		{NewFloat(2.5), 2, false},
		{NewFloat(-3.5), -4, false},
		{NewFloat(1e30), math.MaxInt64, false},
		{decV("2.5", 1), 3, false},
		{NewString("12"), 12, false},
		{NewString(" 12abc"), 12, true},
		{NewString("1.9"), 1, true},
		{NewString("abc"), 0, true},
		{NewString("99999999999999999999"), math.MaxInt64, true},
		{dateV("2024-01-02"), 20240102, false},
		{dt("2024-01-02 03:04:05.6"), 20240102030406, false},
		{durV("12:00:00"), 120000, false},
	}
	for _, c := range ints {
		got, w := ToInt(c.v)
		if got != c.want || (w != nil) != c.warn {
			t.Errorf("ToInt(%v) = %d, %v; want %d, warn %v", c.v, got, w, c.want, c.warn)
		}
		if w != nil && w.Code != sqlerr.ErrTruncatedWrongValue {
			t.Errorf("ToInt warning code %d", w.Code)
		}
	}
	if u, _ := ToUint(NewInt(-1)); u != math.MaxUint64 {
		t.Errorf("ToUint(-1) = %d", u)
	}
	if u, _ := ToUint(NewString("18446744073709551615")); u != math.MaxUint64 {
		t.Errorf("ToUint(max string) = %d", u)
	}
	floats := []struct {
		v    Value
		want float64
	}{
		{NewString("1.5e2xyz"), 150}, {NewString("abc"), 0}, {NewString(" -2.5"), -2.5}, {decV("1.25", 2), 1.25},
		{NewUint(math.MaxUint64), 18446744073709551615.0}, {dt("2024-01-02 03:04:05.5"), 20240102030405.5},
		{durV("-00:00:01.5"), -1.5}, {NewString("1e400"), math.MaxFloat64},
	}
	for _, c := range floats {
		if got := ToFloat(c.v); got != c.want {
			t.Errorf("ToFloat(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	if d := ToDecimal(NewString("1.50abc")); !d.Equal(dec("1.5")) {
		t.Errorf("ToDecimal = %s", d)
	}
	if d := ToDecimal(NewFloat(0.1)); !d.Equal(dec("0.1")) {
		t.Errorf("ToDecimal(0.1) = %s", d)
	}
	if s := ToString(NewFloat(1e20)); s != "1e20" {
		t.Errorf("ToString = %s", s)
	}
	bools := []struct {
		v      Value
		b, nul bool
	}{
		{Null, false, true}, {NewInt(0), false, false}, {NewInt(-1), true, false}, {NewFloat(0.1), true, false},
		{decV("0.00", 2), false, false}, {NewString("0.0"), false, false}, {NewString("abc"), false, false},
		{NewString("1abc"), true, false}, {NewString(" 0.5"), true, false}, {dateV("0000-00-00"), false, false},
		{dateV("2024-01-01"), true, false},
	}
	for _, c := range bools {
		if b, n := ToBool(c.v); b != c.b || n != c.nul {
			t.Errorf("ToBool(%v) = %v %v", c.v, b, n)
		}
	}
}

// ConvertExactInt answers exactly what Convert does wherever it answers, and answers for every
// integer value an integer column holds; everything else (out of range, other kinds, other column
// types) is left to Convert.
func TestConvertExactInt(t *testing.T) {
	cols := []*ColType{tTiny, tBool, tUTiny, tShort, tMedium, tInt, tUInt, tBig, tUBig, tDouble, tDec102, tVarchar64, tYear}
	var vals []Value
	for _, i := range []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, -32768, 32768, 8388607, -8388608, 8388608,
		2147483647, -2147483648, 2147483648, 4294967295, 4294967296, math.MaxInt64, math.MinInt64} {
		vals = append(vals, NewInt(i))
	}
	for _, u := range []uint64{0, 127, 255, 65535, 4294967295, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64} {
		vals = append(vals, NewUint(u))
	}
	vals = append(vals, NewFloat(1), NewString("1"), decV("1", 0), Null)
	for _, ct := range cols {
		for _, v := range vals {
			got, ok := ConvertExactInt(v, ct)
			want, warns, err := Convert(v, ct, ConvertCtx{Strict: true})
			exact := err == nil && len(warns) == 0
			isInt := (v.K == KindInt || v.K == KindUint) && ct.IsInteger()
			switch {
			case ok && !exact:
				t.Errorf("%s %v: fast path answered %v where Convert warns or fails (%v %v)", ct.SQL(), v, got, warns, err)
			case ok && (got.K != want.K || got.I != want.I):
				t.Errorf("%s %v: fast path %v (kind %d), Convert %v (kind %d)", ct.SQL(), v, got, got.K, want, want.K)
			case !ok && exact && isInt:
				t.Errorf("%s %v: fast path declined a value the column holds", ct.SQL(), v)
			}
		}
	}
}
