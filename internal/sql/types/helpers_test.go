package types

import (
	"math/rand"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"
)

// Column types used across the tests.
var (
	tTiny      = &ColType{Tp: mysql.TypeTiny, Len: -1, Frac: -1, Collation: "binary"}
	tBool      = &ColType{Tp: mysql.TypeTiny, Len: 1, Frac: -1, Collation: "binary"}
	tUTiny     = &ColType{Tp: mysql.TypeTiny, Unsigned: true, Len: -1, Collation: "binary"}
	tShort     = &ColType{Tp: mysql.TypeShort, Len: -1, Collation: "binary"}
	tMedium    = &ColType{Tp: mysql.TypeInt24, Len: -1, Collation: "binary"}
	tInt       = &ColType{Tp: mysql.TypeLong, Len: -1, Collation: "binary"}
	tUInt      = &ColType{Tp: mysql.TypeLong, Unsigned: true, Len: -1, Collation: "binary"}
	tBig       = &ColType{Tp: mysql.TypeLonglong, Len: -1, Collation: "binary"}
	tUBig      = &ColType{Tp: mysql.TypeLonglong, Unsigned: true, Len: -1, Collation: "binary"}
	tFloat     = &ColType{Tp: mysql.TypeFloat, Len: -1, Frac: -1, Collation: "binary"}
	tDouble    = &ColType{Tp: mysql.TypeDouble, Len: -1, Frac: -1, Collation: "binary"}
	tDouble72  = &ColType{Tp: mysql.TypeDouble, Len: 7, Frac: 2, Collation: "binary"}
	tDec102    = &ColType{Tp: mysql.TypeNewDecimal, Len: 10, Frac: 2, Collation: "binary"}
	tDec52     = &ColType{Tp: mysql.TypeNewDecimal, Len: 5, Frac: 2, Collation: "binary"}
	tDec300    = &ColType{Tp: mysql.TypeNewDecimal, Len: 30, Frac: 0, Collation: "binary"}
	tDec6530   = &ColType{Tp: mysql.TypeNewDecimal, Len: 65, Frac: 30, Collation: "binary"}
	tVarchar5  = &ColType{Tp: mysql.TypeVarchar, Len: 5, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tVarchar64 = &ColType{Tp: mysql.TypeVarchar, Len: 64, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tChar5     = &ColType{Tp: mysql.TypeString, Len: 5, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tCharBin5  = &ColType{Tp: mysql.TypeString, Len: 5, Charset: "utf8mb4", Collation: "utf8mb4_bin"}
	tBinary4   = &ColType{Tp: mysql.TypeString, Len: 4, Charset: "binary", Collation: "binary"}
	tVarbin5   = &ColType{Tp: mysql.TypeVarchar, Len: 5, Charset: "binary", Collation: "binary"}
	tText      = &ColType{Tp: mysql.TypeBlob, Len: -1, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tTinyText  = &ColType{Tp: mysql.TypeTinyBlob, Len: -1, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tBlob      = &ColType{Tp: mysql.TypeBlob, Len: -1, Charset: "binary", Collation: "binary"}
	tLatin1    = &ColType{Tp: mysql.TypeVarchar, Len: 10, Charset: "latin1", Collation: "latin1_swedish_ci"}
	tASCII     = &ColType{Tp: mysql.TypeVarchar, Len: 10, Charset: "ascii", Collation: "ascii_general_ci"}
	tUTF8MB3   = &ColType{Tp: mysql.TypeVarchar, Len: 10, Charset: "utf8mb3", Collation: "utf8mb3_general_ci"}
	tDate      = &ColType{Tp: mysql.TypeDate, Len: -1, Frac: -1, Collation: "binary"}
	tDatetime  = &ColType{Tp: mysql.TypeDatetime, Len: -1, Frac: 0, Collation: "binary"}
	tDatetime3 = &ColType{Tp: mysql.TypeDatetime, Len: -1, Frac: 3, Collation: "binary"}
	tDatetime6 = &ColType{Tp: mysql.TypeDatetime, Len: -1, Frac: 6, Collation: "binary"}
	tTimestamp = &ColType{Tp: mysql.TypeTimestamp, Len: -1, Frac: 0, Collation: "binary"}
	tTime      = &ColType{Tp: mysql.TypeDuration, Len: -1, Frac: 0, Collation: "binary"}
	tTime2     = &ColType{Tp: mysql.TypeDuration, Len: -1, Frac: 2, Collation: "binary"}
	tYear      = &ColType{Tp: mysql.TypeYear, Len: -1, Collation: "binary"}
	tBit8      = &ColType{Tp: mysql.TypeBit, Len: 8, Collation: "binary"}
)

func strCol(tp byte, n int, coll string) *ColType {
	c, _ := LookupCollation(coll)
	return &ColType{Tp: tp, Len: n, Charset: c.Charset, Collation: coll}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func decV(s string, frac int) Value { return NewDecimal(dec(s), frac) }

func dt(s string) Value {
	p, err := ParseDatetime(s, 6)
	if err != nil {
		panic(err)
	}
	_, _, _, _, _, _, us := UnpackTime(p)
	fsp := 0
	if us != 0 {
		fsp = 6
	}
	return NewDatetime(p, fsp)
}

func dateV(s string) Value {
	p, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return NewDate(p)
}

func durV(s string) Value {
	us, err := ParseDuration(s, 6)
	if err != nil {
		panic(err)
	}
	fsp := 0
	if us%1000000 != 0 {
		fsp = 6
	}
	return NewDuration(us, fsp)
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
