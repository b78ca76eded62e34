package rowenc

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// maxDurationMicros is TIME's largest value, 838:59:59.
const maxDurationMicros = (838*3600 + 59*60 + 59) * 1000000

func daysInMonth(y, m int) int { return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() }

// Column types used across the tests (the same as internal/sql/types' tests).
var (
	tTiny      = &types.ColType{Tp: mysql.TypeTiny, Len: -1, Frac: -1, Collation: "binary"}
	tUTiny     = &types.ColType{Tp: mysql.TypeTiny, Unsigned: true, Len: -1, Collation: "binary"}
	tShort     = &types.ColType{Tp: mysql.TypeShort, Len: -1, Collation: "binary"}
	tMedium    = &types.ColType{Tp: mysql.TypeInt24, Len: -1, Collation: "binary"}
	tInt       = &types.ColType{Tp: mysql.TypeLong, Len: -1, Collation: "binary"}
	tUInt      = &types.ColType{Tp: mysql.TypeLong, Unsigned: true, Len: -1, Collation: "binary"}
	tBig       = &types.ColType{Tp: mysql.TypeLonglong, Len: -1, Collation: "binary"}
	tUBig      = &types.ColType{Tp: mysql.TypeLonglong, Unsigned: true, Len: -1, Collation: "binary"}
	tFloat     = &types.ColType{Tp: mysql.TypeFloat, Len: -1, Frac: -1, Collation: "binary"}
	tDouble    = &types.ColType{Tp: mysql.TypeDouble, Len: -1, Frac: -1, Collation: "binary"}
	tDouble72  = &types.ColType{Tp: mysql.TypeDouble, Len: 7, Frac: 2, Collation: "binary"}
	tDec102    = &types.ColType{Tp: mysql.TypeNewDecimal, Len: 10, Frac: 2, Collation: "binary"}
	tDec52     = &types.ColType{Tp: mysql.TypeNewDecimal, Len: 5, Frac: 2, Collation: "binary"}
	tDec300    = &types.ColType{Tp: mysql.TypeNewDecimal, Len: 30, Frac: 0, Collation: "binary"}
	tDec6530   = &types.ColType{Tp: mysql.TypeNewDecimal, Len: 65, Frac: 30, Collation: "binary"}
	tVarchar64 = &types.ColType{Tp: mysql.TypeVarchar, Len: 64, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tChar5     = &types.ColType{Tp: mysql.TypeString, Len: 5, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tCharBin5  = &types.ColType{Tp: mysql.TypeString, Len: 5, Charset: "utf8mb4", Collation: "utf8mb4_bin"}
	tBinary4   = &types.ColType{Tp: mysql.TypeString, Len: 4, Charset: "binary", Collation: "binary"}
	tVarbin5   = &types.ColType{Tp: mysql.TypeVarchar, Len: 5, Charset: "binary", Collation: "binary"}
	tText      = &types.ColType{Tp: mysql.TypeBlob, Len: -1, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tBlob      = &types.ColType{Tp: mysql.TypeBlob, Len: -1, Charset: "binary", Collation: "binary"}
	tDate      = &types.ColType{Tp: mysql.TypeDate, Len: -1, Frac: -1, Collation: "binary"}
	tDatetime  = &types.ColType{Tp: mysql.TypeDatetime, Len: -1, Frac: 0, Collation: "binary"}
	tDatetime3 = &types.ColType{Tp: mysql.TypeDatetime, Len: -1, Frac: 3, Collation: "binary"}
	tDatetime6 = &types.ColType{Tp: mysql.TypeDatetime, Len: -1, Frac: 6, Collation: "binary"}
	tTimestamp = &types.ColType{Tp: mysql.TypeTimestamp, Len: -1, Frac: 0, Collation: "binary"}
	tTime      = &types.ColType{Tp: mysql.TypeDuration, Len: -1, Frac: 0, Collation: "binary"}
	tTime2     = &types.ColType{Tp: mysql.TypeDuration, Len: -1, Frac: 2, Collation: "binary"}
	tYear      = &types.ColType{Tp: mysql.TypeYear, Len: -1, Collation: "binary"}
	tBit8      = &types.ColType{Tp: mysql.TypeBit, Len: 8, Collation: "binary"}
)

func strCol(tp byte, n int, coll string) *types.ColType {
	c, _ := types.LookupCollation(coll)
	return &types.ColType{Tp: tp, Len: n, Charset: c.Charset, Collation: coll}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func decV(s string, frac int) types.Value { return types.NewDecimal(dec(s), frac) }

func dt(s string) types.Value {
	p, err := types.ParseDatetime(s, 6)
	if err != nil {
		panic(err)
	}
	_, _, _, _, _, _, us := types.UnpackTime(p)
	fsp := 0
	if us != 0 {
		fsp = 6
	}
	return types.NewDatetime(p, fsp)
}

func dateV(s string) types.Value {
	p, err := types.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return types.NewDate(p)
}

func durV(s string) types.Value {
	us, err := types.ParseDuration(s, 6)
	if err != nil {
		panic(err)
	}
	fsp := 0
	if us%1000000 != 0 {
		fsp = 6
	}
	return types.NewDuration(us, fsp)
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// sameValue reports whether two values are identical in kind, Frac and content.
func sameValue(a, b types.Value) bool {
	if a.K != b.K || a.Frac != b.Frac {
		return false
	}
	switch a.K {
	case types.KindFloat:
		return math.Float64bits(a.F) == math.Float64bits(b.F)
	case types.KindDecimal:
		return a.D.Equal(b.D)
	case types.KindString, types.KindBytes:
		return a.S == b.S
	case types.KindNull:
		return true
	}
	return a.I == b.I
}

// randString draws from characters that stress collations: spaces, controls, case, accents,
// expansions, multi-byte.
var randRunes = []string{"", " ", " ", "  ", "\t", "\x00", "\x01", "a", "A", "b", "B", "z", "é", "E", "e", "ß", "s", "ss",
	"中", "😀", "_", "-", "0", "9", "\u00a0", "Å", "ä", "Æ", "ö", "ı", "İ", "\u0301", "ﬁ", "~", "\x7f"}

func randString(r *rand.Rand, maxParts int) string {
	var b strings.Builder
	n := r.Intn(maxParts + 1)
	for i := 0; i < n; i++ {
		b.WriteString(randRunes[r.Intn(len(randRunes))])
	}
	return b.String()
}

func mustConvert(t testing.TB, v types.Value, ct *types.ColType) types.Value {
	t.Helper()
	out, _, err := types.Convert(v, ct, types.ConvertCtx{})
	if err != nil {
		t.Fatalf("Convert(%v, %s): %v", v, ct.SQL(), err)
	}
	return out
}

// randValue returns a random value of column type ct (already converted).
func randValue(t testing.TB, r *rand.Rand, ct *types.ColType) types.Value {
	if r.Intn(20) == 0 {
		return types.Null
	}
	var raw types.Value
	switch keyKind(ct) {
	case types.KindInt, types.KindUint:
		switch r.Intn(6) {
		case 0:
			raw = types.NewInt(math.MinInt64 + int64(r.Intn(3)))
		case 1:
			raw = types.NewUint(math.MaxUint64 - uint64(r.Intn(3)))
		case 2:
			raw = types.NewInt(int64(r.Intn(7)) - 3)
		case 3:
			raw = types.NewInt(r.Int63() >> uint(r.Intn(63)))
		default:
			raw = types.NewInt(-(r.Int63() >> uint(r.Intn(63))))
		}
		if ct.Tp == mysql.TypeYear {
			raw = types.NewInt(int64(1901 + r.Intn(255)))
		}
	case types.KindFloat:
		switch r.Intn(5) {
		case 0:
			raw = types.NewFloat([]float64{0, math.Copysign(0, -1), 1, -1, math.SmallestNonzeroFloat64, -math.MaxFloat64, math.MaxFloat64, 0.1}[r.Intn(8)])
		case 1:
			raw = types.NewFloat(r.NormFloat64())
		default:
			raw = types.NewFloat(r.NormFloat64() * math.Pow(10, float64(r.Intn(60)-30)))
		}
	case types.KindDecimal:
		m, d := ct.Len, ct.Frac // every DECIMAL type of these tests sets both
		digits := make([]byte, 1+r.Intn(m))
		for i := range digits {
			digits[i] = byte('0' + r.Intn(10))
			if r.Intn(4) == 0 {
				digits[i] = '0'
			}
		}
		s := string(digits)
		if d > 0 && len(s) > d {
			s = s[:len(s)-d] + "." + s[len(s)-d:]
		}
		if r.Intn(2) == 0 {
			s = "-" + s
		}
		raw = types.NewString(s)
	case types.KindString, types.KindBytes:
		raw = types.NewString(randString(r, 6))
	case types.KindDate, types.KindDatetime:
		if r.Intn(15) == 0 {
			raw = types.NewDatetime(0, 0)
			break
		}
		y := 1000 + r.Intn(9000)
		if r.Intn(3) == 0 {
			y = 2000 + r.Intn(3)
		}
		mo := 1 + r.Intn(12)
		raw = types.NewDatetime(types.PackTime(y, mo, 1+r.Intn(daysInMonth(y, mo)), r.Intn(24), r.Intn(60), r.Intn(60), r.Intn(1000000)), 6)
		if ct.Tp == mysql.TypeTimestamp {
			raw = types.NewDatetime(types.PackTime(1971+r.Intn(60), mo, 1+r.Intn(28), r.Intn(24), r.Intn(60), r.Intn(60), r.Intn(1000000)), 6)
		}
	case types.KindDuration:
		raw = types.NewDuration(r.Int63n(2*maxDurationMicros+1)-maxDurationMicros, 6)
		if r.Intn(3) == 0 {
			raw = types.NewDuration(r.Int63n(2000001)-1000000, 6)
		}
	}
	return mustConvert(t, raw, ct)
}
