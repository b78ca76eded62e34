package exec

import (
	"fmt"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Generated columns and expression defaults (MySQL 8). Kiln stores the value of every generated
// column in the row, VIRTUAL ones included: the writers compute them (FillGenerated, on every
// INSERT, REPLACE, LOAD DATA, UPDATE, ON DUPLICATE KEY UPDATE and foreign key action), so a read
// decodes them like any column and an index on one is an ordinary index. A table without
// generated columns pays one length check per written row.
//
// The expressions are compiled once per table definition by the session's binder (the CHECK
// binder, Session.CompileCheck, over the table's row) and cached in the table's GenCache.

// GenExprs returns t's compiled generated-column and default expressions, one per column offset
// (nil for a column with neither).
func GenExprs(env *expr.Env, t *catalog.Table) ([]expr.Expr, error) {
	gc := t.GenCache
	gc.Once.Do(func() {
		exprs, err := CompileGenExprs(t, func(ck *catalog.CheckConstraint) (expr.Expr, error) {
			return env.Sess.(Session).CompileCheck(t, ck)
		})
		gc.Exprs, gc.Err = exprs, err
	})
	if gc.Err != nil {
		return nil, gc.Err
	}
	return gc.Exprs.([]expr.Expr), nil
}

// CompileGenExprs compiles t's generated-column and default expressions with compile, one per
// column offset (nil for a column with neither). GenExprs caches its result for published tables;
// DDL compiles a table it is rewriting with it directly.
func CompileGenExprs(t *catalog.Table, compile func(*catalog.CheckConstraint) (expr.Expr, error)) ([]expr.Expr, error) {
	exprs := make([]expr.Expr, len(t.Columns))
	for i, c := range t.Columns {
		text := c.GenExpr
		if text == "" {
			text = c.DefaultExpr
		}
		if text == "" {
			continue
		}
		e, err := compile(&catalog.CheckConstraint{Name: c.Name, Expr: text})
		if err != nil {
			return nil, fmt.Errorf("column %s.%s: compile %q: %w", t.Name, c.Name, text, err)
		}
		exprs[i] = e
	}
	return exprs, nil
}

// FillGenerated computes the generated columns of row (in place, in column order: one may read an
// earlier one), converting each value to its column's type as an INSERT would (strict: an error;
// else a warning); rowNum is the row number errors and warnings name.
func FillGenerated(env *expr.Env, t *catalog.Table, row []types.Value, strict bool, rowNum int) error {
	if len(t.GenCols) == 0 {
		return nil
	}
	exprs, err := GenExprs(env, t)
	if err != nil {
		return err
	}
	for _, ci := range t.GenCols {
		v, err := exprs[ci].Eval(env, row)
		if err != nil {
			return err
		}
		if row[ci], err = ConvertGenerated(env, t.Columns[ci], v, strict, rowNum); err != nil {
			return err
		}
	}
	return nil
}

// ConvertGenerated converts a computed value (a generated column's or an expression default's)
// to col's type: NULL into NOT NULL is 1048 in strict mode (else the type's implicit default and
// a warning), other values convert with INSERT's rules.
func ConvertGenerated(env *expr.Env, col *catalog.Column, v types.Value, strict bool, rowNum int) (types.Value, error) {
	if v.IsNull() {
		if !col.NotNull {
			return v, nil
		}
		if strict {
			return v, sqlerr.New(sqlerr.ErrBadNull, "Column '%s' cannot be null", col.Name)
		}
		env.Sess.AddWarning("Warning", sqlerr.ErrBadNull, fmt.Sprintf("Column '%s' cannot be null", col.Name))
		return col.Type.ImplicitDefault(), nil
	}
	out, warns, err := types.Convert(v, &col.Type, types.ConvertCtx{Strict: strict, Column: col.Name, Row: rowNum})
	if err != nil {
		return v, err
	}
	for _, w := range warns {
		env.Sess.AddWarning(w.Level, w.Code, w.Message)
	}
	return out, nil
}

// EvalDefaultExpr evaluates col's expression default (DEFAULT (expr)) over row, the row being
// built (the expression may read columns before it), converted to col's type.
func EvalDefaultExpr(env *expr.Env, t *catalog.Table, col *catalog.Column, row []types.Value, strict bool, rowNum int) (types.Value, error) {
	exprs, err := GenExprs(env, t)
	if err != nil {
		return types.Null, err
	}
	e := exprs[col.Offset]
	if e == nil {
		return types.Null, fmt.Errorf("column %s.%s has no default expression", t.Name, col.Name)
	}
	if row == nil {
		// Without a row (SET col = DEFAULT reads none) the expression sees NULL columns.
		row = make([]types.Value, len(t.Columns))
	}
	v, err := e.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	return ConvertGenerated(env, col, v, strict, rowNum)
}
