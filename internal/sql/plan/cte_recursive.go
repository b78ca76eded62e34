package plan

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// planRecursive plans a CTE defined by WITH RECURSIVE. A body that never names the CTE is an
// ordinary derived table. Otherwise the MySQL 8 rules hold: the body is a UNION (3573) of one or
// more anchor members followed by one or more recursive members (3574), each recursive member
// names the CTE once, in its FROM clause and not in a subquery (3577), not as the right side of a
// LEFT JOIN (3576), and has no aggregate, window function or GROUP BY (3575), no ORDER BY, LIMIT
// or DISTINCT (1235); the UNION has no ORDER BY (1235).
func (p *Planner) planRecursive(def *cteDef, q ast.ResultSetNode) (*exec.Select, exec.CTEKind, error) {
	members, first, err := recursiveMembers(def, q)
	if err != nil {
		return nil, 0, err
	}
	if first < 0 {
		sp, err := p.PlanResultSet(q, nil)
		if err != nil {
			return nil, 0, err
		}
		sp, err = withColumnList(def, sp)
		return sp, exec.CTEPlain, err
	}
	sp, err := p.planRecursiveUnion(def, q.(*ast.SetOprStmt), members, first)
	return sp, exec.CTERecursive, err
}

// planRecursiveUnion plans a recursive CTE's body: members[:first] are the anchor, the others the
// recursive members.
func (p *Planner) planRecursiveUnion(def *cteDef, x *ast.SetOprStmt, members []ast.Node, first int) (*exec.Select, error) {
	if x.OrderBy != nil {
		return nil, notSupported("ORDER BY over UNION in recursive Common Table Expression")
	}
	rc := &exec.RecursiveCTE{Name: def.cte.Name.O, Work: &exec.WorkTable{Name: def.cte.Name.O}}
	anchor, err := p.planAnchor(def, members[:first])
	if err != nil {
		return nil, err
	}
	rc.Anchor = anchor
	for i := 0; i < anchor.NVisible; i++ {
		t := anchor.Proj[i].Type()
		rc.Types = append(rc.Types, t)
		rc.Colls = append(rc.Colls, collationOfType(t))
	}
	cols := anchor.Cols[:anchor.NVisible]
	def.self = &selfRef{work: rc.Work, cols: cols, types: rc.Types, depth: p.selDepth + 1}
	defer func() { def.self = nil }()
	for i, m := range members {
		if op := setOprOf(m); i > 0 && op != ast.UnionAll {
			if op != ast.Union {
				return nil, notSupported("EXCEPT or INTERSECT in recursive Common Table Expression")
			}
			rc.Distinct = true
		}
		if i < first {
			continue
		}
		sp, err := p.PlanSelect(m.(*ast.SelectStmt), nil)
		if err != nil {
			return nil, err
		}
		if sp.NVisible != len(cols) {
			return nil, sqlerr.New(sqlerr.ErrWrongNumberOfColumnsInSelect, "The used SELECT statements have a different number of columns")
		}
		rc.Recursive = append(rc.Recursive, sp)
	}
	if x.Limit != nil {
		lim := &exec.Union{}
		if err := p.unionLimit(lim, x.Limit, nil); err != nil {
			return nil, err
		}
		rc.Limit, rc.Offset = lim.Limit, lim.Offset
	}
	return staticPlan(rc.Rows, cols, rc.Types), nil
}

// planAnchor plans the anchor members (one block, or their UNION) and names the columns by the
// CTE's column list.
func (p *Planner) planAnchor(def *cteDef, members []ast.Node) (*exec.Select, error) {
	var sp *exec.Select
	var err error
	if len(members) == 1 {
		switch m := members[0].(type) {
		case *ast.SelectStmt:
			sp, err = p.PlanSelect(m, nil)
		case *ast.SetOprSelectList:
			sp, err = p.planUnion(&ast.SetOprStmt{SelectList: m, OrderBy: m.OrderBy, Limit: m.Limit}, nil)
		}
	} else {
		sp, err = p.planUnion(&ast.SetOprStmt{SelectList: &ast.SetOprSelectList{Selects: members}}, nil)
	}
	if err != nil {
		return nil, err
	}
	return withColumnList(def, sp)
}

