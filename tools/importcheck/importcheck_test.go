package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mod = "github.com/kiln-db/kiln"

// TestRules runs the real rule table on small graphs: one import each, allowed or not.
func TestRules(t *testing.T) {
	cases := []struct {
		from, to string
		test     bool // the import is made by test code
		ok       bool
	}{
		// Down the stack.
		{"cmd/kiln", "internal/server", false, true},
		{"cmd/kiln", "internal/mysql", false, true},
		{"internal/server", "internal/sql", false, true},
		{"internal/server", "internal/proto", false, true},
		{"internal/sql", "internal/txn", false, true},
		{"internal/txn", "internal/repl", false, true},
		{"internal/repl", "internal/log", false, true},
		{"internal/repl", "internal/repl/rafthttp", false, true},
		{"internal/repl/rafthttp", "internal/tlsconf", false, true},
		{"internal/memory", "internal/sqlerr", false, true},
		{"internal/mysql", "internal/proto", false, true},
		{"internal/mysql", "internal/sql/types", false, true},
		{"internal/proto", "internal/sql/types", false, true},
		// The coming sub-packages of internal/sql, in issue 14's order.
		{"internal/sql", "internal/sql/ddl", false, true},
		{"internal/sql/ddl", "internal/sql/plan", false, true},
		{"internal/sql/infoschema", "internal/sql/catalog", false, true},
		{"internal/sql/plan", "internal/sql/exec", false, true},
		{"internal/sql/exec", "internal/sql/expr", false, true},
		{"internal/sql/exec", "internal/txn", false, true},
		{"internal/sql/expr", "internal/sql/sysvar", false, true},
		{"internal/sql/catalog", "internal/sql/rowenc", false, true},
		{"internal/sql/sysvar", "internal/sql/types", false, true},
		{"internal/sql/builtins", "internal/sql/types", false, true},
		{"internal/sql/rowenc", "internal/sql/types", false, true},
		{"internal/sql/plan", "internal/sql/plan/join", false, true}, // its own sub-package
		// Up, or sideways.
		{"internal/server", "internal/mysql", false, false},
		{"internal/mysql", "internal/server", false, false},
		{"internal/mysql", "internal/sql", false, false},
		{"internal/proto", "internal/sql", false, false},
		{"internal/txn", "internal/sql", false, false},
		{"internal/repl", "internal/txn", false, false},
		{"internal/log", "internal/engine", false, false},
		{"internal/engine", "internal/log", false, false},
		{"internal/engine", "internal/sql/types", false, false},
		{"internal/sqlerr", "internal/sql/types", false, false},
		{"internal/sql/types", "internal/sql/builtins", false, false},
		{"internal/sql/rowenc", "internal/sql/builtins", false, false},
		{"internal/sql/rowenc", "internal/engine", false, false},
		{"internal/sql/catalog", "internal/sql/sysvar", false, false},
		{"internal/sql/sysvar", "internal/sql/expr", false, false},
		{"internal/sql/expr", "internal/sql/exec", false, false},
		{"internal/sql/exec", "internal/sql/plan", false, false},
		{"internal/sql/plan", "internal/sql/dml", false, false},
		{"internal/sql/ddl", "internal/sql/dml", false, false},
		{"internal/sql/ddl", "internal/sql", false, false},
		{"internal/sql/plan", "internal/sql", false, false},
		{"internal/workload/linkbench", "internal/sql", false, false},
		// Test helpers: test code only.
		{"internal/sql", "internal/repl/repltest", false, false},
		{"internal/sql", "internal/repl/repltest", true, true},
		{"internal/txn", "internal/repl/repltest", true, true},
		{"test/crash", "internal/repl/repltest", false, true},
		// Test code is held to the same order otherwise.
		{"internal/repl", "internal/txn", true, false},
	}
	for _, c := range cases {
		p := pkg{ImportPath: mod + "/" + c.from}
		if c.test {
			p.TestImports = []string{mod + "/" + c.to}
		} else {
			p.Imports = []string{mod + "/" + c.to}
		}
		vs := check(rules, externals, mod, []pkg{p}, true)
		if got := len(vs) == 0; got != c.ok {
			t.Errorf("%s -> %s (test %v): allowed %v, want %v; %v", c.from, c.to, c.test, got, c.ok, vs)
		}
	}
}

