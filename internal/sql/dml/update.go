package dml

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// TableRef resolves the single target table of UPDATE/DELETE (and INSERT's table) with its alias.
func TableRef(s Session, n ast.ResultSetNode) (*catalog.Table, string, error) {
	var tn *ast.TableName
	alias := ""
	switch x := n.(type) {
	case *ast.Join:
		if x.Right != nil {
			return nil, "", sqlerr.New(sqlerr.ErrNotSupportedYet, "multi-table UPDATE and DELETE are not supported yet")
		}
		return TableRef(s, x.Left)
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
	tbl, err := LookupTable(s, tn.Schema.O, tn.Name.O)
	if err != nil {
		return nil, "", err
	}
	if alias == "" {
		alias = tbl.Name
	}
	return tbl, alias, nil
}

// LookupTable finds a base table to write (db "" is the current database), taking the
// database's metadata lock and recording the table's use for writing.
func LookupTable(s Session, db, name string) (*catalog.Table, error) {
	ctx := s.Plan()
	if db == "" {
		db = ctx.CurrentDB()
		if db == "" {
			return nil, sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
	}
	if err := s.LockDB(db); err != nil {
		return nil, err
	}
	tbl, ok := ctx.Catalog().Table(db, name)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, name)
	}
	if err := s.UseTable(tbl.DB, tbl.Name, true); err != nil {
		return nil, err
	}
	return tbl, nil
}

// TargetPlan plans the row source of UPDATE/DELETE: a locking current read of one table.
func TargetPlan(s Session, tbl *catalog.Table, alias string, where ast.ExprNode, order *ast.OrderByClause, limit *ast.Limit) (*exec.Select, error) {
	return TargetPlanWith(s, nil, tbl, alias, where, order, limit)
}

