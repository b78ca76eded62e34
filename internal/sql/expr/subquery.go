package expr

import (
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// sortAborted is what a comparison panics with once the statement is cancelled: sort.SliceStable
// cannot be stopped otherwise, and sorting a million rows takes seconds. sortSlice recovers it.
type sortAborted struct{ err error }

// SortCancellable runs a sort whose comparisons call env.sortTick, and returns the statement's
// interruption if a comparison saw it.
func (env *Env) SortCancellable(sortFn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(sortAborted)
			if !ok {
				panic(r)
			}
			err = a.err
		}
	}()
	sortFn()
	return nil
}

// SortTick counts a comparison and checks for cancellation every 1024th: the comparison itself
// costs tens of nanoseconds, a context check about as much.
func (env *Env) SortTick() {
	env.cmps++
	if env.cmps&1023 == 0 {
		env.sortCheck()
	}
}

func (env *Env) sortCheck() {
	if err := env.Interrupted(); err != nil {
		panic(sortAborted{err})
	}
}

// SubKind is how a subquery's result is used.
type SubKind uint8

const (
	SubScalar SubKind = iota
	SubExists
	SubIn
	SubAny
	SubAll
)

// Subplan runs a planned subquery to completion in env (sql/exec's *Select): the seam that
// keeps expressions below the planner and the executor.
type subplan interface {
	Materialize(env *Env) ([][]types.Value, error)
}

type subResult struct {
	rows [][]types.Value
}

// Subquery evaluates a subquery: once per statement when it is not correlated, per outer row
// when it is.
type Subquery struct {
	Typed
	Kind       SubKind
	Plan       subplan
	Correlated bool
	Left       Expr
	Not        bool
	Op         string // for ANY/ALL: the comparison
	Coll       *types.Collation
}

func (s *Subquery) rows(env *Env, row []types.Value) ([][]types.Value, error) {
	if !s.Correlated {
		if r, ok := env.subCache[s]; ok {
			return r.rows, nil
		}
	}
	if s.Correlated {
		env.outer = append(env.outer, row)
		defer func() { env.outer = env.outer[:len(env.outer)-1] }()
	}
	rows, err := s.Plan.Materialize(env)
	if err != nil {
		return nil, err
	}
	if !s.Correlated {
		if env.subCache == nil {
			env.subCache = map[*Subquery]*subResult{}
		}
		env.subCache[s] = &subResult{rows: rows}
	}
	return rows, nil
}

func (s *Subquery) Eval(env *Env, row []types.Value) (types.Value, error) {
	var left types.Value
	if s.Left != nil {
		var err error
		if left, err = s.Left.Eval(env, row); err != nil {
			return types.Null, err
		}
	}
	var before int64
	if s.Correlated {
		before = env.Tracker().Used()
	}
	rows, err := s.rows(env, row)
	if err != nil {
		return types.Null, err
	}
	if s.Correlated {
		// A correlated subquery's rows are dropped after this row: give their memory back.
		defer env.Tracker().Shrink(env.Tracker().Used() - before)
	}
	switch s.Kind {
	case SubScalar:
		if len(rows) == 0 {
			return types.Null, nil
		}
		if len(rows) > 1 {
			return types.Null, sqlerr.New(sqlerr.ErrSubqueryNo1Row, "Subquery returns more than 1 row")
		}
		return rows[0][0], nil
	case SubExists:
		return BoolVal(len(rows) > 0), nil
	case SubIn:
		if len(rows) == 0 {
			return BoolVal(s.Not), nil
		}
		if left.IsNull() {
			return types.Null, nil
		}
		sawNull := false
		for _, r := range rows {
			// Each outer row walks the whole result: rows x outer rows comparisons.
			if err := env.CheckKilled(); err != nil {
				return types.Null, err
			}
			if r[0].IsNull() {
				sawNull = true
				continue
			}
			if types.Compare(left, r[0], s.Coll) == 0 {
				return BoolVal(!s.Not), nil
			}
		}
		if sawNull {
			return types.Null, nil
		}
		return BoolVal(s.Not), nil
	case SubAny, SubAll:
		if len(rows) == 0 {
			return BoolVal(s.Kind == SubAll), nil
		}
		if left.IsNull() {
			return types.Null, nil
		}
		sawNull := false
		for _, r := range rows {
			// Each outer row walks the whole result: rows x outer rows comparisons.
			if err := env.CheckKilled(); err != nil {
				return types.Null, err
			}
			if r[0].IsNull() {
				sawNull = true
				continue
			}
			ok := cmpResult(opFromString(s.Op), types.Compare(left, r[0], s.Coll))
			if s.Kind == SubAny && ok {
				return vTrue, nil
			}
			if s.Kind == SubAll && !ok {
				return vFalse, nil
			}
		}
		if sawNull {
			return types.Null, nil
		}
		return BoolVal(s.Kind == SubAll), nil
	}
	return types.Null, nil
}
