package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// runDML plans and runs INSERT, REPLACE, UPDATE and DELETE inside the statement scope.
func (s *Session) runDML(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) error {
	var ok proto.OK
	err := s.stmtScope(env, func() error {
		var err error
		switch x := st.(type) {
		case *ast.InsertStmt:
			ok, err = s.insert(env, x)
		case *ast.UpdateStmt:
			ok, err = s.update(env, x)
		case *ast.DeleteStmt:
			ok, err = s.delete(env, x)
		}
		return err
	})
	if err != nil {
		return err
	}
	ok.Warnings = s.warningCount()
	s.rowCount = int64(ok.AffectedRows)
	return w.OK(ok, more)
}

func (s *Session) tableRef(n ast.ResultSetNode) (*catalog.Table, string, error) {
	var tn *ast.TableName
	alias := ""
	switch x := n.(type) {
	case *ast.Join:
		if x.Right != nil {
			return nil, "", sqlerr.New(sqlerr.ErrNotSupportedYet, "multi-table UPDATE and DELETE are not supported yet")
		}
		return s.tableRef(x.Left)
	case *ast.TableSource:
		alias = x.AsName.O
		t, ok := x.Source.(*ast.TableName)
		if !ok {
			return nil, "", sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported target table")
		}
		tn = t
	case *ast.TableName:
		tn = x
	default:
		return nil, "", sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported target table")
	}
	tbl, err := s.lookupTable(tn.Schema.O, tn.Name.O)
	if err != nil {
		return nil, "", err
	}
	if alias == "" {
		alias = tbl.Name
	}
	return tbl, alias, nil
}

func (s *Session) lookupTable(db, name string) (*catalog.Table, error) {
	if db == "" {
		db = s.CurDB
		if db == "" {
			return nil, sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
	}
	if err := s.lockDB(db); err != nil {
		return nil, err
	}
	tbl, ok := s.catalog().Table(db, name)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, name)
	}
	if err := s.useTable(tbl.DB, tbl.Name, true); err != nil {
		return nil, err
	}
	return tbl, nil
}

