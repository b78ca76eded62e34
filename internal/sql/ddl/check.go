package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// CHECK constraints, enforced as MySQL 8.0.16+ does: a row whose constraint expression is FALSE
// (not NULL) is refused with 3819, on INSERT, UPDATE, LOAD DATA and ALTER TABLE ... ADD CHECK over
// the existing rows. NOT ENFORCED constraints are kept and shown but not evaluated.

func (d *Stmt) buildCheck(t *catalog.Table, c *ast.Constraint, n int) (*catalog.CheckConstraint, error) {
	name := c.Name
	if name == "" {
		name = fmt.Sprintf("%s_chk_%d", t.Name, n)
	}
	if err := checkIndexName(name); err != nil {
		return nil, err
	}
	for _, o := range t.Checks {
		if strings.EqualFold(o.Name, name) {
			return nil, sqlerr.New(sqlerr.ErrCheckConstraintDupName, "Duplicate check constraint name '%s'.", name)
		}
	}
	// Stored as MySQL 8 prints it (SHOW CREATE TABLE, information_schema.CHECK_CONSTRAINTS):
	// spaced binary operators in parentheses, lower-case keywords, `(`a` > 0)`, the form ORMs
	// read back (SQLAlchemy's reflection). Constraints stored before keep their text.
	text, err := restoreValueExpr(c.Expr)
	if err != nil {
		return nil, fmt.Errorf("check constraint: restore: %w", err)
	}
	ck := &catalog.CheckConstraint{Name: name, Expr: text, Enforced: c.Enforced}
	if _, err := CompileCheck(d.pc, t, ck); err != nil {
		return nil, err
	}
	return ck, nil
}

// CompileCheck binds a CHECK constraint's stored expression over t's row with the planner's
// compiler: for the DDL that adds it, and for the executor's row primitives (the facade's
// exec.Session.CompileCheck), which cache the result.
func CompileCheck(pc plan.Context, t *catalog.Table, ck *catalog.CheckConstraint) (expr.Expr, error) {
	stmts, err := pc.ParseSQL("SELECT " + ck.Expr)
	if err != nil || len(stmts) != 1 {
		return nil, sqlerr.New(sqlerr.ErrColumnCheckConstraintReferencesOtherColumn, "Column check constraint '%s' references other column.", ck.Name)
	}
	sel := stmts[0].(*ast.SelectStmt)
	if plan.HasSubquery(sel.Fields.Fields[0].Expr) {
		// MySQL 8 refuses any subquery in a CHECK with 3815 (3812 is its non-boolean-expression
		// error). Refused before compiling: planning the subquery would wait for the metadata lock
		// this DDL holds exclusively (the statement hung until lock_wait_timeout).
		return nil, sqlerr.New(sqlerr.ErrCheckConstraintFunctionIsNotAllowed, "An expression of a check constraint '%s' contains disallowed function.", ck.Name)
	}
	c := (&plan.Planner{Ctx: pc}).NewCompiler(plan.TableScope(t, t.Name))
	return c.Compile(sel.Fields.Fields[0].Expr)
}

// checkExisting evaluates a new constraint over the table's rows (ALTER TABLE ADD CHECK).
func (d *Stmt) checkExisting(t *catalog.Table, ck *catalog.CheckConstraint) error {
	if !ck.Enforced {
		return nil
	}
	e, err := CompileCheck(d.pc, t, ck)
	if err != nil {
		return err
	}
	lo, hi := rowenc.IndexSpan(t.ID, rowenc.PrimaryIndexID)
	it, err := d.t.NewIter(lo, hi, false, true)
	if err != nil {
		return err
	}
	defer it.Close()
	for ; it.Valid(); it.Next() {
		row, err := exec.DecodeRow(t, it.Value())
		if err != nil {
			return err
		}
		v, err := e.Eval(d.env, row)
		if err != nil {
			return err
		}
		if b, null := types.ToBool(v); !null && !b {
			return sqlerr.New(sqlerr.ErrCheckConstraintViolated, "Check constraint '%s' is violated.", ck.Name)
		}
	}
	return it.Err()
}
