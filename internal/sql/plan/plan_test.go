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
// What the planner records of the names it resolves (Uses), in which order, and how Resolve plans
// again when DDL changes them are its contract with the facade, which takes the metadata locks.

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
func (f *fakeContext) IsVirtualDB(db string) bool                  { return strings.EqualFold(db, "information_schema") }
func (f *fakeContext) CurrentDB() string                           { return f.db }
func (f *fakeContext) SetCurrentDB(db string)                      { f.db = db }
func (f *fakeContext) Catalog() *catalog.Catalog                   { return f.cat }
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

// uses renders what a planning call resolved: db.name and what the name was (table, view, none).
func renderUses(us []TableUse) string {
	var out []string
	for _, u := range us {
		kind := "none"
		if u.Table != nil {
			kind = "table"
		} else if u.View != nil {
			kind = "view"
		}
		out = append(out, u.DB+"."+u.Name+"="+kind)
	}
	return strings.Join(out, " ")
}

func TestPlannerRecordsWhatItResolves(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		calls     string // what the planner asked its Context beyond names (virtual tables)
		uses      string
		err       string
	}{
		{"one table", "SELECT a FROM t1 WHERE a = 1", "", "d.t1=table", ""},
		{"a view: the view, then the tables of its body", "SELECT x.a FROM t1 JOIN v AS x ON t1.a = x.a",
			"", "d.t1=table d.v=view d.t2=table", ""},
		{"a subquery is resolved when WHERE is bound", "SELECT a FROM t1 WHERE b IN (SELECT b FROM t2)",
			"", "d.t1=table d.t2=table", ""},
		{"a virtual table is no table use", "SELECT SCHEMA_NAME FROM information_schema.schemata",
			"virtual information_schema.schemata", "", ""},
		{"a missing table is recorded: DDL may create it before the caller's lock", "SELECT a FROM t1, nosuch",
			"virtual d.nosuch", "d.t1=table d.nosuch=none", "doesn't exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			uses := &Uses{}
			stmts, err := parse(c.sql)
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&Planner{Ctx: f, Uses: uses}).PlanResultSet(stmts[0].(ast.ResultSetNode), nil)
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			if got := strings.Join(f.calls, "; "); got != c.calls {
				t.Errorf("calls: got %q, want %q", got, c.calls)
			}
			if got := renderUses(uses.Tables); got != c.uses {
				t.Errorf("uses: got %q, want %q", got, c.uses)
			}
			if f.db != "d" {
				t.Errorf("default database left at %q after planning", f.db)
			}
		})
	}
}

func TestPlanningANamedTableNeedsUses(t *testing.T) {
	stmts, _ := parse("SELECT a FROM t1")
	_, err := (&Planner{Ctx: newFake()}).PlanResultSet(stmts[0].(ast.ResultSetNode), nil)
	if err == nil || !strings.Contains(err.Error(), "without a Uses record") {
		t.Fatalf("planning without Uses: %v, want the internal error", err)
	}
}