// insert runs INSERT / REPLACE, with IGNORE, ON DUPLICATE KEY UPDATE and INSERT ... SELECT.
func (s *Session) insert(env *expr.Env, x *ast.InsertStmt) (proto.OK, error) {
	tbl, _, err := s.tableRef(x.Table.TableRefs)
	if err != nil {
		return proto.OK{}, err
	}
	// Target columns.
	var cols []int
	switch {
	case len(x.Columns) > 0:
		seen := map[int]bool{}
		for _, cn := range x.Columns {
			i := tbl.Col(cn.Name.O)
			if i < 0 || tbl.Columns[i].Hidden {
				return proto.OK{}, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", cn.Name.O)
			}
			if seen[i] {
				return proto.OK{}, sqlerr.New(sqlerr.ErrFieldSpecifiedTwice, "Column '%s' specified twice", cn.Name.O)
			}
			seen[i] = true
			cols = append(cols, i)
		}
	default:
		for i, c := range tbl.Columns {
			if !c.Hidden {
				cols = append(cols, i)
			}
		}
	}
	p := &plan.Planner{Ctx: s.planContext()}
	c := p.NewCompiler(&plan.Scope{})
	ins := &inserter{env: env, s: s, tbl: tbl, ignore: x.IgnoreErr, replace: x.IsReplace, strict: s.strict() && !x.IgnoreErr}
	if len(x.Lists) > 1 || x.Select != nil {
		// Many rows: their duplicate-key checks seek one engine iterator (see txn.LatestReader).
		ins.latest = exec.TxnOf(env).NewLatestReader(rowenc.TableSpan(tbl.ID))
		defer ins.latest.Close()
	}
	env.DivZeroErr = ins.strict && s.sqlModeHas("ERROR_FOR_DIVISION_BY_ZERO")
	// ON DUPLICATE KEY UPDATE compiles against the existing row; VALUES(col) reads the new row.
	if len(x.OnDuplicate) > 0 {
		sc := plan.TableScope(tbl, tbl.Name)
		uc := p.NewCompiler(sc)
		uc.ValuesRow = func(name string) (expr.Expr, error) {
			i := tbl.Col(name)
			if i < 0 {
				return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", name)
			}
			return &expr.Closure{Typed: expr.Typed{T: tbl.Columns[i].Type}, Fn: func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
				if ins.newRow == nil {
					return types.Null, nil
				}
				return ins.newRow[i], nil
			}}, nil
		}
		for _, a := range x.OnDuplicate {
			i := tbl.Col(a.Column.Name.O)
			if i < 0 {
				return proto.OK{}, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", a.Column.Name.O)
			}
			e, err := uc.Compile(a.Expr)
			if err != nil {
				return proto.OK{}, err
			}
			ins.onDup = append(ins.onDup, assignment{col: i, e: e})
		}
	}
	if x.Select != nil {
		pl, err := p.PlanResultSet(x.Select.(ast.ResultSetNode), nil)
		if err != nil {
			return proto.OK{}, err
		}
		if pl.NVisible != len(cols) {
			return proto.OK{}, sqlerr.New(sqlerr.ErrWrongValueCount, "Column count doesn't match value count at row 1")
		}
		rows, err := exec.Materialize(env, pl)
		if err != nil {
			return proto.OK{}, err
		}
		for _, r := range rows {
			if err := env.CheckKilled(); err != nil {
				return proto.OK{}, err
			}
			vals := make([]types.Value, len(cols))
			copy(vals, r[:len(cols)])
			if err := ins.insertValues(cols, vals, nil); err != nil {
				return proto.OK{}, err
			}
		}
	} else {
		lists := x.Lists
		for ri, list := range lists {
			if err := env.CheckKilled(); err != nil {
				return proto.OK{}, err
			}
			if len(list) != len(cols) && !(len(list) == 0 && len(x.Columns) == 0) {
				return proto.OK{}, sqlerr.New(sqlerr.ErrWrongValueCount, "Column count doesn't match value count at row %d", ri+1)
			}
			vals := make([]types.Value, len(cols))
			isDefault := make([]bool, len(cols))
			if len(list) == 0 {
				for i := range isDefault {
					isDefault[i] = true
				}
			}
			for i, n := range list {
				if _, ok := n.(*ast.DefaultExpr); ok {
					isDefault[i] = true
					continue
				}
				if ve, ok := n.(*driver.ValueExpr); ok {
					// A literal is its value (what its compiled constant evaluates to), without
					// building an expression per value of a many-row INSERT.
					vals[i] = plan.DatumValue(&ve.Datum)
					continue
				}
				e, err := c.Compile(n)
				if err != nil {
					return proto.OK{}, err
				}
				if vals[i], err = e.Eval(env, nil); err != nil {
					return proto.OK{}, err
				}
			}
			ins.row = ri + 1
			if err := ins.insertValues(cols, vals, isDefault); err != nil {
				return proto.OK{}, err
			}
		}
	}
	if ins.firstAutoID != 0 {
		s.lastInsertID = ins.firstAutoID
	}
	ok := proto.OK{AffectedRows: ins.affected, LastInsertID: ins.firstAutoID}
	if ins.nRows > 1 || x.Select != nil {
		ok.Info = fmt.Sprintf("Records: %d  Duplicates: %d  Warnings: %d", ins.nRows, ins.dups, len(s.warnings))
	}
	if ins.firstAutoID == 0 && ins.lastExplicitAuto != 0 {
		ok.LastInsertID = ins.lastExplicitAuto
	}
	return ok, nil
}

type assignment struct {
	col int
	e   expr.Expr
}

// inserter carries the state of one INSERT statement.
type inserter struct {
	env              *expr.Env
	s                *Session
	tbl              *catalog.Table
	ignore, replace  bool
	strict           bool
	modeLoaded       bool // noZeroDate and noZeroInDate hold the session's sql_mode flags
	noZeroDate       bool
	noZeroInDate     bool
	onDup            []assignment
	newRow           []types.Value
	row              int
	affected         uint64
	nRows            uint64
	dups             uint64
	firstAutoID      uint64
	allocated        uint64 // id allocated for the row being written
	lastExplicitAuto uint64
	latest           *txn.LatestReader // the duplicate-key checks' reads, for many rows; nil: GetLatest
}

