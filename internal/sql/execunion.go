package sql

import (
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// unionPlan is UNION [ALL] of several selects, materialised, then optionally de-duplicated, sorted and
// limited.
type unionPlan struct {
	parts  []*selectPlan
	ops    []setOp // ops[i] combines the result so far with parts[i] (i >= 1)
	order  []sortKey
	limit  expr.Expr
	offset expr.Expr
	colls  []*types.Collation
}

// setOp combines a union's result so far with its next member.
type setOp uint8

const (
	setUnion setOp = iota
	setUnionAll
	setExcept
	setExceptAll
	setIntersect
	setIntersectAll
)

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
		for ; j < len(u.parts) && (u.ops[j] == setIntersect || u.ops[j] == setIntersectAll); j++ {
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
		if len(u.parts) > 1 && u.ops[1] != setUnionAll && u.ops[1] != setExceptAll && u.ops[1] != setIntersectAll {
			return u.dedupe(env, rs)
		}
		return rs, nil
	}
	var err error
	switch op := u.ops[i]; op {
	case setUnionAll:
		rows = append(rows, rs...)
	case setUnion:
		return u.dedupe(env, append(rows, rs...))
	case setExcept, setExceptAll:
		if rows, err = u.except(env, rows, rs, op == setExceptAll); err != nil {
			return nil, err
		}
		if op == setExcept {
			return u.dedupe(env, rows)
		}
	case setIntersect, setIntersectAll:
		if rows, err = u.intersect(env, rows, rs); err != nil {
			return nil, err
		}
		if op == setIntersect {
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
