package exec

import (
	"fmt"
	"strings"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// The row primitives every statement that writes rows uses (INSERT, UPDATE, DELETE, LOAD DATA,
// foreign key actions): a row and its index entries written or removed in the statement's
// transaction, unique keys locked and checked, CHECK constraints and foreign keys enforced.

// DupMessage is 1062's message for row's key of ix (PRIMARY for the primary key).
func DupMessage(tbl *catalog.Table, ix *catalog.Index, row []types.Value) string {
	var parts []string
	for _, ci := range ix.Offsets {
		parts = append(parts, types.ToString(row[ci]))
	}
	name := ix.Name
	if ix.Primary {
		name = "PRIMARY"
	}
	return fmt.Sprintf("Duplicate entry '%s' for key '%s.%s'", strings.Join(parts, "-"), tbl.Name, name)
}

// FindDuplicate locks and checks every unique key the row would take (primary and unique secondary,
// also when absent, so a concurrent insert of the same key waits for us), and returns the first
// existing row that holds one of them. skipPK is the row's own primary key when updating.
func FindDuplicate(env *expr.Env, tbl *catalog.Table, row []types.Value, skipPK []byte, lr *txn.LatestReader) ([]byte, []types.Value, *catalog.Index, error) {
	return FindDuplicateKey(env, tbl, row, PrimaryKey(nil, tbl, row), skipPK, lr)
}

// FindDuplicateKey is FindDuplicate for a row whose primary key pk the caller built (an INSERT
// builds it once for the check and the write, PutRowKey). pk is not modified or kept.
func FindDuplicateKey(env *expr.Env, tbl *catalog.Table, row []types.Value, pk, skipPK []byte, lr *txn.LatestReader) ([]byte, []types.Value, *catalog.Index, error) {
	t := latestGetter{TxnOf(env), lr}
	if skipPK == nil || string(skipPK) != string(pk) {
		if err := LockRow(env, pk, txn.LockExclusive); err != nil {
			return nil, nil, nil, err
		}
		v, ok, err := t.GetLatest(pk)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok {
			old, err := DecodeRow(tbl, v)
			if err != nil {
				return nil, nil, nil, err
			}
			return pk, old, tbl.Indexes[0], nil
		}
	}
	for _, ix := range tbl.Indexes[1:] {
		if !ix.Unique {
			continue
		}
		k, _, unique := SecondaryKey(tbl, ix, row)
		if !unique {
			continue // a NULL in a unique key never collides
		}
		if err := LockRow(env, k, txn.LockExclusive); err != nil {
			return nil, nil, nil, err
		}
		v, ok, err := t.GetLatest(k)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			continue
		}
		part := make([]types.Value, len(tbl.Columns))
		if err := rowenc.DecodeRow(v, tbl.ColPos, part); err != nil {
			return nil, nil, nil, err
		}
		opk := PrimaryKey(nil, tbl, part)
		if skipPK != nil && string(opk) == string(skipPK) {
			continue
		}
		if err := LockRow(env, opk, txn.LockExclusive); err != nil {
			return nil, nil, nil, err
		}
		rv, ok, err := t.GetLatest(opk)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			return nil, nil, nil, fmt.Errorf("index %s.%s: entry %x points to a missing row", tbl.Name, ix.Name, k)
		}
		old, err := DecodeRow(tbl, rv)
		if err != nil {
			return nil, nil, nil, err
		}
		return opk, old, ix, nil
	}
	return nil, nil, nil, nil
}

// latestGetter reads through a LatestReader when there is one, else with GetLatest.
type latestGetter struct {
	t  *txn.Txn
	lr *txn.LatestReader
}

func (g latestGetter) GetLatest(k []byte) ([]byte, bool, error) {
	if g.lr != nil {
		return g.lr.Get(k)
	}
	return g.t.GetLatest(k)
}

// PutRow writes a row and its index entries. old, when set, is the previous version under the same
// primary key: index entries that did not change are not rewritten.
func PutRow(env *expr.Env, tbl *catalog.Table, row []types.Value, old []types.Value) error {
	return PutRowKey(env, tbl, row, old, nil)
}

