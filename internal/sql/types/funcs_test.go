package types

import (
	"math"
	"testing"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

func call(t *testing.T, name string, args ...Value) (Value, error) {
	t.Helper()
	f, lo, hi, ok := LookupFunc(name)
	if !ok {
		t.Fatalf("no function %s", name)
	}
	if len(args) < lo || (hi >= 0 && len(args) > hi) {
		t.Fatalf("%s: %d args outside [%d,%d]", name, len(args), lo, hi)
	}
	return f(args)
}

var (
	s = NewString
	i = NewInt
	f = NewFloat
)

func TestFuncs(t *testing.T) {
	cases := []struct {
		name string
		args []Value
		want string // text; "NULL"; "ERR" for error 1690
		kind Kind   // checked when not 0
	}{
		{"concat", []Value{s("a"), i(1), f(1.5)}, "a11.5", KindString},
		{"concat", []Value{s("a"), Null}, "NULL", 0},
		{"concat", []Value{s("a"), NewBytes("b")}, "ab", KindBytes},
		{"concat_ws", []Value{s(","), s("a"), Null, s("b")}, "a,b", 0},
		{"concat_ws", []Value{Null, s("a")}, "NULL", 0},
		{"substring", []Value{s("Quadratically"), i(5)}, "ratically", 0},
		{"substring", []Value{s("Quadratically"), i(5), i(6)}, "ratica", 0},
		{"substring", []Value{s("Sakila"), i(-3)}, "ila", 0},
		{"substring", []Value{s("Sakila"), i(-5), i(3)}, "aki", 0},
		{"substring", []Value{s("Sakila"), i(0)}, "", 0},
		{"substring", []Value{s("Sakila"), i(7)}, "", 0},
		{"substring", []Value{s("Sakila"), i(-7)}, "", 0},
		{"substring", []Value{s("héllo"), i(2), i(3)}, "éll", 0},
		{"substr", []Value{NewBytes("héllo"), i(2), i(2)}, "\xc3\xa9", KindBytes},
		{"mid", []Value{s("abc"), i(2), i(0)}, "", 0},
		{"left", []Value{s("héllo"), i(2)}, "hé", 0},
		{"left", []Value{s("abc"), i(-1)}, "", 0},
		{"left", []Value{s("abc"), i(10)}, "abc", 0},
		{"right", []Value{s("héllo"), i(3)}, "llo", 0},
		{"right", []Value{s("abc"), i(5)}, "abc", 0},
		{"length", []Value{s("héllo")}, "6", KindInt},
		{"length", []Value{i(-123)}, "4", 0},
		{"octet_length", []Value{Null}, "NULL", 0},
		{"char_length", []Value{s("héllo")}, "5", 0},
		{"character_length", []Value{NewBytes("héllo")}, "6", 0},
		{"lower", []Value{s("ÀBC")}, "àbc", 0},
		{"lcase", []Value{NewBytes("ABC")}, "ABC", 0},
		{"upper", []Value{s("straße")}, "STRAßE", 0}, // 1:1 case mapping, like MySQL
		{"ucase", []Value{s("abc")}, "ABC", 0},
		{"trim", []Value{s("  a b  ")}, "a b", 0},
		{"ltrim", []Value{s("  a  ")}, "a  ", 0},
		{"rtrim", []Value{s("  a  ")}, "  a", 0},
		{"trim", []Value{s("\ta\t")}, "\ta\t", 0},
		{"replace", []Value{s("www.mysql.com"), s("w"), s("Ww")}, "WwWwWw.mysql.com", 0},
		{"replace", []Value{s("aaa"), s(""), s("b")}, "aaa", 0},
		{"replace", []Value{s("Abc"), s("a"), s("x")}, "Abc", 0},
		{"reverse", []Value{s("héllo")}, "olléh", 0},
		{"repeat", []Value{s("ab"), i(3)}, "ababab", 0},
		{"repeat", []Value{s("ab"), i(-1)}, "", 0},
		{"repeat", []Value{s("ab"), i(1 << 40)}, "NULL", 0},
		{"lpad", []Value{s("hi"), i(4), s("??")}, "??hi", 0},
		{"lpad", []Value{s("hi"), i(5), s("ab")}, "abahi", 0},
		{"lpad", []Value{s("hello"), i(1), s("??")}, "h", 0},
		{"lpad", []Value{s("hi"), i(4), s("")}, "NULL", 0},
		{"lpad", []Value{s("hi"), i(-1), s("x")}, "NULL", 0},
		{"rpad", []Value{s("hi"), i(5), s("?")}, "hi???", 0},
		{"rpad", []Value{s("héllo"), i(7), s("é")}, "hélloéé", 0},
		{"instr", []Value{s("foobarbar"), s("bar")}, "4", KindInt},
		{"instr", []Value{s("xbar"), s("foobar")}, "0", 0},
		{"instr", []Value{s("FooBar"), s("bar")}, "4", 0}, // 0900_ai_ci
		{"instr", []Value{s("résumé"), s("sume")}, "3", 0},
		{"instr", []Value{NewBytes("FooBar"), s("bar")}, "0", 0},
		{"locate", []Value{s("bar"), s("foobarbar")}, "4", 0},
		{"locate", []Value{s("bar"), s("foobarbar"), i(5)}, "7", 0},
		{"locate", []Value{s("xbar"), s("foobar")}, "0", 0},
		{"locate", []Value{s(""), s("abc")}, "1", 0},
		{"position", []Value{s("bar"), s("foobarbar")}, "4", 0},
		{"ascii", []Value{s("2")}, "50", 0},
		{"ascii", []Value{s("")}, "0", 0},
		{"ascii", []Value{i(2)}, "50", 0},
		{"hex", []Value{s("abc")}, "616263", 0},
		{"hex", []Value{i(255)}, "FF", 0},
		{"hex", []Value{i(-1)}, "FFFFFFFFFFFFFFFF", 0},
		{"hex", []Value{f(1.5)}, "2", 0},
		{"unhex", []Value{s("4D7953514C")}, "MySQL", KindBytes},
		{"unhex", []Value{s("GG")}, "NULL", 0},
		{"unhex", []Value{s("F")}, "\x0f", 0},
		{"space", []Value{i(3)}, "   ", 0},
		{"strcmp", []Value{s("text"), s("text2")}, "-1", 0},
		{"strcmp", []Value{s("text2"), s("text")}, "1", 0},
		{"strcmp", []Value{s("text"), s("TEXT")}, "0", 0},
		{"strcmp", []Value{NewBytes("text"), s("TEXT")}, "1", 0},
		{"abs", []Value{i(-5)}, "5", KindInt},
		{"abs", []Value{decV("-1.50", 2)}, "1.50", KindDecimal},
		{"abs", []Value{f(-2.5)}, "2.5", KindFloat},
		{"abs", []Value{s("-3")}, "3", KindFloat},
		{"abs", []Value{Null}, "NULL", 0},
		{"round", []Value{decV("-1.23", 2)}, "-1", KindDecimal},
		{"round", []Value{decV("-1.58", 2)}, "-2", 0},
		{"round", []Value{decV("1.58", 2)}, "2", 0},
		{"round", []Value{decV("1.298", 3), i(1)}, "1.3", 0},
		{"round", []Value{decV("1.298", 3), i(0)}, "1", 0},
		{"round", []Value{decV("23.298", 3), i(-1)}, "20", 0},
		{"round", []Value{decV("2.5", 1)}, "3", 0},
		{"round", []Value{decV("-2.5", 1)}, "-3", 0},
		{"round", []Value{f(2.5)}, "2", KindFloat}, // doubles: half to even
		{"round", []Value{f(3.5)}, "4", 0},
		{"round", []Value{f(1.2345), i(2)}, "1.23", 0},
		{"round", []Value{i(125), i(-1)}, "130", KindInt},
		{"round", []Value{i(-125), i(-1)}, "-130", KindInt},
		{"round", []Value{i(124), i(-1)}, "120", 0},
		{"round", []Value{i(5), i(-1)}, "10", 0},
		{"round", []Value{i(5), i(2)}, "5", 0},
		{"round", []Value{i(math.MaxInt64), i(-1)}, "ERR", 0},
		{"round", []Value{i(5), Null}, "NULL", 0},
		{"truncate", []Value{decV("1.223", 3), i(1)}, "1.2", 0},
		{"truncate", []Value{decV("1.999", 3), i(0)}, "1", 0},
		{"truncate", []Value{decV("-1.999", 3), i(1)}, "-1.9", 0},
		{"truncate", []Value{i(122), i(-2)}, "100", 0},
		{"truncate", []Value{f(1.999), i(1)}, "1.9", 0},
		{"truncate", []Value{decV("10.28", 2), i(-1)}, "10", 0},
		{"floor", []Value{decV("1.23", 2)}, "1", KindInt},
		{"floor", []Value{decV("-1.23", 2)}, "-2", KindInt},
		{"floor", []Value{f(-1.5)}, "-2", KindFloat},
		{"ceil", []Value{decV("1.23", 2)}, "2", KindInt},
		{"ceiling", []Value{decV("-1.23", 2)}, "-1", 0},
		{"ceil", []Value{i(7)}, "7", KindInt},
		{"mod", []Value{i(234), i(10)}, "4", 0},
		{"mod", []Value{i(29), i(9)}, "2", 0},
		{"sign", []Value{i(-32)}, "-1", 0},
		{"sign", []Value{decV("0.00", 2)}, "0", 0},
		{"sign", []Value{f(234)}, "1", 0},
		{"sqrt", []Value{i(4)}, "2", KindFloat},
		{"sqrt", []Value{i(-16)}, "NULL", 0},
		{"sqrt", []Value{i(2)}, "1.4142135623730951", 0},
		{"pow", []Value{i(2), i(2)}, "4", KindFloat},
		{"power", []Value{i(2), i(-2)}, "0.25", 0},
		{"exp", []Value{i(0)}, "1", 0},
		{"ln", []Value{i(-2)}, "NULL", 0},
		{"ln", []Value{i(1)}, "0", 0},
		{"log", []Value{i(2), i(65536)}, "16", 0},
		{"log", []Value{i(1), i(100)}, "NULL", 0},
		{"log", []Value{i(0)}, "NULL", 0},
		{"log2", []Value{i(65536)}, "16", 0},
		{"log10", []Value{i(100)}, "2", 0},
		{"pi", nil, "3.141593", KindFloat},
		{"greatest", []Value{i(2), i(0)}, "2", KindInt},
		{"greatest", []Value{f(34.0), f(3.0), f(5.0), f(767.0)}, "767", KindFloat},
		{"greatest", []Value{s("B"), s("A"), s("C")}, "C", KindString},
		{"greatest", []Value{i(1), decV("1.5", 1)}, "1.5", KindDecimal},
		{"greatest", []Value{i(1), Null}, "NULL", 0},
		{"greatest", []Value{i(-1), NewUint(5)}, "5", KindInt},
		{"greatest", []Value{dateV("2024-01-02"), dateV("2023-05-06")}, "2024-01-02", KindDate},
		{"least", []Value{i(2), i(0)}, "0", 0},
		{"least", []Value{s("B"), s("a"), s("C")}, "a", 0},
		{"least", []Value{s("10"), i(9)}, "9", KindFloat},
		{"crc32", []Value{s("MySQL")}, "3259397556", KindUint},
		{"md5", []Value{s("testing")}, "ae2b1fca515949e5d54fb22b8ed95575", 0},
		{"sha1", []Value{s("abc")}, "a9993e364706816aba3e25717850c26c9cd0d89d", 0},
		{"sha", []Value{s("abc")}, "a9993e364706816aba3e25717850c26c9cd0d89d", 0},
		{"sha2", []Value{s("abc"), i(224)}, "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7", 0},
		{"sha2", []Value{s("abc"), i(256)}, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 0},
		{"sha2", []Value{s("abc"), i(7)}, "NULL", 0},
		{"date", []Value{s("2003-12-31 01:02:03")}, "2003-12-31", KindDate},
		{"date", []Value{s("nope")}, "NULL", 0},
		{"year", []Value{s("1987-01-01")}, "1987", KindInt},
		{"year", []Value{dateV("0000-00-00")}, "0", 0},
		{"month", []Value{dt("2008-02-03 10:00:00")}, "2", 0},
		{"day", []Value{s("2007-02-03")}, "3", 0},
		{"dayofmonth", []Value{i(20070203)}, "3", 0},
		{"quarter", []Value{s("2008-04-01")}, "2", 0},
		{"hour", []Value{s("10:05:03")}, "10", 0},
		{"hour", []Value{s("272:59:59")}, "272", 0},
		{"hour", []Value{dt("2024-01-02 13:00:00")}, "13", 0},
		{"minute", []Value{s("2008-02-03 10:05:03")}, "5", 0},
		{"second", []Value{s("10:05:03")}, "3", 0},
		{"second", []Value{durV("-00:00:07")}, "7", 0},
		{"microsecond", []Value{s("12:00:00.123456")}, "123456", 0},
		{"dayofweek", []Value{s("2007-02-03")}, "7", 0},
		{"weekday", []Value{s("2008-02-03 22:23:00")}, "6", 0},
		{"weekday", []Value{s("2007-11-06")}, "1", 0},
		{"dayofyear", []Value{s("2007-02-03")}, "34", 0},
		{"dayofyear", []Value{s("0000-00-00")}, "NULL", 0},
		{"monthname", []Value{s("2008-02-03")}, "February", 0},
		{"dayname", []Value{s("2007-02-03")}, "Saturday", 0},
		{"week", []Value{s("2008-02-20")}, "7", 0},
		{"week", []Value{s("2008-02-20"), i(1)}, "8", 0},
		{"week", []Value{s("2008-12-31"), i(1)}, "53", 0},
		{"week", []Value{s("2000-01-01"), i(0)}, "0", 0},
		{"to_days", []Value{i(950501)}, "728779", 0},
		{"to_days", []Value{s("2007-10-07")}, "733321", 0},
		{"to_days", []Value{s("0000-00-00")}, "NULL", 0},
		{"last_day", []Value{s("2003-02-05")}, "2003-02-28", KindDate},
		{"last_day", []Value{s("2004-02-05")}, "2004-02-29", 0},
		{"last_day", []Value{s("2004-01-01 01:01:01")}, "2004-01-31", 0},
		{"last_day", []Value{s("2003-03-32")}, "NULL", 0},
		{"datediff", []Value{s("2007-12-31 23:59:59"), s("2007-12-30")}, "1", 0},
		{"datediff", []Value{s("2010-11-30 23:59:59"), s("2010-12-31")}, "-31", 0},
		{"date_format", []Value{s("2009-10-04 22:23:00"), s("%W %M %Y")}, "Sunday October 2009", KindString},
		{"date_format", []Value{s("2007-10-04 22:23:00"), s("%H:%i:%s")}, "22:23:00", 0},
		{"date_format", []Value{s("1900-10-04 22:23:00"), s("%D %y %a %d %m %b %j")}, "4th 00 Thu 04 10 Oct 277", 0},
		{"date_format", []Value{s("1997-10-04 22:23:00"), s("%H %k %I %r %T %S %w")}, "22 22 10 10:23:00 PM 22:23:00 00 6", 0},
		{"date_format", []Value{s("1999-01-01"), s("%X %V")}, "1998 52", 0},
		{"date_format", []Value{s("2006-06-00"), s("%d")}, "00", 0}, // date functions accept zero parts
		{"date_format", []Value{s("2006-06-00"), s("%a")}, "NULL", 0},
		{"date_format", []Value{s("2006-06-31"), s("%d")}, "NULL", 0},
		{"day", []Value{s("2006-06-00")}, "0", 0},
		{"date_format", []Value{s("2024-03-01 09:05:07.012345"), s("%e %c %l %p %f %% %Q")}, "1 3 9 AM 012345 % Q", 0},
		{"date_format", []Value{s("2024-01-21"), s("%D %U %u %v %x")}, "21st 03 03 03 2024", 0},
		{"date_format", []Value{s("0000-00-00"), s("%Y-%m-%d")}, "0000-00-00", 0},
		{"date_format", []Value{s("0000-00-00"), s("%W")}, "NULL", 0},
	}
	for _, c := range cases {
		got, err := call(t, c.name, c.args...)
		if c.want == "ERR" {
			if !sqlerr.Is(err, sqlerr.ErrDataOutOfRange) {
				t.Errorf("%s%v: want 1690, got %v %v", c.name, c.args, got, err)
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

func TestFuncLookup(t *testing.T) {
	if _, lo, hi, ok := LookupFunc("concat_ws"); !ok || lo != 2 || hi != -1 {
		t.Error("concat_ws arity")
	}
	if _, _, _, ok := LookupFunc("now"); ok {
		t.Error("NOW is the executor's")
	}
	if !FuncUsesCollation("instr") || FuncUsesCollation("concat") {
		t.Error("FuncUsesCollation")
	}
	bin, _ := LookupCollation("utf8mb4_bin")
	fn, _, _, _ := LookupFuncCollation("instr", bin)
	if v, _ := fn([]Value{s("FooBar"), s("bar")}); v.I != 0 {
		t.Errorf("instr under utf8mb4_bin = %v", v)
	}
	fn, _, _, _ = LookupFuncCollation("strcmp", bin)
	if v, _ := fn([]Value{s("a"), s("A")}); v.I != 1 {
		t.Errorf("strcmp under utf8mb4_bin = %v", v)
	}
}