// recursiveMembers splits a recursive CTE's body into its UNION members and finds the first that
// names the CTE (-1: none does, the CTE is not recursive), checking the rules on member order and
// on each recursive member.
func recursiveMembers(def *cteDef, q ast.ResultSetNode) ([]ast.Node, int, error) {
	name := def.cte.Name.O
	x, ok := q.(*ast.SetOprStmt)
	if !ok {
		if countRefs(q, def.name) > 0 {
			return nil, 0, sqlerr.New(sqlerr.ErrCTERecursiveRequiresUnion, "Recursive Common Table Expression '%s' should contain a UNION", name)
		}
		return nil, -1, nil
	}
	members := x.SelectList.Selects
	first := -1
	for i, m := range members {
		n := countRefs(m, def.name)
		switch {
		case n == 0 && first >= 0, n > 0 && i == 0:
			return nil, 0, sqlerr.New(sqlerr.ErrCTERecursiveRequiresNonrecursive, "Recursive Common Table Expression '%s' should have one or more non-recursive query blocks followed by one or more recursive ones", name)
		case n > 1:
			return nil, 0, errSingleReference(def)
		case n == 1:
			if first < 0 {
				first = i
			}
			if err := checkRecursiveMember(def, m); err != nil {
				return nil, 0, err
			}
		}
	}
	return members, first, nil
}

// checkRecursiveMember applies MySQL's restrictions on a recursive query block.
func checkRecursiveMember(def *cteDef, m ast.Node) error {
	sel, ok := m.(*ast.SelectStmt)
	if !ok {
		return notSupported("parenthesized recursive query block of Common Table Expression")
	}
	if sel.GroupBy != nil || hasAggregate(sel) {
		return sqlerr.New(sqlerr.ErrCTERecursiveForbidsAggregation, "Recursive Common Table Expression '%s' can contain neither aggregation nor window functions in recursive query block", def.cte.Name.O)
	}
	if sel.OrderBy != nil || sel.Limit != nil || sel.Distinct {
		return notSupported("ORDER BY / LIMIT / SELECT DISTINCT in recursive query block of Common Table Expression")
	}
	return nil
}

func notSupported(what string) error {
	return sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of MySQL doesn't yet support '%s'", what)
}

// setOprOf is the operator that joins a UNION member to the members before it.
func setOprOf(m ast.Node) ast.SetOprType {
	var op *ast.SetOprType
	switch s := m.(type) {
	case *ast.SelectStmt:
		op = s.AfterSetOperator
	case *ast.SetOprSelectList:
		op = s.AfterSetOperator
	}
	if op == nil {
		return ast.Union
	}
	return *op
}

// collationOfType is the collation DISTINCT compares a column of type t under (nil: not a string).
func collationOfType(t types.ColType) *types.Collation {
	if !expr.IsStringType(t) {
		return nil
	}
	c, _ := types.LookupCollation(t.Collation)
	return c
}

// refCounter counts the table names (without a database) equal to name, subqueries included.
type refCounter struct {
	name string
	n    int
}

func (r *refCounter) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok && tn.Schema.O == "" && tn.Name.L == r.name {
		r.n++
	}
	return n, false
}

func (r *refCounter) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func countRefs(n ast.Node, name string) int {
	r := &refCounter{name: name}
	n.Accept(r)
	return r.n
}

// aggFinder finds an aggregate or window function of a query block, not looking into subqueries.
type aggFinder struct{ found bool }

func (a *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
		a.found = true
		return n, true
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, false
}

func (a *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func hasAggregate(sel *ast.SelectStmt) bool {
	a := &aggFinder{}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(a)
		}
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(a)
	}
	return a.found
}
