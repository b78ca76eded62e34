package sql

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// runDDL commits any open transaction (DDL causes an implicit commit, as in MySQL), takes the
// metadata lock exclusively, and applies the change through one transaction: catalog keys and data
// changes (index builds, range deletions) commit together or not at all.
func (s *Session) runDDL(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) error {
	if err := s.commit(env.Ctx); err != nil {
		return err
	}
	db := s.db
	if err := s.ddlTableLocks(st); err != nil {
		return err
	}
	// Exclusive metadata locks on every database the statement touches, in name order (no
	// deadlock between two DDLs), then the catalog writer lock.
	names := ddlDatabases(st, s.CurDB)
	if s.tlocks != nil {
		// A session waiting on this one's table locks may hold one of these (tablelocks.go).
		db.tableLocks.waitingForDDL(s, names)
	}
	for _, n := range names {
		m := db.mdlFor(n)
		if err := m.lock(env.Ctx, s.metadataLockTimeout()); err != nil {
			if s.tlocks != nil {
				db.tableLocks.waitingForDDL(s, nil)
			}
			return err
		}
		defer m.unlock()
	}
	if s.tlocks != nil {
		db.tableLocks.waitingForDDL(s, nil)
	}
	db.ddlMu.Lock()
	defer db.ddlMu.Unlock()
	cur := db.Catalog()
	next := cur.Copy()
	t := db.txm.Begin(txn.RepeatableRead, false)
	ddl := &ddlCtx{s: s, env: &expr.Env{Sess: s, Ctx: env.Ctx}, cat: next, t: t, locked: names}
	ddl.env.Txn = t
	ddl.env.Mem = env.Tracker() // the statement's one memory account, closed by its caller
	var err error
	switch x := st.(type) {
	case *ast.CreateDatabaseStmt:
		err = ddl.createDatabase(x)
	case *ast.DropDatabaseStmt:
		err = ddl.dropDatabase(x)
	case *ast.AlterDatabaseStmt:
		err = nil
	case *ast.CreateTableStmt:
		err = ddl.createTable(x)
	case *ast.DropTableStmt:
		err = ddl.dropTables(x)
	case *ast.TruncateTableStmt:
		err = ddl.truncate(x)
	case *ast.RenameTableStmt:
		err = ddl.rename(x)
	case *ast.CreateIndexStmt:
		err = ddl.createIndex(x)
	case *ast.DropIndexStmt:
		err = ddl.dropIndex(x)
	case *ast.AlterTableStmt:
		err = ddl.alterTable(x)
	case *ast.CreateViewStmt:
		err = ddl.createView(x)
	}
	if err != nil {
		t.Rollback()
		return err
	}
	if ddl.noop {
		t.Rollback()
		return w.OK(proto.OK{Warnings: s.warningCount()}, more)
	}
	if err := ddl.logBuilds(); err != nil {
		t.Rollback()
		return err
	}
	catalog.SaveNextTableID(t, next.NextTableID())
	pos, err := t.Commit(env.Ctx)
	if err != nil {
		return commitError(err)
	}
	s.lastPos = pos
	db.cat.Store(next)
	for _, id := range ddl.resetAuto {
		db.resetAutoInc(id)
	}
	return w.OK(proto.OK{AffectedRows: ddl.affected, Warnings: s.warningCount()}, more)
}

type ddlCtx struct {
	s         *Session
	env       *expr.Env
	cat       *catalog.Catalog
	t         *txn.Txn
	noop      bool
	resetAuto []uint64
	pending   []string            // index names taken in this statement
	builds    map[uint64][]uint32 // table id -> indexes whose entries the record builds (logBuilds)
	rw        rewriter            // tables whose rows an ALTER converts (ddl_column.go)
	locked    []string            // databases whose metadata locks the statement holds exclusively
	// affected is the statement's affected-row count, as MySQL reports it for DDL: 1 for CREATE
	// DATABASE, the tables and views removed for DROP DATABASE, 0 otherwise.
	affected uint64
}

