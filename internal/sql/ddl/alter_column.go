package ddl

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// ALTER TABLE ... MODIFY / CHANGE / RENAME COLUMN / ALTER COLUMN.
//
// A column keeps its id through every one of them, so rows (which name values by column id) stay
// readable. A rename, a new default, a comment or a move is a catalog change only. A new type or a
// new NOT NULL converts every stored value with INSERT's rules (strict mode errors abort the ALTER,
// as MySQL's copying ALTER does) and the statement rewrites the rows and the entries of every
// index that holds the column, in its own record: unlike an index build, that cannot be a logical
// operation replayed from the rows, because the rows themselves change.

// changeColumn replaces column oldName of nt with the definition cd (MODIFY keeps the name).
func (d *Stmt) changeColumn(nt *catalog.Table, oldName string, cd *ast.ColumnDef, pos *ast.ColumnPosition) ([]*ast.Constraint, error) {
	ci := nt.Col(oldName)
	if ci < 0 || nt.Columns[ci].Hidden {
		return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in '%s'", oldName, nt.Name)
	}
	old := nt.Columns[ci]
	newName := cd.Name.Name.O
	if !strings.EqualFold(newName, oldName) && nt.Col(newName) >= 0 {
		return nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", newName)
	}
	if !strings.EqualFold(newName, oldName) {
		if err := d.checkGenDependency(nt, old.Name); err != nil {
			return nil, err
		}
	}
	nextID := nt.NextColID
	col, keys, err := d.buildColumn(nt, cd)
	if err != nil {
		return nil, err
	}
	nt.NextColID = nextID
	col.ID = old.ID
	if col.AutoInc && !old.AutoInc {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "making an existing column AUTO_INCREMENT is not supported yet")
	}
	for _, ix := range nt.Indexes {
		if ix.Primary {
			for _, ic := range ix.Columns {
				if ic.Col == col.ID {
					col.NotNull = true // primary key columns are NOT NULL, as in MySQL
				}
			}
		}
	}
	if old.GenExpr != "" && col.GenExpr != "" && old.GenStored != col.GenStored {
		return nil, sqlerr.New(sqlerr.ErrUnsupportedOnGeneratedColumn, "'Changing the STORED status' is not supported for generated columns.")
	}
	if col.GenExpr != old.GenExpr {
		d.rw.add(nt.ID, col.ID) // a new expression (or a column becoming or ceasing to be generated): every row again
	}
	nt.Columns[ci] = col
	if pos != nil && pos.Tp != ast.ColumnPositionNone {
		if err := moveColumn(nt, ci, pos); err != nil {
			return nil, err
		}
	}
	nt.Init()
	if reflect.DeepEqual(old.Type, col.Type) && (old.NotNull || !col.NotNull) {
		col.Absent = old.Absent
		return keys, nil
	}
	d.rw.add(nt.ID, col.ID)
	return keys, nil
}

// moveColumn moves nt.Columns[ci] to FIRST or AFTER another column.
func moveColumn(nt *catalog.Table, ci int, pos *ast.ColumnPosition) error {
	col := nt.Columns[ci]
	rest := append(append([]*catalog.Column{}, nt.Columns[:ci]...), nt.Columns[ci+1:]...)
	at := 0
	if pos.Tp == ast.ColumnPositionAfter {
		at = -1
		for i, c := range rest {
			if strings.EqualFold(c.Name, pos.RelativeColumn.Name.O) && !c.Hidden {
				at = i + 1
			}
		}
		if at < 0 {
			return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in '%s'", pos.RelativeColumn.Name.O, nt.Name)
		}
	}
	nt.Columns = append(rest[:at], append([]*catalog.Column{col}, rest[at:]...)...)
	return nil
}

// renameColumn is RENAME COLUMN a TO b.
func renameColumn(nt *catalog.Table, from, to string) error {
	ci := nt.Col(from)
	if ci < 0 || nt.Columns[ci].Hidden {
		return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in '%s'", from, nt.Name)
	}
	if !strings.EqualFold(from, to) && nt.Col(to) >= 0 {
		return sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", to)
	}
	if err := checkIdent(to, sqlerr.ErrWrongColumnName, "column"); err != nil {
		return err
	}
	c := *nt.Columns[ci]
	c.Name = to
	nt.Columns[ci] = &c
	return nil
}

