package plan

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// planUnion plans a UNION / EXCEPT / INTERSECT: each member is planned as a query block of its
// own (planUnionMembers), the result columns unify the members' types (unionColumns), and ORDER BY
// and LIMIT apply to the combined rows (unionOrderBy, unionLimit).
func (p *Planner) planUnion(x *ast.SetOprStmt, parent *Scope) (*exec.Select, error) {
	restore, err := p.PushWith(x.With)
	if err != nil {
		return nil, err
	}
	defer restore()
	if err := p.enterSelect(); err != nil {
		return nil, err
	}
	defer func() { p.selDepth-- }()
	up := &exec.Union{}
	if err := p.planUnionMembers(up, x.SelectList, parent); err != nil {
		return nil, err
	}
	pl := unionColumns(up)
	if err := unionOrderBy(up, pl, x.OrderBy); err != nil {
		return nil, err
	}
	if err := p.unionLimit(up, x.Limit, parent); err != nil {
		return nil, err
	}
	return pl, nil
}

// planUnionMembers plans each member of list and the operator that combines it with the members
// before it; every member must have as many columns as the first.
func (p *Planner) planUnionMembers(up *exec.Union, list *ast.SetOprSelectList, parent *Scope) error {
	var flat []ast.Node
	var ops []*ast.SetOprType
	for _, n := range list.Selects {
		// A nested list is a parenthesised group (or INTERSECT's tighter binding): one member.
		flat = append(flat, n)
		switch s := n.(type) {
		case *ast.SelectStmt:
			ops = append(ops, s.AfterSetOperator)
		case *ast.SetOprSelectList:
			ops = append(ops, s.AfterSetOperator)
		}
	}
	for i, n := range flat {
		var sp *exec.Select
		var err error
		switch s := n.(type) {
		case *ast.SelectStmt:
			sp, err = p.PlanSelect(s, parent)
		case *ast.SetOprSelectList:
			sp, err = p.planUnion(&ast.SetOprStmt{SelectList: s, OrderBy: s.OrderBy, Limit: s.Limit}, parent)
		default:
			err = sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported UNION member %T", n)
		}
		if err != nil {
			return err
		}
		if i > 0 {
			if sp.NVisible != up.Parts[0].NVisible {
				return sqlerr.New(sqlerr.ErrWrongNumberOfColumnsInSelect, "The used SELECT statements have a different number of columns")
			}
		}
		op := ast.Union
		if ops[i] != nil {
			op = *ops[i]
		}
		up.Ops = append(up.Ops, setOpOf(op))
		up.Parts = append(up.Parts, sp)
	}
	return nil
}

// unionColumns makes the union's plan: its columns are named by the first member and typed by
// unifying each column across the members.
func unionColumns(up *exec.Union) *exec.Select {
	first := up.Parts[0]
	pl := &exec.Select{Union: up, NVisible: first.NVisible}
	pl.Cols = append(pl.Cols, first.Cols[:first.NVisible]...)
	for ci := range pl.Cols {
		var es []expr.Expr
		for _, part := range up.Parts {
			es = append(es, &expr.Const{Typed: expr.Typed{T: part.Proj[ci].Type()}, V: types.Null})
		}
		t := expr.UnifyTypes(es...)
		up.Types = append(up.Types, t)
		pl.Cols[ci] = ResultColumn(pl.Cols[ci].Name, nil, t)
		pl.Proj = append(pl.Proj, &expr.Col{Typed: expr.Typed{T: t}, Idx: ci, Name: pl.Cols[ci].Name})
		if expr.IsStringType(t) {
			c, _ := types.LookupCollation(t.Collation)
			up.Colls = append(up.Colls, c)
		} else {
			up.Colls = append(up.Colls, nil)
		}
	}
	up.Coerce = make([]bool, len(up.Parts))
	for i, part := range up.Parts {
		pl.Correlated = pl.Correlated || part.Correlated
		for ci, t := range up.Types {
			if pt := part.Proj[ci].Type(); pt.Tp != t.Tp || pt.Frac != t.Frac {
				up.Coerce[i] = true
			}
		}
	}
	return pl
}

// unionOrderBy resolves the union's ORDER BY: by position or by result column name only.
func unionOrderBy(up *exec.Union, pl *exec.Select, orderBy *ast.OrderByClause) error {
	if orderBy == nil {
		return nil
	}
	for _, item := range orderBy.Items {
		idx := -1
		switch e := item.Expr.(type) {
		case *ast.PositionExpr:
			idx = e.N - 1
		case *ast.ColumnNameExpr:
			for i, c := range pl.Cols {
				if strings.EqualFold(c.Name, e.Name.Name.O) {
					idx = i
					break
				}
			}
		}
		if idx < 0 || idx >= pl.NVisible {
			return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'order clause'", exprText(item.Expr))
		}
		up.Order = append(up.Order, exec.SortKey{Idx: idx, Desc: item.Desc})
	}
	return nil
}

// unionLimit compiles the union's LIMIT and OFFSET (constants or placeholders).
func (p *Planner) unionLimit(up *exec.Union, limit *ast.Limit, parent *Scope) error {
	if limit == nil {
		return nil
	}
	c := p.NewCompiler(&Scope{parent: parent})
	var err error
	if limit.Count != nil {
		if up.Limit, err = c.Compile(limit.Count); err != nil {
			return err
		}
	}
	if limit.Offset != nil {
		if up.Offset, err = c.Compile(limit.Offset); err != nil {
			return err
		}
	}
	return nil
}

// setOpOf is the executor's name for the parser's set operator.
func setOpOf(op ast.SetOprType) exec.SetOp {
	switch op {
	case ast.UnionAll:
		return exec.SetUnionAll
	case ast.Except:
		return exec.SetExcept
	case ast.ExceptAll:
		return exec.SetExceptAll
	case ast.Intersect:
		return exec.SetIntersect
	case ast.IntersectAll:
		return exec.SetIntersectAll
	}
	return exec.SetUnion
}
