package sqltext

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		text  string
		param string // "" when not eligible
		kinds string
		lits  []string
	}{
		{"SELECT c FROM sbtest1 WHERE id=5012", "SELECT c FROM sbtest1 WHERE id=?", "i", []string{"5012"}},
		{"select c from t where id between 10 and 109 order by c", "select c from t where id between ? and ? order by c", "ii", []string{"10", "109"}},
		{"UPDATE t SET k=k+1 WHERE id=7", "UPDATE t SET k=k+? WHERE id=?", "ii", []string{"1", "7"}},
		{"INSERT INTO t (id, k, c) VALUES (1, 2, 'a''b'), (3, 4, \"x\\ny\")", "INSERT INTO t (id, k, c) VALUES (?, ?, ?), (?, ?, ?)", "vvvvvv",
			[]string{"1", "2", "a'b", "3", "4", "x\ny"}},
		{"DELETE FROM t WHERE d = 1.50 OR f = 1e-3 OR g = .5", "DELETE FROM t WHERE d = ? OR f = ? OR g = ?", "dfd", []string{"1.50", "1e-3", ".5"}},
		{"SELECT * FROM t1 WHERE t1.a = 9223372036854775808", "SELECT * FROM t1 WHERE t1.a = ?", "d", []string{"9223372036854775808"}},
		{"SELECT * FROM t WHERE b = X'4142' AND c = 0x414", "SELECT * FROM t WHERE b = ? AND c = ?", "xx", []string{"AB", "\x04\x14"}},
		{"SELECT * FROM `t 1` WHERE `a``5` = -3", "SELECT * FROM `t 1` WHERE `a``5` = -?", "i", []string{"3"}},
		{"SELECT * FROM t WHERE a LIKE 'x\\%y\\_'", "SELECT * FROM t WHERE a LIKE ?", "s", []string{"x\\%y\\_"}},
		{"  select @@version;  ", "  select @@version;  ", "", nil},
		// VALUES lists: one kind for every literal; outside them, and in a subquery inside them,
		// each its own.
		{"REPLACE INTO c(id, n) VALUE (1, 'a'), (2, x'62') ON DUPLICATE KEY UPDATE n = VALUES(n) + 1.5", "REPLACE INTO c(id, n) VALUE (?, ?), (?, ?) ON DUPLICATE KEY UPDATE n = VALUES(n) + ?", "vvvvd",
			[]string{"1", "a", "2", "b", "1.5"}},
		{"INSERT INTO t VALUES ((SELECT a FROM u LIMIT 1), 'x')", "INSERT INTO t VALUES ((SELECT a FROM u LIMIT ?), ?)", "is", []string{"1", "x"}},
		{"INSERT INTO t (a) SELECT b FROM u WHERE c = 'x' LIMIT 5", "INSERT INTO t (a) SELECT b FROM u WHERE c = ? LIMIT ?", "si", []string{"x", "5"}},
		{"INSERT INTO t SET a = 7, b = 'y'", "INSERT INTO t SET a = ?, b = ?", "is", []string{"7", "y"}},
		{"INSERT INTO t VALUES (1, 'x' COLLATE latin1_bin)", "INSERT INTO t VALUES (?, ? COLLATE latin1_bin)", "is", []string{"1", "x"}},
		// Not eligible: the lexer cannot be sure, or the statement is not one it caches.
		{"SET @a = 1", "", "", nil},
		{"SELECT /*+ MAX_EXECUTION_TIME(1) */ 1", "", "", nil},
		{"/*!40101 SET x = 1 */ SELECT 1", "", "", nil},
		{"SELECT /*! STRAIGHT_JOIN */ a FROM t", "", "", nil},
		{"SELECT a FROM t WHERE b = 1--2", "", "", nil},
		{"SELECT a FROM t WHERE b = 1 /* unterminated", "", "", nil},
		{"/* app:web, id '7' */ SELECT a FROM t WHERE b = 2 -- it's 2\n AND c = 'x' # tail",
			"/* app:web, id '7' */ SELECT a FROM t WHERE b = ? -- it's 2\n AND c = ? # tail", "is", []string{"2", "x"}},
		{"SELECT _utf8mb4'a'", "", "", nil},
		{"SELECT _latin1 'a'", "", "", nil},
		{"SELECT N'a'", "", "", nil},
		{"SELECT b'101'", "", "", nil},
		{"SELECT 0b101", "", "", nil},
		{"SELECT @'x'", "", "", nil},
		{"SELECT 1abc FROM t", "", "", nil},
		{"SELECT t.1a FROM t", "", "", nil},
		{"SELECT 1; SELECT 2", "SELECT ?;", "i", []string{"1"}}, // the first statement; Rest is the second
		{"SELECT a FROM t WHERE b = 'é\\ü'", "SELECT a FROM t WHERE b = ?", "s", []string{"éü"}},
		{"SELECT é FROM t", "", "", nil},
		{"SELECT ?", "", "", nil},
		{"SELECT X'414'", "", "", nil},
		{"SELECT 'unterminated", "", "", nil},
	} {
		n, ok := Normalize(c.text, Mode{})
		if c.param == "" {
			if ok {
				t.Errorf("%q: eligible as %q, want not", c.text, n.Param)
			}
			continue
		}
		if !ok {
			t.Errorf("%q: not eligible", c.text)
			continue
		}
		if n.Param != c.param || n.Key != c.param+"\x00"+c.kinds {
			t.Errorf("%q: param %q key %q, want %q kinds %q", c.text, n.Param, n.Key, c.param, c.kinds)
		}
		var got []string
		for _, l := range n.Lits {
			got = append(got, l.Text)
		}
		if strings.Join(got, "|") != strings.Join(c.lits, "|") {
			t.Errorf("%q: literals %q, want %q", c.text, got, c.lits)
		}
	}
}

