package ddl

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// alterTable is ALTER TABLE: each spec changes a clone of the table in turn (alterSpec); then, once,
// with the final definition, the rows are rewritten (a column's type changed) or the new indexes
// built, and the definition is saved.
func (d *Stmt) alterTable(x *ast.AlterTableStmt) error {
	t, err := d.tableFor(x.Table)
	if err != nil {
		return err
	}
	nt := t.Clone()
	var addIdx []*ast.Constraint
	for _, spec := range x.Specs {
		keys, err := d.alterSpec(t, nt, spec)
		if err != nil {
			return err
		}
		addIdx = append(addIdx, keys...)
	}
	nt.Init()
	if err := d.checkGenerated(nt); err != nil {
		return err
	}
	if plan := d.rw.plans[nt.ID]; plan != nil {
		if len(d.builds[nt.ID]) > 0 {
			// Index builds replay from the stored rows, which this statement rewrites.
			return sqlerr.New(sqlerr.ErrNotSupportedYet, "changing a column's type together with adding or rebuilding an index in one ALTER TABLE is not supported yet; use two statements")
		}
		// Indexes this statement adds get their entries from the rewritten rows, in the
		// statement's record (ADD COLUMN c INT AS (a + 1), ADD INDEX (c)).
		added, err := d.indexDefs(nt, addIdx)
		if err != nil {
			return err
		}
		if err := d.rewriteRows(t, nt, plan.cols, added); err != nil {
			return err
		}
		addIdx = nil
	}
	if len(addIdx) > 0 {
		return d.addIndexes(nt, addIdx)
	}
	nt.Version++
	nt.Init()
	d.cat.PutTable(nt)
	return catalog.SaveTable(d.t, nt)
}

// alterSpec applies one ALTER TABLE spec to nt, the clone of t the statement changes. It returns
// the key constraints whose indexes the statement adds at its end.
func (d *Stmt) alterSpec(t, nt *catalog.Table, spec *ast.AlterTableSpec) ([]*ast.Constraint, error) {
	switch spec.Tp {
	case ast.AlterTableAddColumns:
		return d.addColumns(nt, spec)
	case ast.AlterTableDropColumn:
		return nil, d.dropColumn(nt, spec.OldColumnName.Name.O)
	case ast.AlterTableAddConstraint:
		return d.addConstraint(nt, spec.Constraint)
	case ast.AlterTableDropIndex:
		if err := d.dropIndexFrom(nt, spec.Name, spec.IfExists); err != nil {
			return nil, err
		}
		d.noop = false
	case ast.AlterTableDropPrimaryKey:
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "dropping the primary key is not supported yet")
	case ast.AlterTableDropCheck, ast.AlterTableAlterCheck:
		return nil, d.alterCheck(nt, spec)
	case ast.AlterTableDropForeignKey:
		return nil, dropForeignKey(nt, spec.Name)
	case ast.AlterTableRenameTable:
		return nil, d.renameTable(t, nt, spec.NewTable)
	case ast.AlterTableOption:
		d.tableOptions(nt, spec.Options)
	case ast.AlterTableEnableKeys, ast.AlterTableDisableKeys, ast.AlterTableLock, ast.AlterTableAlgorithm, ast.AlterTableForce:
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
		oldName := spec.NewColumns[0].Name.Name.O
		if spec.Tp == ast.AlterTableChangeColumn {
			oldName = spec.OldColumnName.Name.O
		}
		return d.changeColumn(nt, oldName, spec.NewColumns[0], spec.Position)
	case ast.AlterTableRenameColumn:
		if !strings.EqualFold(spec.OldColumnName.Name.O, spec.NewColumnName.Name.O) {
			if err := d.checkGenDependency(nt, spec.OldColumnName.Name.O); err != nil {
				return nil, err
			}
		}
		if err := renameColumn(nt, spec.OldColumnName.Name.O, spec.NewColumnName.Name.O); err != nil {
			return nil, err
		}
		nt.Init()
	case ast.AlterTableAlterColumn:
		return nil, d.alterColumnDefault(nt, spec)
	case ast.AlterTableRenameIndex:
		return nil, renameIndex(nt, spec.FromKey.O, spec.ToKey.O)
	default:
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "this ALTER TABLE operation is not supported yet")
	}
	return nil, nil
}

