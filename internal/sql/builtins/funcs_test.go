package builtins

import (
	"math"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

func call(t *testing.T, name string, args ...types.Value) (types.Value, error) {
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
	s = types.NewString
	i = types.NewInt
	f = types.NewFloat
)

func TestFuncs(t *testing.T) {
	cases := []struct {
		name string
		args []types.Value
		want string     // text; "NULL"; "ERR" for error 1690
		kind types.Kind // checked when not 0
	}{
		{"concat", []types.Value{s("a"), i(1), f(1.5)}, "a11.5", types.KindString},
		{"concat", []types.Value{s("a"), types.Null}, "NULL", 0},
		{"concat", []types.Value{s("a"), types.NewBytes("b")}, "ab", types.KindBytes},
		{"concat_ws", []types.Value{s(","), s("a"), types.Null, s("b")}, "a,b", 0},
		{"concat_ws", []types.Value{types.Null, s("a")}, "NULL", 0},
		{"substring", []types.Value{s("Quadratically"), i(5)}, "ratically", 0},
		{"substring", []types.Value{s("Quadratically"), i(5), i(6)}, "ratica", 0},
		{"substring", []types.Value{s("Sakila"), i(-3)}, "ila", 0},
		{"substring", []types.Value{s("Sakila"), i(-5), i(3)}, "aki", 0},
		{"substring", []types.Value{s("Sakila"), i(0)}, "", 0},
		{"substring", []types.Value{s("Sakila"), i(7)}, "", 0},
		{"substring", []types.Value{s("Sakila"), i(-7)}, "", 0},
		{"substring", []types.Value{s("héllo"), i(2), i(3)}, "éll", 0},
		{"substr", []types.Value{types.NewBytes("héllo"), i(2), i(2)}, "\xc3\xa9", types.KindBytes},
		{"mid", []types.Value{s("abc"), i(2), i(0)}, "", 0},
		{"left", []types.Value{s("héllo"), i(2)}, "hé", 0},
		{"left", []types.Value{s("abc"), i(-1)}, "", 0},
		{"left", []types.Value{s("abc"), i(10)}, "abc", 0},
		{"right", []types.Value{s("héllo"), i(3)}, "llo", 0},
		{"right", []types.Value{s("abc"), i(5)}, "abc", 0},
		{"length", []types.Value{s("héllo")}, "6", types.KindInt},
		{"length", []types.Value{i(-123)}, "4", 0},
		{"octet_length", []types.Value{types.Null}, "NULL", 0},
		{"char_length", []types.Value{s("héllo")}, "5", 0},
		{"character_length", []types.Value{types.NewBytes("héllo")}, "6", 0},
		{"lower", []types.Value{s("ÀBC")}, "àbc", 0},
		{"lcase", []types.Value{types.NewBytes("ABC")}, "ABC", 0},
		{"upper", []types.Value{s("straße")}, "STRAßE", 0}, // 1:1 case mapping, like MySQL
		{"ucase", []types.Value{s("abc")}, "ABC", 0},
		{"trim", []types.Value{s("  a b  ")}, "a b", 0},
		{"ltrim", []types.Value{s("  a  ")}, "a  ", 0},
		{"rtrim", []types.Value{s("  a  ")}, "  a", 0},
		{"trim", []types.Value{s("\ta\t")}, "\ta\t", 0},
		{"replace", []types.Value{s("www.mysql.com"), s("w"), s("Ww")}, "WwWwWw.mysql.com", 0},
		{"replace", []types.Value{s("aaa"), s(""), s("b")}, "aaa", 0},
		{"replace", []types.Value{s("Abc"), s("a"), s("x")}, "Abc", 0},
		{"reverse", []types.Value{s("héllo")}, "olléh", 0},
		{"repeat", []types.Value{s("ab"), i(3)}, "ababab", 0},
		{"repeat", []types.Value{s("ab"), i(-1)}, "", 0},
		{"repeat", []types.Value{s("ab"), i(1 << 40)}, "NULL", 0},
		{"lpad", []types.Value{s("hi"), i(4), s("??")}, "??hi", 0},
		{"lpad", []types.Value{s("hi"), i(5), s("ab")}, "abahi", 0},
		{"lpad", []types.Value{s("hello"), i(1), s("??")}, "h", 0},
		{"lpad", []types.Value{s("hi"), i(4), s("")}, "NULL", 0},
		{"lpad", []types.Value{s("hi"), i(-1), s("x")}, "NULL", 0},
		{"rpad", []types.Value{s("hi"), i(5), s("?")}, "hi???", 0},
		{"rpad", []types.Value{s("héllo"), i(7), s("é")}, "hélloéé", 0},
		{"instr", []types.Value{s("foobarbar"), s("bar")}, "4", types.KindInt},
		{"instr", []types.Value{s("xbar"), s("foobar")}, "0", 0},
		{"instr", []types.Value{s("FooBar"), s("bar")}, "4", 0}, // 0900_ai_ci
		{"instr", []types.Value{s("résumé"), s("sume")}, "3", 0},
		{"instr", []types.Value{types.NewBytes("FooBar"), s("bar")}, "0", 0},
		{"locate", []types.Value{s("bar"), s("foobarbar")}, "4", 0},
		{"locate", []types.Value{s("bar"), s("foobarbar"), i(5)}, "7", 0},
		{"locate", []types.Value{s("xbar"), s("foobar")}, "0", 0},
		{"locate", []types.Value{s(""), s("abc")}, "1", 0},
		{"position", []types.Value{s("bar"), s("foobarbar")}, "4", 0},
		{"ascii", []types.Value{s("2")}, "50", 0},
		{"ascii", []types.Value{s("")}, "0", 0},
		{"ascii", []types.Value{i(2)}, "50", 0},
		{"hex", []types.Value{s("abc")}, "616263", 0},
		{"hex", []types.Value{i(255)}, "FF", 0},
		{"hex", []types.Value{i(-1)}, "FFFFFFFFFFFFFFFF", 0},
		{"hex", []types.Value{f(1.5)}, "2", 0},
		{"unhex", []types.Value{s("4D7953514C")}, "MySQL", types.KindBytes},
		{"unhex", []types.Value{s("GG")}, "NULL", 0},
		{"unhex", []types.Value{s("F")}, "\x0f", 0},
		{"space", []types.Value{i(3)}, "   ", 0},
		{"strcmp", []types.Value{s("text"), s("text2")}, "-1", 0},
		{"strcmp", []types.Value{s("text2"), s("text")}, "1", 0},
		{"strcmp", []types.Value{s("text"), s("TEXT")}, "0", 0},
		{"strcmp", []types.Value{types.NewBytes("text"), s("TEXT")}, "1", 0},
		{"abs", []types.Value{i(-5)}, "5", types.KindInt},
		{"abs", []types.Value{decV("-1.50", 2)}, "1.50", types.KindDecimal},
		{"abs", []types.Value{f(-2.5)}, "2.5", types.KindFloat},
		{"abs", []types.Value{s("-3")}, "3", types.KindFloat},
		{"abs", []types.Value{types.Null}, "NULL", 0},
		{"round", []types.Value{decV("-1.23", 2)}, "-1", types.KindDecimal},
		{"round", []types.Value{decV("-1.58", 2)}, "-2", 0},
		{"round", []types.Value{decV("1.58", 2)}, "2", 0},
		{"round", []types.Value{decV("1.298", 3), i(1)}, "1.3", 0},
		{"round", []types.Value{decV("1.298", 3), i(0)}, "1", 0},
		{"round", []types.Value{decV("23.298", 3), i(-1)}, "20", 0},
		{"round", []types.Value{decV("2.5", 1)}, "3", 0},
		{"round", []types.Value{decV("-2.5", 1)}, "-3", 0},
		{"round", []types.Value{f(2.5)}, "2", types.KindFloat}, // doubles: half to even
		{"round", []types.Value{f(3.5)}, "4", 0},
		{"round", []types.Value{f(1.2345), i(2)}, "1.23", 0},
		{"round", []types.Value{i(125), i(-1)}, "130", types.KindInt},
		{"round", []types.Value{i(-125), i(-1)}, "-130", types.KindInt},
		{"round", []types.Value{i(124), i(-1)}, "120", 0},
		{"round", []types.Value{i(5), i(-1)}, "10", 0},
		{"round", []types.Value{i(5), i(2)}, "5", 0},
		{"round", []types.Value{i(math.MaxInt64), i(-1)}, "ERR", 0},
		{"round", []types.Value{i(5), types.Null}, "NULL", 0},
		{"truncate", []types.Value{decV("1.223", 3), i(1)}, "1.2", 0},
		{"truncate", []types.Value{decV("1.999", 3), i(0)}, "1", 0},
		{"truncate", []types.Value{decV("-1.999", 3), i(1)}, "-1.9", 0},
		{"truncate", []types.Value{i(122), i(-2)}, "100", 0},
		{"truncate", []types.Value{f(1.999), i(1)}, "1.9", 0},
		{"truncate", []types.Value{decV("10.28", 2), i(-1)}, "10", 0},
		{"floor", []types.Value{decV("1.23", 2)}, "1", types.KindInt},
		{"floor", []types.Value{decV("-1.23", 2)}, "-2", types.KindInt},
		{"floor", []types.Value{f(-1.5)}, "-2", types.KindFloat},
		{"ceil", []types.Value{decV("1.23", 2)}, "2", types.KindInt},
		{"ceiling", []types.Value{decV("-1.23", 2)}, "-1", 0},
		{"ceil", []types.Value{i(7)}, "7", types.KindInt},
		{"mod", []types.Value{i(234), i(10)}, "4", 0},
		{"mod", []types.Value{i(29), i(9)}, "2", 0},
		{"sign", []types.Value{i(-32)}, "-1", 0},
		{"sign", []types.Value{decV("0.00", 2)}, "0", 0},
		{"sign", []types.Value{f(234)}, "1", 0},
		{"sqrt", []types.Value{i(4)}, "2", types.KindFloat},
		{"sqrt", []types.Value{i(-16)}, "NULL", 0},
		{"sqrt", []types.Value{i(2)}, "1.4142135623730951", 0},
		{"pow", []types.Value{i(2), i(2)}, "4", types.KindFloat},
		{"power", []types.Value{i(2), i(-2)}, "0.25", 0},
		{"exp", []types.Value{i(0)}, "1", 0},
		{"ln", []types.Value{i(-2)}, "NULL", 0},
		{"ln", []types.Value{i(1)}, "0", 0},
		{"log", []types.Value{i(2), i(65536)}, "16", 0},
		{"log", []types.Value{i(1), i(100)}, "NULL", 0},
		{"log", []types.Value{i(0)}, "NULL", 0},
		{"log2", []types.Value{i(65536)}, "16", 0},
		{"log10", []types.Value{i(100)}, "2", 0},
		{"pi", nil, "3.141593", types.KindFloat},
		{"greatest", []types.Value{i(2), i(0)}, "2", types.KindInt},
		{"greatest", []types.Value{f(34.0), f(3.0), f(5.0), f(767.0)}, "767", types.KindFloat},
		{"greatest", []types.Value{s("B"), s("A"), s("C")}, "C", types.KindString},
		{"greatest", []types.Value{i(1), decV("1.5", 1)}, "1.5", types.KindDecimal},
		{"greatest", []types.Value{i(1), types.Null}, "NULL", 0},
		{"greatest", []types.Value{i(-1), types.NewUint(5)}, "5", types.KindInt},
		{"greatest", []types.Value{dateV("2024-01-02"), dateV("2023-05-06")}, "2024-01-02", types.KindDate},
		{"least", []types.Value{i(2), i(0)}, "0", 0},
		{"least", []types.Value{s("B"), s("a"), s("C")}, "a", 0},
		{"least", []types.Value{s("10"), i(9)}, "9", types.KindFloat},
		{"crc32", []types.Value{s("MySQL")}, "3259397556", types.KindUint},
		{"md5", []types.Value{s("testing")}, "ae2b1fca515949e5d54fb22b8ed95575", 0},
		{"sha1", []types.Value{s("abc")}, "a9993e364706816aba3e25717850c26c9cd0d89d", 0},
		{"sha", []types.Value{s("abc")}, "a9993e364706816aba3e25717850c26c9cd0d89d", 0},
		{"sha2", []types.Value{s("abc"), i(224)}, "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7", 0},
		{"sha2", []types.Value{s("abc"), i(256)}, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 0},
		{"sha2", []types.Value{s("abc"), i(7)}, "NULL", 0},
		{"date", []types.Value{s("2003-12-31 01:02:03")}, "2003-12-31", types.KindDate},
		{"date", []types.Value{s("nope")}, "NULL", 0},
		{"year", []types.Value{s("1987-01-01")}, "1987", types.KindInt},
		{"year", []types.Value{dateV("0000-00-00")}, "0", 0},
		{"month", []types.Value{dt("2008-02-03 10:00:00")}, "2", 0},
		{"day", []types.Value{s("2007-02-03")}, "3", 0},
		{"dayofmonth", []types.Value{i(20070203)}, "3", 0},
		{"quarter", []types.Value{s("2008-04-01")}, "2", 0},
		{"hour", []types.Value{s("10:05:03")}, "10", 0},
		{"hour", []types.Value{s("272:59:59")}, "272", 0},
		{"hour", []types.Value{dt("2024-01-02 13:00:00")}, "13", 0},
		{"minute", []types.Value{s("2008-02-03 10:05:03")}, "5", 0},
		{"second", []types.Value{s("10:05:03")}, "3", 0},
		{"second", []types.Value{durV("-00:00:07")}, "7", 0},
		{"microsecond", []types.Value{s("12:00:00.123456")}, "123456", 0},
		{"dayofweek", []types.Value{s("2007-02-03")}, "7", 0},
		{"weekday", []types.Value{s("2008-02-03 22:23:00")}, "6", 0},
		{"weekday", []types.Value{s("2007-11-06")}, "1", 0},
		{"dayofyear", []types.Value{s("2007-02-03")}, "34", 0},
		{"dayofyear", []types.Value{s("0000-00-00")}, "NULL", 0},
		{"monthname", []types.Value{s("2008-02-03")}, "February", 0},
		{"dayname", []types.Value{s("2007-02-03")}, "Saturday", 0},
		{"week", []types.Value{s("2008-02-20")}, "7", 0},
		{"week", []types.Value{s("2008-02-20"), i(1)}, "8", 0},
		{"week", []types.Value{s("2008-12-31"), i(1)}, "53", 0},
		{"week", []types.Value{s("2000-01-01"), i(0)}, "0", 0},
		{"to_days", []types.Value{i(950501)}, "728779", 0},
		{"to_days", []types.Value{s("2007-10-07")}, "733321", 0},
		{"to_days", []types.Value{s("0000-00-00")}, "NULL", 0},
		{"last_day", []types.Value{s("2003-02-05")}, "2003-02-28", types.KindDate},
		{"last_day", []types.Value{s("2004-02-05")}, "2004-02-29", 0},
		{"last_day", []types.Value{s("2004-01-01 01:01:01")}, "2004-01-31", 0},
		{"last_day", []types.Value{s("2003-03-32")}, "NULL", 0},
		{"datediff", []types.Value{s("2007-12-31 23:59:59"), s("2007-12-30")}, "1", 0},
		{"datediff", []types.Value{s("2010-11-30 23:59:59"), s("2010-12-31")}, "-31", 0},
		{"date_format", []types.Value{s("2009-10-04 22:23:00"), s("%W %M %Y")}, "Sunday October 2009", types.KindString},
		{"date_format", []types.Value{s("2007-10-04 22:23:00"), s("%H:%i:%s")}, "22:23:00", 0},
		{"date_format", []types.Value{s("1900-10-04 22:23:00"), s("%D %y %a %d %m %b %j")}, "4th 00 Thu 04 10 Oct 277", 0},
		{"date_format", []types.Value{s("1997-10-04 22:23:00"), s("%H %k %I %r %T %S %w")}, "22 22 10 10:23:00 PM 22:23:00 00 6", 0},
		{"date_format", []types.Value{s("1999-01-01"), s("%X %V")}, "1998 52", 0},
		{"date_format", []types.Value{s("2006-06-00"), s("%d")}, "00", 0}, // date functions accept zero parts
		{"date_format", []types.Value{s("2006-06-00"), s("%a")}, "NULL", 0},
		{"date_format", []types.Value{s("2006-06-31"), s("%d")}, "NULL", 0},
		{"day", []types.Value{s("2006-06-00")}, "0", 0},
		{"date_format", []types.Value{s("2024-03-01 09:05:07.012345"), s("%e %c %l %p %f %% %Q")}, "1 3 9 AM 012345 % Q", 0},
		{"date_format", []types.Value{s("2024-01-21"), s("%D %U %u %v %x")}, "21st 03 03 03 2024", 0},
		{"date_format", []types.Value{s("0000-00-00"), s("%Y-%m-%d")}, "0000-00-00", 0},
		{"date_format", []types.Value{s("0000-00-00"), s("%W")}, "NULL", 0},
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
	bin, _ := types.LookupCollation("utf8mb4_bin")
	fn, _, _, _ := LookupFuncCollation("instr", bin)
	if v, _ := fn([]types.Value{s("FooBar"), s("bar")}); v.I != 0 {
		t.Errorf("instr under utf8mb4_bin = %v", v)
	}
	fn, _, _, _ = LookupFuncCollation("strcmp", bin)
	if v, _ := fn([]types.Value{s("a"), s("A")}); v.I != 1 {
		t.Errorf("strcmp under utf8mb4_bin = %v", v)
	}
}