// insertValues builds the full row from target columns and defaults, converts it, and writes it.
func (ins *inserter) insertValues(cols []int, vals []types.Value, isDefault []bool) error {
	tbl := ins.tbl
	row := make([]types.Value, len(tbl.Columns))
	given := make([]bool, len(tbl.Columns))
	for i, ci := range cols {
		if isDefault != nil && isDefault[i] {
			continue
		}
		row[ci] = vals[i]
		given[ci] = true
	}
	ins.nRows++
	if ins.row == 0 {
		ins.row = int(ins.nRows)
	}
	for ci, col := range tbl.Columns {
		if !given[ci] {
			v, err := ins.defaultValue(col)
			if err != nil {
				return err
			}
			row[ci] = v
			continue
		}
		if col.AutoInc && !col.Hidden {
			continue // converted below, after allocation
		}
		v, err := ins.convert(row[ci], col)
		if err != nil {
			return err
		}
		row[ci] = v
	}
	if err := ins.fillAuto(row, given); err != nil {
		return err
	}
	ins.newRow = row
	defer func() { ins.newRow = nil; ins.row = 0 }()
	return ins.write(row)
}

func (ins *inserter) convert(v types.Value, col *catalog.Column) (types.Value, error) {
	if v.IsNull() {
		if col.NotNull && !col.AutoInc {
			if ins.strict {
				return v, sqlerr.New(sqlerr.ErrBadNull, "Column '%s' cannot be null", col.Name)
			}
			ins.s.addWarning("Warning", sqlerr.ErrBadNull, fmt.Sprintf("Column '%s' cannot be null", col.Name))
			return implicitDefault(col), nil
		}
		return v, nil
	}
	if !ins.modeLoaded {
		ins.noZeroDate, ins.noZeroInDate = ins.s.sqlModeHas("NO_ZERO_DATE"), ins.s.sqlModeHas("NO_ZERO_IN_DATE")
		ins.modeLoaded = true
	}
	out, warns, err := types.Convert(v, &col.Type, types.ConvertCtx{Strict: ins.strict, Column: col.Name, Row: ins.row, NoZeroDate: ins.noZeroDate, NoZeroInDate: ins.noZeroInDate})
	if err != nil {
		return v, err
	}
	for _, w := range warns {
		ins.s.addWarning(w.Level, w.Code, w.Message)
	}
	return out, nil
}

// implicitDefault is the value MySQL uses for a NOT NULL column without a default outside strict mode.
func implicitDefault(col *catalog.Column) types.Value {
	t := &col.Type
	switch {
	case t.IsInteger():
		if t.Unsigned {
			return types.NewUint(0)
		}
		return types.NewInt(0)
	case t.Tp == mysql.TypeFloat || t.Tp == mysql.TypeDouble:
		return types.NewFloat(0)
	case t.Tp == mysql.TypeNewDecimal:
		v, _, _ := types.Convert(types.NewInt(0), t, types.ConvertCtx{})
		return v
	case t.Tp == mysql.TypeDate:
		return types.NewDate(0)
	case t.Tp == mysql.TypeDatetime || t.Tp == mysql.TypeTimestamp:
		return types.NewDatetime(0, max(t.Frac, 0))
	case t.Tp == mysql.TypeDuration:
		return types.NewDuration(0, max(t.Frac, 0))
	case t.IsBinaryString():
		return types.NewBytes("")
	case t.Tp == mysql.TypeEnum && len(t.Elems) > 0:
		return types.NewString(t.Elems[0])
	case t.Tp == mysql.TypeBit:
		return types.NewUint(0)
	case t.Tp == mysql.TypeJSON:
		return types.NewString("null")
	}
	return types.NewString("")
}