// TestResolvePlansAgainAfterDDL: DDL that commits between planning and the caller's locks makes
// Resolve plan again against the new catalog; DDL elsewhere does not; endless DDL ends in 1412.
func TestResolvePlansAgainAfterDDL(t *testing.T) {
	for _, c := range []struct {
		name   string
		sql    string
		ddl    func(cat *catalog.Catalog) // run by the lock (as if a DDL committed before it)
		times  int                        // how many locks see the DDL happen
		builds int
		err    string
	}{
		{"no DDL", "SELECT a FROM t1", nil, 0, 1, ""},
		{"DDL on another table", "SELECT a FROM t1", func(c *catalog.Catalog) { c.PutTable(table(9, "t9")) }, 1, 1, ""},
		{"the table replaced", "SELECT a FROM t1", func(c *catalog.Catalog) { c.PutTable(table(11, "t1")) }, 1, 2, ""},
		{"the missing table created", "SELECT a FROM t3", func(c *catalog.Catalog) { c.PutTable(table(3, "t3")) }, 1, 2, ""},
		{"a view's body table replaced", "SELECT a FROM v", func(c *catalog.Catalog) { c.PutTable(table(12, "t2")) }, 1, 2, ""},
		{"DDL that never stops", "SELECT a FROM t1", func(c *catalog.Catalog) { c.PutTable(table(13, "t1")) }, 100, MaxReplans + 1, "Table definition has changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			stmts, _ := parse(c.sql)
			uses, builds, ddls := &Uses{}, 0, 0
			lock := func([]TableUse) error {
				if c.ddl != nil && ddls < c.times {
					ddls++
					next := f.cat.Copy()
					c.ddl(next)
					f.cat = next
				}
				return nil
			}
			err := Resolve(f, uses, lock, func() error {
				builds++
				_, err := (&Planner{Ctx: f, Uses: uses}).PlanResultSet(stmts[0].(ast.ResultSetNode), nil)
				return err
			})
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			if builds != c.builds {
				t.Errorf("planned %d times, want %d", builds, c.builds)
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
		pl := planOf(t, &Planner{Ctx: newFake(), Uses: &Uses{}}, c.sql)
		acc := pl.Levels[0].Acc
		if acc.Kind != c.kind || acc.Idx.Name != c.idx {
			t.Errorf("%s: access %v on %s, want %v on %s", c.sql, acc.Kind, acc.Idx.Name, c.kind, c.idx)
		}
	}
}

// TestPlainReadDecodesAndResidual pins two per-row savings of plain reads: the access decodes only
// the columns the query reads (Access.ColPos maps the others to -1; nil when it reads all), and a
// BETWEEN on an integer column whose bounds are the range scan's own is left out of the level's
// Residual filter (Level.Implied), which the executor runs instead of Filter when the bounds turn
// out exact. Locking reads (UPDATE/DELETE read through them) keep whole rows and the whole filter.
func TestPlainReadDecodesAndResidual(t *testing.T) {
	for _, c := range []struct {
		sql      string
		colPos   string // Access.ColPos by column id (t1: a is id 1, b id 2), "" for nil
		implied  bool
		residual bool // Residual is not nil
	}{
		{"SELECT a FROM t1 WHERE a BETWEEN 1 AND 5", "[-1 0 -1]", true, false},
		{"SELECT b FROM t1 WHERE a BETWEEN 1 AND 5 AND b + 0 > 2", "", true, true},
		{"SELECT COUNT(*) FROM t1 WHERE a BETWEEN 1 AND 5", "[-1 0 -1]", true, false},
		{"SELECT COUNT(*) FROM t1", "[-1 -1 -1]", false, false},
		{"SELECT b FROM t1 WHERE a = 1", "", false, false},
		{"SELECT a FROM t1 WHERE b BETWEEN 1 AND 5", "", true, false},
		{"SELECT * FROM t1 WHERE a BETWEEN 1 AND 5 FOR UPDATE", "", false, false},
		{"SELECT a FROM t1 WHERE a NOT BETWEEN 1 AND 5", "[-1 0 -1]", false, false},
		{"SELECT a FROM t1 WHERE a >= 1 AND a <= 5", "[-1 0 -1]", false, false},
		{"SELECT a FROM t1 WHERE a BETWEEN 1 AND b", "", false, false},
		{"SELECT COUNT(a) FROM t1 WHERE a BETWEEN 1 AND 3 OR a BETWEEN 7 AND 9", "[-1 0 -1]", true, false},
		{"SELECT a FROM t1 WHERE a = 1 OR a < 0 OR a >= 9 OR 5 > a OR a IN (3, 4)", "[-1 0 -1]", true, false},
		{"SELECT b FROM t1 WHERE (a BETWEEN 1 AND 3 OR a = 7) AND b > 2", "", true, true},
		{"SELECT a FROM t1 WHERE a BETWEEN 1 AND 3 OR a <> 7", "[-1 0 -1]", false, false},
		{"SELECT a FROM t1 WHERE a BETWEEN 1 AND 3 OR a NOT BETWEEN 7 AND 9", "[-1 0 -1]", false, false},
		{"SELECT a FROM t1 WHERE a BETWEEN 1 AND 3 OR a BETWEEN 7 AND 9 FOR UPDATE", "", false, false},
		{"SELECT t1.a FROM t1 LEFT JOIN t2 ON t2.a BETWEEN 1 AND 5", "[-1 0 -1]", false, false},
		{"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.a = t1.b)", "", false, false},
	} {
		pl := planOf(t, &Planner{Ctx: newFake(), Uses: &Uses{}}, c.sql)
		lv := pl.Levels[0]
		got := ""
		if lv.Acc.ColPos != nil {
			got = fmt.Sprint(lv.Acc.ColPos)
		}
		if got != c.colPos || lv.Implied != c.implied || (lv.Residual != nil) != c.residual {
			t.Errorf("%s: ColPos %q, Implied %v, Residual %v; want %q, %v, residual %v",
				c.sql, got, lv.Implied, lv.Residual, c.colPos, c.implied, c.residual)
		}
	}
}
