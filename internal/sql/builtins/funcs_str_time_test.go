package builtins

import (
	"errors"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// TestStringTimeFuncs checks the functions of funcs_str.go and funcs_time.go against the examples of
// MySQL 8's reference manual (and a few edge cases). warn is the expected warning code, if any.
func TestStringTimeFuncs(t *testing.T) {
	b := types.NewBytes
	u := types.NewUint
	cases := []struct {
		name string
		args []types.Value
		want string     // text; "NULL"; "ERR" for an error
		kind types.Kind // checked when not 0
		warn uint16
	}{
		{"ord", []types.Value{s("2")}, "50", types.KindInt, 0},
		{"ord", []types.Value{s("é")}, "50089", 0, 0},
		{"ord", []types.Value{s("")}, "0", 0, 0},
		{"ord", []types.Value{types.Null}, "NULL", 0, 0},
		{"bin", []types.Value{i(12)}, "1100", types.KindString, 0},
		{"bin", []types.Value{i(-1)}, "1111111111111111111111111111111111111111111111111111111111111111", 0, 0},
		{"oct", []types.Value{i(12)}, "14", 0, 0},
		{"conv", []types.Value{s("a"), i(16), i(2)}, "1010", 0, 0},
		{"conv", []types.Value{s("6E"), i(18), i(8)}, "172", 0, 0},
		{"conv", []types.Value{i(-17), i(10), i(-18)}, "-H", 0, 0},
		{"conv", []types.Value{s("ff"), i(16), i(10)}, "255", 0, 0},
		{"conv", []types.Value{s("zz"), i(16), i(10)}, "0", 0, 0},
		{"conv", []types.Value{s("1"), i(1), i(10)}, "NULL", 0, 0},
		{"conv", []types.Value{s("ffffffffffffffffffff"), i(16), i(10)}, "18446744073709551615", 0, 0},
		{"conv", []types.Value{s("-1"), i(10), i(16)}, "FFFFFFFFFFFFFFFF", 0, 0},
		{"field", []types.Value{s("Bb"), s("Aa"), s("Bb"), s("Cc")}, "2", types.KindInt, 0},
		{"field", []types.Value{s("bb"), s("Aa"), s("Bb")}, "2", 0, 0}, // utf8mb4_0900_ai_ci
		{"field", []types.Value{s("Gg"), s("Aa"), s("Bb")}, "0", 0, 0},
		{"field", []types.Value{types.Null, types.Null, s("a")}, "0", 0, 0},
		{"field", []types.Value{i(2), i(1), i(2)}, "2", 0, 0},
		{"field", []types.Value{s("2.0"), i(1), i(2)}, "2", 0, 0},
		{"elt", []types.Value{i(1), s("Aa"), s("Bb")}, "Aa", 0, 0},
		{"elt", []types.Value{i(3), s("Aa"), s("Bb")}, "NULL", 0, 0},
		{"elt", []types.Value{i(0), s("Aa")}, "NULL", 0, 0},
		{"find_in_set", []types.Value{s("b"), s("a,b,c,d")}, "2", types.KindInt, 0},
		{"find_in_set", []types.Value{s("B"), s("a,b")}, "2", 0, 0},
		{"find_in_set", []types.Value{s("b,c"), s("a,b,c")}, "0", 0, 0},
		{"find_in_set", []types.Value{s("x"), s("")}, "0", 0, 0},
		{"find_in_set", []types.Value{types.Null, s("a")}, "NULL", 0, 0},
		{"insert_func", []types.Value{s("Quadratic"), i(3), i(4), s("What")}, "QuWhattic", 0, 0},
		{"insert_func", []types.Value{s("Quadratic"), i(-1), i(4), s("What")}, "Quadratic", 0, 0},
		{"insert_func", []types.Value{s("Quadratic"), i(3), i(100), s("What")}, "QuWhat", 0, 0},
		{"insert_func", []types.Value{s("héllo"), i(2), i(1), s("e")}, "hello", 0, 0},
		{"substring_index", []types.Value{s("www.mysql.com"), s("."), i(2)}, "www.mysql", 0, 0},
		{"substring_index", []types.Value{s("www.mysql.com"), s("."), i(-2)}, "mysql.com", 0, 0},
		{"substring_index", []types.Value{s("www.mysql.com"), s("."), i(0)}, "", 0, 0},
		{"substring_index", []types.Value{s("www.mysql.com"), s("."), i(9)}, "www.mysql.com", 0, 0},
		{"substring_index", []types.Value{s("aXbxc"), s("x"), i(1)}, "aXb", 0, 0},
		{"substring_index", []types.Value{s("aaa"), s("aa"), i(-1)}, "a", 0, 0},
		{"substring_index", []types.Value{s("a.b"), s("."), u(18446744073709551615)}, "b", 0, 0}, // a 32-bit -1
		{"soundex", []types.Value{s("Hello")}, "H400", 0, 0},
		{"soundex", []types.Value{s("Quadratically")}, "Q36324", 0, 0},
		{"soundex", []types.Value{s("Tymczak")}, "T520", 0, 0},
		{"soundex", []types.Value{s("123")}, "", 0, 0},
		{"quote", []types.Value{s("Don't!")}, `'Don\'t!'`, 0, 0},
		{"quote", []types.Value{s("a\\b\x00\x1a")}, `'a\\b\0\Z'`, 0, 0},
		{"quote", []types.Value{types.Null}, "NULL", types.KindString, 0},
		{"to_base64", []types.Value{s("abc")}, "YWJj", 0, 0},
		{"from_base64", []types.Value{s("YW Jj")}, "abc", types.KindBytes, 0},
		{"from_base64", []types.Value{s("YWI")}, "NULL", 0, 0},
		{"bit_length", []types.Value{s("text")}, "32", 0, 0},
		{"make_set", []types.Value{i(1 | 4), s("hello"), s("nice"), s("world")}, "hello,world", 0, 0},
		{"make_set", []types.Value{i(1 | 4), s("hello"), s("nice"), types.Null, s("world")}, "hello", 0, 0},
		{"make_set", []types.Value{i(0), s("a")}, "", 0, 0},
		{"export_set", []types.Value{i(5), s("Y"), s("N"), s(","), i(4)}, "Y,N,Y,N", 0, 0},
		{"export_set", []types.Value{i(6), s("1"), s("0"), s(","), i(10)}, "0,1,1,0,0,0,0,0,0,0", 0, 0},
		{"char_func", []types.Value{i(77), i(121), i(83), i(81), s("76")}, "MySQL", types.KindBytes, 0},
		{"char_func", []types.Value{i(1), i(0)}, "\x01\x00", 0, 0},
		{"char_func", []types.Value{i(256)}, "\x01\x00", 0, 0},
		{"char_func", []types.Value{i(65536), types.Null}, "\x01\x00\x00", 0, 0},
		{"format", []types.Value{f(12332.123456), i(4)}, "12,332.1235", types.KindString, 0},
		{"format", []types.Value{f(12332.1), i(4)}, "12,332.1000", 0, 0},
		{"format", []types.Value{f(12332.2), i(0)}, "12,332", 0, 0},
		{"format", []types.Value{f(12332.2), i(2), s("de_DE")}, "12.332,20", 0, 0},
		{"format", []types.Value{decV("-1234567.895", 3), i(2)}, "-1,234,567.90", 0, 0},
		{"format", []types.Value{i(1234567), i(-3)}, "1,234,567", 0, 0},
		{"format", []types.Value{i(1234), i(1), s("xx_YY")}, "1,234.0", 0, 1649},
		{"format", []types.Value{types.Null, i(1)}, "NULL", 0, 0},
		{"inet_aton", []types.Value{s("10.0.5.9")}, "167773449", types.KindUint, 0},
		{"inet_aton", []types.Value{s("127.1")}, "2130706433", 0, 0},
		{"inet_aton", []types.Value{s("1.2.3.256")}, "NULL", 0, 0},
		{"inet_aton", []types.Value{s("1.2.3.")}, "NULL", 0, 0},
		{"inet_ntoa", []types.Value{i(167773449)}, "10.0.5.9", 0, 0},
		{"inet_ntoa", []types.Value{i(-1)}, "NULL", 0, 0},
		{"inet6_aton", []types.Value{s("10.0.5.9")}, "\x0a\x00\x05\x09", types.KindBytes, 0},
		{"inet6_aton", []types.Value{s("nope")}, "NULL", 0, 1411},
		{"inet6_ntoa", []types.Value{b("\xfd\xfe\x00\x00\x00\x00\x00\x00\x5a\x55\xca\xff\xfe\xfa\x90\x89")}, "fdfe::5a55:caff:fefa:9089", 0, 0},
		{"inet6_ntoa", []types.Value{b("\x20\x01\x0d\xb8\x00\x00\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01")}, "2001:db8::1:1:1:1:1", 0, 0},
		{"inet6_ntoa", []types.Value{b("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\x04")}, "::1.2.3.4", 0, 0},
		{"inet6_ntoa", []types.Value{b("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x01\x02\x03\x04")}, "::ffff:1.2.3.4", 0, 0},
		{"inet6_ntoa", []types.Value{b("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01")}, "::1", 0, 0},
		{"inet6_ntoa", []types.Value{s("1234")}, "NULL", 0, 0},
		{"is_ipv4", []types.Value{s("10.0.5.9")}, "1", 0, 0},
		{"is_ipv4", []types.Value{s("10.0.5.256")}, "0", 0, 0},
		{"is_ipv6", []types.Value{s("::1")}, "1", 0, 0},
		{"is_ipv6", []types.Value{s("10.0.5.9")}, "0", 0, 0},
		{"is_uuid", []types.Value{s("6ccd780c-baba-1026-9564-5b8c656024db")}, "1", 0, 0},
		{"is_uuid", []types.Value{s("6ccd780c-baba-1026-9564-5b8c6560")}, "0", 0, 0},
		{"uuid_to_bin", []types.Value{s("6ccd780c-baba-1026-9564-5b8c656024db"), i(1)}, "\x10\x26\xba\xba\x6c\xcd\x78\x0c\x95\x64\x5b\x8c\x65\x60\x24\xdb", types.KindBytes, 0},
		{"uuid_to_bin", []types.Value{s("x")}, "ERR", 0, 0},
		{"bin_to_uuid", []types.Value{b("\x10\x26\xba\xba\x6c\xcd\x78\x0c\x95\x64\x5b\x8c\x65\x60\x24\xdb"), i(1)}, "6ccd780c-baba-1026-9564-5b8c656024db", 0, 0},
		{"bit_count", []types.Value{i(64)}, "1", 0, 0},
		{"bit_count", []types.Value{i(-1)}, "64", 0, 0},
		{"bit_count", []types.Value{types.Null}, "NULL", 0, 0},
		{"cot", []types.Value{i(12)}, "-1.5726734063976895", types.KindFloat, 0},
		{"cot", []types.Value{i(0)}, "ERR", 0, 0},
		{"asin", []types.Value{i(2)}, "NULL", 0, 0},
		{"atan", []types.Value{i(-2), i(2)}, "-0.7853981633974483", 0, 0},
		{"degrees", []types.Value{f(3.141592653589793)}, "180", 0, 0},
		{"interval", []types.Value{i(23), i(1), i(15), i(17), i(30), i(44), i(200)}, "3", types.KindInt, 0},
		{"interval", []types.Value{i(10), i(1), i(10), i(100), i(1000)}, "2", 0, 0},
		{"interval", []types.Value{i(22), i(23), i(30), i(44), i(200)}, "0", 0, 0},
		{"interval", []types.Value{types.Null, i(1)}, "-1", 0, 0},
		{"interval", []types.Value{decV("1.5", 1), f(1.4), decV("1.6", 1)}, "1", 0, 0},
		{"interval", []types.Value{u(5), i(1)}, "1", 0, 0},
		{"interval", []types.Value{i(5), i(7), i(3), i(1)}, "0", 0, 0}, // short lists are scanned
		{"interval", []types.Value{i(5), i(1), i(2), i(3), i(4), i(5), i(6), i(7), i(8), i(9)}, "5", 0, 0},
		{"format", []types.Value{f(1234567.891), i(2), s("ru_RU")}, "1 234 567,89", 0, 0},
		{"format", []types.Value{f(1234567.891), i(2), s("de_CH")}, "1'234'567.89", 0, 0},
		{"is_ipv4_compat", []types.Value{b("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01")}, "0", 0, 0},

		{"sec_to_time", []types.Value{i(2378)}, "00:39:38", types.KindDuration, 0},
		{"sec_to_time", []types.Value{decV("1.5", 1)}, "00:00:01.5", 0, 0},
		{"sec_to_time", []types.Value{i(-3600)}, "-01:00:00", 0, 0},
		{"sec_to_time", []types.Value{i(3600000)}, "838:59:59", 0, 1292},
		{"time_to_sec", []types.Value{s("22:23:00")}, "80580", types.KindInt, 0},
		{"time_to_sec", []types.Value{s("-01:00:01.9")}, "-3601", 0, 0},
		{"makedate", []types.Value{i(2011), i(31)}, "2011-01-31", types.KindDate, 0},
		{"makedate", []types.Value{i(2011), i(32)}, "2011-02-01", 0, 0},
		{"makedate", []types.Value{i(2014), i(365)}, "2014-12-31", 0, 0},
		{"makedate", []types.Value{i(2011), i(0)}, "NULL", 0, 0},
		{"makedate", []types.Value{i(11), i(1)}, "2011-01-01", 0, 0},
		{"maketime", []types.Value{i(12), i(15), i(30)}, "12:15:30", types.KindDuration, 0},
		{"maketime", []types.Value{i(-1), i(0), decV("1.25", 2)}, "-01:00:01.25", 0, 0},
		{"maketime", []types.Value{i(12), i(60), i(30)}, "NULL", 0, 0},
		{"maketime", []types.Value{i(900), i(0), i(0)}, "838:59:59", 0, 1292},
		{"time", []types.Value{s("2003-12-31 01:02:03")}, "01:02:03", types.KindDuration, 0},
		{"time", []types.Value{s("2003-12-31 01:02:03.000123")}, "01:02:03.000123", 0, 0},
		{"weekofyear", []types.Value{s("2008-02-20")}, "8", 0, 0},
		{"yearweek", []types.Value{s("1987-01-01")}, "198652", 0, 0},
		{"yearweek", []types.Value{s("2024-12-30"), i(1)}, "202501", 0, 0},
		{"period_add", []types.Value{i(200801), i(2)}, "200803", 0, 0},
		{"period_add", []types.Value{i(9912), i(1)}, "200001", 0, 0},
		{"period_add", []types.Value{i(200813), i(1)}, "ERR", 0, 0},
		{"period_diff", []types.Value{i(200802), i(200703)}, "11", 0, 0},
		{"from_days", []types.Value{i(730669)}, "2000-07-03", types.KindDate, 0},
		{"from_days", []types.Value{i(10)}, "0000-00-00", 0, 0},
		{"to_seconds", []types.Value{i(950501)}, "62966505600", 0, 0},
		{"to_seconds", []types.Value{s("2009-11-29 13:43:32")}, "63426721412", 0, 0},
		{"addtime", []types.Value{s("2007-12-31 23:59:59.999999"), s("1 1:1:1.000002")}, "2008-01-02 01:01:01.000001", 0, 0},
		{"addtime", []types.Value{s("01:00:00.999999"), s("02:00:00.999998")}, "03:00:01.999997", 0, 0},
		{"addtime", []types.Value{durV("01:00:00"), s("2024-01-01 00:00:00")}, "NULL", 0, 0},
		{"subtime", []types.Value{s("2007-12-31 23:59:59.999999"), s("1 1:1:1.000002")}, "2007-12-30 22:58:58.999997", 0, 0},
		{"subtime", []types.Value{s("01:00:00.999999"), s("02:00:00.999998")}, "-00:59:59.999999", 0, 0},
		{"timediff", []types.Value{s("2000-01-01 00:00:00"), s("2000-01-01 00:00:00.000001")}, "-00:00:00.000001", types.KindDuration, 0},
		{"timediff", []types.Value{s("2008-12-31 23:59:59.000001"), s("2008-12-30 01:01:01.000002")}, "46:58:57.999999", 0, 0},
		{"timediff", []types.Value{s("10:00:00"), s("2008-12-30 01:01:01")}, "NULL", 0, 0},
		{"timediff", []types.Value{s("2008-12-31 00:00:00"), s("2000-01-01 00:00:00")}, "838:59:59", 0, 1292},
		{"timestamp", []types.Value{s("2003-12-31")}, "2003-12-31 00:00:00", types.KindDatetime, 0},
		{"timestamp", []types.Value{s("2003-12-31 12:00:00"), s("12:00:00")}, "2004-01-01 00:00:00", 0, 0},
		{"time_format", []types.Value{s("100:00:00"), s("%H %k %h %I %l")}, "100 100 04 04 4", 0, 0},
		{"time_format", []types.Value{s("-01:02:03"), s("%T")}, "-01:02:03", 0, 0},
		{"time_format", []types.Value{s("10:00:00"), s("%M")}, "NULL", 0, 0},
	}
	for _, c := range cases {
		got, err := call(t, c.name, c.args...)
		var w *FuncWarning
		if errors.As(err, &w) {
			if c.warn != w.Warn.Code {
				t.Errorf("%s%v: warning %d, want %d", c.name, c.args, w.Warn.Code, c.warn)
			}
			err = nil
			got = w.Value
		} else if c.warn != 0 {
			t.Errorf("%s%v: no warning, want %d", c.name, c.args, c.warn)
		}
		if c.want == "ERR" {
			if err == nil {
				t.Errorf("%s%v: want an error, got %v", c.name, c.args, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s%v: %v", c.name, c.args, err)
			continue
		}
		if g := got.String(); g != c.want {
			t.Errorf("%s%v = %q, want %q", c.name, c.args, g, c.want)
		}
		if c.kind != 0 && got.K != c.kind {
			t.Errorf("%s%v: kind %d, want %d", c.name, c.args, got.K, c.kind)
		}
	}
}

func TestTimestampDiffExtract(t *testing.T) {
	for _, c := range []struct {
		unit string
		a, b types.Value
		want string
	}{
		{"MONTH", s("2003-02-01"), s("2003-05-01"), "3"},
		{"YEAR", s("2002-05-01"), s("2001-01-01"), "-1"},
		{"MINUTE", s("2003-02-01"), s("2003-05-01 12:05:55"), "128885"},
		{"MONTH", s("2024-01-31"), s("2024-02-29"), "0"},
		{"MONTH", s("2024-01-31 10:00:00"), s("2024-03-31 09:59:59"), "1"},
		{"QUARTER", s("2024-01-01"), s("2024-12-31"), "3"},
		{"WEEK", s("2024-01-01"), s("2024-01-15"), "2"},
		{"MICROSECOND", s("2024-01-01 00:00:00"), s("2024-01-01 00:00:01.5"), "1500000"},
		{"DAY", s("2024-01-02"), s("2024-01-01 00:00:01"), "0"},
		{"DAY", types.Null, s("2024-01-01"), "NULL"},
	} {
		if g := TimestampDiff(c.unit, c.a, c.b).String(); g != c.want {
			t.Errorf("TIMESTAMPDIFF(%s, %v, %v) = %s, want %s", c.unit, c.a, c.b, g, c.want)
		}
	}
	for _, c := range []struct {
		unit string
		v    types.Value
		want string
	}{
		{"YEAR", s("2019-07-02"), "2019"},
		{"YEAR_MONTH", s("2019-07-02 01:02:03"), "201907"},
		{"DAY_MINUTE", s("2019-07-02 01:02:03"), "20102"},
		{"MICROSECOND", s("2003-01-02 10:30:00.000123"), "123"},
		{"HOUR", s("-100:20:30"), "-100"},
		{"HOUR_SECOND", durV("-10:20:30"), "-102030"},
		{"DAY_HOUR", durV("30:00:00"), "30"},
		{"QUARTER", dt("2024-08-01 00:00:00"), "3"},
		{"WEEK", s("2024-01-07"), "1"},
		{"DAY_MICROSECOND", s("2019-07-02 01:02:03.5"), "2010203500000"},
		{"DAY", s("garbage"), "NULL"},
	} {
		if g := Extract(c.unit, c.v, 0).String(); g != c.want {
			t.Errorf("EXTRACT(%s FROM %v) = %s, want %s", c.unit, c.v, g, c.want)
		}
	}
}

func TestStrToDate(t *testing.T) {
	for _, c := range []struct {
		s, f  string
		want  DateTimeFields
		trail bool
		ok    bool
	}{
		{"01,5,2013", "%d,%m,%Y", DateTimeFields{2013, 5, 1, 0, 0, 0, 0}, false, true},
		{"May 1, 2013", "%M %d,%Y", DateTimeFields{2013, 5, 1, 0, 0, 0, 0}, false, true},
		{"a09:30:17", "a%h:%i:%s", DateTimeFields{0, 0, 0, 9, 30, 17, 0}, false, true},
		{"a09:30:17", "%h:%i:%s", DateTimeFields{}, false, false},
		{"09:30:17a", "%h:%i:%s", DateTimeFields{0, 0, 0, 9, 30, 17, 0}, true, true},
		{"abc", "abc", DateTimeFields{}, false, true},
		{"9", "%m", DateTimeFields{0, 9, 0, 0, 0, 0, 0}, false, true},
		{"200442 Monday", "%X%V %W", DateTimeFields{2004, 10, 18, 0, 0, 0, 0}, false, true},
		{"2024 1 Mon", "%Y %u %a", DateTimeFields{2024, 1, 1, 0, 0, 0, 0}, false, true},
		{"10:15:30 PM", "%r", DateTimeFields{0, 0, 0, 22, 15, 30, 0}, false, true},
		{"12:00:00 AM", "%r", DateTimeFields{0, 0, 0, 0, 0, 0, 0}, false, true},
		{"13:00 PM", "%h:%i %p", DateTimeFields{}, false, false},
		{"2024-02-30", "%Y-%m-%d", DateTimeFields{2024, 2, 30, 0, 0, 0, 0}, false, true},
		{"24-060", "%y-%j", DateTimeFields{2024, 2, 29, 0, 0, 0, 0}, false, true},
		{"1.5", "%s.%f", DateTimeFields{0, 0, 0, 0, 0, 1, 500000}, false, true},
		{"3rd of March", "%D of %M", DateTimeFields{0, 3, 3, 0, 0, 0, 0}, false, true},
		{"2024-13-01", "%Y-%m-%d", DateTimeFields{}, false, false},
	} {
		got, trail, ok := StrToDate(c.s, c.f)
		if ok != c.ok || (ok && (got != c.want || trail != c.trail)) {
			t.Errorf("StrToDate(%q, %q) = %+v %v %v, want %+v %v %v", c.s, c.f, got, trail, ok, c.want, c.trail, c.ok)
		}
	}
	for f, want := range map[string]types.Kind{"%Y-%m-%d": types.KindDate, "%H:%i": types.KindDuration, "%Y %H": types.KindDatetime, "abc": types.KindDate} {
		if k, _ := StrToDateKind(f); k != want {
			t.Errorf("StrToDateKind(%q) = %v, want %v", f, k, want)
		}
	}
}
