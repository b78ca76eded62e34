package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Regular expressions: REGEXP / RLIKE and the REGEXP_LIKE, REGEXP_INSTR, REGEXP_SUBSTR and
// REGEXP_REPLACE functions. MySQL 8 uses ICU; Kiln uses Go's RE2 engine, which has the same
// syntax for the common subset (classes, POSIX brackets, anchors, \b, \d, \w, \s, quantifiers,
// non-greedy quantifiers, groups) but no back-references, look-around, possessive quantifiers or
// atomic groups (those patterns fail with error 3690 or 3689). Case sensitivity follows the
// collation of the arguments (case-insensitive for _ci collations, sensitive for _cs, _bin and
// binary strings) unless match_type says otherwise. Positions count characters.

// regexpCI says whether matching operands of these expressions ignores case by default.
func (c *compiler) regexpCI(es ...expr.Expr) bool {
	coll := c.collationOf(es...)
	return coll != nil && !coll.IsBinary() && expr.IsCI(coll)
}

func (c *compiler) regexp(x *ast.PatternRegexpExpr) (expr.Expr, error) {
	e, err := c.compile(x.Expr)
	if err != nil {
		return nil, err
	}
	p, err := c.compile(x.Pattern)
	if err != nil {
		return nil, err
	}
	not := x.Not
	ci := c.regexpCI(e, p)
	return &expr.Closure{Typed: expr.Typed{T: expr.TBool}, Args: []expr.Expr{e, p}, Fn: func(env *expr.Env, row []types.Value, args []expr.Expr) (types.Value, error) {
		v, err := args[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return types.Null, err
		}
		pv, err := args[1].Eval(env, row)
		if err != nil || pv.IsNull() {
			return types.Null, err
		}
		re, err := env.CompileRegexp(types.ToString(pv), ci, "", "regexp")
		if err != nil {
			return types.Null, err
		}
		return expr.BoolVal(re.MatchString(types.ToString(v)) != not), nil
	}}, nil
}

// regexpFunc compiles REGEXP_LIKE, REGEXP_INSTR, REGEXP_SUBSTR and REGEXP_REPLACE.
func (c *compiler) regexpFunc(name string, args []expr.Expr) (expr.Expr, bool, error) {
	arity := map[string][2]int{"regexp_like": {2, 3}, "regexp_instr": {2, 6}, "regexp_substr": {2, 5}, "regexp_replace": {3, 6}}[name]
	if len(args) < arity[0] || len(args) > arity[1] {
		return nil, true, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", name)
	}
	ci := c.regexpCI(args[0], args[1])
	t := expr.TInt
	if name == "regexp_substr" || name == "regexp_replace" {
		t = expr.FuncType(name, args[:1])
		t.Len = max(args[0].Type().Len, 255)
	}
	return &expr.Closure{Typed: expr.Typed{T: t}, Name: name, Args: args, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
		vs := make([]types.Value, len(a))
		for i, e := range a {
			v, err := e.Eval(env, row)
			if err != nil {
				return types.Null, err
			}
			if v.IsNull() {
				return types.Null, nil
			}
			vs[i] = v
		}
		return expr.RegexpEval(env, name, vs, ci)
	}}, true, nil
}