// PutRowKey is PutRow with the row's primary key pk built by the caller (nil: built here). The
// write set keeps pk (Txn.SetOwned): the caller must not modify it afterwards.
func PutRowKey(env *expr.Env, tbl *catalog.Table, row []types.Value, old []types.Value, pk []byte) error {
	if err := checkRow(env, tbl, row); err != nil {
		return err
	}
	t := TxnOf(env)
	if pk == nil {
		pk = PrimaryKey(nil, tbl, row)
	}
	t.SetOwned(pk, EncodeRow(nil, tbl, row))
	// The keys below are built for their write alone: the write set keeps them as they are.
	for _, ix := range tbl.Indexes[1:] {
		if old != nil && sameValues(old, row, ix.Offsets) && sameValues(old, row, tbl.Indexes[0].Offsets) {
			// An entry's key and value hold only its columns and the primary key's: unchanged,
			// as below, without encoding both (UPDATE of a column no index holds).
			continue
		}
		k, v, _ := SecondaryKey(tbl, ix, row)
		if old != nil {
			ok, ov, _ := SecondaryKey(tbl, ix, old)
			if string(ok) == string(k) && string(ov) == string(v) {
				continue
			}
			t.DeleteOwned(ok)
		}
		t.SetOwned(k, v)
	}
	// Checked after the write, so that a row may reference itself.
	return checkParents(env, tbl, row, old)
}

// sameValues reports whether a and b hold identical values at offsets: same kind and the same
// integer or bytes. Other kinds (decimals, floats, times) answer false, so that the caller
// compares their encodings instead.
func sameValues(a, b []types.Value, offsets []int) bool {
	for _, ci := range offsets {
		x, y := &a[ci], &b[ci]
		if x.K != y.K || x.Frac != y.Frac {
			return false
		}
		switch x.K {
		case types.KindNull:
		case types.KindInt, types.KindUint:
			if x.I != y.I {
				return false
			}
		case types.KindString, types.KindBytes:
			if x.S != y.S {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// DeleteRow removes a row and its index entries, after the foreign keys that reference the table
// acted on its child rows. The caller holds the row's lock.
func DeleteRow(env *expr.Env, tbl *catalog.Table, pk []byte, row []types.Value) error {
	if err := onParentChange(env, tbl, row, nil); err != nil {
		return err
	}
	return removeRow(env, tbl, pk, row)
}

// removeRow removes a row and its index entries.
func removeRow(env *expr.Env, tbl *catalog.Table, pk []byte, row []types.Value) error {
	t := TxnOf(env)
	t.Delete(pk)
	for _, ix := range tbl.Indexes[1:] {
		k, _, _ := SecondaryKey(tbl, ix, row)
		t.DeleteOwned(k) // built for this write alone
	}
	return nil
}

// UpdateRow replaces old by new (same or different primary key), checking unique keys. The
// generated columns of new are computed here, so every updating path (UPDATE, ON DUPLICATE KEY
// UPDATE, foreign key actions) keeps them equal to their expressions.
func UpdateRow(env *expr.Env, tbl *catalog.Table, pk []byte, old, new []types.Value, strict bool, rowNum int) (bool, error) {
	if err := FillGenerated(env, tbl, new, strict, rowNum); err != nil {
		return false, err
	}
	same := true
	for i := range old {
		if old[i].K != new[i].K || types.Compare(old[i], new[i], nil) != 0 && !(old[i].IsNull() && new[i].IsNull()) {
			same = false
			break
		}
	}
	if same {
		return false, nil
	}
	newPK := PrimaryKey(nil, tbl, new)
	_, dupRow, dupIdx, err := FindDuplicate(env, tbl, new, pk, nil)
	if err != nil {
		return false, err
	}
	if dupRow != nil {
		return false, sqlerr.New(sqlerr.ErrDupEntry, "%s", DupMessage(tbl, dupIdx, new))
	}
	// The new parent row is written before the constraints act, so that a cascaded update of a
	// child row finds its (new) parent.
	if string(newPK) != string(pk) {
		if err := removeRow(env, tbl, pk, old); err != nil {
			return false, err
		}
		if err := PutRow(env, tbl, new, nil); err != nil {
			return false, err
		}
	} else if err := PutRow(env, tbl, new, old); err != nil {
		return false, err
	}
	return true, onParentChange(env, tbl, old, new)
}