// TargetPlanWith is TargetPlan with the statement's WITH clause (WITH ... UPDATE/DELETE, MySQL 8):
// its CTEs are in scope for the WHERE clause's subqueries.
func TargetPlanWith(s Session, with *ast.WithClause, tbl *catalog.Table, alias string, where ast.ExprNode, order *ast.OrderByClause, limit *ast.Limit) (*exec.Select, error) {
	if order != nil {
		if err := plan.NoWindowFuncs(order); err != nil { // 3593, as MySQL
			return nil, err
		}
	}
	sel := &ast.SelectStmt{
		With:           with,
		SelectStmtOpts: &ast.SelectStmtOpts{SQLCache: true},
		Fields:         &ast.FieldList{Fields: []*ast.SelectField{{WildCard: &ast.WildCardField{}}}},
		From: &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{
			Source: &ast.TableName{Schema: ast.NewCIStr(tbl.DB), Name: ast.NewCIStr(tbl.Name)}, AsName: ast.NewCIStr(alias)}}},
		Where:    where,
		OrderBy:  order,
		Limit:    limit,
		LockInfo: &ast.SelectLockInfo{LockType: ast.SelectLockForUpdate},
	}
	var pl *exec.Select
	err := s.Resolve(func(p *plan.Planner) (err error) {
		pl, err = p.PlanSelect(sel, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Return whole rows, hidden columns included; an ORDER BY key keeps its expression (a table
	// column, or a hidden sort column after the row, trimmed before the rows are returned).
	old := pl.Proj
	pl.Proj = make([]expr.Expr, 0, len(tbl.Columns)+len(pl.Order))
	for i, c := range tbl.Columns {
		pl.Proj = append(pl.Proj, &expr.Col{Typed: expr.Typed{T: c.Type}, Idx: i, Name: c.Name})
	}
	pl.NVisible = len(pl.Proj)
	for i, k := range pl.Order {
		e := old[k.Idx]
		if c, ok := e.(*expr.Col); ok && c.Idx < len(tbl.Columns) {
			pl.Order[i].Idx = c.Idx
			continue
		}
		pl.Order[i].Idx = len(pl.Proj)
		pl.Proj = append(pl.Proj, e)
	}
	return pl, nil
}

// target resolves the one table of a single-table UPDATE or DELETE (verb names it in errors) and
// plans the locking read of its matching rows.
func target(s Session, verb string, with *ast.WithClause, refs ast.ResultSetNode, where ast.ExprNode, order *ast.OrderByClause, limit *ast.Limit) (*catalog.Table, string, *exec.Select, error) {
	if err := cteTarget(with, refs, verb); err != nil {
		return nil, "", nil, err
	}
	tbl, alias, err := TableRef(s, refs)
	if err != nil {
		return nil, "", nil, err
	}
	pl, err := TargetPlanWith(s, with, tbl, alias, where, order, limit)
	return tbl, alias, pl, err
}

// Update runs a single-table UPDATE: the matching rows are read (and locked) in full first, then
// each is updated in place.
func Update(env *expr.Env, s Session, x *ast.UpdateStmt) (proto.OK, error) {
	p, err := PlanUpdate(s, x)
	if err != nil {
		return proto.OK{}, err
	}
	return p.Update(env, s, x)
}

// Planned is a single-table UPDATE or DELETE planned: its target table, the locking read of the
// rows it changes and UPDATE's compiled SET list. It keeps no state of a run (the plans of
// prepared SELECTs are reused the same way), so a prepared statement or a plan-cache entry may
// run it again instead of planning each execution, as long as what it was planned on holds: the
// caller checks the catalog, takes the target's metadata lock and table use again (LockDB,
// UseTable) and reuses only statements without subqueries or user variables (Reusable).
type Planned struct {
	Tbl  *catalog.Table
	pl   *exec.Select
	sets []Assignment
}

// PlanUpdate resolves UPDATE's target table, plans the locking read of its rows and compiles its
// SET list.
func PlanUpdate(s Session, x *ast.UpdateStmt) (*Planned, error) {
	if x.MultipleTable {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "multi-table UPDATE is not supported yet")
	}
	tbl, alias, pl, err := target(s, "UPDATE", x.With, x.TableRefs.TableRefs, x.Where, x.Order, x.Limit)
	if err != nil {
		return nil, err
	}
	sets, err := compileUpdateSets(s, x.With, tbl, alias, x.List)
	if err != nil {
		return nil, err
	}
	return &Planned{Tbl: tbl, pl: pl, sets: sets}, nil
}

// Update runs the planned UPDATE x.
func (p *Planned) Update(env *expr.Env, s Session, x *ast.UpdateStmt) (proto.OK, error) {
	tbl, sets := p.Tbl, p.sets
	env.DivZeroErr = s.Strict() && !x.IgnoreErr && s.SQLModeHas("ERROR_FOR_DIVISION_BY_ZERO")
	rows, err := exec.Materialize(env, p.pl)
	if err != nil {
		return proto.OK{}, err
	}
	strict := s.Strict() && !x.IgnoreErr
	ins := &Inserter{Env: env, S: s, Tbl: tbl, Strict: strict}
	var matched, changed uint64
	for ri, old := range rows {
		if err := env.CheckKilled(); err != nil {
			return proto.OK{}, err
		}
		ins.Row = ri + 1
		matched++
		ok, err := ins.updateRow(sets, old, x.IgnoreErr)
		if err != nil {
			return proto.OK{}, err
		}
		if ok {
			changed++
		}
	}
	affected := changed
	if s.ClientFoundRows() {
		affected = matched
	}
	return proto.OK{AffectedRows: affected, Info: fmt.Sprintf("Rows matched: %d  Changed: %d  Warnings: %d", matched, changed, s.WarningCount())}, nil
}

// compileUpdateSets compiles UPDATE's SET list against the target table's row.
func compileUpdateSets(s Session, with *ast.WithClause, tbl *catalog.Table, alias string, list []*ast.Assignment) ([]Assignment, error) {
	var sets []Assignment
	err := s.Resolve(func(p *plan.Planner) error {
		restore, err := p.PushWith(with) // the SET list's subqueries see the statement's CTEs
		if err != nil {
			return err
		}
		defer restore()
		sets, err = compileSets(p.NewCompiler(plan.TableScope(tbl, alias)), s, tbl, alias, list)
		return err
	})
	return sets, err
}

// compileSets compiles SET col = expr assignments with c.
func compileSets(c *plan.Compiler, s Session, tbl *catalog.Table, alias string, list []*ast.Assignment) ([]Assignment, error) {
	var sets []Assignment
	for _, a := range list {
		if a.Column.Table.O != "" && !strings.EqualFold(a.Column.Table.O, alias) {
			return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s.%s' in 'field list'", a.Column.Table.O, a.Column.Name.O)
		}
		i := tbl.Col(a.Column.Name.O)
		if i < 0 || tbl.Columns[i].Hidden {
			return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", a.Column.Name.O)
		}
		var e expr.Expr
		if _, ok := a.Expr.(*ast.DefaultExpr); ok {
			if tbl.Columns[i].GenExpr != "" {
				continue // SET gen = DEFAULT: the row's write computes it
			}
			e = DefaultOf(s, tbl, tbl.Columns[i])
		} else if tbl.Columns[i].GenExpr != "" {
			return nil, generatedValueError(tbl, tbl.Columns[i])
		} else {
			var err error
			if e, err = c.Compile(a.Expr); err != nil {
				return nil, err
			}
		}
		sets = append(sets, Assignment{Col: i, E: e})
	}
	return sets, nil
}

// DefaultOf is SET col = DEFAULT: the column's default, read when the row is written (a
// DEFAULT CURRENT_TIMESTAMP is the statement's time).
func DefaultOf(s Session, tbl *catalog.Table, col *catalog.Column) expr.Expr {
	return &expr.Closure{Typed: expr.Typed{T: col.Type}, Fn: func(env *expr.Env, row []types.Value, _ []expr.Expr) (types.Value, error) {
		ins := &Inserter{Env: env, S: s, Tbl: tbl, Strict: s.Strict()}
		if len(row) < len(tbl.Columns) {
			row = nil
		}
		return ins.defaultIn(col, row)
	}}
}

// updateRow applies sets to one old row and writes it; ignoreDup turns a duplicate key into a
// warning (UPDATE IGNORE). It reports whether the row changed.
func (ins *Inserter) updateRow(sets []Assignment, old []types.Value, ignoreDup bool) (bool, error) {
	env, tbl := ins.Env, ins.Tbl
	nr := append([]types.Value(nil), old...)
	for _, a := range sets {
		v, err := a.E.Eval(env, nr)
		if err != nil {
			return false, err
		}
		cv, err := ins.Convert(v, tbl.Columns[a.Col])
		if err != nil {
			return false, err
		}
		nr[a.Col] = cv
	}
	ins.stampOnUpdate(sets, old, nr)
	ok, err := exec.UpdateRow(env, tbl, exec.PrimaryKey(nil, tbl, old), old, nr, ins.Strict, ins.Row)
	if err != nil {
		if ignoreDup && sqlerr.Is(err, sqlerr.ErrDupEntry) {
			ins.S.AddWarning("Warning", sqlerr.ErrDupEntry, sqlerr.As(err).Message)
			return false, nil
		}
		return false, err
	}
	if ok {
		if err := ins.observeUpdatedAuto(old, nr); err != nil {
			return false, err
		}
	}
	return ok, nil
}

// observeUpdatedAuto moves the table's auto-increment counter past a value an update gave the
// auto-increment column, as MySQL 8.0 does (InnoDB persists it): an UPDATE that sets id = 1000
// makes the next inserted id 1001, instead of a duplicate-key error once the counter reaches 1000.
func (ins *Inserter) observeUpdatedAuto(old, nr []types.Value) error {
	ai := ins.Tbl.AutoIncCol
	if ai < 0 || ins.Tbl.Columns[ai].Hidden || nr[ai].IsNull() || types.Compare(old[ai], nr[ai], nil) == 0 {
		return nil
	}
	if types.ToFloat(nr[ai]) <= 0 {
		return nil
	}
	return ins.S.ObserveAutoInc(ins.Env, ins.Tbl, ins.Tbl.Columns[ai], expr.ToUint64(nr[ai]))
}

// stampOnUpdate sets the ON UPDATE CURRENT_TIMESTAMP columns that sets did not assign, when the
// row changed: UPDATE and the update branch of INSERT ... ON DUPLICATE KEY UPDATE, as MySQL.
func (ins *Inserter) stampOnUpdate(sets []Assignment, old, nr []types.Value) {
	if rowsEqual(old, nr) {
		return
	}
	for ci, col := range ins.Tbl.Columns {
		if col.OnUpdateNow && !assigned(sets, ci) {
			nr[ci] = expr.TimeValue(ins.Env.Now(), max(col.Type.Frac, 0))
		}
	}
}

func assigned(sets []Assignment, ci int) bool {
	for _, a := range sets {
		if a.Col == ci {
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

// Delete runs a single-table DELETE: the matching rows are read (and locked) in full first.
func Delete(env *expr.Env, s Session, x *ast.DeleteStmt) (proto.OK, error) {
	p, err := PlanDelete(s, x)
	if err != nil {
		return proto.OK{}, err
	}
	return p.Delete(env, s, x)
}

// PlanDelete resolves DELETE's target table and plans the locking read of its rows.
func PlanDelete(s Session, x *ast.DeleteStmt) (*Planned, error) {
	if x.IsMultiTable {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "multi-table DELETE is not supported yet")
	}
	tbl, _, pl, err := target(s, "DELETE", x.With, x.TableRefs.TableRefs, x.Where, x.Order, x.Limit)
	if err != nil {
		return nil, err
	}
	return &Planned{Tbl: tbl, pl: pl}, nil
}

// Delete runs the planned DELETE.
func (p *Planned) Delete(env *expr.Env, s Session, x *ast.DeleteStmt) (proto.OK, error) {
	rows, err := exec.Materialize(env, p.pl)
	if err != nil {
		return proto.OK{}, err
	}
	for _, r := range rows {
		if err := env.CheckKilled(); err != nil {
			return proto.OK{}, err
		}
		if err := exec.DeleteRow(env, p.Tbl, exec.PrimaryKey(nil, p.Tbl, r), r); err != nil {
			return proto.OK{}, err
		}
	}
	return proto.OK{AffectedRows: uint64(len(rows))}, nil
}

// Reusable reports whether an UPDATE or DELETE's plan may be run again (Planned): a single table
// named without a WITH clause, and no subquery (its tables would need their own metadata locks and
// uses) and no user variable (a read's type is the value's at planning, an assignment must run
// its side effect through the statement's own compile) anywhere in it.
func Reusable(st ast.StmtNode) bool {
	switch x := st.(type) {
	case *ast.UpdateStmt:
		if x.MultipleTable || x.With != nil {
			return false
		}
	case *ast.DeleteStmt:
		if x.IsMultiTable || x.With != nil {
			return false
		}
	default:
		return false
	}
	v := &reuseCheck{ok: true}
	st.Accept(v)
	return v.ok
}

type reuseCheck struct{ ok bool }

func (v *reuseCheck) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr, *ast.VariableExpr,
		*ast.SelectStmt, *ast.SetOprStmt:
		v.ok = false
		return n, true
	}
	return n, false
}

func (v *reuseCheck) Leave(n ast.Node) (ast.Node, bool) { return n, v.ok }

// cteTarget is error 1288 for an UPDATE or DELETE whose target names one of the statement's
// CTEs (a CTE shadows a table of the same name, and a CTE is not updatable).
func cteTarget(with *ast.WithClause, n ast.ResultSetNode, stmt string) error {
	if with == nil {
		return nil
	}
	for {
		j, ok := n.(*ast.Join)
		if !ok || j.Right != nil {
			break
		}
		n = j.Left
	}
	ts, ok := n.(*ast.TableSource)
	if !ok {
		return nil
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok || tn.Schema.O != "" {
		return nil
	}
	for _, c := range with.CTEs {
		if c.Name.L == tn.Name.L {
			return sqlerr.New(sqlerr.ErrNonUpdatableTable, "The target table %s of the %s is not updatable", tn.Name.O, stmt)
		}
	}
	return nil
}
