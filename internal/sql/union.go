package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// unionPlan is UNION [ALL] of several selects, materialised, then optionally de-duplicated, sorted and
// limited.
type unionPlan struct {
	parts  []*selectPlan
	ops    []ast.SetOprType // ops[i] combines the result so far with parts[i] (i >= 1)
	order  []sortKey
	limit  expr.Expr
	offset expr.Expr
	colls  []*types.Collation
}

// planUnion plans a UNION / EXCEPT / INTERSECT: each member is planned as a query block of its
// own (planUnionMembers), the result columns unify the members' types (unionColumns), and ORDER BY
// and LIMIT apply to the combined rows (unionOrderBy, unionLimit).
func (p *planner) planUnion(x *ast.SetOprStmt, parent *scope) (*selectPlan, error) {
	if x.With != nil {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "WITH (common table expressions) is not supported yet")
	}
	if err := p.enterSelect(); err != nil {
		return nil, err
	}
	defer func() { p.selDepth-- }()
	up := &unionPlan{}
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
func (p *planner) planUnionMembers(up *unionPlan, list *ast.SetOprSelectList, parent *scope) error {
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
		var sp *selectPlan
		var err error
		switch s := n.(type) {
		case *ast.SelectStmt:
			sp, err = p.planSelect(s, parent)
		case *ast.SetOprSelectList:
			sp, err = p.planUnion(&ast.SetOprStmt{SelectList: s, OrderBy: s.OrderBy, Limit: s.Limit}, parent)
		default:
			err = sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported UNION member %T", n)
		}
		if err != nil {
			return err
		}
		if i > 0 {
			if sp.nVisible != up.parts[0].nVisible {
				return sqlerr.New(sqlerr.ErrWrongNumberOfColumnsInSelect, "The used SELECT statements have a different number of columns")
			}
		}
		op := ast.Union
		if ops[i] != nil {
			op = *ops[i]
		}
		up.ops = append(up.ops, op)
		up.parts = append(up.parts, sp)
	}
	return nil
}

// unionColumns makes the union's plan: its columns are named by the first member and typed by
// unifying each column across the members.
func unionColumns(up *unionPlan) *selectPlan {
	first := up.parts[0]
	pl := &selectPlan{union: up, nVisible: first.nVisible}
	pl.cols = append(pl.cols, first.cols[:first.nVisible]...)
	for ci := range pl.cols {
		var es []expr.Expr
		for _, part := range up.parts {
			es = append(es, &expr.Const{Typed: expr.Typed{T: part.proj[ci].Type()}, V: types.Null})
		}
		t := expr.UnifyTypes(es...)
		pl.cols[ci] = resultColumn(pl.cols[ci].Name, nil, t)
		pl.proj = append(pl.proj, &expr.Col{Typed: expr.Typed{T: t}, Idx: ci, Name: pl.cols[ci].Name})
		if expr.IsStringType(t) {
			c, _ := types.LookupCollation(t.Collation)
			up.colls = append(up.colls, c)
		} else {
			up.colls = append(up.colls, nil)
		}
	}
	for _, part := range up.parts {
		pl.correlated = pl.correlated || part.correlated
	}
	return pl
}

// unionOrderBy resolves the union's ORDER BY: by position or by result column name only.
func unionOrderBy(up *unionPlan, pl *selectPlan, orderBy *ast.OrderByClause) error {
	if orderBy == nil {
		return nil
	}
	for _, item := range orderBy.Items {
		idx := -1
		switch e := item.Expr.(type) {
		case *ast.PositionExpr:
			idx = e.N - 1
		case *ast.ColumnNameExpr:
			for i, c := range pl.cols {
				if strings.EqualFold(c.Name, e.Name.Name.O) {
					idx = i
					break
				}
			}
		}
		if idx < 0 || idx >= pl.nVisible {
			return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'order clause'", exprText(item.Expr))
		}
		up.order = append(up.order, sortKey{idx: idx, desc: item.Desc})
	}
	return nil
}

// unionLimit compiles the union's LIMIT and OFFSET (constants or placeholders).
func (p *planner) unionLimit(up *unionPlan, limit *ast.Limit, parent *scope) error {
	if limit == nil {
		return nil
	}
	c := p.newCompiler(&scope{parent: parent})
	var err error
	if limit.Count != nil {
		if up.limit, err = c.compile(limit.Count); err != nil {
			return err
		}
	}
	if limit.Offset != nil {
		if up.offset, err = c.compile(limit.Offset); err != nil {
			return err
		}
	}
	return nil
}

