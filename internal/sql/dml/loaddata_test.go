package dml

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// splitLoad runs the fieldReader the way the LOAD DATA row loop does, for n targets, and renders
// the rows: fields quoted (NULL as NULL), a trailing "+" when nextLine skipped extra data.
func splitLoad(t *testing.T, f Format, input string, n int) string {
	t.Helper()
	fr := newFieldReader(strings.NewReader(input), f, 1<<20)
	var out []string
	for {
		var row []string
		for len(row) < n {
			ok, err := fr.readField()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if fr.isNull() {
				row = append(row, "NULL")
			} else {
				row = append(row, strconv.Quote(string(fr.field)))
			}
		}
		if len(row) == 0 {
			break
		}
		eof := fr.nextLine()
		line := strings.Join(row, " ")
		if fr.lineTruncated {
			line += " +"
		}
		out = append(out, line)
		if eof {
			break
		}
		if len(out) > 100 {
			t.Fatal("runaway")
		}
	}
	return strings.Join(out, "\n")
}

func TestLoadDataFieldSplitting(t *testing.T) {
	def := Format{FieldTerm: "\t", Enclosed: NoChar, Escape: '\\', LineTerm: "\n"}
	csv := Format{FieldTerm: ",", Enclosed: '"', Escape: '\\', LineTerm: "\n"}
	with := func(f Format, mod func(*Format)) Format { mod(&f); return f }
	tests := []struct {
		name  string
		f     Format
		n     int
		input string
		want  string
	}{
		{"tabs", def, 9, "1\tabc\n2\t\\N\n", `"1" "abc"` + "\n" + `"2" NULL`},
		{"no final newline", def, 9, "1\tabc\n2\tx", `"1" "abc"` + "\n" + `"2" "x"`},
		{"empty line is one empty field", def, 9, "1\n\n2\n", `"1"` + "\n" + `""` + "\n" + `"2"`},
		{"empty input", def, 9, "", ``},
		{"empty fields", def, 9, "\t\t\n", `"" "" ""`},
		{"escapes", def, 9, `a\tb\nc\0d\Ze\bf\rg\\h\xi` + "\n",
			strconv.Quote("a\tb\nc\x00d\x1ae\bf\rg\\hxi")},
		{"escaped terminators", def, 9, "a\\\tb\tc\\\nd\n", `"a\tb" "c\nd"`},
		{"escape at end of input", def, 9, `end\`, `"end\\"`},
		{`\N only alone`, def, 9, `\N` + "\t" + `a\Nb` + "\tNULL\n", `NULL "aNb" "NULL"`},
		{"too many fields", def, 2, "1\t2\t3\n4\t5\n", `"1" "2" +` + "\n" + `"4" "5"`},
		{"escaped byte in skipped part", def, 1, "1\ta\\\nb\n2\n", `"1" +` + "\n" + `"2"`},
		{"csv", csv, 9, `1,"Smith, John",10` + "\n" + `2,"say ""hi""",\N` + "\n",
			`"1" "Smith, John" "10"` + "\n" + `"2" "say \"hi\"" NULL`},
		{"csv NULL word", csv, 9, `NULL,"NULL","\N",N` + "\n", `NULL "NULL" NULL "N"`},
		{"csv escaped quote", csv, 9, `"esc\"aped",x` + "\n", `"esc\"aped" "x"`},
		{"csv quote inside unquoted", csv, 9, `plain"quote,9` + "\n", `"plain\"quote" "9"`},
		{"csv quote not followed by terminator", csv, 9, `"a"b",c` + "\n", `"a\"b" "c"`},
		{"csv enclosed newline", csv, 9, "\"multi\nline\",7\n", `"multi\nline" "7"`},
		{"csv unterminated keeps the quote", csv, 9, "7,\"open,10\n8\n", `"7" "\"open,10\n8\n"`},
		{"csv closing quote at eof", csv, 9, `"a","b"`, `"a" "b"`},
		{"crlf", with(def, func(f *Format) { f.LineTerm = "\r\n" }), 9, "1\ta\rb\r\n2\tc\r\n",
			`"1" "a\rb"` + "\n" + `"2" "c"`},
		{"multi-byte field terminator", with(def, func(f *Format) { f.FieldTerm = "||" }), 9, "a|b||c|||d\n",
			`"a|b" "c" "|d"`},
		{"lines starting by", with(def, func(f *Format) { f.LineStart = "xx" }), 9,
			"junk\nxx1\tone\nnoprefix\n  xx2\ttwo\nxxx3\n", `"1" "one"` + "\n" + `"2" "two"` + "\n" + `"x3"`},
		{"lines starting by, partial prefix", with(def, func(f *Format) { f.LineStart = "ab" }), 9,
			"aab1\n", `"1"`},
		{"field terminator equals line terminator", with(def, func(f *Format) { f.FieldTerm = "\n" }), 2,
			"a\nb\nc\nd\n", `"a" "b"` + "\n" + `"c" "d"`},
		{"no escape", with(def, func(f *Format) { f.Escape = NoChar }), 9, `a\tb` + "\t" + `\N` + "\n", `"a\\tb" "\\N"`},
		{"escape is the enclosure", with(csv, func(f *Format) { f.Escape = '"' }), 9,
			`"fie""ld","a\nb"` + "\n", `"fie\"ld" "a\\nb"`},
		{"empty line terminator", with(csv, func(f *Format) { f.LineTerm = "" }), 2, "a,b,c,d", `"a" "b"` + "\n" + `"c" "d"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := splitLoad(t, tt.f, tt.input, tt.n); got != tt.want {
				t.Errorf("input %q\ngot:\n%s\nwant:\n%s", tt.input, got, tt.want)
			}
		})
	}
}