func (ins *inserter) defaultValue(col *catalog.Column) (types.Value, error) {
	switch {
	case col.Hidden || col.AutoInc:
		return types.Null, nil
	case col.DefaultNow:
		return expr.TimeValue(ins.env.Now(), max(col.Type.Frac, 0)), nil
	case col.HasDefault:
		return col.Default, nil
	case !col.NotNull:
		return types.Null, nil
	case col.Type.Tp == mysql.TypeEnum:
		// A NOT NULL ENUM defaults to its first member, in strict mode too.
		return implicitDefault(col), nil
	}
	if ins.strict {
		return types.Null, sqlerr.New(sqlerr.ErrNoDefaultForField, "Field '%s' doesn't have a default value", col.Name)
	}
	ins.s.addWarning("Warning", sqlerr.ErrNoDefaultForField, fmt.Sprintf("Field '%s' doesn't have a default value", col.Name))
	return implicitDefault(col), nil
}

// fillAuto allocates the auto-increment column (NULL or 0 ask for a value, unless
// NO_AUTO_VALUE_ON_ZERO) and the hidden row id.
func (ins *inserter) fillAuto(row []types.Value, given []bool) error {
	tbl := ins.tbl
	for ci, col := range tbl.Columns {
		if !col.AutoInc {
			continue
		}
		v := row[ci]
		zero := !v.IsNull() && types.ToFloat(v) == 0 && !ins.s.sqlModeHas("NO_AUTO_VALUE_ON_ZERO")
		if v.IsNull() || zero || col.Hidden {
			id, err := ins.s.db.nextAutoInc(ins.env, tbl, col, 1)
			if err != nil {
				return err
			}
			if col.Hidden {
				row[ci] = types.NewUint(id)
				continue
			}
			cv, err := ins.convert(types.NewUint(id), col)
			if err != nil {
				return err
			}
			row[ci] = cv
			ins.allocated = id
			continue
		}
		cv, err := ins.convert(v, col)
		if err != nil {
			return err
		}
		row[ci] = cv
		if f := types.ToFloat(cv); f > 0 {
			if err := ins.s.db.observeAutoInc(ins.env, tbl, col, expr.ToUint64(cv)); err != nil {
				return err
			}
			// The OK packet reports an explicitly inserted auto-increment value too.
			ins.lastExplicitAuto = expr.ToUint64(cv)
		}
	}
	return nil
}

// write inserts a row, resolving duplicate keys as REPLACE, IGNORE or ON DUPLICATE KEY UPDATE say.
func (ins *inserter) write(row []types.Value) error {
	env, tbl := ins.env, ins.tbl
	for attempt := 0; ; attempt++ {
		if attempt > 100 {
			return sqlerr.New(sqlerr.ErrUnknownError, "too many duplicate-key retries on %s", tbl.Name)
		}
		dupKey, dupRow, dupIdx, err := exec.FindDuplicate(env, tbl, row, nil, ins.latest)
		if err != nil {
			return err
		}
		if dupRow == nil {
			if err := exec.PutRow(env, tbl, row, nil); err != nil {
				return err
			}
			ins.affected++
			if ins.firstAutoID == 0 && ins.allocated != 0 {
				ins.firstAutoID = ins.allocated // LAST_INSERT_ID is the first id actually inserted
			}
			ins.allocated = 0
			return nil
		}
		switch {
		case ins.replace && replacesInPlace(tbl, dupIdx, dupRow, row):
			// MySQL updates in place when the key is the table's last unique one, and an identical
			// row is then neither deleted nor counted twice.
			ins.affected++
			if ins.firstAutoID == 0 && ins.allocated != 0 {
				ins.firstAutoID = ins.allocated
			}
			ins.allocated = 0
			return nil
		case ins.replace:
			if err := exec.DeleteRow(env, tbl, dupKey, dupRow); err != nil {
				return err
			}
			ins.affected++
			continue
		case len(ins.onDup) > 0:
			newRow := append([]types.Value(nil), dupRow...)
			for _, a := range ins.onDup {
				v, err := a.e.Eval(env, newRow)
				if err != nil {
					return err
				}
				col := tbl.Columns[a.col]
				cv, err := ins.convert(v, col)
				if err != nil {
					return err
				}
				newRow[a.col] = cv
			}
			changed, err := exec.UpdateRow(env, tbl, dupKey, dupRow, newRow, ins.s.strict(), ins.row)
			if err != nil {
				return err
			}
			if changed {
				ins.affected += 2
			} else if ins.s.FoundRowsFlag {
				ins.affected++ // CLIENT_FOUND_ROWS: an unchanged duplicate counts as found
			}
			if ai := tbl.AutoIncCol; ai >= 0 && !tbl.Columns[ai].Hidden && ins.firstAutoID == 0 {
				ins.lastExplicitAuto = expr.ToUint64(dupRow[ai])
			}
			ins.dups++
			return nil
		case ins.ignore:
			ins.dups++
			ins.s.addWarning("Warning", sqlerr.ErrDupEntry, exec.DupMessage(tbl, dupIdx, row))
			return nil
		default:
			return sqlerr.New(sqlerr.ErrDupEntry, "%s", exec.DupMessage(tbl, dupIdx, row))
		}
	}
}

