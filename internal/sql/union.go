package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// unionPlan is UNION [ALL] of several selects, materialised, then optionally de-duplicated, sorted and
// limited.
type unionPlan struct {
	parts  []*selectPlan
	ops    []ast.SetOprType // ops[i] combines the result so far with parts[i] (i >= 1)
	order  []sortKey
	limit  Expr
	offset Expr
	colls  []*types.Collation
}

func (p *planner) planUnion(x *ast.SetOprStmt, parent *scope) (*selectPlan, error) {
	if x.With != nil {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "WITH (common table expressions) is not supported yet")
	}
	if err := p.enterSelect(); err != nil {
		return nil, err
	}
	defer func() { p.selDepth-- }()
	up := &unionPlan{}
	var flat []ast.Node
	var ops []*ast.SetOprType
	var walk func(l *ast.SetOprSelectList)
	walk = func(l *ast.SetOprSelectList) {
		for _, n := range l.Selects {
			// A nested list is a parenthesised group (or INTERSECT's tighter binding): one member.
			flat = append(flat, n)
			switch s := n.(type) {
			case *ast.SelectStmt:
				ops = append(ops, s.AfterSetOperator)
			case *ast.SetOprSelectList:
				ops = append(ops, s.AfterSetOperator)
			}
		}
	}
	walk(x.SelectList)
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
			return nil, err
		}
		if i > 0 {
			if sp.nVisible != up.parts[0].nVisible {
				return nil, sqlerr.New(sqlerr.ErrWrongNumberOfColumnsInSelect, "The used SELECT statements have a different number of columns")
			}
		}
		op := ast.Union
		if ops[i] != nil {
			op = *ops[i]
		}
		up.ops = append(up.ops, op)
		up.parts = append(up.parts, sp)
	}
	first := up.parts[0]
	pl := &selectPlan{union: up, nVisible: first.nVisible}
	pl.cols = append(pl.cols, first.cols[:first.nVisible]...)
	// Result types: unify each column across the parts.
	for ci := range pl.cols {
		var es []Expr
		for _, part := range up.parts {
			es = append(es, &constExpr{typed: typed{part.proj[ci].Type()}, v: types.Null})
		}
		t := unifyTypes(es...)
		pl.cols[ci] = resultColumn(pl.cols[ci].Name, nil, t)
		pl.proj = append(pl.proj, &colExpr{typed{t}, ci, pl.cols[ci].Name})
		if isStringType(t) {
			c, _ := types.LookupCollation(t.Collation)
			up.colls = append(up.colls, c)
		} else {
			up.colls = append(up.colls, nil)
		}
	}
	for _, part := range up.parts {
		pl.correlated = pl.correlated || part.correlated
	}
	if x.OrderBy != nil {
		for _, item := range x.OrderBy.Items {
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
				return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'order clause'", exprText(item.Expr))
			}
			up.order = append(up.order, sortKey{idx: idx, desc: item.Desc})
		}
	}
	if x.Limit != nil {
		c := p.newCompiler(&scope{parent: parent})
		var err error
		if x.Limit.Count != nil {
			if up.limit, err = c.compile(x.Limit.Count); err != nil {
				return nil, err
			}
		}
		if x.Limit.Offset != nil {
			if up.offset, err = c.compile(x.Limit.Offset); err != nil {
				return nil, err
			}
		}
	}
	return pl, nil
}

func (u *unionPlan) open(env *Env) (rowIter, error) {
	key := func(r []types.Value) string {
		var k []byte
		for i, v := range r {
			k = groupKey(k, v, u.colls[i])
		}
		return string(k)
	}
	dedupe := func(rows [][]types.Value) ([][]types.Value, error) {
		seen := map[string]struct{}{}
		out := rows[:0]
		for _, r := range rows {
			if err := env.checkKilled(); err != nil {
				return nil, err
			}
			k := key(r)
			if _, ok := seen[k]; ok {
				continue
			}
			seen[k] = struct{}{}
			out = append(out, r)
		}
		return out, nil
	}
	// Members combine left to right, as MySQL and MariaDB evaluate them (INTERSECT's higher
	// precedence arrives from the parser as a nested member).
	var rows [][]types.Value
	for i, part := range u.parts {
		rs, err := env.materialize(part)
		if err != nil {
			return nil, err
		}
		for j := range rs {
			rs[j] = rs[j][:part.nVisible]
		}
		if i == 0 {
			rows = rs
			if len(u.parts) > 1 && u.ops[1] != ast.UnionAll && u.ops[1] != ast.ExceptAll && u.ops[1] != ast.IntersectAll {
				if rows, err = dedupe(rows); err != nil {
					return nil, err
				}
			}
			continue
		}
		switch u.ops[i] {
		case ast.UnionAll:
			rows = append(rows, rs...)
		case ast.Union:
			if rows, err = dedupe(append(rows, rs...)); err != nil {
				return nil, err
			}
		case ast.Except, ast.ExceptAll:
			count := map[string]int{}
			for _, r := range rs {
				if err := env.checkKilled(); err != nil {
					return nil, err
				}
				count[key(r)]++
			}
			out := rows[:0]
			for _, r := range rows {
				if err := env.checkKilled(); err != nil {
					return nil, err
				}
				k := key(r)
				if c := count[k]; c > 0 {
					if u.ops[i] == ast.ExceptAll {
						count[k] = c - 1
					}
					continue
				}
				out = append(out, r)
			}
			rows = out
			if u.ops[i] == ast.Except {
				if rows, err = dedupe(rows); err != nil {
					return nil, err
				}
			}
		case ast.Intersect, ast.IntersectAll:
			count := map[string]int{}
			for _, r := range rs {
				if err := env.checkKilled(); err != nil {
					return nil, err
				}
				count[key(r)]++
			}
			out := rows[:0]
			for _, r := range rows {
				if err := env.checkKilled(); err != nil {
					return nil, err
				}
				k := key(r)
				if c := count[k]; c > 0 {
					count[k] = c - 1
					out = append(out, r)
				}
			}
			rows = out
			if u.ops[i] == ast.Intersect {
				if rows, err = dedupe(rows); err != nil {
					return nil, err
				}
			}
		}
	}
	var it rowIter = &sliceIter{rows: rows}
	limit, offset := int64(-1), int64(0)
	if u.limit != nil {
		v, err := u.limit.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		limit = max(toIntLenient(v), 0)
	}
	if u.offset != nil {
		v, err := u.offset.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		offset = max(toIntLenient(v), 0)
	}
	if len(u.order) > 0 {
		it = &sortIter{src: it, env: env, keys: u.order, colls: u.colls}
	}
	if limit >= 0 || offset > 0 {
		it = &limitIter{src: it, limit: limit, offset: offset}
	}
	return it, nil
}
