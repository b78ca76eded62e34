package expr

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// CollationOf picks the collation for comparing operands: a column's collation wins over a literal's,
// as MySQL's coercibility rules say; binary if any side is binary; conn (collation_connection)
// when no operand has a collation of its own.
func CollationOf(conn *types.Collation, es ...Expr) *types.Collation {
	var best *types.Collation
	for _, e := range es {
		if ce, ok := e.(*Collate); ok {
			if coll, ok := types.LookupCollation(ce.T.Collation); ok {
				return coll
			}
		}
	}
	for _, e := range es {
		t := e.Type()
		if t.Collation == "binary" && IsStringType(t) {
			coll, _ := types.LookupCollation("binary")
			return coll
		}
		if _, ok := e.(*Col); ok && IsStringType(t) && t.Collation != "" {
			coll, ok := types.LookupCollation(t.Collation)
			if ok {
				best = coll
			}
		}
	}
	if best != nil {
		return best
	}
	return conn
}

// RegexpCI says whether matching operands of these expressions ignores case by default.
func RegexpCI(conn *types.Collation, es ...Expr) bool {
	coll := CollationOf(conn, es...)
	return coll != nil && !coll.IsBinary() && IsCI(coll)
}

// Coercibility is COERCIBILITY(e): 0 explicit COLLATE, 2 a column, 4 a literal string, 5 numbers
// and temporal values, 6 NULL; a string function of other expressions takes the lowest of its
// string arguments'.
func Coercibility(e Expr) int {
	t := e.Type()
	switch x := e.(type) {
	case *Collate:
		return 0
	case *Col:
		if IsStringType(t) {
			return 2
		}
		return 5
	case *Const:
		switch {
		case x.V.IsNull():
			return 6
		case IsStringType(t):
			return 4
		}
		return 5
	case *Func:
		if IsStringType(t) {
			return minCoercibility(x.Args)
		}
	case *Closure:
		if IsStringType(t) {
			return minCoercibility(x.Args)
		}
	}
	if t.Tp == mysql.TypeNull {
		return 6
	}
	if IsStringType(t) {
		return 4
	}
	return 5
}

func minCoercibility(args []Expr) int {
	m := 4
	for _, a := range args {
		if IsStringType(a.Type()) {
			m = min(m, Coercibility(a))
		}
	}
	return m
}

// Collate is e COLLATE name: e's value with an explicit collation.
type Collate struct {
	Typed
	E Expr
}

func (x *Collate) Eval(env *Env, row []types.Value) (types.Value, error) {
	return x.E.Eval(env, row)
}