func TestLoadDataFieldTooLong(t *testing.T) {
	fr := newFieldReader(strings.NewReader(strings.Repeat("x", 100)+"\n"), Format{FieldTerm: "\t", Enclosed: NoChar, Escape: '\\', LineTerm: "\n"}, 10)
	if _, err := fr.readField(); !sqlerr.Is(err, sqlerr.ErrNetPacketTooLarge) {
		t.Fatalf("got %v", err)
	}
}

// FuzzLoadDataFieldReader splits arbitrary input with formats built from arbitrary terminators: it
// must end, consuming input, without panicking.
func FuzzLoadDataFieldReader(f *testing.F) {
	f.Add("1\tabc\n2\t\\N\n", "\t", "", "\\", "\n", "")
	f.Add("1,\"a,b\",\"c\"\"d\"\r\nxx2,\"open", ",", "\"", "\\", "\r\n", "xx")
	f.Add("a||b|||c", "||", "'", "'", "", "")
	f.Add("\n\n\n", "\n", "\n", "", "\n", "\n")
	f.Fuzz(func(t *testing.T, input, fieldTerm, enclosed, escaped, lineTerm, lineStart string) {
		if len(input) > 4096 || len(enclosed) > 1 || len(escaped) > 1 || len(fieldTerm) > 8 || len(lineTerm) > 8 || len(lineStart) > 8 {
			return
		}
		format := Format{FieldTerm: fieldTerm, Enclosed: NoChar, Escape: NoChar, LineTerm: lineTerm, LineStart: lineStart}
		if enclosed != "" {
			format.Enclosed = int(enclosed[0])
		}
		if escaped != "" {
			format.Escape = int(escaped[0])
		}
		if format.FieldTerm == "" && format.Enclosed == NoChar {
			return // fixed-width rows: refused before reading
		}
		fr := newFieldReader(strings.NewReader(input), format, 1<<20)
		fields := 0
		for rows := 0; ; rows++ {
			if rows > len(input)+2 || fields > 2*len(input)+4 {
				t.Fatalf("no progress: %d rows, %d fields from %d bytes", rows, fields, len(input))
			}
			n := 0
			for n < 3 {
				ok, err := fr.readField()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				_ = fr.isNull()
				n++
				fields++
			}
			if n == 0 || fr.nextLine() {
				break
			}
		}
	})
}