func (d *ddlCtx) dbName(n string) (string, error) {
	if n == "" {
		n = d.s.CurDB
		if n == "" {
			return "", sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
	}
	db, ok := d.cat.DB(n)
	if !ok {
		return "", sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", n)
	}
	return db.Name, nil
}

func (d *ddlCtx) createDatabase(x *ast.CreateDatabaseStmt) error {
	name := x.Name.O
	if err := checkIdent(name, sqlerr.ErrWrongDBName, "database"); err != nil {
		return err
	}
	if _, ok := d.cat.DB(name); ok || isVirtualDB(name) {
		if x.IfNotExists {
			d.s.addWarning("Note", sqlerr.ErrDBCreateExists, fmt.Sprintf("Can't create database '%s'; database exists", name))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrDBCreateExists, "Can't create database '%s'; database exists", name)
	}
	db := &catalog.Database{Name: name, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	for _, o := range x.Options {
		switch o.Tp {
		case ast.DatabaseOptionCharset:
			db.Charset = strings.ToLower(o.Value)
			if c, ok := types.DefaultCollation(db.Charset); ok {
				db.Collation = c.Name
			} else {
				return sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", o.Value)
			}
		case ast.DatabaseOptionCollate:
			c, ok := types.LookupCollation(strings.ToLower(o.Value))
			if !ok {
				return sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", o.Value)
			}
			db.Collation, db.Charset = c.Name, c.Charset
		}
	}
	d.cat.PutDB(db)
	d.affected = 1
	return catalog.SaveDB(d.t, db)
}

func (d *ddlCtx) dropDatabase(x *ast.DropDatabaseStmt) error {
	name := x.Name.O
	db, ok := d.cat.DB(name)
	if !ok {
		if x.IfExists {
			d.s.addWarning("Note", sqlerr.ErrDBDropExists, fmt.Sprintf("Can't drop database '%s'; database doesn't exist", name))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrDBDropExists, "Can't drop database '%s'; database doesn't exist", name)
	}
	for _, t := range d.cat.Tables(db.Name) {
		d.dropTable(t)
		d.affected++
	}
	for _, v := range d.cat.Views(db.Name) {
		d.dropView(v)
		d.affected++
	}
	d.cat.RemoveDB(name)
	d.t.Delete(rowenc.DBDefKey(strings.ToLower(db.Name)))
	if strings.EqualFold(d.s.CurDB, name) {
		d.s.CurDB = ""
	}
	return nil
}

// checkIdent validates the name of a database, table, view or column as MySQL does: not empty, no
// trailing space, no NUL (code, "Incorrect ... name"), at most 64 characters (1059), and only
// characters of the Basic Multilingual Plane, since MySQL keeps names in utf8mb3 (1300).
func checkIdent(name string, code uint16, what string) error {
	if name == "" || strings.HasSuffix(name, " ") || strings.IndexByte(name, 0) >= 0 {
		return sqlerr.New(code, "Incorrect %s name '%s'", what, strings.ReplaceAll(name, "\x00", "\\0"))
	}
	return checkNameChars(name)
}

// checkNameChars checks what every schema object name must meet (index and constraint names too):
// valid UTF-8 within the BMP, at most 64 characters.
func checkNameChars(name string) error {
	n := 0
	for i, r := range name {
		if r == utf8.RuneError || r > 0xFFFF {
			end := min(i+4, len(name))
			return sqlerr.New(sqlerr.ErrInvalidCharacterString, "Invalid utf8mb3 character string: '%X'", name[i:end])
		}
		n++
	}
	if n > 64 {
		return sqlerr.New(sqlerr.ErrTooLongIdent, "Identifier name '%s' is too long", name)
	}
	return nil
}

// checkIndexName validates an index or constraint name.
func checkIndexName(name string) error {
	if strings.IndexByte(name, 0) >= 0 {
		return sqlerr.New(sqlerr.ErrWrongNameForIndex, "Incorrect index name '%s'", strings.ReplaceAll(name, "\x00", "\\0"))
	}
	return checkNameChars(name)
}

// columnCollation resolves a column's character set and collation clauses against the table's
// defaults: no charset means the table's, no collation the charset's default (the table's own
// collation when the charset is the table's).
func columnCollation(cs, coll, tblCharset, tblColl string) (*types.Collation, error) {
	if cs == "" {
		cs = tblCharset
	}
	if cs == "utf8" {
		cs = "utf8mb3"
	}
	if coll == "" {
		if cs == tblCharset && tblColl != "" {
			coll = tblColl
		} else if c, ok := types.DefaultCollation(cs); ok {
			coll = c.Name
		} else {
			return nil, sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", cs)
		}
	}
	c, ok := types.LookupCollation(coll)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", coll)
	}
	return c, nil
}

// colType converts a parser column type.
func colType(name string, ft *ptypes.FieldType, tblCharset, tblColl string) (types.ColType, error) {
	t := types.ColType{Tp: ft.GetType(), Len: ft.GetFlen(), Frac: ft.GetDecimal(), Unsigned: mysql.HasUnsignedFlag(ft.GetFlag())}
	switch t.Tp {
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		cs, coll := ft.GetCharset(), ft.GetCollate()
		if mysql.HasBinaryFlag(ft.GetFlag()) && cs == "" && (t.Tp == mysql.TypeString || t.Tp == mysql.TypeVarchar || t.Tp == mysql.TypeVarString) && coll == "" {
			// CHAR(n) BINARY means the charset's _bin collation, not a binary string.
			cs = tblCharset
			if c, ok := types.DefaultCollation(cs); ok {
				coll = strings.TrimSuffix(strings.TrimSuffix(c.Name, "_0900_ai_ci"), "_general_ci")
				coll = cs + "_bin"
			}
		}
		if cs == "binary" || coll == "binary" {
			t.Charset, t.Collation = "binary", "binary"
			break
		}
		c, err := columnCollation(cs, coll, tblCharset, tblColl)
		if err != nil {
			return t, err
		}
		t.Charset, t.Collation = c.Charset, c.Name
		if t.Tp == mysql.TypeVarString {
			t.Tp = mysql.TypeVarchar
		}
		if (t.Tp == mysql.TypeString) && t.Len < 0 {
			t.Len = 1
		}
		if t.Tp == mysql.TypeVarchar && t.Len < 0 {
			return t, sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax; VARCHAR needs a length")
		}
		if t.Len > 65535 && (t.Tp == mysql.TypeVarchar || t.Tp == mysql.TypeString) {
			return t, sqlerr.New(sqlerr.ErrTooBigFieldLength, "Column length too big (max = 16383); use BLOB or TEXT instead")
		}
	case mysql.TypeNewDecimal:
		if t.Len < 0 {
			t.Len = 10
		}
		if t.Frac < 0 {
			t.Frac = 0
		}
		if t.Len > 65 {
			return t, sqlerr.New(sqlerr.ErrTooBigPrecision, "Too-big precision %d specified. Maximum is 65.", t.Len)
		}
		if t.Frac > 30 {
			return t, sqlerr.New(sqlerr.ErrTooBigScale, "Too big scale %d specified. Maximum is 30.", t.Frac)
		}
		if t.Frac > t.Len {
			return t, sqlerr.New(sqlerr.ErrMBiggerThanD, "For float(M,D), double(M,D) or decimal(M,D), M must be >= D")
		}
		t.Collation = "binary"
	case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		if t.Frac < 0 {
			t.Frac = 0
		}
		if t.Frac > 6 {
			return t, sqlerr.New(sqlerr.ErrTooBigPrecision, "Too-big precision %d specified. Maximum is 6.", t.Frac)
		}
		t.Collation = "binary"
	case mysql.TypeEnum, mysql.TypeSet:
		cs, coll := ft.GetCharset(), ft.GetCollate()
		if cs == "binary" && coll == "" {
			cs = "" // ENUM/SET members are character strings: the table's charset
		}
		c, err := columnCollation(cs, coll, tblCharset, tblColl)
		if err != nil {
			return t, err
		}
		t.Charset, t.Collation, t.Len, t.Frac = c.Charset, c.Name, -1, -1
		what := "ENUM"
		if t.Tp == mysql.TypeSet {
			what = "SET"
			if len(ft.GetElems()) > 64 {
				return t, sqlerr.New(sqlerr.ErrTooBigSet, "Too many strings for column %s and SET", name)
			}
		}
		for _, e := range ft.GetElems() {
			e = strings.TrimRight(e, " ")
			if t.Tp == mysql.TypeSet && strings.Contains(e, ",") {
				return t, sqlerr.New(sqlerr.ErrIllegalValueForType, "Illegal %s '%s' value found during parsing", what, e)
			}
			for _, o := range t.Elems {
				if c.Compare(o, e) == 0 {
					return t, sqlerr.New(sqlerr.ErrDuplicatedValueInType, "Column '%s' has duplicated value '%s' in %s", name, e, what)
				}
			}
			t.Elems = append(t.Elems, e)
		}
	case mysql.TypeJSON:
		t.Len, t.Frac, t.Collation = -1, -1, "binary"
	case mysql.TypeBit:
		if t.Len < 0 {
			t.Len = 1
		}
		if t.Len == 0 || t.Len > 64 {
			return t, sqlerr.New(sqlerr.ErrTooBigDisplayWidth, "Display width out of range for column '%s' (max = 64)", name)
		}
		t.Frac, t.Collation = -1, "binary"
	case mysql.TypeGeometry, mysql.TypeTiDBVectorFloat32:
		return t, sqlerr.New(sqlerr.ErrNotSupportedYet, "column type %s is not supported yet", ptypes.TypeToStr(t.Tp, ""))
	default:
		t.Collation = "binary"
	}
	return t, nil
}

// buildColumn turns a column definition into a catalog column; it returns inline key constraints.
func (d *ddlCtx) buildColumn(tbl *catalog.Table, cd *ast.ColumnDef) (*catalog.Column, []*ast.Constraint, error) {
	name := cd.Name.Name.O
	if err := checkIdent(name, sqlerr.ErrWrongColumnName, "column"); err != nil {
		return nil, nil, err
	}
	ct, err := colType(name, cd.Tp, tbl.Charset, tbl.Collation)
	if err != nil {
		return nil, nil, err
	}
	col := &catalog.Column{ID: tbl.NextColID, Name: name, Type: ct}
	tbl.NextColID++
	var keys []*ast.Constraint
	var defNode ast.ExprNode
	explicitNull := false
	for _, o := range cd.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			col.NotNull = true
		case ast.ColumnOptionNull:
			explicitNull = true
		case ast.ColumnOptionAutoIncrement:
			col.AutoInc = true
		case ast.ColumnOptionPrimaryKey:
			col.NotNull = true
			keys = append(keys, &ast.Constraint{Tp: ast.ConstraintPrimaryKey, Keys: []*ast.IndexPartSpecification{{Column: cd.Name}}})
		case ast.ColumnOptionUniqKey:
			keys = append(keys, &ast.Constraint{Tp: ast.ConstraintUniq, Name: name, Keys: []*ast.IndexPartSpecification{{Column: cd.Name}}})
		case ast.ColumnOptionDefaultValue:
			defNode = o.Expr
		case ast.ColumnOptionOnUpdate:
			col.OnUpdateNow = true
		case ast.ColumnOptionComment:
			if v, ok := o.Expr.(ast.ValueExpr); ok {
				col.Comment = fmt.Sprint(v.GetValue())
			}
		case ast.ColumnOptionCollate:
			c, ok := types.LookupCollation(strings.ToLower(o.StrValue))
			if !ok {
				return nil, nil, sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", o.StrValue)
			}
			col.Type.Collation, col.Type.Charset = c.Name, c.Charset
		case ast.ColumnOptionGenerated:
			return nil, nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "generated columns are not supported yet")
		case ast.ColumnOptionCheck:
			keys = append(keys, &ast.Constraint{Tp: ast.ConstraintCheck, Name: o.ConstraintName, Expr: o.Expr, Enforced: o.Enforced})
		case ast.ColumnOptionReference, ast.ColumnOptionColumnFormat, ast.ColumnOptionStorage:
		}
	}
	if explicitNull && col.NotNull {
		return nil, nil, sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax: column '%s' is both NULL and NOT NULL", name)
	}
	if defNode != nil {
		if err := d.setDefault(col, defNode); err != nil {
			return nil, nil, err
		}
	}
	if col.AutoInc {
		if !col.Type.IsInteger() && col.Type.Tp != mysql.TypeFloat && col.Type.Tp != mysql.TypeDouble {
			return nil, nil, sqlerr.New(sqlerr.ErrWrongAutoKey, "Incorrect column specifier for column '%s'", name)
		}
		col.NotNull = true
		if col.HasDefault {
			return nil, nil, sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
	}
	return col, keys, nil
}

