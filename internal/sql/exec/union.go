package exec

import (
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Union is UNION [ALL] of several selects, materialised, then optionally de-duplicated, sorted and
// limited.
type Union struct {
	Parts  []*Select
	Ops    []SetOp // Ops[i] combines the result so far with Parts[i] (i >= 1)
	Order  []SortKey
	Limit  expr.Expr
	Offset expr.Expr
	Colls  []*types.Collation
	// Types are the result columns' unified types (expr.UnifyTypes across the members); Coerce[i]
	// is set when member i has a column of another type, whose values then take the result's
	// (expr.CoerceTo: SELECT 10 UNION SELECT 1.5 gives 10.0), before any de-duplication.
	Types  []types.ColType
	Coerce []bool
}

// SetOp combines a union's result so far with its next member.
type SetOp uint8

const (
	SetUnion SetOp = iota
	SetUnionAll
	SetExcept
	SetExceptAll
	SetIntersect
	SetIntersectAll
)

// open runs the union: the members are materialised and combined left to right, as MySQL and
// MariaDB evaluate them, except that INTERSECT binds tighter than UNION and EXCEPT (MySQL 8.0.31,
// MariaDB 10.4): the parser hands over a flat list, so a run of members joined by INTERSECT is
// combined first and enters the left-to-right chain as one operand. Then the rows are sorted and
// limited.
func (u *Union) open(env *expr.Env) (RowIter, error) {
	var rows [][]types.Value
	for i := 0; i < len(u.Parts); {
		term, err := u.member(env, i)
		if err != nil {
			return nil, err
		}
		j := i + 1
		for ; j < len(u.Parts) && (u.Ops[j] == SetIntersect || u.Ops[j] == SetIntersectAll); j++ {
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
func (u *Union) member(env *expr.Env, i int) ([][]types.Value, error) {
	part := u.Parts[i]
	rs, err := Materialize(env, part)
	if err != nil {
		return nil, err
	}
	for j := range rs {
		rs[j] = rs[j][:part.NVisible]
		if i < len(u.Coerce) && u.Coerce[i] {
			for c, v := range rs[j] {
				rs[j][c] = expr.CoerceTo(v, u.Types[c])
			}
		}
	}
	return rs, nil
}

// combine applies member i's operator to the rows so far and the member's rows rs.
func (u *Union) combine(env *expr.Env, i int, rows, rs [][]types.Value) ([][]types.Value, error) {
	if i == 0 {
		if len(u.Parts) > 1 && u.Ops[1] != SetUnionAll && u.Ops[1] != SetExceptAll && u.Ops[1] != SetIntersectAll {
			return u.dedupe(env, rs)
		}
		return rs, nil
	}
	var err error
	switch op := u.Ops[i]; op {
	case SetUnionAll:
		rows = append(rows, rs...)
	case SetUnion:
		return u.dedupe(env, append(rows, rs...))
	case SetExcept, SetExceptAll:
		if rows, err = u.except(env, rows, rs, op == SetExceptAll); err != nil {
			return nil, err
		}
		if op == SetExcept {
			return u.dedupe(env, rows)
		}
	case SetIntersect, SetIntersectAll:
		if rows, err = u.intersect(env, rows, rs); err != nil {
			return nil, err
		}
		if op == SetIntersect {
			return u.dedupe(env, rows)
		}
	}
	return rows, nil
}

// key is a row's identity for DISTINCT, EXCEPT and INTERSECT, under each column's collation.
func (u *Union) key(r []types.Value) string {
	var k []byte
	for i, v := range r {
		k = groupKey(k, v, u.Colls[i])
	}
	return string(k)
}

// dedupe keeps the first of each set of equal rows, in place.
func (u *Union) dedupe(env *expr.Env, rows [][]types.Value) ([][]types.Value, error) {
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
func (u *Union) countKeys(env *expr.Env, rs [][]types.Value) (map[string]int, error) {
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
func (u *Union) except(env *expr.Env, rows, rs [][]types.Value, all bool) ([][]types.Value, error) {
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
func (u *Union) intersect(env *expr.Env, rows, rs [][]types.Value) ([][]types.Value, error) {
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
func (u *Union) orderAndLimit(env *expr.Env, it RowIter) (RowIter, error) {
	limit, offset := int64(-1), int64(0)
	if u.Limit != nil {
		v, err := u.Limit.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		limit = max(types.ToIntLenient(v), 0)
	}
	if u.Offset != nil {
		v, err := u.Offset.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		offset = max(types.ToIntLenient(v), 0)
	}
	if len(u.Order) > 0 {
		it = &sortIter{src: it, env: env, keys: u.Order, colls: u.Colls}
	}
	if limit >= 0 || offset > 0 {
		it = &limitIter{src: it, limit: limit, offset: offset}
	}
	return it, nil
}
