package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// vcol declares a column of a virtual result (SHOW, information_schema).
type vcol = infoschema.Col

// stringCol and intCol declare a string (VARCHAR) or integer (BIGINT) column of a virtual result.
func stringCol(name string) vcol { return infoschema.StringCol(name) }
func intCol(name string) vcol    { return infoschema.IntCol(name) }

// staticPlan is the plan of a virtual result: the rows function runs when the statement runs.
func staticPlan(cols []vcol, rows func(env *expr.Env) ([][]types.Value, error)) *exec.Select {
	pl := &exec.Select{Static: rows}
	for i, c := range cols {
		pl.Cols = append(pl.Cols, plan.ResultColumn(c.Name, nil, c.T))
		pl.Proj = append(pl.Proj, &expr.Col{Typed: expr.Typed{T: c.T}, Idx: i, Name: c.Name})
	}
	pl.NVisible = len(cols)
	return pl
}

// tablePlan is the plan of an infoschema table: its rows, computed when the statement runs.
func tablePlan(t infoschema.Table) *exec.Select { return staticPlan(t.Cols, t.Rows) }

// isVirtualDB reports the schemas Kiln serves itself (infoschema.IsVirtualDB).
func isVirtualDB(name string) bool { return infoschema.IsVirtualDB(name) }

// stringVal and intVal build the values of virtual rows.
func stringVal(s string) types.Value { return types.NewString(s) }
func intVal(i int64) types.Value     { return types.NewInt(i) }

// virtualTable returns the plan of an information_schema, mysql grant or cluster table, listing
// only what the session may see (infoschema.VirtualTable).
func (s *Session) virtualTable(db, name string) (*exec.Select, bool) {
	t, ok := infoschema.VirtualTable(s, db, name)
	if !ok {
		return nil, false
	}
	return tablePlan(t), true
}

// show runs SHOW statements: infoschema builds the result (Show), except SHOW GRANTS and SHOW
// CREATE USER, which read accounts as the account statements do (acl_stmt.go); the facade adds
// SHOW ... WHERE and streams it.
func (s *Session) show(env *expr.Env, x *ast.ShowStmt, w proto.ResultWriter, more bool) error {
	var pl *exec.Select
	var err error
	switch x.Tp {
	case ast.ShowCreateUser:
		pl, err = s.showCreateUser(x)
	case ast.ShowGrants:
		pl, err = s.showGrants(x)
	default:
		var t infoschema.Table
		t, err = infoschema.Show(s, env, x)
		pl = tablePlan(t)
	}
	if err != nil {
		return err
	}
	if x.Where != nil {
		if err := s.showWhere(pl, x.Where); err != nil {
			return err
		}
	}
	return s.streamPlan(env, pl, w, more)
}

// explain shows the chosen access path of each table (tests of the planner use it).
func (s *Session) explain(env *expr.Env, x *ast.ExplainStmt, w proto.ResultWriter, more bool) error {
	if sh, ok := x.Stmt.(*ast.ShowStmt); ok {
		return s.show(env, sh, w, more)
	}
	var pl *exec.Select
	var err error
	switch st := x.Stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		pl, err = s.planQuery(st.(ast.ResultSetNode))
	case *ast.UpdateStmt:
		var tbl *catalog.Table
		var alias string
		if tbl, alias, err = dml.TableRef(s.dmlSess(), st.TableRefs.TableRefs); err == nil {
			pl, err = dml.TargetPlanWith(s.dmlSess(), st.With, tbl, alias, st.Where, st.Order, st.Limit)
		}
	case *ast.DeleteStmt:
		var tbl *catalog.Table
		var alias string
		if tbl, alias, err = dml.TableRef(s.dmlSess(), st.TableRefs.TableRefs); err == nil {
			pl, err = dml.TargetPlanWith(s.dmlSess(), st.With, tbl, alias, st.Where, st.Order, st.Limit)
		}
	default:
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "EXPLAIN of this statement is not supported")
	}
	if err != nil {
		return err
	}
	rows := explainRows(pl, 1)
	out := staticPlan([]vcol{intCol("id"), stringCol("table"), stringCol("access"), stringCol("extra")}, func(*expr.Env) ([][]types.Value, error) { return rows, nil })
	return s.streamPlan(env, out, w, more)
}

func explainRows(pl *exec.Select, id int64) [][]types.Value {
	var rows [][]types.Value
	if pl.Union != nil {
		for i, p := range pl.Union.Parts {
			rows = append(rows, explainRows(p, id+int64(i))...)
		}
		return rows
	}
	for i, lv := range pl.Levels {
		var extra []string
		if lv.Left {
			extra = append(extra, "left join")
		}
		if lv.Filter != nil {
			extra = append(extra, "filter")
		}
		if len(lv.Keys) > 0 {
			extra = append(extra, "hash lookup") // MySQL: ref on <auto_key0>
		}
		if i == 0 {
			if pl.Grouped {
				extra = append(extra, "aggregate")
			}
			for _, w := range pl.Windows { // one sort of the block's rows per distinct window
				extra = append(extra, "window "+w.Name)
			}
			if pl.SortNeeded {
				extra = append(extra, "sort")
			}
			if pl.Distinct {
				extra = append(extra, "distinct")
			}
			if pl.Limit != nil {
				extra = append(extra, "limit")
			}
		}
		acc := lv.CTE.String() // "derived" unless the level reads a CTE
		if lv.Acc != nil {
			acc = lv.Acc.Describe()
		} else if lv.Fn != nil {
			acc = "table function json_table"
		}
		ex := strings.Join(extra, ", ")
		if ex == "" {
			ex = "-"
		}
		rows = append(rows, []types.Value{intVal(id), stringVal(lv.Alias), stringVal(acc), stringVal(ex)})
	}
	if len(pl.Levels) == 0 {
		rows = append(rows, []types.Value{intVal(id), types.Null, stringVal("no table"), stringVal("")})
	}
	return rows
}
