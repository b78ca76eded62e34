package dml

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Assignment is one compiled SET col = expr (UPDATE, ON DUPLICATE KEY UPDATE, LOAD DATA's SET).
type Assignment struct {
	Col int
	E   expr.Expr
}

// Inserter carries the state of one statement that inserts rows (INSERT, REPLACE, LOAD DATA):
// the exported fields are what its callers set up and read back for the OK packet.
type Inserter struct {
	Env             *expr.Env
	S               Session
	Tbl             *catalog.Table
	Ignore, Replace bool
	Strict          bool
	// Row is the row number (1-based) warnings and errors name; NewRow is the row being written
	// (ON DUPLICATE KEY UPDATE's VALUES(col) reads it).
	Row    int
	NewRow []types.Value
	// Affected, NRows and Dups count affected rows, rows written or tried, and duplicates.
	Affected, NRows, Dups uint64
	// FirstAutoID is the first auto-increment id actually inserted (LAST_INSERT_ID).
	FirstAutoID uint64
	// Latest is the duplicate-key checks' reader, for many rows; nil: GetLatest.
	Latest *txn.LatestReader

	modeLoaded   bool // noZeroDate and noZeroInDate hold the session's sql_mode flags
	noZeroDate   bool
	noZeroInDate bool
	onDup        []Assignment
	allocated    uint64 // id allocated for the row being written
	// autoNext..autoEnd are auto-increment ids reserved for the statement's rows (reserveAuto).
	autoNext, autoEnd uint64
	lastExplicitAuto  uint64
	rowBuf            []types.Value // InsertValues' row, reused from row to row
}

// InsertValues builds the full row from target columns and defaults, converts it, and writes it.
func (ins *Inserter) InsertValues(cols []int, vals []types.Value, isDefault []bool) error {
	tbl := ins.Tbl
	// One row buffer for every row of the statement: what is written is encoded from it (keys
	// and values are copies), and nothing keeps the row past Write. A 1,024-row INSERT into a
	// nine-column table allocated half a megabyte of rows (11% of a LinkBench load's bytes).
	row := ins.rowBuf
	if cap(row) < len(tbl.Columns) {
		row = make([]types.Value, len(tbl.Columns))
		ins.rowBuf = row
	} else {
		row = row[:len(tbl.Columns)]
		clear(row)
	}
	var givenBuf [64]bool // on the stack for most tables: InsertValues runs per row
	given := givenBuf[:0]
	if n := len(tbl.Columns); n <= len(givenBuf) {
		given = givenBuf[:n]
	} else {
		given = make([]bool, n)
	}
	for i, ci := range cols {
		if isDefault != nil && isDefault[i] {
			continue
		}
		row[ci] = vals[i]
		given[ci] = true
	}
	ins.NRows++
	if ins.Row == 0 {
		ins.Row = int(ins.NRows)
	}
	for ci, col := range tbl.Columns {
		if !given[ci] {
			v, err := ins.defaultIn(col, row)
			if err != nil {
				return err
			}
			row[ci] = v
			continue
		}
		if col.GenExpr != "" {
			return generatedValueError(tbl, col)
		}
		if col.AutoInc && !col.Hidden {
			continue // converted below, after allocation
		}
		v, err := ins.Convert(row[ci], col)
		if err != nil {
			return err
		}
		row[ci] = v
	}
	if err := ins.FillAuto(row, given); err != nil {
		return err
	}
	ins.NewRow = row
	defer func() { ins.NewRow = nil; ins.Row = 0 }()
	return ins.Write(row)
}

// Convert converts v to col's type under sql_mode: strict mode fails, otherwise warnings.
func (ins *Inserter) Convert(v types.Value, col *catalog.Column) (types.Value, error) {
	if v.IsNull() {
		if col.NotNull && !col.AutoInc {
			if ins.Strict {
				return v, sqlerr.New(sqlerr.ErrBadNull, "Column '%s' cannot be null", col.Name)
			}
			ins.S.AddWarning("Warning", sqlerr.ErrBadNull, fmt.Sprintf("Column '%s' cannot be null", col.Name))
			return col.Type.ImplicitDefault(), nil
		}
		return v, nil
	}
	if out, ok := types.ConvertExactInt(v, &col.Type); ok {
		return out, nil
	}
	if !ins.modeLoaded {
		ins.noZeroDate, ins.noZeroInDate = ins.S.SQLModeHas("NO_ZERO_DATE"), ins.S.SQLModeHas("NO_ZERO_IN_DATE")
		ins.modeLoaded = true
	}
	out, warns, err := types.Convert(v, &col.Type, types.ConvertCtx{Strict: ins.Strict, Column: col.Name, Row: ins.Row, NoZeroDate: ins.noZeroDate, NoZeroInDate: ins.noZeroInDate})
	if err != nil {
		return v, err
	}
	for _, w := range warns {
		ins.S.AddWarning(w.Level, w.Code, w.Message)
	}
	return out, nil
}

// generatedValueError is 3105: a value other than DEFAULT given for a generated column.
func generatedValueError(tbl *catalog.Table, col *catalog.Column) error {
	return sqlerr.New(sqlerr.ErrBadGeneratedColumn, "The value specified for generated column '%s' in table '%s' is not allowed.", col.Name, tbl.Name)
}

// defaultIn is DefaultValue for a column of row, the row being built: an expression default
// reads the row's other columns.
func (ins *Inserter) defaultIn(col *catalog.Column, row []types.Value) (types.Value, error) {
	if col.DefaultExpr != "" {
		return exec.EvalDefaultExpr(ins.Env, ins.Tbl, col, row, ins.Strict, ins.Row)
	}
	return ins.DefaultValue(col)
}

// DefaultValue is the value an omitted column gets (an error in strict mode when it has none).
// A generated column gets NULL here: its value is computed when the row is written.
func (ins *Inserter) DefaultValue(col *catalog.Column) (types.Value, error) {
	switch {
	case col.Hidden || col.AutoInc || col.GenExpr != "":
		return types.Null, nil
	case col.DefaultExpr != "":
		return exec.EvalDefaultExpr(ins.Env, ins.Tbl, col, nil, ins.Strict, ins.Row)
	case col.DefaultNow:
		return expr.TimeValue(ins.Env.Now(), max(col.Type.Frac, 0)), nil
	case col.HasDefault:
		return col.Default, nil
	case !col.NotNull:
		return types.Null, nil
	case col.Type.Tp == mysql.TypeEnum:
		// A NOT NULL ENUM defaults to its first member, in strict mode too.
		return col.Type.ImplicitDefault(), nil
	}
	if ins.Strict {
		return types.Null, sqlerr.New(sqlerr.ErrNoDefaultForField, "Field '%s' doesn't have a default value", col.Name)
	}
	ins.S.AddWarning("Warning", sqlerr.ErrNoDefaultForField, fmt.Sprintf("Field '%s' doesn't have a default value", col.Name))
	return col.Type.ImplicitDefault(), nil
}

// FillAuto allocates the auto-increment column (NULL or 0 ask for a value, unless
// NO_AUTO_VALUE_ON_ZERO) and the hidden row id.
func (ins *Inserter) FillAuto(row []types.Value, given []bool) error {
	tbl := ins.Tbl
	for ci, col := range tbl.Columns {
		if !col.AutoInc {
			continue
		}
		v := row[ci]
		zero := !v.IsNull() && types.ToFloat(v) == 0 && !ins.S.SQLModeHas("NO_AUTO_VALUE_ON_ZERO")
		if v.IsNull() || zero || col.Hidden {
			var id uint64
			if !col.Hidden && ins.autoNext < ins.autoEnd {
				id = ins.autoNext
				ins.autoNext++
			} else {
				var err error
				if id, err = ins.S.NextAutoInc(ins.Env, tbl, col, 1); err != nil {
					return err
				}
			}
			if col.Hidden {
				row[ci] = types.NewUint(id)
				continue
			}
			cv, err := ins.Convert(types.NewUint(id), col)
			if err != nil {
				return err
			}
			row[ci] = cv
			ins.allocated = id
			continue
		}
		cv, err := ins.Convert(v, col)
		if err != nil {
			return err
		}
		row[ci] = cv
		if f := types.ToFloat(cv); f > 0 {
			if err := ins.S.ObserveAutoInc(ins.Env, tbl, col, expr.ToUint64(cv)); err != nil {
				return err
			}
			// The OK packet reports an explicitly inserted auto-increment value too.
			ins.lastExplicitAuto = expr.ToUint64(cv)
		}
	}
	return nil
}

// reserveAuto reserves n auto-increment ids at once for a statement whose n rows all take one
// (a multi-row INSERT that does not name the auto-increment column), as InnoDB does for such
// "simple inserts": the rows get consecutive ids, and the counter is taken and persisted once per
// statement instead of once per row. Ids of rows that end up not inserted are used up, as in
// InnoDB.
func (ins *Inserter) reserveAuto(n uint64) error {
	ai := ins.Tbl.AutoIncCol
	if ai < 0 || ins.Tbl.Columns[ai].Hidden || n < 2 {
		return nil
	}
	id, err := ins.S.NextAutoInc(ins.Env, ins.Tbl, ins.Tbl.Columns[ai], n)
	if err != nil {
		return err
	}
	ins.autoNext, ins.autoEnd = id, id+n
	return nil
}

// Write inserts a row, resolving duplicate keys as REPLACE, IGNORE or ON DUPLICATE KEY UPDATE say.
// It computes the row's generated columns first (their unique keys are checked like any other).
func (ins *Inserter) Write(row []types.Value) error {
	env, tbl := ins.Env, ins.Tbl
	if err := exec.FillGenerated(env, tbl, row, ins.Strict, ins.Row); err != nil {
		return err
	}
	pk := exec.PrimaryKey(nil, tbl, row) // for the check and the write: row does not change below
	for attempt := 0; ; attempt++ {
		if attempt > 100 {
			return sqlerr.New(sqlerr.ErrUnknownError, "too many duplicate-key retries on %s", tbl.Name)
		}
		dupKey, dupRow, dupIdx, err := exec.FindDuplicateKey(env, tbl, row, pk, nil, ins.Latest)
		if err != nil {
			return err
		}
		if dupRow == nil {
			if err := exec.PutRowKey(env, tbl, row, nil, pk); err != nil {
				return err
			}
			ins.Affected++
			if ins.FirstAutoID == 0 && ins.allocated != 0 {
				ins.FirstAutoID = ins.allocated // LAST_INSERT_ID is the first id actually inserted
			}
			ins.allocated = 0
			return nil
		}
		switch {
		case ins.Replace && replacesInPlace(tbl, dupIdx, dupRow, row):
			// MySQL updates in place when the key is the table's last unique one, and an identical
			// row is then neither deleted nor counted twice.
			ins.Affected++
			if ins.FirstAutoID == 0 && ins.allocated != 0 {
				ins.FirstAutoID = ins.allocated
			}
			ins.allocated = 0
			return nil
		case ins.Replace:
			if err := exec.DeleteRow(env, tbl, dupKey, dupRow); err != nil {
				return err
			}
			ins.Affected++
			continue
		case len(ins.onDup) > 0:
			newRow := append([]types.Value(nil), dupRow...)
			for _, a := range ins.onDup {
				v, err := a.E.Eval(env, newRow)
				if err != nil {
					return err
				}
				col := tbl.Columns[a.Col]
				cv, err := ins.Convert(v, col)
				if err != nil {
					return err
				}
				newRow[a.Col] = cv
			}
			ins.stampOnUpdate(ins.onDup, dupRow, newRow)
			changed, err := exec.UpdateRow(env, tbl, dupKey, dupRow, newRow, ins.S.Strict(), ins.Row)
			if err != nil {
				return err
			}
			if changed {
				ins.Affected += 2
				if err := ins.observeUpdatedAuto(dupRow, newRow); err != nil {
					return err
				}
			} else if ins.S.ClientFoundRows() {
				ins.Affected++ // CLIENT_FOUND_ROWS: an unchanged duplicate counts as found
			}
			if ai := tbl.AutoIncCol; ai >= 0 && !tbl.Columns[ai].Hidden && ins.FirstAutoID == 0 {
				ins.lastExplicitAuto = expr.ToUint64(dupRow[ai])
			}
			ins.Dups++
			return nil
		case ins.Ignore:
			ins.Dups++
			ins.S.AddWarning("Warning", sqlerr.ErrDupEntry, exec.DupMessage(tbl, dupIdx, row))
			return nil
		default:
			return sqlerr.New(sqlerr.ErrDupEntry, "%s", exec.DupMessage(tbl, dupIdx, row))
		}
	}
}

// replacesInPlace reports whether REPLACE finds the row it writes already there, under the table's
// last unique key (visible columns compared).
func replacesInPlace(tbl *catalog.Table, ix *catalog.Index, old, row []types.Value) bool {
	last := ix
	for _, x := range tbl.Indexes {
		if x.Unique || x.Primary {
			last = x
		}
	}
	if last != ix {
		return false
	}
	for i, c := range tbl.Columns {
		if c.Hidden {
			continue
		}
		if old[i].K != row[i].K || (!old[i].IsNull() && types.Compare(old[i], row[i], nil) != 0) {
			return false
		}
	}
	return true
}
