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

func (d *Stmt) alterTable(x *ast.AlterTableStmt) error {
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
