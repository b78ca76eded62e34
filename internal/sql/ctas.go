package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// CREATE TABLE ... SELECT (MySQL 8's "CREATE TABLE ... SELECT Statement") is composed in the
// facade, since sql/ddl must not run a query and sql/dml must not change the catalog:
//  1. Plan the SELECT to learn its result columns; each becomes a column of the new table (name
//     from its alias, type and nullability from the expression), after the declared columns no
//     SELECT column names; a declared column of the same name keeps its declared definition.
//  2. Run a plain CREATE TABLE of those columns through applyDDLThen and, in the same
//     transaction and under the same locks, INSERT [IGNORE|REPLACE] ... SELECT into the new table,
//     planned against the DDL's catalog copy (Session.ddlCatalog). The catalog keys and the rows
//     commit as one log record, or, on any error, nothing does: MySQL 8's atomic CREATE TABLE ...
//     SELECT.

// runCreateTableSelect is CREATE TABLE ... SELECT.
func (s *Session) runCreateTableSelect(env *expr.Env, x *ast.CreateTableStmt, w proto.ResultWriter, more bool) error {
	if err := s.commit(env.Ctx); err != nil {
		return err
	}
	if s.tlocks != nil {
		// The new table cannot be among the locked ones: MySQL refuses before the SELECT runs.
		return sqlerr.New(sqlerr.ErrTableNotLocked, "Table '%s' was not locked with LOCK TABLES", x.Table.Name.O)
	}
	db := orDefault(x.Table.Schema.O, s.CurDB)
	if db == "" {
		return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
	}
	if s.db.Catalog().NameTaken(db, x.Table.Name.O) && !s.planContext().IsVirtualDB(db) {
		return s.tableExists(x, w, more)
	}
	create, names, err := s.ctasCreateStmt(x)
	if err != nil {
		return err
	}
	var ok proto.OK
	var newID uint64
	pos, _, err := s.applyDDLThen(env, create, func(denv *expr.Env, next *catalog.Catalog, locked []string) (uint64, error) {
		if t, found := next.Table(db, x.Table.Name.O); found {
			newID = t.ID
		}
		denv.Params = env.Params // EXECUTE ... USING's values for the SELECT's placeholders
		var err error
		ok, err = s.ctasRows(denv, next, locked, x, names)
		return ok.AffectedRows, err
	})
	// Planning the insert may have taken shared metadata locks on other databases.
	s.releaseMDL()
	if err != nil {
		if newID != 0 {
			// The insert may have started the new table's AUTO_INCREMENT counter; the id is free again.
			s.db.resetAutoInc(newID)
		}
		return err
	}
	if err := s.ackApplied(env.Ctx, pos); err != nil {
		return err
	}
	ok.Warnings = s.warningCount()
	s.rowCount = int64(ok.AffectedRows)
	return w.OK(ok, more)
}

// ctasCreateStmt plans x's SELECT and returns the plain CREATE TABLE that makes the table, and
// the SELECT's column names in order (the INSERT's column list). The columns are MySQL's: the
// declared columns no SELECT column names, then one per SELECT column in its order, where a
// declared column of the same name keeps its declared definition (at the SELECT's position).
func (s *Session) ctasCreateStmt(x *ast.CreateTableStmt) (*ast.CreateTableStmt, []string, error) {
	var sp *exec.Select
	err := s.resolve(func(p *plan.Planner) (err error) {
		sp, err = p.PlanResultSet(x.Select, nil)
		return err
	})
	// Planning took shared metadata locks; the DDL takes its database's exclusively.
	s.releaseMDL()
	if err != nil {
		return nil, nil, err
	}
	result := sp.Cols[:sp.NVisible]
	fields := ctasFields(x.Select, len(result))
	outer := map[string]bool{}
	if sel, ok := x.Select.(*ast.SelectStmt); ok && sel.From != nil {
		plan.OuterSides(sel.From.TableRefs, false, outer)
	}
	declared := map[string]*ast.ColumnDef{}
	for _, cd := range x.Cols {
		declared[strings.ToLower(cd.Name.Name.O)] = cd
	}
	seen := map[string]bool{}
	var names []string
	// Its collation is none a column has, so every string column spells its own.
	derived := &catalog.Table{Name: "ctas_columns", Charset: "binary", Collation: "binary"}
	for i, c := range result {
		key := strings.ToLower(c.Name)
		if seen[key] {
			return nil, nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", c.Name)
		}
		seen[key] = true
		names = append(names, c.Name)
		if declared[key] == nil {
			if outer[strings.ToLower(c.Table)] {
				c.Flags &^= uint16(mysql.NotNullFlag)
			}
			derived.Columns = append(derived.Columns, s.ctasColumn(c, fields[i]))
		}
	}
	extra, err := s.ctasColumnDefs(derived)
	if err != nil {
		return nil, nil, err
	}
	create := *x
	create.Select = nil
	create.OnDuplicate = ast.OnDuplicateKeyHandlingError
	create.Cols = nil
	for _, cd := range x.Cols {
		if !seen[strings.ToLower(cd.Name.Name.O)] {
			create.Cols = append(create.Cols, cd)
		}
	}
	for _, n := range names {
		if cd := declared[strings.ToLower(n)]; cd != nil {
			create.Cols = append(create.Cols, cd)
		} else {
			create.Cols = append(create.Cols, extra[0])
			extra = extra[1:]
		}
	}
	return &create, names, nil
}

