package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Foreign keys: the DDL side (building, validating, renaming constraints); enforcement on rows is
// sql/exec's (fk.go).

func refAction(o *ast.OnDeleteOpt, u *ast.OnUpdateOpt) (string, string) {
	conv := func(r ast.ReferOptionType) string {
		switch r {
		case ast.ReferOptionCascade:
			return "CASCADE"
		case ast.ReferOptionSetNull:
			return "SET NULL"
		case ast.ReferOptionNoAction:
			return "NO ACTION"
		case ast.ReferOptionSetDefault:
			return "SET DEFAULT"
		case ast.ReferOptionRestrict:
			return "RESTRICT"
		}
		return ""
	}
	var del, upd string
	if o != nil {
		del = conv(o.ReferOpt)
	}
	if u != nil {
		upd = conv(u.ReferOpt)
	}
	return del, upd
}

// buildForeignKey validates a FOREIGN KEY clause for table t (being created or altered) and
// returns the constraint; it makes the child-side index if none fits. An unnamed constraint is
// named t_ibfk_n.
func (d *Stmt) buildForeignKey(t *catalog.Table, c *ast.Constraint, n int) (*catalog.ForeignKey, *ast.Constraint, error) {
	name := c.Name
	if name == "" {
		name = fmt.Sprintf("%s_ibfk_%d", t.Name, n)
	}
	if err := checkIndexName(name); err != nil {
		return nil, nil, err
	}
	for _, o := range t.ForeignKeys {
		if strings.EqualFold(o.Name, name) {
			return nil, nil, sqlerr.New(sqlerr.ErrFKDupName, "Duplicate foreign key constraint name '%s'", name)
		}
	}
	fk := &catalog.ForeignKey{Name: name, RefDB: orDefault(c.Refer.Table.Schema.O, t.DB), RefTable: c.Refer.Table.Name.O}
	fk.OnDelete, fk.OnUpdate = refAction(c.Refer.OnDelete, c.Refer.OnUpdate)
	if fk.OnDelete == "SET DEFAULT" || fk.OnUpdate == "SET DEFAULT" {
		return nil, nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "SET DEFAULT is not supported by InnoDB foreign keys")
	}
	if len(c.Keys) != len(c.Refer.IndexPartSpecifications) {
		return nil, nil, sqlerr.New(sqlerr.ErrWrongFKDef, "Incorrect foreign key definition for '%s': Key reference and table reference don't match", name)
	}
	var cols []int
	for _, k := range c.Keys {
		ci := t.Col(k.Column.Name.O)
		if ci < 0 || t.Columns[ci].Hidden {
			return nil, nil, sqlerr.New(sqlerr.ErrKeyColumnDoesNotExit, "Key column '%s' doesn't exist in table", k.Column.Name.O)
		}
		col := t.Columns[ci]
		if col.GenExpr != "" && !col.GenStored {
			return nil, nil, virtualFKError(name, col.Name)
		}
		if col.GenExpr != "" {
			// A foreign key action may not write a generated column (MySQL's 3104, in its order).
			clause := ""
			switch {
			case fk.OnDelete == "SET NULL":
				clause = "ON DELETE SET NULL"
			case fk.OnUpdate == "SET NULL":
				clause = "ON UPDATE SET NULL"
			case fk.OnUpdate == "CASCADE":
				clause = "ON UPDATE CASCADE"
			}
			if clause != "" {
				return nil, nil, sqlerr.New(sqlerr.ErrWrongFKOptionForGeneratedColumn, "Cannot define foreign key with %s clause on a generated column.", clause)
			}
		}
		if col.NotNull && (fk.OnDelete == "SET NULL" || fk.OnUpdate == "SET NULL") {
			return nil, nil, sqlerr.New(sqlerr.ErrFKColumnNotNull, "Column '%s' cannot be NOT NULL: needed in a foreign key constraint '%s' SET NULL", col.Name, name)
		}
		fk.Cols = append(fk.Cols, col.ID)
		cols = append(cols, ci)
	}
	for _, r := range c.Refer.IndexPartSpecifications {
		fk.RefCols = append(fk.RefCols, r.Column.Name.O)
	}
	var parent *catalog.Table
	if strings.EqualFold(fk.RefDB, t.DB) && strings.EqualFold(fk.RefTable, t.Name) {
		parent = t
	} else if p, ok := d.cat.Table(fk.RefDB, fk.RefTable); ok {
		parent = p
	}
	if parent == nil {
		if d.s.FKChecks() {
			return nil, nil, sqlerr.New(sqlerr.ErrFKCannotOpenParent, "Failed to open the referenced table '%s'", fk.RefTable)
		}
	} else {
		var pcols []int
		for i, n := range fk.RefCols {
			pi := parent.Col(n)
			if pi < 0 {
				return nil, nil, sqlerr.New(sqlerr.ErrFKNoIndexParent, "Failed to add the foreign key constraint. Missing column '%s' for constraint '%s' in the referenced table '%s'", n, name, parent.Name)
			}
			fk.RefCols[i] = parent.Columns[pi].Name
			pcols = append(pcols, pi)
			if pc := parent.Columns[pi]; pc.GenExpr != "" && !pc.GenStored {
				return nil, nil, virtualFKError(name, pc.Name)
			}
			if !fkCompatible(&t.Columns[cols[i]].Type, &parent.Columns[pi].Type) {
				return nil, nil, sqlerr.New(sqlerr.ErrFKIncompatibleColumns, "Referencing column '%s' and referenced column '%s' in foreign key constraint '%s' are incompatible.", t.Columns[cols[i]].Name, parent.Columns[pi].Name, name)
			}
		}
		if parent != t && len(parent.Indexes) > 0 && exec.PrefixIndex(parent, pcols) == nil {
			return nil, nil, sqlerr.New(sqlerr.ErrFKNoIndexParent, "Failed to add the foreign key constraint. Missing index for constraint '%s' in the referenced table '%s'", name, parent.Name)
		}
	}
	if err := d.checkStoredBaseFK(t, fk); err != nil {
		return nil, nil, err
	}
	// The index a foreign key needs and no existing index fits is named as MySQL 8 names it: by
	// the CONSTRAINT symbol (or FOREIGN KEY index_name: the parser gives one of them as c.Name),
	// else by the first referencing column, made unique (buildIndex's rule for an unnamed key),
	// never by the generated constraint name.
	var ixc *ast.Constraint
	if exec.PrefixIndex(t, cols) == nil {
		ixc = &ast.Constraint{Tp: ast.ConstraintIndex, Name: c.Name, Keys: c.Keys}
	}
	return fk, ixc, nil
}

