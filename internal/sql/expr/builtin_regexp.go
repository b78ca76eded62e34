package expr

import (
	"github.com/kiln-db/kiln/internal/sql/types"
)

// registerRegexp registers REGEXP_LIKE, REGEXP_INSTR, REGEXP_SUBSTR and REGEXP_REPLACE (regexp.go
// evaluates them).
func registerRegexp() {
	regexpFn := Builtin{Build: func(c *Call) (Expr, error) {
		name, args := c.Name, c.Args
		ci := RegexpCI(c.ConnCollation, args[0], args[1])
		t := TInt
		if name == "regexp_substr" || name == "regexp_replace" {
			t = FuncType(name, args[:1])
			t.Len = max(args[0].Type().Len, 255)
		}
		return &Closure{Typed: Typed{T: t}, Name: name, Args: args, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
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
			return RegexpEval(env, name, vs, ci)
		}}, nil
	}}
	regexpFn.MinArgs, regexpFn.MaxArgs = 2, 3
	Register(alias(regexpFn, "regexp_like")...)
	regexpFn.MinArgs, regexpFn.MaxArgs = 2, 6
	Register(alias(regexpFn, "regexp_instr")...)
	regexpFn.MinArgs, regexpFn.MaxArgs = 2, 5
	Register(alias(regexpFn, "regexp_substr")...)
	regexpFn.MinArgs, regexpFn.MaxArgs = 3, 6
	Register(alias(regexpFn, "regexp_replace")...)
}