// ctasFields returns, per result column, a plain SELECT's field expression (nil for a wildcard's
// columns or a UNION): MySQL types a literal's column exactly (1 is INT NOT NULL, 'ab'
// VARCHAR(2) NOT NULL) and a COUNT's as NOT NULL, which the result metadata does not carry.
func ctasFields(n ast.ResultSetNode, ncols int) []ast.ExprNode {
	out := make([]ast.ExprNode, ncols)
	sel, ok := n.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != ncols {
		return out
	}
	for i, f := range sel.Fields.Fields {
		if f.WildCard == nil {
			out[i] = f.Expr
		}
	}
	return out
}

// tableExists answers CREATE TABLE ... SELECT of a name already taken: with IF NOT EXISTS a 1050
// note and no row inserted (MySQL 8; 5.7 inserted into the existing table), else error 1050.
func (s *Session) tableExists(x *ast.CreateTableStmt, w proto.ResultWriter, more bool) error {
	if x.IfNotExists {
		s.AddWarning("Note", sqlerr.ErrTableExists, fmt.Sprintf("Table '%s' already exists", x.Table.Name.O))
		return w.OK(proto.OK{Warnings: s.warningCount()}, more)
	}
	return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", x.Table.Name.O)
}

// ctasColumn is the column MySQL makes of a SELECT result column: a base table's column keeps its
// type, character set, collation, default and comment (not AUTO_INCREMENT or ON UPDATE); a
// literal gets its exact type; another expression the result column's type. Nullability is the
// result column's (an outer join's column may be NULL).
func (s *Session) ctasColumn(c proto.Column, field ast.ExprNode) *catalog.Column {
	notNull := c.Flags&uint16(mysql.NotNullFlag) != 0
	if c.OrgTable != "" && c.OrgName != "" {
		if t, ok := s.catalog().Table(c.Schema, c.OrgTable); ok {
			for _, src := range t.VisibleColumns() {
				if strings.EqualFold(src.Name, c.OrgName) {
					col := *src
					col.Name, col.NotNull, col.AutoInc, col.OnUpdateNow = c.Name, notNull, false, false
					if col.HasDefault && col.Default.IsNull() && notNull {
						col.HasDefault = false
					}
					return &col
				}
			}
		}
	}
	if agg, ok := field.(*ast.AggregateFuncExpr); ok && strings.EqualFold(agg.F, ast.AggFuncCount) {
		notNull = true
	}
	if u, ok := field.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
		if v, ok := u.V.(*driver.ValueExpr); ok && v.Datum.Kind() != driver.KindString && v.Datum.Kind() != driver.KindNull {
			field = v // -2147483648: a number is typed by its digits whatever its sign
		}
	}
	if lit, ok := field.(*driver.ValueExpr); ok {
		if col := ctasLiteralColumn(c.Name, lit, s.connCollation()); col != nil {
			return col
		}
	}
	t := plan.ColTypeOf(c)
	if t.Tp == mysql.TypeNewDecimal {
		// The metadata length counts the sign and the point; the column's is the precision.
		t.Len -= ctasBool(!t.Unsigned) + ctasBool(t.Frac > 0)
	}
	if (t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat) && c.Decimals == 31 {
		// No fixed scale (SUM of a DOUBLE): a plain DOUBLE, not the metadata's DOUBLE(22,0).
		t.Len, t.Frac = -1, -1
	}
	return &catalog.Column{Name: c.Name, Type: t, NotNull: notNull}
}

