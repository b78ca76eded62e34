package types

import (
	"math"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

var pointOne = 0.1 // a variable, so the sum is computed in float64

func TestAppendText(t *testing.T) {
	cases := []struct {
		v    Value
		want string
	}{
		{NewInt(-42), "-42"},
		{NewUint(math.MaxUint64), "18446744073709551615"},
		{NewFloat(0), "0"},
		{NewFloat(1), "1"},
		{NewFloat(-0.5), "-0.5"},
		{NewFloat(0.1), "0.1"},
		{NewFloat(pointOne + 0.2), "0.30000000000000004"},
		{NewFloat(1.0 / 3), "0.3333333333333333"},
		{NewFloat(100000), "100000"},
		{NewFloat(123456789), "123456789"},
		{NewFloat(1e14), "100000000000000"},
		{NewFloat(999999999999999), "999999999999999"},
		{NewFloat(1e15), "1e15"},
		{NewFloat(1e20), "1e20"},
		{NewFloat(-1e20), "-1e20"},
		{NewFloat(1.5e300), "1.5e300"},
		{NewFloat(123456789012345678), "1.2345678901234568e17"},
		{NewFloat(1234567890123456.8), "1234567890123456.8"},
		{NewFloat(1.5e-7), "0.00000015"},
		{NewFloat(1e-5), "0.00001"},
		{NewFloat(1e-15), "0.000000000000001"},
		{NewFloat(1e-16), "1e-16"},
		{NewFloat(-1.5e-20), "-1.5e-20"},
		{NewFloat(math.MaxFloat64), "1.7976931348623157e308"},
		{NewFloat(math.SmallestNonzeroFloat64), "5e-324"},
		{NewFloat32(3.14159274), "3.14159"},
		{NewFloat32(0.1), "0.1"},
		{NewFloat32(123456789), "123457000"},
		{NewFloat32(1e20), "1e20"},
		{Value{K: KindFloat, F: 2.5, Frac: 2}, "2.50"},
		{Value{K: KindFloat, F: math.Pi, Frac: 6}, "3.141593"},
		{decV("1.5", 2), "1.50"},
		{decV("-1.005", 2), "-1.01"},
		{decV("0.05", 2), "0.05"},
		{decV("-0.5", 1), "-0.5"},
		{decV("123", 0), "123"},
		{decV("1e3", 2), "1000.00"},
		{decV("0", 3), "0.000"},
		{decV("12345678901234567890123456789.123456789", 9), "12345678901234567890123456789.123456789"},
		{NewString("héllo"), "héllo"},
		{NewBytes("\x00\x01"), "\x00\x01"},
		{NewDate(PackTime(2024, 1, 2, 0, 0, 0, 0)), "2024-01-02"},
		{NewDate(0), "0000-00-00"},
		{NewDatetime(PackTime(2024, 1, 2, 3, 4, 5, 0), 0), "2024-01-02 03:04:05"},
		{NewDatetime(PackTime(2024, 1, 2, 3, 4, 5, 120000), 3), "2024-01-02 03:04:05.120"},
		{NewDatetime(PackTime(999, 1, 2, 3, 4, 5, 6), 6), "0999-01-02 03:04:05.000006"},
		{NewDuration(0, 0), "00:00:00"},
		{NewDuration(-(838*3600+59*60+59)*1000000, 0), "-838:59:59"},
		{NewDuration(3723500000, 1), "01:02:03.5"},
		{NewDuration(-500000, 6), "-00:00:00.500000"},
	}
	for _, c := range cases {
		if got := string(AppendText(nil, c.v)); got != c.want {
			t.Errorf("AppendText(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
	if Null.String() != "NULL" || len(AppendText(nil, Null)) != 0 {
		t.Error("NULL rendering")
	}
}

func TestColTypeSQL(t *testing.T) {
	cases := []struct {
		t    *ColType
		want string
	}{
		{tInt, "int"},
		{tUInt, "int unsigned"},
		{tBig, "bigint"},
		{tUBig, "bigint unsigned"},
		{tTiny, "tinyint"},
		{tBool, "tinyint(1)"},
		{tShort, "smallint"},
		{tMedium, "mediumint"},
		{&ColType{Tp: mysql.TypeLong, Len: 11}, "int"},
		{tFloat, "float"},
		{tDouble, "double"},
		{tDouble72, "double(7,2)"},
		{tDec102, "decimal(10,2)"},
		{&ColType{Tp: mysql.TypeNewDecimal, Len: -1, Frac: -1}, "decimal(10,0)"},
		{tVarchar64, "varchar(64)"},
		{strCol(mysql.TypeString, 120, "utf8mb4_bin"), "char(120)"},
		{tBinary4, "binary(4)"},
		{tVarbin5, "varbinary(5)"},
		{tText, "text"},
		{tTinyText, "tinytext"},
		{tBlob, "blob"},
		{&ColType{Tp: mysql.TypeLongBlob, Collation: "binary"}, "longblob"},
		{&ColType{Tp: mysql.TypeMediumBlob, Collation: "utf8mb4_bin"}, "mediumtext"},
		{tDate, "date"},
		{tDatetime, "datetime"},
		{tDatetime3, "datetime(3)"},
		{tTimestamp, "timestamp"},
		{tTime2, "time(2)"},
		{tYear, "year"},
		{tBit8, "bit(8)"},
		{&ColType{Tp: mysql.TypeEnum, Elems: []string{"a", "b'c"}}, "enum('a','b''c')"},
		{&ColType{Tp: mysql.TypeJSON}, "json"},
	}
	for _, c := range cases {
		if got := c.t.SQL(); got != c.want {
			t.Errorf("SQL() = %q, want %q", got, c.want)
		}
	}
}

func TestColTypePredicates(t *testing.T) {
	if !tVarchar64.IsString() || tVarchar64.IsBinaryString() || !tBlob.IsBinaryString() || !tBinary4.IsBinaryString() {
		t.Error("string predicates")
	}
	if !tInt.IsInteger() || tYear.IsInteger() || tDouble.IsInteger() {
		t.Error("IsInteger")
	}
	if !tDate.IsTime() || !tTime.IsTime() || !tTimestamp.IsTime() || tYear.IsTime() {
		t.Error("IsTime")
	}
	if !tText.IsBlob() || !tBlob.IsBlob() || tVarchar64.IsBlob() {
		t.Error("IsBlob")
	}
	if tDec102.DefaultFrac() != 2 || tDatetime3.DefaultFrac() != 3 || tFloat.DefaultFrac() != FracFloat32 || tDouble.DefaultFrac() != 0 || tInt.DefaultFrac() != 0 {
		t.Error("DefaultFrac")
	}
	if tVarchar64.Coll().Name != "utf8mb4_0900_ai_ci" || tInt.Coll().Name != "binary" {
		t.Error("Coll")
	}
	if (&ColType{Tp: mysql.TypeVarchar, Charset: "latin1"}).Coll().Name != "latin1_swedish_ci" {
		t.Error("Coll from charset")
	}
}