// alterColumnDefault is ALTER COLUMN c SET DEFAULT v / DROP DEFAULT.
func (d *Stmt) alterColumnDefault(nt *catalog.Table, spec *ast.AlterTableSpec) error {
	cd := spec.NewColumns[0]
	ci := nt.Col(cd.Name.Name.O)
	if ci < 0 || nt.Columns[ci].Hidden {
		return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in '%s'", cd.Name.Name.O, nt.Name)
	}
	c := *nt.Columns[ci]
	if c.GenExpr != "" {
		return sqlerr.New(sqlerr.ErrWrongUsage, "Incorrect usage of DEFAULT and generated column")
	}
	if len(cd.Options) == 0 {
		c.HasDefault, c.Default, c.DefaultNow, c.DefaultExpr = false, types.Null, false, ""
		nt.Columns[ci] = &c
		return nil
	}
	for _, o := range cd.Options {
		// The parser leaves SET DEFAULT's option without a type.
		if o.Expr == nil || (o.Tp != ast.ColumnOptionDefaultValue && o.Tp != ast.ColumnOptionNoOption) {
			continue
		}
		c.HasDefault, c.Default, c.DefaultNow, c.DefaultExpr = false, types.Null, false, ""
		if err := d.setDefault(&c, o.Expr); err != nil {
			return err
		}
	}
	nt.Columns[ci] = &c
	return nil
}

// rewritePlan is a pending rewrite of a table's rows after a column changed type or nullability.
type rewritePlan struct {
	cols []uint32 // the changed columns' ids
}

// rewriter collects, per table, the columns whose values an ALTER must convert; the rewrite runs
// once, at the end of the statement, with the final definition.
type rewriter struct {
	plans map[uint64]*rewritePlan
}

func (r *rewriter) add(table uint64, colID uint32) {
	if r.plans == nil {
		r.plans = map[uint64]*rewritePlan{}
	}
	p := r.plans[table]
	if p == nil {
		p = &rewritePlan{}
		r.plans[table] = p
	}
	p.cols = append(p.cols, colID)
}

// rewriteRows converts the changed columns of every row of old into nt's definition, and rewrites
// the rows and the entries of the indexes that hold a changed column (all secondary indexes if the
// primary key holds one, since their entries carry the primary key). Those indexes get new ids: the
// old entries go with one range deletion. Uniqueness is checked as the new keys are made.
func (d *Stmt) rewriteRows(old, nt *catalog.Table, changed []uint32, added []*catalog.Index) error {
	isChanged := map[uint32]bool{}
	for _, id := range changed {
		isChanged[id] = true
	}
	for _, ci := range nt.GenCols {
		// A generated column's value may change with any column it reads: all are computed
		// again, and their indexes rebuilt.
		isChanged[nt.Columns[ci].ID] = true
	}
	pkChanged, rebuild := d.renewIndexes(nt, isChanged, added)
	rows, err := d.convertRows(old, nt, isChanged)
	if err != nil {
		return err
	}
	return d.writeRows(nt, rows, pkChanged, rebuild)
}

// renewIndexes gives the secondary indexes of nt whose entries change a new id, deleting their old
// entries; it reports whether the primary key holds a changed column (then every secondary index
// is renewed) and returns the renewed indexes, to rebuild.
func (d *Stmt) renewIndexes(nt *catalog.Table, isChanged map[uint32]bool, added []*catalog.Index) (bool, []*catalog.Index) {
	touches := func(ix *catalog.Index) bool {
		for _, ic := range ix.Columns {
			if isChanged[ic.Col] {
				return true
			}
		}
		return false
	}
	pkChanged := touches(nt.Indexes[0])
	var rebuild []*catalog.Index
	for i, ix := range nt.Indexes {
		if ix.Primary {
			continue
		}
		if slices.Contains(added, ix) {
			rebuild = append(rebuild, ix) // new in this statement: no entries yet
			continue
		}
		if !(pkChanged || touches(ix)) {
			continue
		}
		lo, hi := rowenc.IndexSpan(nt.ID, ix.ID)
		d.t.DeleteRange(lo, hi)
		nix := *ix
		nix.ID = nt.NextIndexID
		nix.KeyVersion = types.CollationKeyVersion
		nt.NextIndexID++
		nt.Indexes[i] = &nix
		rebuild = append(rebuild, &nix)
	}
	nt.Init()
	return pkChanged, rebuild
}

// convertedRow is a row of the table in its new definition, with the key it was stored under.
type convertedRow struct {
	oldKey []byte
	row    []types.Value
}

