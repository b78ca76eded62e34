package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// createTable is CREATE TABLE [IF NOT EXISTS], CREATE TABLE ... LIKE included.
func (d *Stmt) createTable(x *ast.CreateTableStmt) error {
	if db := orDefault(x.Table.Schema.O, d.curDB()); d.pc.IsVirtualDB(db) {
		// The system schemas are Kiln's own. Dumps of --all-databases re-create the log tables
		// with IF NOT EXISTS: they exist already (internal/sql/infoschema/logtables.go).
		if x.IfNotExists && d.s.SystemLogTable(db, x.Table.Name.O) {
			d.s.AddWarning("Note", sqlerr.ErrTableExists, fmt.Sprintf("Table '%s' already exists", x.Table.Name.O))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrDBAccessDenied, "Access denied for user '%s'@'%%' to database '%s'", d.s.UserName(), db)
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
			d.s.AddWarning("Note", sqlerr.ErrTableExists, fmt.Sprintf("Table '%s' already exists", name))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", name)
	}
	if x.ReferTable != nil {
		return d.createTableLike(x, dbName, name)
	}
	if x.Select != nil {
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "CREATE TABLE ... SELECT is not supported yet")
	}
	if x.TemporaryKeyword != ast.TemporaryNone {
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "temporary tables are not supported yet")
	}
	dbDef, _ := d.cat.DB(dbName)
	tbl := &catalog.Table{ID: d.cat.AllocTableID(), DB: dbName, Name: name, NextColID: 1, NextIndexID: 2, Charset: dbDef.Charset, Collation: dbDef.Collation, Engine: "InnoDB", Version: 1}
	if err := createOptions(tbl, x.Options); err != nil {
		return err
	}
	if x.Partition != nil {
		d.s.AddWarning("Warning", sqlerr.ErrNotSupportedYet, "PARTITION BY is ignored: Kiln tables are not partitioned")
	}
	constraints, err := d.createColumns(tbl, x.Cols)
	if err != nil {
		return err
	}
	constraints = append(constraints, x.Constraints...)
	if err := d.createKeys(tbl, constraints); err != nil {
		return err
	}
	if err := d.checkGenerated(tbl); err != nil {
		return err
	}
	if err := d.createConstraints(tbl, constraints); err != nil {
		return err
	}
	if err := checkAutoIncKey(tbl); err != nil {
		return err
	}
	d.cat.PutTable(tbl)
	return catalog.SaveTable(d.t, tbl)
}

// createTableLike is CREATE TABLE name LIKE src: src's definition under a new id and name.
func (d *Stmt) createTableLike(x *ast.CreateTableStmt, dbName, name string) error {
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

// createOptions applies CREATE TABLE's table options (charset, collation, AUTO_INCREMENT base,
// comment, engine name) to tbl.
func createOptions(tbl *catalog.Table, opts []*ast.TableOption) error {
	for _, o := range opts {
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
	return nil
}

// createColumns adds CREATE TABLE's columns to tbl; it returns their inline constraints.
func (d *Stmt) createColumns(tbl *catalog.Table, cols []*ast.ColumnDef) ([]*ast.Constraint, error) {
	var constraints []*ast.Constraint
	seen := map[string]bool{}
	for _, cd := range cols {
		col, keys, err := d.buildColumn(tbl, cd)
		if err != nil {
			return nil, err
		}
		if seen[strings.ToLower(col.Name)] {
			return nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", col.Name)
		}
		seen[strings.ToLower(col.Name)] = true
		tbl.Columns = append(tbl.Columns, col)
		constraints = append(constraints, keys...)
	}
	if len(tbl.Columns) == 0 {
		return nil, sqlerr.New(sqlerr.ErrTableMustHaveColumns, "A table must have at least 1 column")
	}
	return constraints, nil
}

// createKeys builds tbl's primary key and secondary indexes from the key constraints; a table
// without a primary key gets a hidden auto-increment row id as its key.
func (d *Stmt) createKeys(tbl *catalog.Table, constraints []*ast.Constraint) error {
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
	return nil
}

// createConstraints adds CREATE TABLE's CHECK constraints and foreign keys to tbl, with the child
// index of a foreign key that no index fits.
//
// Unnamed constraints are numbered among the unnamed ones of the statement, in the order written
// (column CHECKs first), as MySQL 8 does: a named constraint takes no number, so the first
// unnamed foreign key is tbl_ibfk_1 whatever named ones come before it (MySQL's manual, "FOREIGN
// KEY Constraints" and "CHECK Constraints").
func (d *Stmt) createConstraints(tbl *catalog.Table, constraints []*ast.Constraint) error {
	unnamedChecks, unnamedFKs := 0, 0
	for _, c := range constraints {
		if c.Tp == ast.ConstraintCheck {
			if c.Name == "" {
				unnamedChecks++
			}
			ck, err := d.buildCheck(tbl, c, unnamedChecks)
			if err != nil {
				return err
			}
			tbl.Checks = append(tbl.Checks, ck)
			continue
		}
		if c.Tp != ast.ConstraintForeignKey {
			continue
		}
		if c.Name == "" {
			unnamedFKs++
		}
		fk, ixc, err := d.buildForeignKey(tbl, c, unnamedFKs)
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
	return nil
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

func (d *Stmt) dropTable(t *catalog.Table) {
	lo, hi := rowenc.TableSpan(t.ID)
	d.t.DeleteRange(lo, hi)
	d.t.Delete(rowenc.TableDefKey(t.ID))
	d.cat.RemoveTable(t)
	d.resetAuto = append(d.resetAuto, t.ID)
}

// unknownTables reports the names DROP TABLE / DROP VIEW did not find: error 1051, or notes with
// IF EXISTS.
func (d *Stmt) unknownTables(missing []string, ifExists bool) error {
	if len(missing) > 0 && !ifExists {
		return sqlerr.New(sqlerr.ErrBadTable, "Unknown table '%s'", strings.Join(missing, ","))
	}
	for _, m := range missing {
		d.s.AddWarning("Note", sqlerr.ErrBadTable, fmt.Sprintf("Unknown table '%s'", m))
	}
	return nil
}

func (d *Stmt) dropTables(x *ast.DropTableStmt) error {
	if x.IsView {
		return d.dropViews(x)
	}
	var missing []string
	var drop []*catalog.Table
	for _, tn := range x.Tables {
		db := orDefault(tn.Schema.O, d.curDB())
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

func (d *Stmt) truncate(x *ast.TruncateTableStmt) error {
	db := orDefault(x.Table.Schema.O, d.curDB())
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

func (d *Stmt) rename(x *ast.RenameTableStmt) error {
	for _, tt := range x.TableToTables {
		db := orDefault(tt.OldTable.Schema.O, d.curDB())
		t, ok := d.cat.Table(db, tt.OldTable.Name.O)
		if !ok {
			return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, tt.OldTable.Name.O)
		}
		if err := checkIdent(tt.NewTable.Name.O, sqlerr.ErrWrongTableName, "table"); err != nil {
			return err
		}
		ndb := orDefault(tt.NewTable.Schema.O, d.curDB())
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

func (d *Stmt) tableFor(tn *ast.TableName) (*catalog.Table, error) {
	db := orDefault(tn.Schema.O, d.curDB())
	if db == "" {
		return nil, sqlerr.New(sqlerr.ErrNoDB, "No database selected")
	}
	t, ok := d.cat.Table(db, tn.Name.O)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, tn.Name.O)
	}
	return t, nil
}
