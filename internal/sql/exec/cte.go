package exec

import (
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// CTEKind says which kind of common table expression a level reads, for EXPLAIN.
type CTEKind uint8

const (
	NoCTE        CTEKind = iota
	CTEPlain             // a non-recursive CTE, materialised like a derived table
	CTERecursive         // a recursive CTE (RecursiveCTE)
	CTEWork              // a recursive member's reference to its own CTE (WorkTable)
)

// String is the access EXPLAIN shows for the level.
func (k CTEKind) String() string {
	switch k {
	case CTEPlain:
		return "cte"
	case CTERecursive:
		return "recursive cte"
	case CTEWork:
		return "cte working table"
	}
	return "derived"
}

// WorkTable is a recursive CTE's reference to itself inside a recursive member. Reading it returns
// the rows the previous iteration produced; they live in the statement's Env (keyed by the
// WorkTable), never in the plan, so the plan stays immutable and shareable.
type WorkTable struct{ Name string }

// Rows is the Static source of the self reference's plan. The rows are shared, not copied: the
// iterators above a Static source copy what they keep.
func (w *WorkTable) Rows(env *expr.Env) ([][]types.Value, error) { return env.WorkRows(w), nil }

// RecursiveCTE runs WITH RECURSIVE's body: the anchor (non-recursive) members once, then the
// recursive members over the rows of the previous iteration until an iteration adds none, as MySQL
// 8 does. Its Rows is the Static source of the CTE's plan, materialised each time the CTE's level
// opens, like any derived table.
type RecursiveCTE struct {
	Name      string
	Anchor    *Select   // the non-recursive members (one block, or their UNION)
	Recursive []*Select // the recursive members, each reading Work once
	Work      *WorkTable
	// Distinct: some member is joined by UNION [DISTINCT], so a row equal to one already produced
	// (under Colls) is dropped, also before it feeds the next iteration.
	Distinct bool
	Types    []types.ColType // the CTE's columns: the anchor's types; every row is coerced to them
	Colls    []*types.Collation
	// Limit and Offset bound the whole CTE (MySQL 8.0.19+): the iteration stops once it has
	// Offset+Limit rows, so LIMIT ends an otherwise endless recursion.
	Limit, Offset expr.Expr
}

var cteMaxRecursionDepth = sysvar.Must("cte_max_recursion_depth")

// Rows runs the CTE. Each iteration checks the recursion depth (cte_max_recursion_depth, error
// 3636); every row goes through Materialize, which checks for KILL QUERY and max_execution_time and
// counts the row against the statement's memory quota, so neither an endless nor a huge recursion
// outlives its bounds.
func (r *RecursiveCTE) Rows(env *expr.Env) ([][]types.Value, error) {
	limit, offset, err := r.bounds(env)
	if err != nil {
		return nil, err
	}
	maxDepth := types.ToIntLenient(env.Sess.SysVar(cteMaxRecursionDepth, false))
	var seen map[string]struct{}
	if r.Distinct {
		seen = map[string]struct{}{}
	}
	all, err := r.collect(env, r.Anchor, seen, nil)
	if err != nil {
		return nil, err
	}
	saved := env.WorkRows(r.Work)
	defer env.SetWorkRows(r.Work, saved)
	work := all
	for iter := int64(1); len(work) > 0 && (limit < 0 || int64(len(all)) < offset+limit); iter++ {
		if iter > maxDepth {
			return nil, sqlerr.New(sqlerr.ErrCTEMaxRecursionDepth, "Recursive query aborted after %d iterations. Try increasing @@cte_max_recursion_depth to a larger value.", iter)
		}
		env.SetWorkRows(r.Work, work)
		start := len(all)
		for _, m := range r.Recursive {
			if all, err = r.collect(env, m, seen, all); err != nil {
				return nil, err
			}
		}
		// The next iteration reads only this one's rows (a copy of the slice header: all may
		// grow in place, but never rewrites these elements).
		work = all[start:len(all):len(all)]
	}
	if offset > 0 {
		all = all[min(offset, int64(len(all))):]
	}
	if limit >= 0 && int64(len(all)) > limit {
		all = all[:limit]
	}
	return all, nil
}

// bounds evaluates LIMIT and OFFSET (-1: no limit).
func (r *RecursiveCTE) bounds(env *expr.Env) (limit, offset int64, err error) {
	limit = -1
	if r.Limit != nil {
		v, err := r.Limit.Eval(env, nil)
		if err != nil {
			return 0, 0, err
		}
		limit = max(types.ToIntLenient(v), 0)
	}
	if r.Offset != nil {
		v, err := r.Offset.Eval(env, nil)
		if err != nil {
			return 0, 0, err
		}
		offset = max(types.ToIntLenient(v), 0)
	}
	return limit, offset, nil
}

// collect runs one member and appends its rows to out: cut to the visible columns, coerced to the
// CTE's types and, with seen, only those not produced before.
func (r *RecursiveCTE) collect(env *expr.Env, pl *Select, seen map[string]struct{}, out [][]types.Value) ([][]types.Value, error) {
	rows, err := Materialize(env, pl)
	if err != nil {
		return nil, err
	}
	var key []byte
	for _, row := range rows {
		row = row[:pl.NVisible]
		for c, v := range row {
			row[c] = toColumn(v, r.Types[c])
		}
		if seen != nil {
			key = key[:0]
			for c, v := range row {
				key = groupKey(key, v, r.Colls[c])
			}
			if _, dup := seen[string(key)]; dup {
				continue
			}
			seen[string(key)] = struct{}{}
		}
		out = append(out, row)
	}
	return out, nil
}

// toColumn converts a row's value to the CTE's column type, as MySQL's writing it into the CTE's
// temporary table does: the branch coercion of UNION (expr.CoerceTo), and a number with more
// fractional digits than an INT or DECIMAL column has is rounded to them (an INT anchor keeps the
// CTE's n an integer when a recursive member adds 0.6).
func toColumn(v types.Value, t types.ColType) types.Value {
	v = expr.CoerceTo(v, t)
	var ct types.ColType
	switch {
	case v.K != types.KindDecimal && v.K != types.KindFloat:
		return v
	case expr.IsIntType(t):
		ct = t
	case t.Tp == expr.TDecimal.Tp && (v.K == types.KindFloat || int(v.Frac) > t.Frac):
		ct = expr.TDecimal
		ct.Frac = min(max(t.Frac, 0), 30)
	default:
		return v
	}
	out, _, err := types.Convert(v, &ct, types.ConvertCtx{})
	if err != nil {
		return v
	}
	return out
}