// addColumns is ADD COLUMN: existing rows read a new column as its Absent value, so no row is
// rewritten. It returns the new columns' inline key constraints.
func (d *Stmt) addColumns(nt *catalog.Table, spec *ast.AlterTableSpec) ([]*ast.Constraint, error) {
	var addIdx []*ast.Constraint
	for _, cd := range spec.NewColumns {
		if nt.Col(cd.Name.Name.O) >= 0 {
			return nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", cd.Name.Name.O)
		}
		col, keys, err := d.buildColumn(nt, cd)
		if err != nil {
			return nil, err
		}
		if col.AutoInc {
			return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "adding an AUTO_INCREMENT column to an existing table is not supported yet")
		}
		if col.GenExpr != "" || col.DefaultExpr != "" {
			// Its value is computed for every existing row (convertRows): VIRTUAL columns are
			// stored too, and an expression default is evaluated per row, as MySQL fills it.
			d.rw.add(nt.ID, col.ID)
		}
		if col.NotNull && !col.HasDefault {
			col.Absent = col.Type.ImplicitDefault()
		} else if col.HasDefault && !col.DefaultNow {
			col.Absent = col.Default
		} else if col.DefaultNow {
			col.Absent = expr.TimeValue(d.env.Now(), max(col.Type.Frac, 0))
		}
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
					return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in '%s'", spec.Position.RelativeColumn.Name.O, nt.Name)
				}
				pos = ai + 1
			}
		}
		nt.Columns = append(nt.Columns[:pos], append([]*catalog.Column{col}, nt.Columns[pos:]...)...)
		nt.Init()
		addIdx = append(addIdx, keys...)
	}
	return addIdx, nil
}