func TestNormalizeModes(t *testing.T) {
	if _, ok := Normalize(`SELECT a FROM t WHERE b = "x"`, Mode{ANSIQuotes: true}); ok {
		t.Error(`"x" under ANSI_QUOTES is an identifier: must not be eligible`)
	}
	n, ok := Normalize(`SELECT a FROM t WHERE b = 'x\n'`, Mode{NoBackslashEscapes: true})
	if !ok || n.Lits[0].Text != `x\n` {
		t.Errorf("NO_BACKSLASH_ESCAPES: %v %q, want the backslash kept", ok, n.Lits)
	}
}

// TestStringsDecodeAsTheParser: the lexer's decoding of random string and number literals equals
// the parser's (what a cached statement's arguments must be).
func TestStringsDecodeAsTheParser(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	p := parser.New()
	pieces := []string{"a", "é", "日本", "\\é", "Z", " ", "''", "\\'", "\\\\", "\\n", "\\0", "\\Z", "\\%", "\\_", "\\b", "\\t", "\\r", "\\x", "\\\"", "\"", "%", "_", "0"}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := r.Intn(6); j > 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		text := "SELECT a FROM t WHERE a = '" + b.String() + "'"
		checkAgainstParser(t, p, text)
	}
	for _, num := range []string{"0", "7", "007", "9223372036854775807", "1.5", "1.", ".25", "1e3", "2.5E-2", "0x1f", "X'00ff'"} {
		checkAgainstParser(t, p, "SELECT a FROM t WHERE a = "+num)
	}
}

func checkAgainstParser(t *testing.T, p *parser.Parser, text string) {
	t.Helper()
	n, ok := Normalize(text, Mode{})
	if !ok {
		t.Fatalf("%q not eligible", text)
	}
	stmts, _, err := p.ParseSQL(text)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	sel := stmts[0].(*ast.SelectStmt)
	v := sel.Where.(*ast.BinaryOperationExpr).R.(*driver.ValueExpr)
	var want string
	switch v.Datum.Kind() {
	case driver.KindString:
		want = v.Datum.GetString()
	case driver.KindBinaryLiteral:
		want = string(v.Datum.GetBinaryLiteral())
	default:
		return // numbers: their text is converted by the caller, compared in the facade's tests
	}
	if n.Lits[0].Text != want {
		t.Errorf("%q: lexer %q, parser %q", text, n.Lits[0].Text, want)
	}
}

// TestLiteralLimits: many-row INSERTs may hold many literals; other statements few.
func TestLiteralLimits(t *testing.T) {
	row := "(1, 'a')"
	rows := strings.Repeat(row+",", 99) + row
	if _, ok := Normalize("INSERT INTO t VALUES "+rows, Mode{}); !ok {
		t.Error("a 100-row INSERT is not eligible")
	}
	if _, ok := Normalize("SELECT a FROM t WHERE a IN ("+strings.Repeat("1,", 64)+"1)", Mode{}); ok {
		t.Error("a SELECT with 65 literals is eligible")
	}
}