// replacesInPlace reports whether REPLACE finds the row it writes already there, under the table's
// last unique key (visible columns compared).
func replacesInPlace(tbl *catalog.Table, ix *catalog.Index, old, row []types.Value) bool {
	last := ix
	for _, x := range tbl.Indexes {
		if x.Unique || x.Primary {
			last = x
		}
	}
	if last != ix {
		return false
	}
	for i, c := range tbl.Columns {
		if c.Hidden {
			continue
		}
		if old[i].K != row[i].K || (!old[i].IsNull() && types.Compare(old[i], row[i], nil) != 0) {
			return false
		}
	}
	return true
}

// targetPlan plans the row source of UPDATE/DELETE: a locking current read of one table.
func (s *Session) targetPlan(tbl *catalog.Table, alias string, where ast.ExprNode, order *ast.OrderByClause, limit *ast.Limit) (*exec.Select, error) {
	sel := &ast.SelectStmt{
		SelectStmtOpts: &ast.SelectStmtOpts{SQLCache: true},
		Fields:         &ast.FieldList{Fields: []*ast.SelectField{{WildCard: &ast.WildCardField{}}}},
		From: &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{
			Source: &ast.TableName{Schema: ast.NewCIStr(tbl.DB), Name: ast.NewCIStr(tbl.Name)}, AsName: ast.NewCIStr(alias)}}},
		Where:    where,
		OrderBy:  order,
		Limit:    limit,
		LockInfo: &ast.SelectLockInfo{LockType: ast.SelectLockForUpdate},
	}
	pl, err := (&plan.Planner{Ctx: s.planContext()}).PlanSelect(sel, nil)
	if err != nil {
		return nil, err
	}
	// Return whole rows, hidden columns included.
	pl.Proj = pl.Proj[:0]
	for i, c := range tbl.Columns {
		pl.Proj = append(pl.Proj, &expr.Col{Typed: expr.Typed{T: c.Type}, Idx: i, Name: c.Name})
	}
	pl.NVisible = len(pl.Proj)
	return pl, nil
}