// dropColumn is DROP COLUMN: refused while a foreign key needs the column; the indexes that hold it
// lose it (their entries are deleted and, if columns remain, rebuilt under a new index id).
func (d *Stmt) dropColumn(nt *catalog.Table, name string) error {
	ci := nt.Col(name)
	if ci < 0 || nt.Columns[ci].Hidden {
		return sqlerr.New(sqlerr.ErrCantDropFieldOrKey, "Can't DROP '%s'; check that column/key exists", name)
	}
	if len(nt.VisibleColumns()) == 1 {
		return sqlerr.New(sqlerr.ErrCantRemoveAllFields, "You can't delete all columns with ALTER TABLE; use DROP TABLE instead")
	}
	colID := nt.Columns[ci].ID
	if err := d.checkGenDependency(nt, nt.Columns[ci].Name); err != nil {
		return err
	}
	if err := d.checkDropFKColumn(nt, name, colID); err != nil {
		return err
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
	return d.buildEntries(nt, rebuild)
}

// checkDropFKColumn refuses (3828) to drop column name (id colID) of nt while a foreign key of nt,
// or of a table referencing nt, uses it.
func (d *Stmt) checkDropFKColumn(nt *catalog.Table, name string, colID uint32) error {
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
	return nil
}

// addConstraint is ADD CONSTRAINT: a CHECK or a foreign key is checked against the existing rows
// now; a key (and a foreign key's missing child index) is returned for the statement to add.
func (d *Stmt) addConstraint(nt *catalog.Table, c *ast.Constraint) ([]*ast.Constraint, error) {
	switch c.Tp {
	case ast.ConstraintCheck:
		var names []string
		for _, o := range nt.Checks {
			names = append(names, o.Name)
		}
		ck, err := d.buildCheck(nt, c, nextGeneratedNumber(nt.Name+"_chk_", names))
		if err != nil {
			return nil, err
		}
		if err := d.checkExisting(nt, ck); err != nil {
			return nil, err
		}
		nt.Checks = append(nt.Checks, ck)
		return nil, nil
	case ast.ConstraintForeignKey:
		var names []string
		for _, o := range nt.ForeignKeys {
			names = append(names, o.Name)
		}
		fk, ixc, err := d.buildForeignKey(nt, c, nextGeneratedNumber(nt.Name+"_ibfk_", names))
		if err != nil {
			return nil, err
		}
		if err := d.checkExistingRows(nt, fk); err != nil {
			return nil, err
		}
		nt.ForeignKeys = append(nt.ForeignKeys, fk)
		if ixc != nil {
			return []*ast.Constraint{ixc}, nil
		}
		return nil, nil
	}
	return []*ast.Constraint{c}, nil
}

// alterCheck is DROP CHECK and ALTER CHECK ... [NOT] ENFORCED (enforcing one checks the rows).
func (d *Stmt) alterCheck(nt *catalog.Table, spec *ast.AlterTableSpec) error {
	for i, ck := range nt.Checks {
		if !strings.EqualFold(ck.Name, spec.Constraint.Name) {
			continue
		}
		if spec.Tp == ast.AlterTableDropCheck {
			nt.Checks = append(nt.Checks[:i], nt.Checks[i+1:]...)
			return nil
		}
		c := *ck
		c.Enforced = spec.Constraint.Enforced
		if c.Enforced && !ck.Enforced {
			if err := d.checkExisting(nt, &c); err != nil {
				return err
			}
		}
		nt.Checks[i] = &c
		return nil
	}
	return sqlerr.New(sqlerr.ErrCheckConstraintNotFound, "Check constraint '%s' is not found in the table.", spec.Constraint.Name)
}

// dropForeignKey is DROP FOREIGN KEY (its child index stays, as in MySQL).
func dropForeignKey(nt *catalog.Table, name string) error {
	for i, fk := range nt.ForeignKeys {
		if strings.EqualFold(fk.Name, name) {
			nt.ForeignKeys = append(nt.ForeignKeys[:i], nt.ForeignKeys[i+1:]...)
			return nil
		}
	}
	return sqlerr.New(sqlerr.ErrCantDropFieldOrKey, "Can't DROP '%s'; check that column/key exists", name)
}

// renameTable is ALTER TABLE ... RENAME [TO]: the table's own self-references and the foreign keys
// that reference it follow the new name.
func (d *Stmt) renameTable(t, nt *catalog.Table, to *ast.TableName) error {
	if err := checkIdent(to.Name.O, sqlerr.ErrWrongTableName, "table"); err != nil {
		return err
	}
	ndb := orDefault(to.Schema.O, nt.DB)
	if d.cat.NameTaken(ndb, to.Name.O) {
		return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", to.Name.O)
	}
	d.cat.RemoveTable(t)
	for _, fk := range nt.ForeignKeys {
		if strings.EqualFold(fk.RefDB, nt.DB) && strings.EqualFold(fk.RefTable, nt.Name) {
			fk.RefDB, fk.RefTable = ndb, to.Name.O
		}
	}
	if err := d.renameReferences(nt.DB, nt.Name, ndb, to.Name.O); err != nil {
		return err
	}
	nt.DB, nt.Name = ndb, to.Name.O
	return nil
}

// tableOptions is ALTER TABLE's table options: a new AUTO_INCREMENT base (the stored counters are
// deleted, and the facade forgets its cached ones) and COMMENT; ENGINE and the charset are accepted
// and ignored.
func (d *Stmt) tableOptions(nt *catalog.Table, opts []*ast.TableOption) {
	for _, o := range opts {
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
}

// renameIndex is RENAME INDEX from TO to.
func renameIndex(nt *catalog.Table, from, to string) error {
	ix := nt.IndexByName(from)
	if ix == nil {
		return sqlerr.New(sqlerr.ErrKeyDoesNotExist, "Key '%s' doesn't exist in table '%s'", from, nt.Name)
	}
	if err := checkIndexName(to); err != nil {
		return err
	}
	ix.Name = to
	return nil
}
