package plan

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// MaxViewDepth bounds views defined on views (and catches a cycle made with CREATE OR REPLACE).
const MaxViewDepth = 32

// PlanView plans a view's SELECT as a derived table.
func (p *Planner) PlanView(v *catalog.View, depth int) (*exec.Select, error) {
	if depth >= MaxViewDepth {
		return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", v.DB, v.Name)
	}
	stmts, err := p.Ctx.ParseSQL(v.Select)
	if err != nil || len(stmts) != 1 {
		return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", v.DB, v.Name)
	}
	rs, ok := stmts[0].(ast.ResultSetNode)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' is not a SELECT", v.DB, v.Name)
	}
	if len(v.Columns) > 0 {
		sel := firstSelect(rs)
		if sel == nil || sel.Fields == nil || len(sel.Fields.Fields) != len(v.Columns) {
			return nil, sqlerr.New(sqlerr.ErrViewWrongList, "View's SELECT and view's field list have different column counts")
		}
		for i, f := range sel.Fields.Fields {
			if f.WildCard != nil {
				return nil, sqlerr.New(sqlerr.ErrViewWrongList, "View's SELECT and view's field list have different column counts")
			}
			f.AsName = ast.NewCIStr(v.Columns[i])
		}
	}
	saved := p.Ctx.CurrentDB()
	p.Ctx.SetCurrentDB(v.DB)
	p.viewDepth = int32(depth + 1)
	savedCTEs := p.cte
	p.cte = nil // a view's body sees none of the query's CTEs, only its own
	defer func() { p.Ctx.SetCurrentDB(saved); p.viewDepth = int32(depth); p.cte = savedCTEs }()
	sp, err := p.PlanResultSet(rs, nil)
	if err != nil {
		if depth > 0 || !p.CreatingView {
			if e := sqlerr.As(err); e != nil && (e.Code == sqlerr.ErrNoSuchTable || e.Code == sqlerr.ErrBadField || e.Code == sqlerr.ErrViewInvalid) {
				return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", v.DB, v.Name)
			}
		}
		return nil, err
	}
	seen := map[string]bool{}
	for i := 0; i < sp.NVisible; i++ {
		n := strings.ToLower(sp.Cols[i].Name)
		if seen[n] {
			return nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", sp.Cols[i].Name)
		}
		seen[n] = true
	}
	return sp, nil
}

func firstSelect(rs ast.ResultSetNode) *ast.SelectStmt {
	switch x := rs.(type) {
	case *ast.SelectStmt:
		return x
	case *ast.SetOprStmt:
		if x.SelectList != nil && len(x.SelectList.Selects) > 0 {
			if s, ok := x.SelectList.Selects[0].(ast.ResultSetNode); ok {
				return firstSelect(s)
			}
		}
	}
	return nil
}