// TestExternals: the engine's libraries stay in internal/engine (pebble's vfs is free to use); the
// parser's AST stays above sql/exec.
func TestExternals(t *testing.T) {
	for _, c := range []struct {
		from, imp string
		ok        bool
	}{
		{"internal/engine", "github.com/cockroachdb/pebble/v2", true},
		{"internal/engine", "github.com/cockroachdb/pebble/v2/sstable", true},
		{"internal/txn", "github.com/cockroachdb/pebble/v2", false},
		{"internal/sql", "github.com/cockroachdb/pebble/v2/sstable", false},
		{"internal/repl", "go.etcd.io/bbolt", false},
		{"internal/log", "github.com/cockroachdb/pebble/v2/vfs", true},
		{"internal/sql", "github.com/cockroachdb/pebble/v2vfs", true}, // another path, not below the prefix
		{"cmd/kiln", "github.com/cockroachdb/pebble/v2", true},
		{"internal/sql", "github.com/pingcap/tidb/pkg/parser/ast", true},
		{"internal/sql/plan", "github.com/pingcap/tidb/pkg/parser/ast", true},
		{"internal/sql/exec", "github.com/pingcap/tidb/pkg/parser/ast", false}, // plans hold no AST
		{"internal/sql/expr", "github.com/pingcap/tidb/pkg/parser/ast", false},
		{"internal/sql/exec", "github.com/pingcap/tidb/pkg/parser/opcode", true},
	} {
		vs := check(rules, externals, mod, []pkg{{ImportPath: mod + "/" + c.from, Imports: []string{c.imp}}}, false)
		if got := len(vs) == 0; got != c.ok {
			t.Errorf("%s -> %s: allowed %v, want %v; %v", c.from, c.imp, got, c.ok, vs)
		}
	}
}

// TestUnplacedAndOutside: a package the table does not place fails, as does an import of one;
// packages outside the module are not checked.
func TestUnplacedAndOutside(t *testing.T) {
	pkgs := []pkg{
		{ImportPath: mod + "/internal/newthing", Imports: []string{mod + "/internal/sqlerr"}},
		{ImportPath: mod + "/internal/sql", Imports: []string{mod + "/internal/sql/other", "fmt", "github.com/pingcap/tidb/pkg/parser"}},
		{ImportPath: "example.com/elsewhere", Imports: []string{mod + "/internal/sql"}},
	}
	vs := check(rules, externals, mod, pkgs, false)
	if len(vs) != 2 || vs[0].From != "internal/newthing" || vs[0].To != "" || vs[1].To != "internal/sql/other" {
		t.Fatalf("got %v", vs)
	}
}

// TestTestsExemptByDefault: without -tests, what _test.go files import is not checked.
func TestTestsExemptByDefault(t *testing.T) {
	p := pkg{ImportPath: mod + "/internal/repl", TestImports: []string{mod + "/internal/txn"}, XTestImports: []string{mod + "/internal/sql"}}
	if vs := check(rules, externals, mod, []pkg{p}, false); len(vs) != 0 {
		t.Fatalf("tests exempt: got %v", vs)
	}
	if vs := check(rules, externals, mod, []pkg{p}, true); len(vs) != 2 {
		t.Fatalf("with tests: got %v", vs)
	}
}

// TestRuleTableConsistent: every layer named in MayImport exists and sits below the layer that
// names it (so the table itself is an order, and cannot allow a cycle of layers).
func TestRuleTableConsistent(t *testing.T) {
	index := map[string]int{}
	for i, l := range rules {
		if _, dup := index[l.Name]; dup {
			t.Errorf("layer %s twice", l.Name)
		}
		index[l.Name] = i
	}
	for i, l := range rules {
		for _, m := range l.MayImport {
			if m == "*" {
				continue
			}
			j, ok := index[m]
			if !ok {
				t.Errorf("layer %s may import unknown layer %s", l.Name, m)
			} else if j <= i {
				t.Errorf("layer %s may import %s, which is not below it", l.Name, m)
			}
		}
	}
}

// TestModule checks the repository itself: no non-test import breaks the order.
func TestModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list on the whole module")
	}
	module, pkgs, err := listPackages(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if module != mod {
		t.Fatalf("module %q", module)
	}
	if len(pkgs) < 10 {
		t.Fatalf("only %d packages listed", len(pkgs))
	}
	for _, v := range check(rules, externals, module, pkgs, false) {
		t.Error(v)
	}
}

// TestDocsShowTable: docs/architecture.md holds the rule table exactly as -table prints it.
func TestDocsShowTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), markdown(rules, externals)) {
		t.Fatalf("docs/architecture.md does not hold the current rule table; paste the output of `go run ./tools/importcheck -table`:\n%s", markdown(rules, externals))
	}
}
