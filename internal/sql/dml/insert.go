package dml

import (
	"fmt"
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Insert runs INSERT / REPLACE, with IGNORE, ON DUPLICATE KEY UPDATE and INSERT ... SELECT.
func Insert(env *expr.Env, s Session, x *ast.InsertStmt) (proto.OK, error) {
	tbl, _, err := TableRef(s, x.Table.TableRefs)
	if err != nil {
		return proto.OK{}, err
	}
	cols, err := insertColumns(tbl, x.Columns)
	if err != nil {
		return proto.OK{}, err
	}
	ins := &Inserter{Env: env, S: s, Tbl: tbl, Ignore: x.IgnoreErr, Replace: x.IsReplace, Strict: s.Strict() && !x.IgnoreErr}
	if len(x.Lists) > 1 || x.Select != nil {
		// Many rows: their duplicate-key checks seek one engine iterator (see txn.LatestReader).
		ins.Latest = exec.TxnOf(env).NewLatestReader(rowenc.TableSpan(tbl.ID))
		defer ins.Latest.Close()
	}
	env.DivZeroErr = ins.Strict && s.SQLModeHas("ERROR_FOR_DIVISION_BY_ZERO")
	// Everything the statement plans (ON DUPLICATE KEY UPDATE, the SELECT or the VALUES
	// expressions) is planned, and its tables locked, before the first row is written.
	var src *exec.Select
	var values [][]expr.Expr
	err = s.Resolve(func(p *plan.Planner) error {
		if err := ins.compileOnDuplicate(p, x.OnDuplicate); err != nil {
			return err
		}
		var err error
		if x.Select != nil {
			src, err = p.PlanResultSet(x.Select.(ast.ResultSetNode), nil)
		} else {
			values, err = compileLists(p, tbl, cols, x.Lists, len(x.Columns) == 0)
		}
		return err
	})
	if err != nil {
		return proto.OK{}, err
	}
	if x.Select != nil {
		err = ins.insertSelect(src, cols)
	} else {
		err = ins.insertLists(values, cols, x.Lists)
	}
	if err != nil {
		return proto.OK{}, err
	}
	if ins.FirstAutoID != 0 {
		s.SetLastInsertID(ins.FirstAutoID)
	}
	ok := proto.OK{AffectedRows: ins.Affected, LastInsertID: ins.FirstAutoID}
	if ins.NRows > 1 || x.Select != nil {
		ok.Info = fmt.Sprintf("Records: %d  Duplicates: %d  Warnings: %d", ins.NRows, ins.Dups, s.WarningCount())
	}
	if ins.FirstAutoID == 0 && ins.lastExplicitAuto != 0 {
		ok.LastInsertID = ins.lastExplicitAuto
	}
	return ok, nil
}

// insertColumns resolves INSERT's target columns: the listed ones, or every visible column.
func insertColumns(tbl *catalog.Table, names []*ast.ColumnName) ([]int, error) {
	var cols []int
	if len(names) == 0 {
		for i, c := range tbl.Columns {
			if !c.Hidden {
				cols = append(cols, i)
			}
		}
		return cols, nil
	}
	seen := map[int]bool{}
	for _, cn := range names {
		i := tbl.Col(cn.Name.O)
		if i < 0 || tbl.Columns[i].Hidden {
			return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", cn.Name.O)
		}
		if seen[i] {
			return nil, sqlerr.New(sqlerr.ErrFieldSpecifiedTwice, "Column '%s' specified twice", cn.Name.O)
		}
		seen[i] = true
		cols = append(cols, i)
	}
	return cols, nil
}

// compileOnDuplicate compiles ON DUPLICATE KEY UPDATE against the existing row; VALUES(col) reads
// the new row.
func (ins *Inserter) compileOnDuplicate(p *plan.Planner, list []*ast.Assignment) error {
	ins.onDup = ins.onDup[:0] // planned again after DDL (plan.Resolve)
	if len(list) == 0 {
		return nil
	}
	tbl := ins.Tbl
	uc := p.NewCompiler(plan.TableScope(tbl, tbl.Name))
	uc.ValuesRow = func(name string) (expr.Expr, error) {
		i := tbl.Col(name)
		if i < 0 {
			return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", name)
		}
		return &expr.Closure{Typed: expr.Typed{T: tbl.Columns[i].Type}, Fn: func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
			if ins.NewRow == nil {
				return types.Null, nil
			}
			return ins.NewRow[i], nil
		}}, nil
	}
	for _, a := range list {
		i := tbl.Col(a.Column.Name.O)
		if i < 0 {
			return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", a.Column.Name.O)
		}
		if tbl.Columns[i].GenExpr != "" {
			if _, ok := a.Expr.(*ast.DefaultExpr); ok {
				continue // computed when the row is written (exec.UpdateRow)
			}
			return generatedValueError(tbl, tbl.Columns[i])
		}
		e, err := uc.Compile(a.Expr)
		if err != nil {
			return err
		}
		ins.onDup = append(ins.onDup, Assignment{Col: i, E: e})
	}
	return nil
}

// insertSelect inserts the rows of INSERT ... SELECT, read in full before the first is written.
func (ins *Inserter) insertSelect(pl *exec.Select, cols []int) error {
	env := ins.Env
	if pl.NVisible != len(cols) {
		return sqlerr.New(sqlerr.ErrWrongValueCount, "Column count doesn't match value count at row 1")
	}
	rows, err := exec.Materialize(env, pl)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := env.CheckKilled(); err != nil {
			return err
		}
		vals := make([]types.Value, len(cols))
		copy(vals, r[:len(cols)])
		if err := ins.InsertValues(cols, vals, nil); err != nil {
			return err
		}
	}
	return nil
}