// virtualFKError is 3733: InnoDB keys no foreign key on a VIRTUAL generated column (child or
// parent side); Kiln stores their values but follows MySQL.
func virtualFKError(fk, col string) error {
	return sqlerr.New(sqlerr.ErrFKCannotUseVirtualColumn, "Foreign key '%s' uses virtual column '%s' which is not supported.", fk, col)
}

// fkCompatible is InnoDB's rule: same type class, integers of the same size and signedness, strings
// of the same charset and collation (lengths may differ).
func fkCompatible(a, b *types.ColType) bool {
	if a.IsInteger() || b.IsInteger() {
		return a.Tp == b.Tp && a.Unsigned == b.Unsigned
	}
	if a.IsString() || b.IsString() {
		if !a.IsString() || !b.IsString() {
			return false
		}
		if a.IsBinaryString() != b.IsBinaryString() {
			return false
		}
		return a.IsBinaryString() || a.Charset == b.Charset
	}
	if a.Tp == b.Tp {
		return true
	}
	return false
}

// checkExistingRows verifies an added constraint against the table's rows (1452 on the first
// orphan), as ALTER TABLE ADD FOREIGN KEY does with foreign_key_checks on.
func (d *Stmt) checkExistingRows(t *catalog.Table, fk *catalog.ForeignKey) error {
	if !d.s.FKChecks() {
		return nil
	}
	lo, hi := rowenc.IndexSpan(t.ID, rowenc.PrimaryIndexID)
	it, err := d.t.NewIter(lo, hi, false, true)
	if err != nil {
		return err
	}
	defer it.Close()
	parent, pcols, ok := exec.ResolveParent(d.cat, fk)
	if strings.EqualFold(fk.RefDB, t.DB) && strings.EqualFold(fk.RefTable, t.Name) {
		parent, ok = t, true
		pcols = pcols[:0]
		for _, n := range fk.RefCols {
			pcols = append(pcols, t.Col(n))
		}
	}
	if !ok {
		return exec.ErrNoParent(t, fk)
	}
	ix := exec.PrefixIndex(parent, pcols)
	cc := exec.ChildCols(t, fk)
	for ; it.Valid(); it.Next() {
		row, err := exec.DecodeRow(t, it.Value())
		if err != nil {
			return err
		}
		vals := make([]types.Value, len(cc))
		null := false
		for i, c := range cc {
			vals[i] = row[c]
			null = null || row[c].IsNull()
		}
		if null {
			continue
		}
		lo := exec.KeyPrefix(parent, ix, vals)
		pit, err := d.t.NewIter(lo, exec.PrefixEnd(lo), false, true)
		if err != nil {
			return err
		}
		found := pit.Valid()
		pit.Close()
		if !found {
			return sqlerr.New(sqlerr.ErrNoReferencedRow, "Cannot add or update a child row: a foreign key constraint fails (%s)", exec.FKDesc(t, fk))
		}
	}
	return it.Err()
}

