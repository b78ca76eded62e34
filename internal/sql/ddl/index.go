package ddl

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// buildIndex turns a key constraint into an index definition (nil for constraints Kiln ignores).
func (d *Stmt) buildIndex(tbl *catalog.Table, c *ast.Constraint) (*catalog.Index, error) {
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
		d.s.AddWarning("Warning", sqlerr.ErrNotSupportedYet, "FULLTEXT index is ignored")
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

func (d *Stmt) nameTaken(tbl *catalog.Table, name string) bool {
	for _, n := range d.pending {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func (d *Stmt) createIndex(x *ast.CreateIndexStmt) error {
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
func (d *Stmt) addIndexes(nt *catalog.Table, cs []*ast.Constraint) error {
	added, err := d.indexDefs(nt, cs)
	if err != nil {
		return err
	}
	if err := d.buildEntries(nt, added); err != nil {
		return err
	}
	nt.Version++
	d.cat.PutTable(nt)
	return catalog.SaveTable(d.t, nt)
}

// indexDefs adds the indexes of the key constraints cs to nt's definition and returns them; their
// entries are the caller's to build.
func (d *Stmt) indexDefs(nt *catalog.Table, cs []*ast.Constraint) ([]*catalog.Index, error) {
	var added []*catalog.Index
	for _, c := range cs {
		ix, err := d.buildIndex(nt, c)
		if err != nil {
			return nil, err
		}
		if ix == nil {
			continue
		}
		if ix.Primary {
			return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "adding a primary key to an existing table is not supported yet")
		}
		if nt.IndexByName(ix.Name) != nil {
			return nil, sqlerr.New(sqlerr.ErrDupKeyName, "Duplicate key name '%s'", ix.Name)
		}
		nt.Indexes = append(nt.Indexes, ix)
		added = append(added, ix)
	}
	nt.Init()
	if err := checkAutoIncKey(nt); err != nil {
		return nil, err
	}
	return added, nil
}

// buildEntries adds the building of the given indexes' entries to the DDL's record, as a logical
// operation that every node executes when it applies the record (so the log holds a small record, not
// one entry per row). Uniqueness is checked here, before anything is logged, failing on duplicates
// with 1062 as MySQL's ALTER does: a logged record can no longer fail.
func (d *Stmt) buildEntries(nt *catalog.Table, ixs []*catalog.Index) error {
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

// LogBuilds adds one logical build operation per table to the record, with the statement's final
// table definition and only the indexes it still has (an ALTER may rebuild an index twice): the
// record's range deletions come before its logical operations, so an index dropped later in the same
// statement must not be built at all.
func (d *Stmt) LogBuilds() error {
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

func (d *Stmt) dropIndex(x *ast.DropIndexStmt) error {
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

func (d *Stmt) dropIndexFrom(nt *catalog.Table, name string, ifExists bool) error {
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
