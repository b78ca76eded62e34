package exec

import (
	"fmt"
	"strings"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Foreign keys, enforced as InnoDB does: a child row's key must exist in the parent (unless one of
// its columns is NULL); deleting or updating a parent key acts on the child rows that reference it
// by the constraint's rule (RESTRICT / NO ACTION: error 1451, CASCADE, SET NULL), recursively up
// to 15 levels; foreign_key_checks=0 turns every check and action off, as in MySQL. The lookups are
// current reads through an index whose leading columns are the key columns (InnoDB requires one on
// both sides, and creates the child's when it is missing); the parent row found is locked shared,
// so it cannot be deleted under a child row being written, and child rows are locked exclusive
// before they are acted on.

const maxFKDepth = 15

// PrefixIndex returns an index of t whose leading columns are exactly cols (in order), preferring
// the primary key.
func PrefixIndex(t *catalog.Table, cols []int) *catalog.Index {
	for _, ix := range t.Indexes {
		if len(ix.Offsets) < len(cols) {
			continue
		}
		ok := true
		for i, c := range cols {
			if ix.Offsets[i] != c || ix.Columns[i].Prefix > 0 {
				ok = false
				break
			}
		}
		if ok {
			return ix
		}
	}
	return nil
}

// FKDesc is the constraint text of 1451/1452 messages.
func FKDesc(child *catalog.Table, fk *catalog.ForeignKey) string {
	cc, rc := FKColumnLists(child, fk)
	s := fmt.Sprintf("`%s`.`%s`, CONSTRAINT `%s` FOREIGN KEY (%s) REFERENCES `%s` (%s)", child.DB, child.Name, fk.Name, strings.Join(cc, ", "), fk.RefTable, strings.Join(rc, ", "))
	if fk.OnDelete != "" {
		s += " ON DELETE " + fk.OnDelete
	}
	if fk.OnUpdate != "" {
		s += " ON UPDATE " + fk.OnUpdate
	}
	return s
}

// ErrNoParent is 1452: a child row whose parent row does not exist.
func ErrNoParent(child *catalog.Table, fk *catalog.ForeignKey) error {
	return sqlerr.New(sqlerr.ErrNoReferencedRow, "Cannot add or update a child row: a foreign key constraint fails (%s)", FKDesc(child, fk))
}

// errHasChildren is 1451: a parent row that child rows reference (RESTRICT, NO ACTION).
func errHasChildren(child *catalog.Table, fk *catalog.ForeignKey) error {
	return sqlerr.New(sqlerr.ErrRowIsReferenced, "Cannot delete or update a parent row: a foreign key constraint fails (%s)", FKDesc(child, fk))
}

// ResolveParent returns the parent table and the offsets of the referenced columns.
func ResolveParent(cat *catalog.Catalog, fk *catalog.ForeignKey) (*catalog.Table, []int, bool) {
	p, ok := cat.BaseTable(fk.RefDB, fk.RefTable) // never a session's temporary table of that name
	if !ok {
		return nil, nil, false
	}
	cols := make([]int, len(fk.RefCols))
	for i, n := range fk.RefCols {
		cols[i] = p.Col(n)
		if cols[i] < 0 {
			return nil, nil, false
		}
	}
	return p, cols, true
}

// ChildCols returns the offsets of fk's columns in child.
func ChildCols(child *catalog.Table, fk *catalog.ForeignKey) []int {
	out := make([]int, len(fk.Cols))
	for i, id := range fk.Cols {
		out[i] = child.ColPos[id]
	}
	return out
}

// KeyPrefix encodes vals as the leading key columns of ix (values converted to ix's column types).
func KeyPrefix(t *catalog.Table, ix *catalog.Index, vals []types.Value) []byte {
	k := rowenc.IndexPrefix(nil, t.ID, ix.ID)
	for i, v := range vals {
		k = rowenc.AppendKey(k, v, &t.Columns[ix.Offsets[i]].Type)
	}
	return k
}

// checkParents verifies that every constraint of child has its parent row for row, locking that
// row shared. changed, when set, limits the check to constraints whose columns changed.
func checkParents(env *expr.Env, child *catalog.Table, row, old []types.Value) error {
	if len(child.ForeignKeys) == 0 || !fkChecks(env) {
		return nil
	}
	cat := env.Sess.(Session).Catalog()
	for _, fk := range child.ForeignKeys {
		cc := ChildCols(child, fk)
		vals := make([]types.Value, len(cc))
		null, same := false, old != nil
		for i, c := range cc {
			vals[i] = row[c]
			null = null || row[c].IsNull()
			if old != nil && types.Compare(old[c], row[c], nil) != 0 || old != nil && old[c].IsNull() != row[c].IsNull() {
				same = false
			}
		}
		if null || same {
			continue
		}
		parent, pcols, ok := ResolveParent(cat, fk)
		if !ok {
			return ErrNoParent(child, fk)
		}
		ix := PrefixIndex(parent, pcols)
		if ix == nil {
			return ErrNoParent(child, fk)
		}
		found, err := findReferenced(env, parent, ix, vals)
		if err != nil {
			return err
		}
		if !found {
			return ErrNoParent(child, fk)
		}
	}
	return nil
}

// findReferenced reports whether parent has a row whose ix-leading columns equal vals, and locks it
// shared.
func findReferenced(env *expr.Env, parent *catalog.Table, ix *catalog.Index, vals []types.Value) (bool, error) {
	t := TxnOf(env)
	lo := KeyPrefix(parent, ix, vals)
	it, err := t.NewIter(lo, PrefixEnd(lo), false, true)
	if err != nil {
		return false, err
	}
	defer it.Close()
	if !it.Valid() {
		return false, it.Err()
	}
	pk := append([]byte(nil), it.Key()...)
	if !ix.Primary {
		part := make([]types.Value, len(parent.Columns))
		if err := rowenc.DecodeRow(it.Value(), parent.ColPos, part); err != nil {
			return false, err
		}
		pk = PrimaryKey(nil, parent, part)
	}
	if err := LockRow(env, pk, txn.LockShared); err != nil {
		return false, err
	}
	_, ok, err := t.GetLatest(pk)
	return ok, err
}

// childRows returns the child rows (primary key and row) whose fk columns equal vals, locked
// exclusive.
func childRows(env *expr.Env, child *catalog.Table, fk *catalog.ForeignKey, vals []types.Value) ([][]byte, [][]types.Value, error) {
	cc := ChildCols(child, fk)
	ix := PrefixIndex(child, cc)
	if ix == nil {
		return nil, nil, fmt.Errorf("foreign key %s of %s.%s has no index", fk.Name, child.DB, child.Name)
	}
	t := TxnOf(env)
	lo := KeyPrefix(child, ix, vals)
	it, err := t.NewIter(lo, PrefixEnd(lo), false, true)
	if err != nil {
		return nil, nil, err
	}
	var pks [][]byte
	for ; it.Valid(); it.Next() {
		pk := append([]byte(nil), it.Key()...)
		if !ix.Primary {
			part := make([]types.Value, len(child.Columns))
			if err := rowenc.DecodeRow(it.Value(), child.ColPos, part); err != nil {
				it.Close()
				return nil, nil, err
			}
			pk = PrimaryKey(nil, child, part)
		}
		pks = append(pks, pk)
	}
	err = it.Err()
	it.Close()
	if err != nil {
		return nil, nil, err
	}
	var outPK [][]byte
	var rows [][]types.Value
	for _, pk := range pks {
		if err := LockRow(env, pk, txn.LockExclusive); err != nil {
			return nil, nil, err
		}
		v, ok, err := t.GetLatest(pk)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		row, err := DecodeRow(child, v)
		if err != nil {
			return nil, nil, err
		}
		outPK = append(outPK, pk)
		rows = append(rows, row)
	}
	return outPK, rows, nil
}

// onParentChange applies the constraints that reference parent to a deleted row (new == nil) or an
// updated one.
func onParentChange(env *expr.Env, parent *catalog.Table, old, new []types.Value) error {
	refs := env.Sess.(Session).Catalog().Referencing(parent.DB, parent.Name)
	if len(refs) == 0 || !fkChecks(env) {
		return nil
	}
	if env.FKDepth >= maxFKDepth {
		return sqlerr.New(sqlerr.ErrFKDepthExceeded, "Foreign key cascade delete/update exceeds max depth of %d.", maxFKDepth)
	}
	env.FKDepth++
	defer func() { env.FKDepth-- }()
	for _, r := range refs {
		pcols := make([]int, len(r.FK.RefCols))
		ok := true
		for i, n := range r.FK.RefCols {
			pcols[i] = parent.Col(n)
			ok = ok && pcols[i] >= 0
		}
		if !ok {
			continue
		}
		vals := make([]types.Value, len(pcols))
		changed := new == nil
		for i, c := range pcols {
			vals[i] = old[c]
			if vals[i].IsNull() {
				ok = false
			}
			if new != nil && (types.Compare(old[c], new[c], parent.Columns[c].Type.Coll()) != 0 || old[c].IsNull() != new[c].IsNull()) {
				changed = true
			}
		}
		if !ok || !changed {
			continue
		}
		// The child table as the current catalog has it (r.child may be stale after DDL).
		child, okc := env.Sess.(Session).Catalog().TableByID(r.Child.ID)
		if !okc {
			continue
		}
		pks, rows, err := childRows(env, child, r.FK, vals)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			continue
		}
		rule := r.FK.OnUpdate
		if new == nil {
			rule = r.FK.OnDelete
		}
		cc := ChildCols(child, r.FK)
		for i, row := range rows {
			switch rule {
			case "CASCADE":
				if new == nil {
					if err := DeleteRow(env, child, pks[i], row); err != nil {
						return err
					}
					continue
				}
				nr := append([]types.Value(nil), row...)
				for j, c := range cc {
					nr[c] = new[pcols[j]]
				}
				if _, err := UpdateRow(env, child, pks[i], row, nr, false, 0); err != nil {
					return err
				}
			case "SET NULL":
				nr := append([]types.Value(nil), row...)
				for _, c := range cc {
					nr[c] = types.Null
				}
				if _, err := UpdateRow(env, child, pks[i], row, nr, false, 0); err != nil {
					return err
				}
			default:
				if child.ID == parent.ID && string(pks[i]) == string(PrimaryKey(nil, parent, old)) {
					continue // a row referencing itself does not block its own deletion
				}
				return errHasChildren(child, r.FK)
			}
		}
	}
	return nil
}

// FKColumnLists returns a constraint's child and parent columns, quoted.
func FKColumnLists(child *catalog.Table, fk *catalog.ForeignKey) (cc, rc []string) {
	for _, id := range fk.Cols {
		if p := child.ColPos[id]; p >= 0 {
			cc = append(cc, "`"+child.Columns[p].Name+"`")
		}
	}
	for _, n := range fk.RefCols {
		rc = append(rc, "`"+n+"`")
	}
	return cc, rc
}

// fkChecks is foreign_key_checks: off, no foreign key is checked or acted on.
func fkChecks(env *expr.Env) bool {
	b, _ := types.ToBool(env.Sess.SysVar(sysvar.Must("foreign_key_checks"), false))
	return b
}