// ctasLiteralColumn types a literal's column as MySQL 8 does; nil leaves it to the metadata.
func ctasLiteralColumn(name string, v *driver.ValueExpr, conn *types.Collation) *catalog.Column {
	col := &catalog.Column{Name: name, NotNull: true}
	switch v.Datum.Kind() {
	case driver.KindNull:
		col.NotNull = false
		col.Type = types.ColType{Tp: mysql.TypeString, Len: 0, Charset: "binary", Collation: "binary"}
	case driver.KindInt64:
		// Typed by its digits, as MySQL's Item_int: up to 9 an INT, more a BIGINT.
		col.Type = types.ColType{Tp: mysql.TypeLong, Len: -1}
		if n := v.Datum.GetInt64(); n > 999999999 || n < -999999999 {
			col.Type.Tp = mysql.TypeLonglong
		}
	case driver.KindFloat32, driver.KindFloat64:
		col.Type = types.ColType{Tp: mysql.TypeDouble, Len: -1, Frac: -1}
	case driver.KindUint64:
		col.Type = types.ColType{Tp: mysql.TypeLonglong, Len: -1, Unsigned: true}
	case driver.KindMysqlDecimal:
		intPart, fracPart, _ := strings.Cut(strings.TrimLeft(v.Datum.GetMysqlDecimal().String(), "-"), ".")
		digits := max(len(strings.TrimLeft(intPart, "0")), 1)
		col.Type = types.ColType{Tp: mysql.TypeNewDecimal, Len: digits + len(fracPart), Frac: len(fracPart)}
	case driver.KindString:
		col.Type = types.ColType{Tp: mysql.TypeVarchar, Len: utf8.RuneCountInString(v.Datum.GetString()), Charset: conn.Charset, Collation: conn.Name}
		if col.Type.Len == 0 {
			col.Type.Tp = mysql.TypeString // '' is CHAR(0)
		}
	default:
		return nil
	}
	return col
}

func ctasBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ctasColumnDefs renders the derived columns as SHOW CREATE TABLE does and parses them back into
// the parser's column nodes, so they go through CREATE TABLE's own column checks.
func (s *Session) ctasColumnDefs(t *catalog.Table) ([]*ast.ColumnDef, error) {
	if len(t.Columns) == 0 {
		return nil, nil
	}
	// Only the column lines are wanted: the table options (empty here) are cut off.
	text := infoschema.ShowCreateTable(t, 0)
	if i := strings.LastIndex(text, "\n)"); i >= 0 {
		text = text[:i] + "\n)"
	}
	stmts, err := s.parse(text)
	if err != nil {
		return nil, fmt.Errorf("derived columns %q: %w", text, err)
	}
	ct, ok := stmts[0].(*ast.CreateTableStmt)
	if !ok || len(stmts) != 1 || len(ct.Cols) != len(t.Columns) {
		return nil, fmt.Errorf("derived columns %q: not one CREATE TABLE of %d columns", text, len(t.Columns))
	}
	return ct.Cols, nil
}

// ctasRows inserts x's SELECT rows into the new table inside the DDL's transaction (denv.Txn),
// planned against the DDL's catalog copy, where the table exists: the table and its rows commit
// in one log record, or neither does. The databases the DDL holds exclusively are marked held, so
// planning takes no lock on them (as CREATE VIEW plans its body).
func (s *Session) ctasRows(denv *expr.Env, next *catalog.Catalog, locked []string, x *ast.CreateTableStmt, names []string) (proto.OK, error) {
	ins := &ast.InsertStmt{
		Table:     &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{Source: x.Table}}},
		Select:    x.Select,
		IgnoreErr: x.OnDuplicate == ast.OnDuplicateKeyHandlingIgnore,
		IsReplace: x.OnDuplicate == ast.OnDuplicateKeyHandlingReplace,
	}
	ins.SetText(nil, x.Text())
	for _, n := range names {
		ins.Columns = append(ins.Columns, &ast.ColumnName{Name: ast.NewCIStr(n)})
	}
	release := s.ddlSess().HoldMetadataLocks(locked)
	s.ddlCatalog = next
	defer func() {
		s.ddlCatalog = nil
		release()
	}()
	denv.Txn.NewStatement()
	return dml.Insert(denv, s.dmlSess(), ins)
}
