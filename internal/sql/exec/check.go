package exec

import (
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// CHECK constraints, enforced as MySQL 8.0.16+ does: a row whose constraint expression is FALSE
// (not NULL) is refused with 3819. The expressions are compiled once per table definition by the
// session's binder (Session.CompileCheck) and cached in the catalog's table.

// checkRow evaluates t's enforced constraints on row.
func checkRow(env *expr.Env, t *catalog.Table, row []types.Value) error {
	if len(t.Checks) == 0 {
		return nil
	}
	cc := t.CheckCache
	cc.Once.Do(func() {
		exprs := make([]expr.Expr, 0, len(t.Checks))
		for _, ck := range t.Checks {
			e, err := env.Sess.(Session).CompileCheck(t, ck)
			if err != nil {
				cc.Err = err
				return
			}
			exprs = append(exprs, e)
		}
		cc.Exprs = exprs
	})
	if cc.Err != nil {
		return cc.Err
	}
	exprs := cc.Exprs.([]expr.Expr)
	for i, ck := range t.Checks {
		if !ck.Enforced {
			continue
		}
		v, err := exprs[i].Eval(env, row)
		if err != nil {
			return err
		}
		if b, null := types.ToBool(v); !null && !b {
			return sqlerr.New(sqlerr.ErrCheckConstraintViolated, "Check constraint '%s' is violated.", ck.Name)
		}
	}
	return nil
}
