package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// The planner runs without the facade: a fake Context over a hand-built catalog is all it needs.
// What the planner asks of its Context (metadata locks, table uses, virtual tables), in which
// order, and what it reports for a cached plan (Planner.Uses) are its contract with the facade.

// fakeContext records the planner's calls to its Context.
type fakeContext struct {
	cat   *catalog.Catalog
	db    string
	calls []string
}

func (f *fakeContext) VirtualTable(db, name string) (*exec.Select, bool) {
	f.calls = append(f.calls, "virtual "+db+"."+name)
	if !strings.EqualFold(db, "information_schema") || !strings.EqualFold(name, "schemata") {
		return nil, false
	}
	pl := &exec.Select{Static: func(*expr.Env) ([][]types.Value, error) { return nil, nil }}
	pl.Cols = append(pl.Cols, ResultColumn("SCHEMA_NAME", nil, types.ColType{Tp: mysql.TypeVarString}))
	pl.NVisible = 1
	return pl, true
}
func (f *fakeContext) IsVirtualDB(db string) bool { return strings.EqualFold(db, "information_schema") }
func (f *fakeContext) CurrentDB() string          { return f.db }
func (f *fakeContext) SetCurrentDB(db string)     { f.db = db }
func (f *fakeContext) Catalog() *catalog.Catalog  { return f.cat }
func (f *fakeContext) LockDB(db string) error {
	f.calls = append(f.calls, "lockdb "+db)
	return nil
}
func (f *fakeContext) UseTable(db, name string, write bool) error {
	f.calls = append(f.calls, fmt.Sprintf("use %s.%s write=%v", db, name, write))
	return nil
}
func (f *fakeContext) FullGroupBy() bool                           { return true }
func (f *fakeContext) ConnCollation() *types.Collation             { return nil }
func (f *fakeContext) EnterExpr() error                            { return nil }
func (f *fakeContext) LeaveExpr()                                  {}
func (f *fakeContext) LookupUserVar(string) (types.Value, bool)    { return types.Null, false }
func (f *fakeContext) ParseSQL(sql string) ([]ast.StmtNode, error) { return parse(sql) }

func parse(sql string) ([]ast.StmtNode, error) {
	stmts, _, err := parser.New().ParseSQL(sql)
	return stmts, err
}

var intT = types.ColType{Tp: mysql.TypeLonglong}

// table builds d.name (a INT PRIMARY KEY, b INT, KEY kb (b)).
func table(id uint64, name string) *catalog.Table {
	t := &catalog.Table{ID: id, DB: "d", Name: name, Columns: []*catalog.Column{
		{ID: 1, Name: "a", Type: intT, NotNull: true}, {ID: 2, Name: "b", Type: intT},
	}, Indexes: []*catalog.Index{
		{ID: 1, Name: "PRIMARY", Primary: true, Unique: true, Columns: []catalog.IndexColumn{{Col: 1}}},
		{ID: 2, Name: "kb", Columns: []catalog.IndexColumn{{Col: 2}}},
	}}
	t.Init()
	return t
}

func newFake() *fakeContext {
	cat := catalog.New()
	cat.PutDB(&catalog.Database{Name: "d"})
	cat.PutTable(table(1, "t1"))
	cat.PutTable(table(2, "t2"))
	cat.PutView(&catalog.View{DB: "d", Name: "v", Select: "SELECT a, b FROM t2"})
	return &fakeContext{cat: cat, db: "d"}
}

func planOf(t *testing.T, p *Planner, sql string) *exec.Select {
	t.Helper()
	stmts, err := parse(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	pl, err := p.PlanResultSet(stmts[0].(ast.ResultSetNode), nil)
	if err != nil {
		t.Fatalf("plan %q: %v", sql, err)
	}
	return pl
}

func TestPlannerContextCalls(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		calls     []string // what the planner asked its Context, in order
		uses      []TableUse
	}{
		{"one table: its database is locked before the table is used", "SELECT a FROM t1 WHERE a = 1",
			[]string{"lockdb d", "use d.t1 write=false"}, []TableUse{{"d", "t1"}}},
		{"a view: the view is used, then the tables of its body", "SELECT x.a FROM t1 JOIN v AS x ON t1.a = x.a",
			[]string{"lockdb d", "use d.t1 write=false", "lockdb d", "use d.v write=false", "lockdb d", "use d.t2 write=false"},
			[]TableUse{{"d", "t1"}, {"d", "v"}, {"d", "t2"}}},
		{"a subquery is resolved when WHERE is bound", "SELECT a FROM t1 WHERE b IN (SELECT b FROM t2)",
			[]string{"lockdb d", "use d.t1 write=false", "lockdb d", "use d.t2 write=false"},
			[]TableUse{{"d", "t1"}, {"d", "t2"}}},
		{"a virtual table takes no metadata lock and is no table use", "SELECT SCHEMA_NAME FROM information_schema.schemata",
			[]string{"virtual information_schema.schemata"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			var uses []TableUse
			planOf(t, &Planner{Ctx: f, Uses: &uses}, c.sql)
			if got, want := strings.Join(f.calls, "; "), strings.Join(c.calls, "; "); got != want {
				t.Errorf("calls:\n got %s\nwant %s", got, want)
			}
			if fmt.Sprint(uses) != fmt.Sprint(c.uses) {
				t.Errorf("uses: got %v, want %v", uses, c.uses)
			}
			if f.db != "d" {
				t.Errorf("default database left at %q after planning", f.db)
			}
		})
	}
}

// TestPlannerWithoutFacade checks a few access-path rules on plans built here, without a session.
func TestPlannerWithoutFacade(t *testing.T) {
	for _, c := range []struct {
		sql  string
		kind exec.AccessKind
		idx  string
	}{
		{"SELECT b FROM t1 WHERE a = 3", exec.AccPoint, "PRIMARY"},
		{"SELECT a FROM t1 WHERE a IN (1, 2)", exec.AccBatch, "PRIMARY"},
		{"SELECT a FROM t1 WHERE b = 2", exec.AccRange, "kb"},
		{"SELECT a FROM t1 WHERE b + 0 = 2", exec.AccFull, "PRIMARY"},
		{"SELECT a FROM t1 IGNORE INDEX (kb) WHERE b = 2", exec.AccFull, "PRIMARY"},
	} {
		pl := planOf(t, &Planner{Ctx: newFake()}, c.sql)
		acc := pl.Levels[0].Acc
		if acc.Kind != c.kind || acc.Idx.Name != c.idx {
			t.Errorf("%s: access %v on %s, want %v on %s", c.sql, acc.Kind, acc.Idx.Name, c.kind, c.idx)
		}
	}
}