// setDefault evaluates a column's DEFAULT clause and stores it (converted) in col.
func (d *ddlCtx) setDefault(col *catalog.Column, defNode ast.ExprNode) error {
	name := col.Name
	if fc, ok := defNode.(*ast.FuncCallExpr); ok && isNowFunc(fc.FnName.L) {
		if col.Type.Tp != mysql.TypeDatetime && col.Type.Tp != mysql.TypeTimestamp {
			return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
		col.DefaultNow, col.HasDefault = true, true
	} else {
		c := (&plan.Planner{Ctx: d.s.planContext()}).NewCompiler(&plan.Scope{})
		e, err := c.Compile(defNode)
		if err != nil {
			return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
		v, err := e.Eval(d.env, nil)
		if err != nil {
			return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
		if v.IsNull() {
			if col.NotNull {
				return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
			}
		} else {
			if col.Type.IsBlob() {
				return sqlerr.New(sqlerr.ErrBlobCantHaveDefault, "BLOB, TEXT, GEOMETRY or JSON column '%s' can't have a default value", name)
			}
			cv, _, err := types.Convert(v, &col.Type, types.ConvertCtx{Strict: true, Column: name, Row: 1})
			if err != nil {
				return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
			}
			v = cv
		}
		col.Default, col.HasDefault = v, true
	}
	return nil
}

func isNowFunc(n string) bool {
	switch n {
	case "now", "current_timestamp", "localtime", "localtimestamp":
		return true
	}
	return false
}

func (d *ddlCtx) createTable(x *ast.CreateTableStmt) error {
	if db := orDefault(x.Table.Schema.O, d.s.CurDB); isVirtualDB(db) {
		// The system schemas are Kiln's own. Dumps of --all-databases re-create the log tables
		// with IF NOT EXISTS: they exist already (internal/sql/infoschema/logtables.go).
		if x.IfNotExists && infoschema.SystemLogTable(db, x.Table.Name.O) != "" {
			d.s.addWarning("Note", sqlerr.ErrTableExists, fmt.Sprintf("Table '%s' already exists", x.Table.Name.O))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrDBAccessDenied, "Access denied for user '%s'@'%%' to database '%s'", d.s.User, db)
	}
	dbName, err := d.dbName(x.Table.Schema.O)
	if err != nil {
		return err
	}
	name := x.Table.Name.O
	if err := checkIdent(name, sqlerr.ErrWrongTableName, "table"); err != nil {
		return err
	}
	if d.cat.NameTaken(dbName, name) {
		if x.IfNotExists {
			d.s.addWarning("Note", sqlerr.ErrTableExists, fmt.Sprintf("Table '%s' already exists", name))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", name)
	}
	if x.ReferTable != nil {
		src, ok := d.cat.Table(orDefault(x.ReferTable.Schema.O, dbName), x.ReferTable.Name.O)
		if !ok {
			return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", orDefault(x.ReferTable.Schema.O, dbName), x.ReferTable.Name.O)
		}
		nt := src.Clone()
		nt.ID, nt.DB, nt.Name, nt.Version = d.cat.AllocTableID(), dbName, name, 1
		nt.Init()
		d.cat.PutTable(nt)
		return catalog.SaveTable(d.t, nt)
	}
	if x.Select != nil {
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "CREATE TABLE ... SELECT is not supported yet")
	}
	if x.TemporaryKeyword != ast.TemporaryNone {
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "temporary tables are not supported yet")
	}
	dbDef, _ := d.cat.DB(dbName)
	tbl := &catalog.Table{ID: d.cat.AllocTableID(), DB: dbName, Name: name, NextColID: 1, NextIndexID: 2, Charset: dbDef.Charset, Collation: dbDef.Collation, Engine: "InnoDB", Version: 1}
	for _, o := range x.Options {
		switch o.Tp {
		case ast.TableOptionCharset:
			cs := strings.ToLower(o.StrValue)
			if cs == "utf8" {
				cs = "utf8mb3"
			}
			c, ok := types.DefaultCollation(cs)
			if !ok {
				return sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", o.StrValue)
			}
			tbl.Charset, tbl.Collation = cs, c.Name
		case ast.TableOptionCollate:
			c, ok := types.LookupCollation(strings.ToLower(o.StrValue))
			if !ok {
				return sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", o.StrValue)
			}
			tbl.Charset, tbl.Collation = c.Charset, c.Name
		case ast.TableOptionAutoIncrement:
			tbl.AutoIncBase = o.UintValue
		case ast.TableOptionComment:
			tbl.Comment = o.StrValue
		case ast.TableOptionEngine:
			if o.StrValue != "" {
				tbl.Engine = o.StrValue
			}
		}
	}
	if x.Partition != nil {
		d.s.addWarning("Warning", sqlerr.ErrNotSupportedYet, "PARTITION BY is ignored: Kiln tables are not partitioned")
	}
	var constraints []*ast.Constraint
	seen := map[string]bool{}
	for _, cd := range x.Cols {
		col, keys, err := d.buildColumn(tbl, cd)
		if err != nil {
			return err
		}
		if seen[strings.ToLower(col.Name)] {
			return sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", col.Name)
		}
		seen[strings.ToLower(col.Name)] = true
		tbl.Columns = append(tbl.Columns, col)
		constraints = append(constraints, keys...)
	}
	if len(tbl.Columns) == 0 {
		return sqlerr.New(sqlerr.ErrTableMustHaveColumns, "A table must have at least 1 column")
	}
	constraints = append(constraints, x.Constraints...)
	tbl.Init()
	var pk *catalog.Index
	var secondary []*catalog.Index
	for _, c := range constraints {
		ix, err := d.buildIndex(tbl, c)
		if err != nil {
			return err
		}
		if ix == nil {
			continue
		}
		if ix.Primary {
			if pk != nil {
				return sqlerr.New(sqlerr.ErrMultiplePriKey, "Multiple primary key defined")
			}
			pk = ix
			continue
		}
		for _, o := range secondary {
			if strings.EqualFold(o.Name, ix.Name) {
				return sqlerr.New(sqlerr.ErrDupKeyName, "Duplicate key name '%s'", ix.Name)
			}
		}
		secondary = append(secondary, ix)
	}
	if pk == nil {
		hidden := &catalog.Column{ID: tbl.NextColID, Name: "_kiln_rowid", Type: types.ColType{Tp: mysql.TypeLonglong, Unsigned: true, Len: 20, Collation: "binary"}, NotNull: true, AutoInc: true, Hidden: true}
		tbl.NextColID++
		tbl.Columns = append(tbl.Columns, hidden)
		pk = &catalog.Index{ID: rowenc.PrimaryIndexID, Name: "PRIMARY", Primary: true, Unique: true, Columns: []catalog.IndexColumn{{Col: hidden.ID}}, KeyVersion: types.CollationKeyVersion}
	}
	tbl.Indexes = append([]*catalog.Index{pk}, secondary...)
	tbl.Init()
	for _, c := range constraints {
		if c.Tp == ast.ConstraintCheck {
			ck, err := d.buildCheck(tbl, c, len(tbl.Checks)+1)
			if err != nil {
				return err
			}
			tbl.Checks = append(tbl.Checks, ck)
			continue
		}
		if c.Tp != ast.ConstraintForeignKey {
			continue
		}
		fk, ixc, err := d.buildForeignKey(tbl, c, len(tbl.ForeignKeys)+1)
		if err != nil {
			return err
		}
		if ixc != nil {
			ix, err := d.buildIndex(tbl, ixc)
			if err != nil {
				return err
			}
			if tbl.IndexByName(ix.Name) != nil {
				return sqlerr.New(sqlerr.ErrDupKeyName, "Duplicate key name '%s'", ix.Name)
			}
			tbl.Indexes = append(tbl.Indexes, ix)
			tbl.Init()
		}
		tbl.ForeignKeys = append(tbl.ForeignKeys, fk)
	}
	if err := checkAutoIncKey(tbl); err != nil {
		return err
	}
	d.cat.PutTable(tbl)
	return catalog.SaveTable(d.t, tbl)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func checkAutoIncKey(tbl *catalog.Table) error {
	n := 0
	for ci, c := range tbl.Columns {
		if !c.AutoInc || c.Hidden {
			continue
		}
		n++
		keyed := false
		for _, ix := range tbl.Indexes {
			if len(ix.Offsets) > 0 && ix.Offsets[0] == ci {
				keyed = true
			}
		}
		if !keyed {
			return sqlerr.New(sqlerr.ErrWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
		}
	}
	if n > 1 {
		return sqlerr.New(sqlerr.ErrWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
	}
	return nil
}

// buildIndex turns a key constraint into an index definition (nil for constraints Kiln ignores).
func (d *ddlCtx) buildIndex(tbl *catalog.Table, c *ast.Constraint) (*catalog.Index, error) {
	ix := &catalog.Index{Name: c.Name, KeyVersion: types.CollationKeyVersion}
	switch c.Tp {
	case ast.ConstraintPrimaryKey:
		ix.Primary, ix.Unique, ix.Name, ix.ID = true, true, "PRIMARY", rowenc.PrimaryIndexID
	case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		ix.Unique = true
	case ast.ConstraintKey, ast.ConstraintIndex:
	case ast.ConstraintForeignKey, ast.ConstraintCheck:
		return nil, nil // accepted, not enforced yet (the compatibility issue enforces foreign keys)
	case ast.ConstraintFulltext:
		d.s.addWarning("Warning", sqlerr.ErrNotSupportedYet, "FULLTEXT index is ignored")
		return nil, nil
	default:
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported constraint")
	}
	for _, k := range c.Keys {
		if k.Expr != nil {
			return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "functional index parts are not supported yet")
		}
		ci := tbl.Col(k.Column.Name.O)
		if ci < 0 || tbl.Columns[ci].Hidden {
			return nil, sqlerr.New(sqlerr.ErrKeyColumnDoesNotExit, "Key column '%s' doesn't exist in table", k.Column.Name.O)
		}
		col := tbl.Columns[ci]
		if col.Type.Tp == mysql.TypeJSON {
			return nil, sqlerr.New(sqlerr.ErrJSONUsedAsKey, "JSON column '%s' supports indexing only via generated columns on a specified JSON path.", col.Name)
		}
		if col.Type.IsBlob() && k.Length <= 0 {
			return nil, sqlerr.New(sqlerr.ErrBlobKeyWithoutLength, "BLOB/TEXT column '%s' used in key specification without a key length", col.Name)
		}
		if ix.Primary {
			col.NotNull = true
		}
		// A prefix part keys the first Prefix characters only (sql/exec access.go keyPart).
		if k.Length > 0 && (!col.Type.IsString() || !col.Type.IsBlob() && k.Length > col.Type.Len) {
			return nil, sqlerr.New(sqlerr.ErrWrongSubKey, "Incorrect prefix key; the used key part isn't a string, the used length is longer than the key part, or the storage engine doesn't support unique prefix keys")
		}
		ix.Columns = append(ix.Columns, catalog.IndexColumn{Col: col.ID, Prefix: k.Length, Desc: k.Desc})
	}
	if ix.Name == "" && !ix.Primary {
		base := tbl.Columns[tbl.ColPos[ix.Columns[0].Col]].Name
		ix.Name = base
		for i := 2; tbl.IndexByName(ix.Name) != nil || d.nameTaken(tbl, ix.Name); i++ {
			ix.Name = fmt.Sprintf("%s_%d", base, i)
		}
	}
	if !ix.Primary {
		if strings.EqualFold(ix.Name, "PRIMARY") {
			return nil, sqlerr.New(sqlerr.ErrWrongNameForIndex, "Incorrect index name '%s'", ix.Name)
		}
		if err := checkIndexName(ix.Name); err != nil {
			return nil, err
		}
		ix.ID = tbl.NextIndexID
		tbl.NextIndexID++
		d.pending = append(d.pending, ix.Name)
	}
	return ix, nil
}

func (d *ddlCtx) nameTaken(tbl *catalog.Table, name string) bool {
	for _, n := range d.pending {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func (d *ddlCtx) dropTable(t *catalog.Table) {
	lo, hi := rowenc.TableSpan(t.ID)
	d.t.DeleteRange(lo, hi)
	d.t.Delete(rowenc.TableDefKey(t.ID))
	d.cat.RemoveTable(t)
	d.resetAuto = append(d.resetAuto, t.ID)
}

// unknownTables reports the names DROP TABLE / DROP VIEW did not find: error 1051, or notes with
// IF EXISTS.
func (d *ddlCtx) unknownTables(missing []string, ifExists bool) error {
	if len(missing) > 0 && !ifExists {
		return sqlerr.New(sqlerr.ErrBadTable, "Unknown table '%s'", strings.Join(missing, ","))
	}
	for _, m := range missing {
		d.s.addWarning("Note", sqlerr.ErrBadTable, fmt.Sprintf("Unknown table '%s'", m))
	}
	return nil
}

func (d *ddlCtx) dropTables(x *ast.DropTableStmt) error {
	if x.IsView {
		return d.dropViews(x)
	}
	var missing []string
	var drop []*catalog.Table
	for _, tn := range x.Tables {
		db := orDefault(tn.Schema.O, d.s.CurDB)
		if db == "" {
			return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
		t, ok := d.cat.Table(db, tn.Name.O)
		if !ok {
			missing = append(missing, db+"."+tn.Name.O)
			continue
		}
		drop = append(drop, t)
	}
	if err := d.unknownTables(missing, x.IfExists); err != nil {
		return err
	}
	if len(drop) == 0 {
		d.noop = true
	}
	dropping := map[uint64]bool{}
	for _, t := range drop {
		dropping[t.ID] = true
	}
	for _, t := range drop {
		if err := d.checkDropReferenced(t, dropping, false); err != nil {
			return err
		}
	}
	for _, t := range drop {
		d.dropTable(t)
	}
	return nil
}

func (d *ddlCtx) truncate(x *ast.TruncateTableStmt) error {
	db := orDefault(x.Table.Schema.O, d.s.CurDB)
	t, ok := d.cat.Table(db, x.Table.Name.O)
	if !ok {
		return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, x.Table.Name.O)
	}
	if err := d.checkDropReferenced(t, nil, true); err != nil {
		return err
	}
	lo, hi := rowenc.TableSpan(t.ID)
	d.t.DeleteRange(lo, hi)
	nt := t.Clone()
	nt.AutoIncBase = 0
	nt.Version++
	d.cat.PutTable(nt)
	d.resetAuto = append(d.resetAuto, t.ID)
	return catalog.SaveTable(d.t, nt)
}

func (d *ddlCtx) rename(x *ast.RenameTableStmt) error {
	for _, tt := range x.TableToTables {
		db := orDefault(tt.OldTable.Schema.O, d.s.CurDB)
		t, ok := d.cat.Table(db, tt.OldTable.Name.O)
		if !ok {
			return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, tt.OldTable.Name.O)
		}
		if err := checkIdent(tt.NewTable.Name.O, sqlerr.ErrWrongTableName, "table"); err != nil {
			return err
		}
		ndb := orDefault(tt.NewTable.Schema.O, d.s.CurDB)
		if _, ok := d.cat.DB(ndb); !ok {
			return sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", ndb)
		}
		if d.cat.NameTaken(ndb, tt.NewTable.Name.O) {
			return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", tt.NewTable.Name.O)
		}
		nt := t.Clone()
		nt.DB, nt.Name = ndb, tt.NewTable.Name.O
		nt.Version++
		d.cat.RemoveTable(t)
		d.cat.PutTable(nt)
		if err := catalog.SaveTable(d.t, nt); err != nil {
			return err
		}
		if err := d.renameReferences(t.DB, t.Name, nt.DB, nt.Name); err != nil {
			return err
		}
	}
	return nil
}

func (d *ddlCtx) tableFor(tn *ast.TableName) (*catalog.Table, error) {
	db := orDefault(tn.Schema.O, d.s.CurDB)
	if db == "" {
		return nil, sqlerr.New(sqlerr.ErrNoDB, "No database selected")
	}
	t, ok := d.cat.Table(db, tn.Name.O)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, tn.Name.O)
	}
	return t, nil
}

func (d *ddlCtx) createIndex(x *ast.CreateIndexStmt) error {
	t, err := d.tableFor(x.Table)
	if err != nil {
		return err
	}
	c := &ast.Constraint{Name: x.IndexName, Keys: x.IndexPartSpecifications, Tp: ast.ConstraintIndex}
	switch x.KeyType {
	case ast.IndexKeyTypeUnique:
		c.Tp = ast.ConstraintUniq
	case ast.IndexKeyTypeFulltext:
		c.Tp = ast.ConstraintFulltext
	}
	nt := t.Clone()
	if nt.IndexByName(x.IndexName) != nil {
		if x.IfNotExists {
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrDupKeyName, "Duplicate key name '%s'", x.IndexName)
	}
	return d.addIndexes(nt, []*ast.Constraint{c})
}

// addIndexes adds indexes to nt (a clone) and builds their entries from the table's rows.
func (d *ddlCtx) addIndexes(nt *catalog.Table, cs []*ast.Constraint) error {
	var added []*catalog.Index
	for _, c := range cs {
		ix, err := d.buildIndex(nt, c)
		if err != nil {
			return err
		}
		if ix == nil {
			continue
		}
		if ix.Primary {
			return sqlerr.New(sqlerr.ErrNotSupportedYet, "adding a primary key to an existing table is not supported yet")
		}
		if nt.IndexByName(ix.Name) != nil {
			return sqlerr.New(sqlerr.ErrDupKeyName, "Duplicate key name '%s'", ix.Name)
		}
		nt.Indexes = append(nt.Indexes, ix)
		added = append(added, ix)
	}
	nt.Init()
	if err := checkAutoIncKey(nt); err != nil {
		return err
	}
	if err := d.buildEntries(nt, added); err != nil {
		return err
	}
	nt.Version++
	d.cat.PutTable(nt)
	return catalog.SaveTable(d.t, nt)
}

// buildEntries adds the building of the given indexes' entries to the DDL's record, as a logical
// operation that every node executes when it applies the record (so the log holds a small record, not
// one entry per row). Uniqueness is checked here, before anything is logged, failing on duplicates
// with 1062 as MySQL's ALTER does: a logged record can no longer fail.
func (d *ddlCtx) buildEntries(nt *catalog.Table, ixs []*catalog.Index) error {
	if len(ixs) == 0 {
		return nil
	}
	var unique []*catalog.Index
	for _, ix := range ixs {
		if ix.Unique {
			unique = append(unique, ix)
		}
	}
	if len(unique) > 0 {
		lo, hi := rowenc.IndexSpan(nt.ID, rowenc.PrimaryIndexID)
		it, err := d.t.NewIter(lo, hi, false, true)
		if err != nil {
			return err
		}
		seen := make([]map[string]struct{}, len(unique))
		for i := range seen {
			seen[i] = map[string]struct{}{}
		}
		for ; it.Valid(); it.Next() {
			row, err := exec.DecodeRow(nt, it.Value())
			if err != nil {
				it.Close()
				return err
			}
			for i, ix := range unique {
				k, _, isUnique := exec.SecondaryKey(nt, ix, row)
				if !isUnique {
					continue // a NULL in the key never collides
				}
				if _, dup := seen[i][string(k)]; dup {
					it.Close()
					return sqlerr.New(sqlerr.ErrDupEntry, "%s", exec.DupMessage(nt, ix, row))
				}
				seen[i][string(k)] = struct{}{}
			}
		}
		err = it.Err()
		it.Close()
		if err != nil {
			return err
		}
	}
	if d.builds == nil {
		d.builds = map[uint64][]uint32{}
	}
	for _, ix := range ixs {
		d.builds[nt.ID] = append(d.builds[nt.ID], ix.ID)
	}
	return nil
}

// logBuilds adds one logical build operation per table to the record, with the statement's final
// table definition and only the indexes it still has (an ALTER may rebuild an index twice): the
// record's range deletions come before its logical operations, so an index dropped later in the same
// statement must not be built at all.
func (d *ddlCtx) logBuilds() error {
	ids := make([]uint64, 0, len(d.builds))
	for id := range d.builds {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		nt, ok := d.cat.TableByID(id)
		if !ok {
			continue
		}
		op := buildIndexesOp{}
		for _, ixID := range d.builds[id] {
			for _, ix := range nt.Indexes {
				if ix.ID == ixID && !ix.Primary {
					op.Indexes = append(op.Indexes, ixID)
				}
			}
		}
		if len(op.Indexes) == 0 {
			continue
		}
		def, err := json.Marshal(nt)
		if err != nil {
			return fmt.Errorf("catalog: encode table %s: %w", nt.Name, err)
		}
		op.Table = def
		payload, err := json.Marshal(op)
		if err != nil {
			return err
		}
		d.t.Logical(opBuildIndexes, payload)
	}
	return nil
}

func (d *ddlCtx) dropIndex(x *ast.DropIndexStmt) error {
	t, err := d.tableFor(x.Table)
	if err != nil {
		return err
	}
	nt := t.Clone()
	if err := d.dropIndexFrom(nt, x.IndexName, x.IfExists); err != nil || d.noop {
		return err
	}
	nt.Version++
	d.cat.PutTable(nt)
	return catalog.SaveTable(d.t, nt)
}

func (d *ddlCtx) dropIndexFrom(nt *catalog.Table, name string, ifExists bool) error {
	for i, ix := range nt.Indexes {
		if strings.EqualFold(ix.Name, name) {
			if ix.Primary {
				return sqlerr.New(sqlerr.ErrNotSupportedYet, "dropping the primary key is not supported yet")
			}
			if fk := d.fkNeedsIndex(nt, ix); fk != "" {
				return sqlerr.New(sqlerr.ErrFKCannotDropIndex, "Cannot drop index '%s': needed in a foreign key constraint", ix.Name)
			}
			lo, hi := rowenc.IndexSpan(nt.ID, ix.ID)
			d.t.DeleteRange(lo, hi)
			nt.Indexes = append(nt.Indexes[:i], nt.Indexes[i+1:]...)
			nt.Init()
			return checkAutoIncKey(nt)
		}
	}
	if ifExists {
		d.noop = true
		return nil
	}
	return sqlerr.New(sqlerr.ErrCantDropFieldOrKey, "Can't DROP '%s'; check that column/key exists", name)
}

func (d *ddlCtx) alterTable(x *ast.AlterTableStmt) error {
	t, err := d.tableFor(x.Table)
	if err != nil {
		return err
	}
	nt := t.Clone()
	var addIdx []*ast.Constraint
	for _, spec := range x.Specs {
		switch spec.Tp {
		case ast.AlterTableAddColumns:
			for _, cd := range spec.NewColumns {
				if nt.Col(cd.Name.Name.O) >= 0 {
					return sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", cd.Name.Name.O)
				}
				col, keys, err := d.buildColumn(nt, cd)
				if err != nil {
					return err
				}
				if col.AutoInc {
					return sqlerr.New(sqlerr.ErrNotSupportedYet, "adding an AUTO_INCREMENT column to an existing table is not supported yet")
				}
				if col.NotNull && !col.HasDefault {
					col.Absent = col.Type.ImplicitDefault()
				} else if col.HasDefault && !col.DefaultNow {
					col.Absent = col.Default
				} else if col.DefaultNow {
					col.Absent = expr.TimeValue(d.env.Now(), max(col.Type.Frac, 0))
				}
				// Existing rows read the new column as Absent: no row is rewritten.
				pos := len(nt.Columns)
				if nt.HiddenPK {
					pos-- // keep the hidden row id last
				}
				if spec.Position != nil {
					switch spec.Position.Tp {
					case ast.ColumnPositionFirst:
						pos = 0
					case ast.ColumnPositionAfter:
						ai := nt.Col(spec.Position.RelativeColumn.Name.O)
						if ai < 0 {
							return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in '%s'", spec.Position.RelativeColumn.Name.O, nt.Name)
						}
						pos = ai + 1
					}
				}
				nt.Columns = append(nt.Columns[:pos], append([]*catalog.Column{col}, nt.Columns[pos:]...)...)
				nt.Init()
				for _, k := range keys {
					addIdx = append(addIdx, k)
				}
			}
		case ast.AlterTableDropColumn:
			name := spec.OldColumnName.Name.O
			ci := nt.Col(name)
			if ci < 0 || nt.Columns[ci].Hidden {
				return sqlerr.New(sqlerr.ErrCantDropFieldOrKey, "Can't DROP '%s'; check that column/key exists", name)
			}
			if len(nt.VisibleColumns()) == 1 {
				return sqlerr.New(sqlerr.ErrCantRemoveAllFields, "You can't delete all columns with ALTER TABLE; use DROP TABLE instead")
			}
			colID := nt.Columns[ci].ID
			for _, fk := range nt.ForeignKeys {
				for _, id := range fk.Cols {
					if id == colID {
						return sqlerr.New(sqlerr.ErrFKColumnCannotDrop, "Cannot drop column '%s': needed in a foreign key constraint '%s'", name, fk.Name)
					}
				}
			}
			for _, r := range d.cat.Referencing(nt.DB, nt.Name) {
				for _, n := range r.FK.RefCols {
					if strings.EqualFold(n, name) && r.Child.ID != nt.ID {
						return sqlerr.New(sqlerr.ErrFKColumnCannotDrop, "Cannot drop column '%s': needed in a foreign key constraint '%s' of table '%s'", name, r.FK.Name, r.Child.Name)
					}
				}
			}
			var rebuild []*catalog.Index
			for i := 0; i < len(nt.Indexes); i++ {
				ix := nt.Indexes[i]
				var keep []catalog.IndexColumn
				for _, ic := range ix.Columns {
					if ic.Col != colID {
						keep = append(keep, ic)
					}
				}
				if len(keep) == len(ix.Columns) {
					continue
				}
				if ix.Primary {
					return sqlerr.New(sqlerr.ErrNotSupportedYet, "dropping a primary key column is not supported yet")
				}
				lo, hi := rowenc.IndexSpan(nt.ID, ix.ID)
				d.t.DeleteRange(lo, hi)
				if len(keep) == 0 {
					nt.Indexes = append(nt.Indexes[:i], nt.Indexes[i+1:]...)
					i--
					continue
				}
				nix := &catalog.Index{ID: nt.NextIndexID, Name: ix.Name, Unique: ix.Unique, Columns: keep, KeyVersion: types.CollationKeyVersion}
				nt.NextIndexID++
				nt.Indexes[i] = nix
				rebuild = append(rebuild, nix)
			}
			nt.Columns = append(nt.Columns[:ci], nt.Columns[ci+1:]...)
			nt.Init()
			if err := d.buildEntries(nt, rebuild); err != nil {
				return err
			}
		case ast.AlterTableAddConstraint:
			if spec.Constraint.Tp == ast.ConstraintCheck {
				ck, err := d.buildCheck(nt, spec.Constraint, len(nt.Checks)+1)
				if err != nil {
					return err
				}
				if err := d.checkExisting(nt, ck); err != nil {
					return err
				}
				nt.Checks = append(nt.Checks, ck)
				continue
			}
			if spec.Constraint.Tp == ast.ConstraintForeignKey {
				fk, ixc, err := d.buildForeignKey(nt, spec.Constraint, len(nt.ForeignKeys)+1)
				if err != nil {
					return err
				}
				if err := d.checkExistingRows(nt, fk); err != nil {
					return err
				}
				nt.ForeignKeys = append(nt.ForeignKeys, fk)
				if ixc != nil {
					addIdx = append(addIdx, ixc)
				}
				continue
			}
			addIdx = append(addIdx, spec.Constraint)
		case ast.AlterTableDropIndex:
			if err := d.dropIndexFrom(nt, spec.Name, spec.IfExists); err != nil {
				return err
			}
			d.noop = false
		case ast.AlterTableDropPrimaryKey:
			return sqlerr.New(sqlerr.ErrNotSupportedYet, "dropping the primary key is not supported yet")
		case ast.AlterTableDropCheck, ast.AlterTableAlterCheck:
			found := false
			for i, ck := range nt.Checks {
				if strings.EqualFold(ck.Name, spec.Constraint.Name) {
					found = true
					if spec.Tp == ast.AlterTableDropCheck {
						nt.Checks = append(nt.Checks[:i], nt.Checks[i+1:]...)
					} else {
						c := *ck
						c.Enforced = spec.Constraint.Enforced
						if c.Enforced && !ck.Enforced {
							if err := d.checkExisting(nt, &c); err != nil {
								return err
							}
						}
						nt.Checks[i] = &c
					}
					break
				}
			}
			if !found {
				return sqlerr.New(sqlerr.ErrCheckConstraintNotFound, "Check constraint '%s' is not found in the table.", spec.Constraint.Name)
			}
		case ast.AlterTableDropForeignKey:
			found := false
			for i, fk := range nt.ForeignKeys {
				if strings.EqualFold(fk.Name, spec.Name) {
					nt.ForeignKeys = append(nt.ForeignKeys[:i], nt.ForeignKeys[i+1:]...)
					found = true
					break
				}
			}
			if !found {
				return sqlerr.New(sqlerr.ErrCantDropFieldOrKey, "Can't DROP '%s'; check that column/key exists", spec.Name)
			}
		case ast.AlterTableRenameTable:
			if err := checkIdent(spec.NewTable.Name.O, sqlerr.ErrWrongTableName, "table"); err != nil {
				return err
			}
			ndb := orDefault(spec.NewTable.Schema.O, nt.DB)
			if d.cat.NameTaken(ndb, spec.NewTable.Name.O) {
				return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", spec.NewTable.Name.O)
			}
			d.cat.RemoveTable(t)
			for _, fk := range nt.ForeignKeys {
				if strings.EqualFold(fk.RefDB, nt.DB) && strings.EqualFold(fk.RefTable, nt.Name) {
					fk.RefDB, fk.RefTable = ndb, spec.NewTable.Name.O
				}
			}
			if err := d.renameReferences(nt.DB, nt.Name, ndb, spec.NewTable.Name.O); err != nil {
				return err
			}
			nt.DB, nt.Name = ndb, spec.NewTable.Name.O
		case ast.AlterTableOption:
			for _, o := range spec.Options {
				switch o.Tp {
				case ast.TableOptionAutoIncrement:
					nt.AutoIncBase = o.UintValue
					d.resetAuto = append(d.resetAuto, nt.ID)
					for _, c := range nt.Columns {
						if c.AutoInc && !c.Hidden {
							d.t.Delete(rowenc.AutoIncKey(nt.ID, c.ID)) // the new base (or the largest value) rules
						}
					}
				case ast.TableOptionComment:
					nt.Comment = o.StrValue
				case ast.TableOptionEngine, ast.TableOptionCharset, ast.TableOptionCollate:
				}
			}
		case ast.AlterTableEnableKeys, ast.AlterTableDisableKeys, ast.AlterTableLock, ast.AlterTableAlgorithm, ast.AlterTableForce:
		case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
			oldName := spec.NewColumns[0].Name.Name.O
			if spec.Tp == ast.AlterTableChangeColumn {
				oldName = spec.OldColumnName.Name.O
			}
			keys, err := d.changeColumn(nt, oldName, spec.NewColumns[0], spec.Position)
			if err != nil {
				return err
			}
			addIdx = append(addIdx, keys...)
		case ast.AlterTableRenameColumn:
			if err := renameColumn(nt, spec.OldColumnName.Name.O, spec.NewColumnName.Name.O); err != nil {
				return err
			}
			nt.Init()
		case ast.AlterTableAlterColumn:
			if err := d.alterColumnDefault(nt, spec); err != nil {
				return err
			}
		case ast.AlterTableRenameIndex:
			ix := nt.IndexByName(spec.FromKey.O)
			if ix == nil {
				return sqlerr.New(sqlerr.ErrKeyDoesNotExist, "Key '%s' doesn't exist in table '%s'", spec.FromKey.O, nt.Name)
			}
			if err := checkIndexName(spec.ToKey.O); err != nil {
				return err
			}
			ix.Name = spec.ToKey.O
		default:
			return sqlerr.New(sqlerr.ErrNotSupportedYet, "this ALTER TABLE operation is not supported yet")
		}
	}
	if plan := d.rw.plans[nt.ID]; plan != nil {
		if len(addIdx) > 0 || len(d.builds[nt.ID]) > 0 {
			// Index builds replay from the stored rows, which this statement rewrites.
			return sqlerr.New(sqlerr.ErrNotSupportedYet, "changing a column's type together with adding or rebuilding an index in one ALTER TABLE is not supported yet; use two statements")
		}
		if err := d.rewriteRows(t, nt, plan.cols); err != nil {
			return err
		}
	}
	if len(addIdx) > 0 {
		return d.addIndexes(nt, addIdx)
	}
	nt.Version++
	nt.Init()
	d.cat.PutTable(nt)
	return catalog.SaveTable(d.t, nt)
}

// ddlDatabases lists, sorted and lower-case, the databases a DDL statement changes.
func ddlDatabases(st ast.StmtNode, cur string) []string {
	set := map[string]bool{}
	add := func(n string) {
		if n == "" {
			n = cur
		}
		set[strings.ToLower(n)] = true
	}
	switch x := st.(type) {
	case *ast.CreateDatabaseStmt:
		add(x.Name.O)
	case *ast.DropDatabaseStmt:
		add(x.Name.O)
	case *ast.AlterDatabaseStmt:
		add(x.Name.O)
	case *ast.CreateTableStmt:
		add(x.Table.Schema.O)
		if x.ReferTable != nil {
			add(x.ReferTable.Schema.O)
		}
	case *ast.DropTableStmt:
		for _, t := range x.Tables {
			add(t.Schema.O)
		}
	case *ast.TruncateTableStmt:
		add(x.Table.Schema.O)
	case *ast.RenameTableStmt:
		for _, tt := range x.TableToTables {
			add(tt.OldTable.Schema.O)
			add(tt.NewTable.Schema.O)
		}
	case *ast.CreateIndexStmt:
		add(x.Table.Schema.O)
	case *ast.DropIndexStmt:
		add(x.Table.Schema.O)
	case *ast.AlterTableStmt:
		add(x.Table.Schema.O)
		for _, spec := range x.Specs {
			if spec.NewTable != nil {
				add(spec.NewTable.Schema.O)
			}
		}
	case *ast.CreateViewStmt:
		add(x.ViewName.Schema.O)
	}
	delete(set, "")
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