// checkDropReferenced refuses to drop (or truncate) a table other tables reference, unless
// foreign_key_checks is off or the children go in the same statement.
func (d *Stmt) checkDropReferenced(t *catalog.Table, dropping map[uint64]bool, truncate bool) error {
	if !d.s.FKChecks() {
		return nil
	}
	for _, r := range d.cat.Referencing(t.DB, t.Name) {
		if r.Child.ID == t.ID || dropping[r.Child.ID] {
			continue
		}
		if truncate {
			return sqlerr.New(sqlerr.ErrTruncateIllegalFK, "Cannot truncate a table referenced in a foreign key constraint (%s)", exec.FKDesc(r.Child, r.FK))
		}
		return sqlerr.New(sqlerr.ErrFKCannotDropParent, "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.", t.Name, r.FK.Name, r.Child.Name)
	}
	return nil
}

// fkNeedsIndex reports the constraint (of t or referencing t) that needs index ix, if any.
func (d *Stmt) fkNeedsIndex(t *catalog.Table, ix *catalog.Index) string {
	for _, fk := range t.ForeignKeys {
		cc := exec.ChildCols(t, fk)
		if covers(ix, cc) && countCovering(t, cc) == 1 {
			return fk.Name
		}
	}
	for _, r := range d.cat.Referencing(t.DB, t.Name) {
		var pcols []int
		for _, n := range r.FK.RefCols {
			pcols = append(pcols, t.Col(n))
		}
		if covers(ix, pcols) && countCovering(t, pcols) == 1 {
			return r.FK.Name
		}
	}
	return ""
}

func covers(ix *catalog.Index, cols []int) bool {
	if len(ix.Offsets) < len(cols) {
		return false
	}
	for i, c := range cols {
		if ix.Offsets[i] != c {
			return false
		}
	}
	return true
}

func countCovering(t *catalog.Table, cols []int) int {
	n := 0
	for _, ix := range t.Indexes {
		if covers(ix, cols) {
			n++
		}
	}
	return n
}

// renameReferences points the constraints that reference (db, name) at its new name, as InnoDB
// does when a parent table is renamed.
func (d *Stmt) renameReferences(db, name, ndb, nname string) error {
	for _, r := range d.cat.Referencing(db, name) {
		child, ok := d.cat.TableByID(r.Child.ID)
		if !ok {
			continue
		}
		nc := child.Clone()
		for _, fk := range nc.ForeignKeys {
			if strings.EqualFold(fk.RefDB, db) && strings.EqualFold(fk.RefTable, name) {
				fk.RefDB, fk.RefTable = ndb, nname
			}
		}
		nc.Version++
		d.cat.PutTable(nc)
		if err := catalog.SaveTable(d.t, nc); err != nil {
			return err
		}
	}
	return nil
}