// TestNormalizeRest: in a multi-statement text the first statement is normalised alone and the
// text after its semicolon is returned unread; a semicolon inside a literal or a comment, or
// followed only by blanks, ends nothing.
func TestNormalizeRest(t *testing.T) {
	for _, c := range []struct{ text, param, rest string }{
		{"INSERT INTO t (a, d) VALUES (1, x'e9ff'); commit;", "INSERT INTO t (a, d) VALUES (?, ?);", " commit;"},
		{"UPDATE t SET d = 'a;b' WHERE id = 2; commit;", "UPDATE t SET d = ? WHERE id = ?;", " commit;"},
		{"DELETE FROM t /* ; */ WHERE id = 3;SELECT 1; SELECT 2", "DELETE FROM t /* ; */ WHERE id = ?;", "SELECT 1; SELECT 2"},
		{"SELECT a FROM t WHERE id = 4 ;  \n", "SELECT a FROM t WHERE id = ? ;  \n", ""},
		{"SELECT a FROM t WHERE id = 4 -- x;\n", "SELECT a FROM t WHERE id = ? -- x;\n", ""},
	} {
		n, ok := Normalize(c.text, Mode{})
		if !ok {
			t.Errorf("%q: not eligible", c.text)
			continue
		}
		if n.Param != c.param || n.Rest != c.rest {
			t.Errorf("%q: param %q rest %q, want %q and %q", c.text, n.Param, n.Rest, c.param, c.rest)
		}
	}
	// The rest's literals are not the first statement's: its limit and key are its own.
	n, _ := Normalize("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2, 3)", Mode{})
	if len(n.Lits) != 1 || n.Key != "INSERT INTO t VALUES (?);\x00v" {
		t.Errorf("first statement: key %q literals %v", n.Key, n.Lits)
	}
}

// TestNormalizeValueKinds: two bulk INSERTs that differ only in which payloads are quoted strings
// and which hex literals (LinkStoreMysql sends either, by content) share a key; their literals
// keep their own kinds.
func TestNormalizeValueKinds(t *testing.T) {
	a, okA := Normalize("INSERT INTO l (id, data) VALUES (1, 'ab'), (2, x'e9ff'), (3, '') ON DUPLICATE KEY UPDATE v = VALUES(v); commit;", Mode{})
	b, okB := Normalize("INSERT INTO l (id, data) VALUES (4, x'00'), (5, 'cd'), (6, 7.5) ON DUPLICATE KEY UPDATE v = VALUES(v); commit;", Mode{})
	if !okA || !okB || a.Key != b.Key {
		t.Fatalf("keys differ: %q and %q", a.Key, b.Key)
	}
	var kinds []byte
	for _, l := range append(a.Lits, b.Lits...) {
		kinds = append(kinds, byte(l.Kind))
	}
	if string(kinds) != "isixis"+"ixisid" {
		t.Errorf("literal kinds %q", kinds)
	}
}

// A bulk INSERT's hex literals share chunks of one buffer (hexArena): every literal must keep its
// own bytes, across chunk boundaries, for a literal longer than a chunk, and when a later literal
// turns out not to be hex.
func TestNormalizeHexArena(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var want []string
	var sb strings.Builder
	sb.WriteString("INSERT INTO t (id, d) VALUES ")
	for i := range 3000 {
		n := r.Intn(200)
		if i == 1500 {
			n = hexArenaChunk + 10 // longer than a chunk
		}
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(r.Uint32())
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, x'%X')", i, p)
		want = append(want, string(p))
	}
	n, ok := Normalize(sb.String(), Mode{})
	if !ok {
		t.Fatal("not normalised")
	}
	if len(n.Lits) != 2*len(want) {
		t.Fatalf("%d literals, want %d", len(n.Lits), 2*len(want))
	}
	for i, w := range want {
		if got := n.Lits[2*i+1]; got.Kind != Hex || got.Text != w {
			t.Fatalf("row %d: literal %v %q, want Hex %q", i, got.Kind, got.Text, w)
		}
	}

	// A bad digit after good literals: not eligible (the parser reports the error).
	if _, ok := Normalize("INSERT INTO t VALUES (x'41'), (x'4G')", Mode{}); ok {
		t.Error("x'4G' normalised")
	}
}
