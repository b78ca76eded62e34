package sqltext

import (
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// TestRewriteJSONTable: each JSON_TABLE call becomes a derived table the parser reads, carrying
// the parsed clause; the name elsewhere (strings, comments, quoted names, qualified names, no
// parenthesis) is left alone; malformed calls are 1064, a missing alias 3667.
func TestRewriteJSONTable(t *testing.T) {
	for _, c := range []struct {
		text string
		want string // the rewritten text with each marker shown as <spec SQL>; "" when unchanged
		code uint16 // an error
	}{
		{text: "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$')) AS jt",
			want: "SELECT * FROM (SELECT '[1]' AS <'$[*]' COLUMNS(`a` INT PATH '$')>) AS `jt`"},
		{text: "select * from t, json_table(t.doc, \"$.a[*]\" columns (n for ordinality, `b c` varchar(10) exists path '$.b', nested path '$.c[*]' columns (d decimal(5,2) path '$' default '1.5' on empty error on error))) x where 1",
			want: "select * from t, (SELECT t.doc AS <'$.a[*]' COLUMNS(`n` FOR ORDINALITY, `b c` varchar(10) EXISTS PATH '$.b', NESTED PATH '$.c[*]' COLUMNS(`d` decimal(5,2) PATH '$' DEFAULT '1.5' ON EMPTY ERROR ON ERROR))>) AS `x` where 1"},
		// ON ERROR before ON EMPTY (MySQL's deprecated order), DEFAULT numbers, NESTED without PATH.
		{text: "SELECT * FROM JSON_TABLE(?, '$' COLUMNS(a INT PATH '$.a' NULL ON ERROR DEFAULT -2 ON EMPTY, NESTED '$.b' COLUMNS(c JSON PATH '$'))) `j t`",
			want: "SELECT * FROM (SELECT ? AS <'$' COLUMNS(`a` INT PATH '$.a' DEFAULT '-2' ON EMPTY NULL ON ERROR, NESTED PATH '$.b' COLUMNS(`c` JSON PATH '$'))>) AS `j t`"},
		// Strings with quotes and backslashes survive the round trip.
		{text: `SELECT * FROM JSON_TABLE('{}', '$."it''s"' COLUMNS(a VARCHAR(3) PATH '$."a\\b"')) jt`,
			want: `SELECT * FROM (SELECT '{}' AS <'$."it''s"' COLUMNS(` + "`a`" + ` VARCHAR(3) PATH '$."a\\b"')>) AS ` + "`jt`"},
		// Not a call.
		{text: "SELECT 'json_table(' FROM t /* JSON_TABLE( */ -- json_table(\n"},
		{text: "SELECT json_table FROM `json_table(`"},
		{text: "SELECT x.json_table(1)"},
		// Errors.
		{text: "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$'))", code: sqlerr.ErrTFMustHaveAlias},
		{text: "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$')) LEFT JOIN t ON 1", code: sqlerr.ErrTFMustHaveAlias},
		{text: "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$')) AS", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE('[1]' COLUMNS(a INT PATH '$')) jt", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE('[1]', '$' COLUMNS(a INT)) jt", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE('[1]', '$' COLUMNS(a PATH '$')) jt", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE('[1]', '$' COLUMNS()) jt", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE('[1]', '$' COLUMNS(a INT PATH '$' ERROR ON EMPTY ERROR ON EMPTY)) jt", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE('[1]', ? COLUMNS(a INT PATH '$')) jt", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE(, '$' COLUMNS(a INT PATH '$')) jt", code: sqlerr.ErrParse},
		{text: "SELECT * FROM JSON_TABLE('[1]', '$' COLUMNS(a INT PATH '$')", code: sqlerr.ErrParse},
	} {
		got, err := RewriteJSONTable(c.text, Mode{})
		if c.code != 0 {
			if !sqlerr.Is(err, c.code) {
				t.Errorf("%s: error %v, want code %d", c.text, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		want := c.want
		if want == "" {
			want = c.text
		}
		if shown := showMarkers(t, got); shown != want {
			t.Errorf("%s:\n got %s\nwant %s", c.text, shown, want)
		}
		if _, _, err := parser.New().ParseSQL(got); err != nil && !strings.Contains(c.text, "?") {
			t.Errorf("%s: the rewritten text does not parse: %v", c.text, err)
		}
	}
}

// showMarkers replaces each marker alias by <the spec's SQL>.
func showMarkers(t *testing.T, s string) string {
	for {
		i := strings.Index(s, "`"+JSONTableMarker)
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i+1:], '`') + i + 1
		spec, err := DecodeJSONTableSpec(s[i+1 : j])
		if err != nil {
			t.Fatalf("decode %s: %v", s[i+1:j], err)
		}
		s = s[:i] + "<" + spec.SQL() + ">" + s[j+1:]
	}
}

// TestRewriteJSONTableModes: sql_mode's quoting rules decide what a quote starts.
func TestRewriteJSONTableModes(t *testing.T) {
	got, err := RewriteJSONTable(`SELECT * FROM JSON_TABLE('[1]', '$\' COLUMNS(a INT PATH '$')) jt`, Mode{NoBackslashEscapes: true})
	if err != nil || !strings.Contains(showMarkers(t, got), `<'$\\' COLUMNS`) {
		t.Errorf("NO_BACKSLASH_ESCAPES: %q, %v", got, err)
	}
	if _, err := RewriteJSONTable(`SELECT * FROM JSON_TABLE('[1]', "$" COLUMNS(a INT PATH '$')) jt`, Mode{ANSIQuotes: true}); !sqlerr.Is(err, sqlerr.ErrParse) {
		t.Errorf("ANSI_QUOTES: a double-quoted path is a name, want 1064; got %v", err)
	}
}

func TestHasJSONTable(t *testing.T) {
	for s, want := range map[string]bool{"SELECT 1": false, "select * from Json_Table(": true, "json_tabl": false,
		"xJSON_TABLE": true, "json_table": true, "_json_table_": true, "json__table": false, "a_b_c json_table": true, "": false, "_": false} {
		if HasJSONTable(s) != want {
			t.Errorf("HasJSONTable(%q) = %v", s, !want)
		}
	}
}

// BenchmarkHasJSONTable is what a statement without JSON_TABLE pays on the parse path (plan-cache
// misses and PREPARE only: cached and prepared executions do not parse).
func BenchmarkHasJSONTable(b *testing.B) {
	q := "SELECT c FROM sbtest1 WHERE id BETWEEN 5012 AND 5111 ORDER BY c"
	for i := 0; i < b.N; i++ {
		if HasJSONTable(q) {
			b.Fatal("found")
		}
	}
}

// TestUnmarkJSONTable: a syntax error's text shows the JSON_TABLE clause as written, not its marker.
func TestUnmarkJSONTable(t *testing.T) {
	text, err := RewriteJSONTable("SELECT * FROM JSON_TABLE(1 +, '$' COLUMNS(a INT PATH '$')) jt", Mode{})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(text, "AS `")
	got := UnmarkJSONTable("near '" + text[i:] + "' at line 1")
	if want := "near ', '$' COLUMNS(`a` INT PATH '$')) AS `jt`' at line 1"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if UnmarkJSONTable("near 'x'") != "near 'x'" {
		t.Error("a message without a marker changed")
	}
}