// open runs the union: the members are materialised and combined left to right, as MySQL and
// MariaDB evaluate them, except that INTERSECT binds tighter than UNION and EXCEPT (MySQL 8.0.31,
// MariaDB 10.4): the parser hands over a flat list, so a run of members joined by INTERSECT is
// combined first and enters the left-to-right chain as one operand. Then the rows are sorted and
// limited.
func (u *unionPlan) open(env *expr.Env) (rowIter, error) {
	var rows [][]types.Value
	for i := 0; i < len(u.parts); {
		term, err := u.member(env, i)
		if err != nil {
			return nil, err
		}
		j := i + 1
		for ; j < len(u.parts) && (u.ops[j] == ast.Intersect || u.ops[j] == ast.IntersectAll); j++ {
			rs, err := u.member(env, j)
			if err != nil {
				return nil, err
			}
			if term, err = u.combine(env, j, term, rs); err != nil {
				return nil, err
			}
		}
		if rows, err = u.combine(env, i, rows, term); err != nil {
			return nil, err
		}
		i = j
	}
	return u.orderAndLimit(env, &sliceIter{rows: rows})
}

// member materialises member i's rows, cut to its visible columns.
func (u *unionPlan) member(env *expr.Env, i int) ([][]types.Value, error) {
	part := u.parts[i]
	rs, err := materialize(env, part)
	if err != nil {
		return nil, err
	}
	for j := range rs {
		rs[j] = rs[j][:part.nVisible]
	}
	return rs, nil
}

// combine applies member i's operator to the rows so far and the member's rows rs.
func (u *unionPlan) combine(env *expr.Env, i int, rows, rs [][]types.Value) ([][]types.Value, error) {
	if i == 0 {
		if len(u.parts) > 1 && u.ops[1] != ast.UnionAll && u.ops[1] != ast.ExceptAll && u.ops[1] != ast.IntersectAll {
			return u.dedupe(env, rs)
		}
		return rs, nil
	}
	var err error
	switch op := u.ops[i]; op {
	case ast.UnionAll:
		rows = append(rows, rs...)
	case ast.Union:
		return u.dedupe(env, append(rows, rs...))
	case ast.Except, ast.ExceptAll:
		if rows, err = u.except(env, rows, rs, op == ast.ExceptAll); err != nil {
			return nil, err
		}
		if op == ast.Except {
			return u.dedupe(env, rows)
		}
	case ast.Intersect, ast.IntersectAll:
		if rows, err = u.intersect(env, rows, rs); err != nil {
			return nil, err
		}
		if op == ast.Intersect {
			return u.dedupe(env, rows)
		}
	}
	return rows, nil
}

// key is a row's identity for DISTINCT, EXCEPT and INTERSECT, under each column's collation.
func (u *unionPlan) key(r []types.Value) string {
	var k []byte
	for i, v := range r {
		k = groupKey(k, v, u.colls[i])
	}
	return string(k)
}

// dedupe keeps the first of each set of equal rows, in place.
func (u *unionPlan) dedupe(env *expr.Env, rows [][]types.Value) ([][]types.Value, error) {
	seen := map[string]struct{}{}
	out := rows[:0]
	for _, r := range rows {
		if err := env.CheckKilled(); err != nil {
			return nil, err
		}
		k := u.key(r)
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, r)
	}
	return out, nil
}

// countKeys counts the rows of rs by key.
func (u *unionPlan) countKeys(env *expr.Env, rs [][]types.Value) (map[string]int, error) {
	count := map[string]int{}
	for _, r := range rs {
		if err := env.CheckKilled(); err != nil {
			return nil, err
		}
		count[u.key(r)]++
	}
	return count, nil
}

// except drops, in place, the rows that rs has: with all (EXCEPT ALL) one row per row of rs,
// otherwise every equal row.
func (u *unionPlan) except(env *expr.Env, rows, rs [][]types.Value, all bool) ([][]types.Value, error) {
	count, err := u.countKeys(env, rs)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, r := range rows {
		if err := env.CheckKilled(); err != nil {
			return nil, err
		}
		k := u.key(r)
		if c := count[k]; c > 0 {
			if all {
				count[k] = c - 1
			}
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// intersect keeps, in place, the rows that rs has, each as many times as rs has it at most.
func (u *unionPlan) intersect(env *expr.Env, rows, rs [][]types.Value) ([][]types.Value, error) {
	count, err := u.countKeys(env, rs)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, r := range rows {
		if err := env.CheckKilled(); err != nil {
			return nil, err
		}
		k := u.key(r)
		if c := count[k]; c > 0 {
			count[k] = c - 1
			out = append(out, r)
		}
	}
	return out, nil
}

// orderAndLimit puts the union's ORDER BY and LIMIT over its rows.
func (u *unionPlan) orderAndLimit(env *expr.Env, it rowIter) (rowIter, error) {
	limit, offset := int64(-1), int64(0)
	if u.limit != nil {
		v, err := u.limit.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		limit = max(types.ToIntLenient(v), 0)
	}
	if u.offset != nil {
		v, err := u.offset.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		offset = max(types.ToIntLenient(v), 0)
	}
	if len(u.order) > 0 {
		it = &sortIter{src: it, env: env, keys: u.order, colls: u.colls}
	}
	if limit >= 0 || offset > 0 {
		it = &limitIter{src: it, limit: limit, offset: offset}
	}
	return it, nil
}