func (s *Session) update(env *expr.Env, x *ast.UpdateStmt) (proto.OK, error) {
	if x.MultipleTable {
		return proto.OK{}, sqlerr.New(sqlerr.ErrNotSupportedYet, "multi-table UPDATE is not supported yet")
	}
	tbl, alias, err := s.tableRef(x.TableRefs.TableRefs)
	if err != nil {
		return proto.OK{}, err
	}
	pl, err := s.targetPlan(tbl, alias, x.Where, x.Order, x.Limit)
	if err != nil {
		return proto.OK{}, err
	}
	env.DivZeroErr = s.strict() && !x.IgnoreErr && s.sqlModeHas("ERROR_FOR_DIVISION_BY_ZERO")
	c := (&plan.Planner{Ctx: s.planContext()}).NewCompiler(plan.TableScope(tbl, alias))
	var sets []assignment
	for _, a := range x.List {
		if a.Column.Table.O != "" && !strings.EqualFold(a.Column.Table.O, alias) {
			return proto.OK{}, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s.%s' in 'field list'", a.Column.Table.O, a.Column.Name.O)
		}
		i := tbl.Col(a.Column.Name.O)
		if i < 0 || tbl.Columns[i].Hidden {
			return proto.OK{}, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", a.Column.Name.O)
		}
		var e expr.Expr
		if _, ok := a.Expr.(*ast.DefaultExpr); ok {
			col := tbl.Columns[i]
			e = &expr.Closure{Typed: expr.Typed{T: col.Type}, Fn: func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
				ins := &inserter{env: env, s: s, tbl: tbl, strict: s.strict()}
				return ins.defaultValue(col)
			}}
		} else if e, err = c.Compile(a.Expr); err != nil {
			return proto.OK{}, err
		}
		sets = append(sets, assignment{col: i, e: e})
	}
	rows, err := exec.Materialize(env, pl)
	if err != nil {
		return proto.OK{}, err
	}
	strict := s.strict() && !x.IgnoreErr
	ins := &inserter{env: env, s: s, tbl: tbl, strict: strict}
	var matched, changed uint64
	for ri, old := range rows {
		if err := env.CheckKilled(); err != nil {
			return proto.OK{}, err
		}
		ins.row = ri + 1
		matched++
		nr := append([]types.Value(nil), old...)
		for _, a := range sets {
			v, err := a.e.Eval(env, nr)
			if err != nil {
				return proto.OK{}, err
			}
			cv, err := ins.convert(v, tbl.Columns[a.col])
			if err != nil {
				return proto.OK{}, err
			}
			nr[a.col] = cv
		}
		for ci, col := range tbl.Columns {
			if col.OnUpdateNow && !assigned(sets, ci) && !rowsEqual(old, nr) {
				nr[ci] = expr.TimeValue(env.Now(), max(col.Type.Frac, 0))
			}
		}
		ok, err := exec.UpdateRow(env, tbl, exec.PrimaryKey(nil, tbl, old), old, nr, strict, ri+1)
		if err != nil {
			if x.IgnoreErr && sqlerr.Is(err, sqlerr.ErrDupEntry) {
				s.addWarning("Warning", sqlerr.ErrDupEntry, sqlerr.As(err).Message)
				continue
			}
			return proto.OK{}, err
		}
		if ok {
			changed++
		}
	}
	affected := changed
	if s.FoundRowsFlag {
		affected = matched
	}
	return proto.OK{AffectedRows: affected, Info: fmt.Sprintf("Rows matched: %d  Changed: %d  Warnings: %d", matched, changed, len(s.warnings))}, nil
}

func assigned(sets []assignment, ci int) bool {
	for _, a := range sets {
		if a.col == ci {
			return true
		}
	}
	return false
}

func rowsEqual(a, b []types.Value) bool {
	for i := range a {
		if a[i].K != b[i].K || (!a[i].IsNull() && types.Compare(a[i], b[i], nil) != 0) {
			return false
		}
	}
	return true
}

func (s *Session) delete(env *expr.Env, x *ast.DeleteStmt) (proto.OK, error) {
	if x.IsMultiTable {
		return proto.OK{}, sqlerr.New(sqlerr.ErrNotSupportedYet, "multi-table DELETE is not supported yet")
	}
	tbl, alias, err := s.tableRef(x.TableRefs.TableRefs)
	if err != nil {
		return proto.OK{}, err
	}
	pl, err := s.targetPlan(tbl, alias, x.Where, x.Order, x.Limit)
	if err != nil {
		return proto.OK{}, err
	}
	rows, err := exec.Materialize(env, pl)
	if err != nil {
		return proto.OK{}, err
	}
	for _, r := range rows {
		if err := env.CheckKilled(); err != nil {
			return proto.OK{}, err
		}
		if err := exec.DeleteRow(env, tbl, exec.PrimaryKey(nil, tbl, r), r); err != nil {
			return proto.OK{}, err
		}
	}
	return proto.OK{AffectedRows: uint64(len(rows))}, nil
}