// compileLists checks each VALUES row's length and compiles its values that are neither literals,
// parameters nor DEFAULT (all rows before the first is written, as MySQL resolves them). The result is nil
// when there is no such value (a many-row INSERT of literals builds no expression).
//
// A value may read a column of the row set earlier in its list (VALUES (1, a + 1), as MySQL
// allows), so the values are compiled against the table's row.
func compileLists(p *plan.Planner, tbl *catalog.Table, cols []int, lists [][]ast.ExprNode, allDefault bool) ([][]expr.Expr, error) {
	var out [][]expr.Expr
	var c *plan.Compiler
	for ri, list := range lists {
		if len(list) != len(cols) && !(len(list) == 0 && allDefault) {
			return nil, sqlerr.New(sqlerr.ErrWrongValueCount, "Column count doesn't match value count at row %d", ri+1)
		}
		for i, n := range list {
			switch n.(type) {
			case *ast.DefaultExpr, *driver.ValueExpr, *driver.ParamMarkerExpr:
				continue
			}
			if c == nil {
				c = p.NewCompiler(plan.TableScope(tbl, tbl.Name))
			}
			e, err := c.Compile(n)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = make([][]expr.Expr, len(lists))
			}
			if out[ri] == nil {
				out[ri] = make([]expr.Expr, len(list))
			}
			out[ri][i] = e
		}
	}
	return out, nil
}

// insertLists inserts the rows of INSERT ... VALUES; compiled holds the values compileLists
// compiled (nil: every value is a literal or DEFAULT). An empty VALUES () row takes every default.
func (ins *Inserter) insertLists(compiled [][]expr.Expr, cols []int, lists [][]ast.ExprNode) error {
	env := ins.Env
	// One vals and isDefault for every row: InsertValues copies what it keeps.
	vals := make([]types.Value, len(cols))
	isDefault := make([]bool, len(cols))
	if ai := ins.Tbl.AutoIncCol; ai >= 0 && !slices.Contains(cols, ai) {
		// Every row takes an auto-increment id (the column is not listed, so each row's value is
		// its default): reserve them together.
		if err := ins.reserveAuto(uint64(len(lists))); err != nil {
			return err
		}
	}
	if len(lists) > 1 {
		// Each row writes its primary key and every secondary index's entry.
		exec.TxnOf(env).Grow(len(lists) * len(ins.Tbl.Indexes))
	}
	for ri, list := range lists {
		if err := env.CheckKilled(); err != nil {
			return err
		}
		clear(vals)
		clear(isDefault)
		if len(list) == 0 {
			for i := range isDefault {
				isDefault[i] = true
			}
		}
		var rec []types.Value // the row as its expressions read it: defaults, then each value as set
		if compiled != nil && compiled[ri] != nil {
			rec = ins.recordDefaults()
		}
		for i, n := range list {
			if rec != nil && i > 0 {
				ins.setRecord(rec, cols[i-1], vals[i-1], isDefault[i-1])
			}
			switch v := n.(type) {
			case *ast.DefaultExpr:
				isDefault[i] = true
				continue
			case *driver.ValueExpr:
				// A literal is its value (what its compiled constant evaluates to), without
				// building an expression per value of a many-row INSERT.
				vals[i] = plan.DatumValue(&v.Datum)
				continue
			case *driver.ParamMarkerExpr:
				// Likewise a parameter (a prepared INSERT, or a cached text INSERT whose literals
				// are its arguments): what its compiled expr.Param evaluates to.
				if v.Order >= len(env.Params) {
					return sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to EXECUTE")
				}
				vals[i] = env.Params[v.Order]
				continue
			}
			var err error
			if vals[i], err = compiled[ri][i].Eval(env, rec); err != nil {
				return err
			}
		}
		ins.Row = ri + 1
		if err := ins.InsertValues(cols, vals, isDefault); err != nil {
			return err
		}
	}
	return nil
}

// recordDefaults is a row of the table before any value of a VALUES list is set: each column's
// default (an implicit one for NOT NULL columns without), as MySQL's record buffer starts, so an
// expression reading a column set later in the list reads that.
func (ins *Inserter) recordDefaults() []types.Value {
	rec := make([]types.Value, len(ins.Tbl.Columns))
	for ci, col := range ins.Tbl.Columns {
		switch {
		case col.DefaultNow:
			rec[ci] = expr.TimeValue(ins.Env.Now(), max(col.Type.Frac, 0))
		case col.HasDefault:
			rec[ci] = col.Default
		case col.NotNull:
			rec[ci] = col.Type.ImplicitDefault()
		default:
			rec[ci] = types.Null
		}
	}
	return rec
}

// setRecord records a value set in a VALUES list, as the column stores it (converted quietly: the
// row's own conversion reports its warnings and errors once, when it is written).
func (ins *Inserter) setRecord(rec []types.Value, ci int, v types.Value, isDefault bool) {
	if isDefault {
		return // the record holds the default already
	}
	col := ins.Tbl.Columns[ci]
	if out, _, err := types.Convert(v, &col.Type, types.ConvertCtx{Column: col.Name}); err == nil {
		v = out
	}
	rec[ci] = v
}
