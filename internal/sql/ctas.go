package sql

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// CREATE TABLE ... SELECT (MySQL 8's "CREATE TABLE ... SELECT Statement") runs in three steps, as
// the facade composes DDL and DML (sql/ddl must not run a query, sql/dml must not change the
// catalog):
//  1. Plan the SELECT to learn its result columns; each becomes a column of the new table (name
//     from its alias, type and nullability from the expression), after the declared columns; a
//     declared column of the same name keeps its declared definition.
//  2. Create the table through runDDL's path, as a plain CREATE TABLE with those columns.
//  3. Insert the SELECT's rows (INSERT [IGNORE|REPLACE] ... SELECT) in one transaction; if that
//     fails, the table is dropped again, so a failing row leaves no table behind.
// The table and its rows are therefore two commits, not one: another session can see the empty
// table between them, and a crash between them leaves it (MySQL 8's atomic DDL does not).

// runCreateTableSelect is CREATE TABLE ... SELECT.
func (s *Session) runCreateTableSelect(env *expr.Env, x *ast.CreateTableStmt, w proto.ResultWriter, more bool) error {
	if err := s.commit(env.Ctx); err != nil {
		return err
	}
	db := orDefault(x.Table.Schema.O, s.CurDB)
	if db != "" && s.db.Catalog().NameTaken(db, x.Table.Name.O) && !s.planContext().IsVirtualDB(db) {
		if x.IfNotExists {
			// MySQL 8: a note, and no row inserted (5.7 inserted into the existing table).
			s.AddWarning("Note", sqlerr.ErrTableExists, fmt.Sprintf("Table '%s' already exists", x.Table.Name.O))
			return w.OK(proto.OK{Warnings: s.warningCount()}, more)
		}
		return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", x.Table.Name.O)
	}
	create, names, err := s.ctasCreateStmt(x)
	if err != nil {
		return err
	}
	if _, _, err := s.applyDDL(env, create); err != nil {
		return err
	}
	ok, err := s.ctasInsert(env, x, names)
	if err != nil {
		s.ctasDrop(env, x)
		return err
	}
	ok.Warnings = s.warningCount()
	s.rowCount = int64(ok.AffectedRows)
	return w.OK(ok, more)
}

// ctasCreateStmt plans x's SELECT and returns the plain CREATE TABLE that makes the table (x's
// declared columns and keys, then the SELECT's columns not declared), and the SELECT's column
// names in order (the INSERT's column list).
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
	declared := map[string]bool{}
	for _, cd := range x.Cols {
		declared[strings.ToLower(cd.Name.Name.O)] = true
	}
	seen := map[string]bool{}
	var names, defs []string
	for _, c := range sp.Cols[:sp.NVisible] {
		key := strings.ToLower(c.Name)
		if seen[key] {
			return nil, nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", c.Name)
		}
		seen[key] = true
		names = append(names, c.Name)
		if !declared[key] {
			defs = append(defs, ctasColumnSQL(c))
		}
	}
	create := *x
	create.Select = nil
	create.OnDuplicate = ast.OnDuplicateKeyHandlingError
	if len(defs) > 0 {
		extra, err := s.ctasColumnDefs(defs)
		if err != nil {
			return nil, nil, err
		}
		create.Cols = append(append([]*ast.ColumnDef(nil), x.Cols...), extra...)
	}
	return &create, names, nil
}

// ctasColumnSQL is the column definition MySQL derives for a SELECT result column: its type (with
// character set and collation for strings), and NOT NULL when the expression cannot be NULL.
func ctasColumnSQL(c proto.Column) string {
	t := plan.ColTypeOf(c)
	var b strings.Builder
	b.WriteString("`" + strings.ReplaceAll(c.Name, "`", "``") + "` ")
	switch {
	case t.Tp == mysql.TypeNull:
		// SELECT NULL: MySQL makes a BINARY(0) column.
		b.WriteString("binary(0)")
	default:
		b.WriteString(t.SQL())
		if t.Charset != "" && t.Collation != "binary" && (t.Tp == mysql.TypeVarString || t.Tp == mysql.TypeVarchar ||
			t.Tp == mysql.TypeString || t.Tp == mysql.TypeBlob || t.Tp == mysql.TypeTinyBlob ||
			t.Tp == mysql.TypeMediumBlob || t.Tp == mysql.TypeLongBlob || t.Tp == mysql.TypeEnum || t.Tp == mysql.TypeSet) {
			b.WriteString(" CHARACTER SET " + t.Charset + " COLLATE " + t.Collation)
		}
	}
	if c.Flags&uint16(mysql.NotNullFlag) != 0 {
		b.WriteString(" NOT NULL")
	} else {
		b.WriteString(" NULL")
	}
	return b.String()
}

// ctasColumnDefs parses derived column definitions into the parser's column nodes.
func (s *Session) ctasColumnDefs(defs []string) ([]*ast.ColumnDef, error) {
	text := "CREATE TABLE ctas_columns (" + strings.Join(defs, ", ") + ")"
	stmts, err := s.parse(text)
	if err != nil {
		return nil, fmt.Errorf("derived columns %q: %w", text, err)
	}
	ct, ok := stmts[0].(*ast.CreateTableStmt)
	if !ok || len(stmts) != 1 {
		return nil, fmt.Errorf("derived columns %q: not one CREATE TABLE", text)
	}
	return ct.Cols, nil
}

// ctasInsert inserts x's SELECT rows into the new table in a transaction of their own, committed
// here whatever autocommit says (CREATE TABLE commits implicitly).
func (s *Session) ctasInsert(env *expr.Env, x *ast.CreateTableStmt, names []string) (proto.OK, error) {
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
	if err := s.ensureTxn(); err != nil {
		return proto.OK{}, err
	}
	s.txn.NewStatement()
	ok, err := dml.Insert(env, s.dmlSess(), ins)
	if err != nil {
		s.rollback()
		return proto.OK{}, err
	}
	if err := s.commit(env.Ctx); err != nil {
		return proto.OK{}, err
	}
	return ok, nil
}

// ctasDrop drops the table a failed CREATE TABLE ... SELECT made. The statement's error is what
// the client sees; a failure to drop is logged, and the table stays.
func (s *Session) ctasDrop(env *expr.Env, x *ast.CreateTableStmt) {
	drop := &ast.DropTableStmt{Tables: []*ast.TableName{x.Table}}
	if _, _, err := s.applyDDL(env, drop); err != nil {
		slog.Error("CREATE TABLE ... SELECT: dropping the table after a failed insert", "table", x.Table.Name.O, "err", err)
	}
}