// convertRows reads every row of old and converts it to nt's definition (the changed columns
// with convertForAlter, under the session's sql_mode).
func (d *Stmt) convertRows(old, nt *catalog.Table, isChanged map[uint32]bool) ([]convertedRow, error) {
	// The session's conversion rules, read once for all rows.
	base := types.ConvertCtx{Strict: d.s.Strict(), NoZeroDate: d.s.SQLModeHas("NO_ZERO_DATE"), NoZeroInDate: d.s.SQLModeHas("NO_ZERO_IN_DATE")}
	var computed []expr.Expr // generated columns and expression defaults, by offset in nt
	if len(nt.GenCols) > 0 || nt.HasExprDefault {
		var err error
		if computed, err = d.genExprsFor(nt); err != nil {
			return nil, err
		}
	}
	lo, hi := rowenc.IndexSpan(old.ID, rowenc.PrimaryIndexID)
	it, err := d.t.NewIter(lo, hi, false, true)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var rows []convertedRow
	n := 0
	for ; it.Valid(); it.Next() {
		// ALTER converts every row in one transaction: KILL and shutdown must reach it.
		if err := d.env.CheckKilled(); err != nil {
			return nil, err
		}
		n++
		orow, err := exec.DecodeRow(old, it.Value())
		if err != nil {
			return nil, err
		}
		row := make([]types.Value, len(nt.Columns))
		var fresh []int // columns new in this statement with an expression default
		for j, c := range nt.Columns {
			if p := colPos(old, c.ID); p >= 0 {
				row[j] = orow[p]
			} else {
				row[j] = c.Absent
				if c.DefaultExpr != "" && c.GenExpr == "" {
					fresh = append(fresh, j)
					continue // computed below
				}
			}
			if !isChanged[c.ID] || c.GenExpr != "" {
				continue // generated columns are computed below
			}
			v, err := d.convertForAlter(row[j], c, base, n)
			if err != nil {
				return nil, err
			}
			row[j] = v
		}
		for _, j := range append(fresh, nt.GenCols...) {
			v, err := computed[j].Eval(d.env, row)
			if err != nil {
				return nil, err
			}
			if row[j], err = exec.ConvertGenerated(d.env, nt.Columns[j], v, base.Strict, n); err != nil {
				return nil, err
			}
		}
		rows = append(rows, convertedRow{oldKey: append([]byte(nil), it.Key()...), row: row})
	}
	return rows, it.Err()
}

// colPos is the offset of column id in t, or -1 (also for an id above t's: a column added since).
func colPos(t *catalog.Table, id uint32) int {
	if int(id) >= len(t.ColPos) {
		return -1
	}
	return t.ColPos[id]
}

// writeRows stores the converted rows and the renewed indexes' entries, checking uniqueness as the
// new keys are made; a changed primary key deletes the rows' old keys first.
func (d *Stmt) writeRows(nt *catalog.Table, rows []convertedRow, pkChanged bool, rebuild []*catalog.Index) error {
	if pkChanged {
		seen := map[string]bool{}
		for _, r := range rows {
			if err := d.env.CheckKilled(); err != nil {
				return err
			}
			k := exec.PrimaryKey(nil, nt, r.row)
			if seen[string(k)] {
				return sqlerr.New(sqlerr.ErrDupEntry, "%s", exec.DupMessage(nt, nt.Indexes[0], r.row))
			}
			seen[string(k)] = true
			d.t.Delete(r.oldKey)
		}
	}
	seen := make([]map[string]bool, len(rebuild))
	for i := range seen {
		seen[i] = map[string]bool{}
	}
	for _, r := range rows {
		if err := d.env.CheckKilled(); err != nil {
			return err
		}
		d.t.Set(exec.PrimaryKey(nil, nt, r.row), exec.EncodeRow(nil, nt, r.row))
		for i, ix := range rebuild {
			k, v, unique := exec.SecondaryKey(nt, ix, r.row)
			if unique {
				if seen[i][string(k)] {
					return sqlerr.New(sqlerr.ErrDupEntry, "%s", exec.DupMessage(nt, ix, r.row))
				}
				seen[i][string(k)] = true
			}
			d.t.Set(k, v)
		}
	}
	return nil
}

// convertForAlter converts one stored value to a changed column: INSERT's conversion, except that
// a NULL going into a NOT NULL column is 1138 (strict) or the type's implicit default with a 1265
// warning, as MySQL's ALTER reports it.
func (d *Stmt) convertForAlter(v types.Value, c *catalog.Column, cc types.ConvertCtx, row int) (types.Value, error) {
	if v.IsNull() {
		if !c.NotNull {
			return v, nil
		}
		if cc.Strict {
			return v, sqlerr.New(sqlerr.ErrInvalidUseOfNull, "Invalid use of NULL value")
		}
		d.s.AddWarning("Warning", sqlerr.ErrWarnDataTruncated, fmt.Sprintf("Data truncated for column '%s' at row %d", c.Name, row))
		return c.Type.ImplicitDefault(), nil
	}
	cc.Column, cc.Row = c.Name, row
	out, warns, err := types.Convert(v, &c.Type, cc)
	if err != nil {
		return v, err
	}
	for _, w := range warns {
		d.s.AddWarning(w.Level, w.Code, w.Message)
	}
	return out, nil
}
