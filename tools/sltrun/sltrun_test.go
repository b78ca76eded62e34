package main

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

const sample1 = `# a comment at the top
hash-threshold 8

statement ok
CREATE TABLE t1(a INTEGER, b INTEGER)

statement ok
INSERT INTO t1 VALUES(1,2)

statement error
INSERT INTO nosuch VALUES(1)

onlyif sqlite # empty RHS
query I nosort
SELECT 1 IN ()
----
0

skipif mysql
skipif postgresql
query II rowsort label-7
SELECT a,
# a comment inside a record vanishes
       b FROM t1
----
1
2

query T valuesort
SELECT 'x'
----
30 values hashing to 3c13dee48d9356ae19af2515e05e6b54

query R
SELECT 1.5
----

onlyif mysql
halt

statement ok
SELECT 'after halt'
`

func TestParse(t *testing.T) {
	recs, err := ParseBytes([]byte(sample1))
	if err != nil {
		t.Fatal(err)
	}
	type brief struct {
		Line  int
		Kind  Kind
		Conds []Condition
		Err   bool
		SQL   string
		Types string
		Sort  string
		Label string
		Exp   []string
		Has   bool
	}
	var got []brief
	for _, r := range recs {
		got = append(got, brief{r.Line, r.Kind, r.Conditions, r.ExpectError, r.SQL, r.Types, r.SortMode, r.Label, r.Expected, r.HasResult})
	}
	want := []brief{
		{Line: 2, Kind: KindHashThreshold},
		{Line: 4, Kind: KindStatement, SQL: "CREATE TABLE t1(a INTEGER, b INTEGER)"},
		{Line: 7, Kind: KindStatement, SQL: "INSERT INTO t1 VALUES(1,2)"},
		{Line: 10, Kind: KindStatement, Err: true, SQL: "INSERT INTO nosuch VALUES(1)"},
		{Line: 14, Kind: KindQuery, Conds: []Condition{{OnlyIf: true, Engine: "sqlite"}}, SQL: "SELECT 1 IN ()", Types: "I", Sort: "nosort", Exp: []string{"0"}, Has: true},
		{Line: 21, Kind: KindQuery, Conds: []Condition{{Engine: "mysql"}, {Engine: "postgresql"}}, SQL: "SELECT a,\n       b FROM t1", Types: "II", Sort: "rowsort", Label: "label-7", Exp: []string{"1", "2"}, Has: true},
		{Line: 29, Kind: KindQuery, SQL: "SELECT 'x'", Types: "T", Sort: "valuesort", Exp: []string{"30 values hashing to 3c13dee48d9356ae19af2515e05e6b54"}, Has: true},
		{Line: 34, Kind: KindQuery, SQL: "SELECT 1.5", Types: "R", Sort: "nosort", Has: true},
		{Line: 39, Kind: KindHalt, Conds: []Condition{{OnlyIf: true, Engine: "mysql"}}},
		{Line: 41, Kind: KindStatement, SQL: "SELECT 'after halt'"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if recs[0].Threshold != 8 {
		t.Errorf("threshold = %d", recs[0].Threshold)
	}
	if !recs[4].Skipped("mysql") || recs[4].Skipped("sqlite") {
		t.Error("onlyif sqlite: must skip for mysql only")
	}
	if !recs[5].Skipped("MySQL") || recs[5].Skipped("sqlite") {
		t.Error("skipif mysql: must skip for mysql (case-insensitive) only")
	}
	if recs[8].Skipped("mysql") || !recs[8].Skipped("sqlite") {
		t.Error("onlyif mysql halt: must halt for mysql only")
	}
	if n, h, ok := recs[6].ExpectedHash(); !ok || n != 30 || h != "3c13dee48d9356ae19af2515e05e6b54" {
		t.Errorf("ExpectedHash = %d %q %v", n, h, ok)
	}
	if _, _, ok := recs[5].ExpectedHash(); ok {
		t.Error("values taken for a hash")
	}
}

func TestParseEdgeCases(t *testing.T) {
	in := "statement ok\r\nSELECT 1\r\n   \t\nquery I\nSELECT 2\n\nstatement maybe\nSELECT 3\n\nquery X nosort\nSELECT 4\n----\n4\n\nquery I bogussort\nSELECT 5\n\nfrobnicate now\n\nquery IT rowsort\nSELECT 1, 'a'\n----\n1\na"
	recs, err := ParseBytes([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 {
		t.Fatalf("got %d records: %+v", len(recs), recs)
	}
	if recs[0].SQL != "SELECT 1" || recs[0].Kind != KindStatement {
		t.Errorf("CRLF and blank-with-spaces: %+v", recs[0])
	}
	if recs[1].Kind != KindQuery || recs[1].HasResult || recs[1].SQL != "SELECT 2" || recs[1].SortMode != "nosort" {
		t.Errorf("query without ----: %+v", recs[1])
	}
	for i := 2; i <= 5; i++ {
		if recs[i].Kind != KindInvalid || recs[i].Err == "" {
			t.Errorf("record %d should be invalid: %+v", i, recs[i])
		}
	}
	if !reflect.DeepEqual(recs[6].Expected, []string{"1", "a"}) || recs[6].Line != 20 {
		t.Errorf("last record without trailing newline: %+v", recs[6])
	}
}

func TestRenderInt(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, "NULL"},
		{int64(-42), "-42"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{"3.5000", "3"},   // MySQL's / returns DECIMAL: 7/2 = 3.5000
		{"-3.5000", "-3"}, // toward zero, not floor
		{"-0.5000", "0"},  // no "-0"
		{"0.0000", "0"},
		{"007", "7"},
		{"12345678901234567890123.99", "12345678901234567890123"},
		{float64(2.9), "2"},
		{float64(-2.9), "-2"},
		{float64(1e20), "100000000000000000000"},
		{float32(7.5), "7"},
		{"1.5e3", "1500"},
		{"abc", "0"},    // not a number: 0, as SQLite and ODBC
		{"12abc", "12"}, // numeric prefix
		{"", "0"},
		{" 42", "42"},
		{".5", "0"},
		{"-.5", "0"},
		{"+8", "8"},
	}
	for _, c := range cases {
		if got := Render(c.in, 'I'); got != c.want {
			t.Errorf("Render(%#v, I) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRenderReal(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, "NULL"},
		{int64(3), "3.000"},
		{"3.5000", "3.500"},
		{float64(2.0 / 3.0), "0.667"},
		{float64(-1.0005), "-1.000"}, // binary double below -1.0005
		{"-12.3456", "-12.346"},
		{"abc", "0.000"},
		{"1e3", "1000.000"},
		{uint64(10), "10.000"},
	}
	for _, c := range cases {
		if got := Render(c.in, 'R'); got != c.want {
			t.Errorf("Render(%#v, R) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRenderText(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, "NULL"},
		{"", "(empty)"},
		{[]byte{}, "(empty)"},
		{"hello world", "hello world"},
		{"tab\there", "tab@here"},
		{"new\nline", "new@line"},
		{"caf\xc3\xa9", "caf@@"}, // bytes above '~' each become '@'
		{"~ok!", "~ok!"},
		{"\x7f", "@"},
		{int64(-5), "-5"},
		{float64(1.5), "1.5"},
		{float64(1e20), "1e20"},
		{float64(1.5e-7), "1.5e-7"},
	}
	for _, c := range cases {
		if got := Render(c.in, 'T'); got != c.want {
			t.Errorf("Render(%#v, T) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSortValues(t *testing.T) {
	vals := []string{"b", "2", "a", "9", "a", "10"}
	SortValues(vals, 2, "rowsort")
	if want := []string{"a", "10", "a", "9", "b", "2"}; !reflect.DeepEqual(vals, want) {
		t.Errorf("rowsort = %v, want %v (strcmp order, column by column)", vals, want)
	}
	vals = []string{"b", "2", "a", "9", "a", "10"}
	SortValues(vals, 2, "valuesort")
	if want := []string{"10", "2", "9", "a", "a", "b"}; !reflect.DeepEqual(vals, want) {
		t.Errorf("valuesort = %v, want %v", vals, want)
	}
	vals = []string{"b", "a"}
	SortValues(vals, 1, "nosort")
	if want := []string{"b", "a"}; !reflect.DeepEqual(vals, want) {
		t.Errorf("nosort = %v", vals)
	}
}

func TestHash(t *testing.T) {
	// md5("") for no values; md5("1\n2\n") for 1, 2.
	if got := HashValues(nil); got != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("empty hash = %s", got)
	}
	if got := HashLine([]string{"1", "2"}); got != "2 values hashing to 6ddb4095eb719e2a9f0a3f95677d24e0" {
		t.Errorf("HashLine = %s", got)
	}
}

// TestCompare runs whole records through Compare, including a hash taken
// from the corpus (select1.test: SELECT a+b*2+c*3+d*4+e*5, (a+b+c+d+e)/5
// ... is too big to inline, so use a small constructed one).
func TestCompare(t *testing.T) {
	rec := func(types, sort string, exp ...string) *Record {
		return &Record{Kind: KindQuery, Types: types, SortMode: sort, Expected: exp, HasResult: true}
	}
	vals := func(v ...string) []string { return v }
	if r := Compare(rec("II", "rowsort", "1", "2", "3", "4"), vals("3", "4", "1", "2")); r != "" {
		t.Errorf("rowsort match: %s", r)
	}
	if r := Compare(rec("II", "nosort", "1", "2", "3", "4"), vals("3", "4", "1", "2")); r == "" {
		t.Error("nosort must keep order")
	}
	if r := Compare(rec("I", "nosort", "1", "2"), vals("1")); !strings.Contains(r, "expected 2 values, got 1") {
		t.Errorf("short result: %q", r)
	}
	if r := Compare(rec("I", "nosort"), vals()); r != "" {
		t.Errorf("empty match: %s", r)
	}
	if r := Compare(rec("I", "nosort"), vals("1")); r == "" {
		t.Error("extra value must fail")
	}
	if r := Compare(rec("I", "valuesort", "2 values hashing to 6ddb4095eb719e2a9f0a3f95677d24e0"), vals("2", "1")); r != "" {
		t.Errorf("hash match: %s", r)
	}
	if r := Compare(rec("I", "nosort", "2 values hashing to 6ddb4095eb719e2a9f0a3f95677d24e0"), vals("2", "1")); !strings.Contains(r, "wrong result hash") {
		t.Errorf("hash mismatch: %q", r)
	}
}

func TestFolderOf(t *testing.T) {
	cases := map[string]string{
		"select1.test":                       "select",
		"evidence/in1.test":                  "evidence",
		"index/between/10/slt_good_1.test":   "index/between",
		"index/delete/10000/slt_good_0.test": "index/delete",
		"random/groupby/slt_good_13.test":    "random/groupby",
	}
	for in, want := range cases {
		if got := folderOf(in); got != want {
			t.Errorf("folderOf(%q) = %q, want %q", in, got, want)
		}
	}
}
