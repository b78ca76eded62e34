package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// information_schema and SHOW rows for views and foreign keys, and the length/precision columns of
// information_schema.COLUMNS (which JDBC's DatabaseMetaData reads).

// viewColumns plans a view to learn its columns.
func (s *Session) viewColumns(v *catalog.View) ([]proto.Column, error) {
	sp, err := (&planner{s: s}).planView(v, 0)
	if err != nil {
		return nil, err
	}
	return sp.cols[:sp.nVisible], nil
}

// colLengths returns CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION,
// NUMERIC_SCALE and DATETIME_PRECISION as MySQL 8 reports them.
func colLengths(t types.ColType) [5]types.Value {
	out := [5]types.Value{types.Null, types.Null, types.Null, types.Null, types.Null}
	width := int64(1)
	switch t.Charset {
	case "utf8mb4":
		width = 4
	case "utf8mb3", "utf8":
		width = 3
	}
	switch t.Tp {
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString:
		n := int64(max(t.Len, 0))
		out[0] = intVal(n)
		if t.IsBinaryString() {
			out[1] = intVal(n)
		} else {
			out[1] = intVal(n * width)
		}
	case mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		n := int64(types.TextLimit(t.Tp))
		out[0], out[1] = intVal(n), intVal(n)
	case mysql.TypeEnum, mysql.TypeSet:
		n := 0
		for _, e := range t.Elems {
			if t.Tp == mysql.TypeEnum {
				n = max(n, len([]rune(e)))
			} else {
				n += len([]rune(e)) + 1
			}
		}
		if t.Tp == mysql.TypeSet && n > 0 {
			n--
		}
		out[0], out[1] = intVal(int64(n)), intVal(int64(n)*width)
	case mysql.TypeJSON:
		// MySQL reports NULL lengths for JSON.
	case mysql.TypeTiny:
		out[2], out[3] = intVal(3), intVal(0)
	case mysql.TypeShort:
		out[2], out[3] = intVal(5), intVal(0)
	case mysql.TypeInt24:
		out[2], out[3] = intVal(7), intVal(0)
	case mysql.TypeLong:
		out[2], out[3] = intVal(10), intVal(0)
	case mysql.TypeLonglong:
		if t.Unsigned {
			out[2] = intVal(20)
		} else {
			out[2] = intVal(19)
		}
		out[3] = intVal(0)
	case mysql.TypeNewDecimal:
		out[2], out[3] = intVal(int64(max(t.Len, 0))), intVal(int64(max(t.Frac, 0)))
	case mysql.TypeFloat:
		out[2] = intVal(12)
		if t.Len > 0 && t.Frac >= 0 {
			out[2], out[3] = intVal(int64(t.Len)), intVal(int64(t.Frac))
		}
	case mysql.TypeDouble:
		out[2] = intVal(22)
		if t.Len > 0 && t.Frac >= 0 {
			out[2], out[3] = intVal(int64(t.Len)), intVal(int64(t.Frac))
		}
	case mysql.TypeBit:
		out[2] = intVal(int64(max(t.Len, 1)))
	case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		out[4] = intVal(int64(max(t.Frac, 0)))
	}
	return out
}

func refRule(r string) string {
	if r == "" {
		return "NO ACTION"
	}
	return r
}

// fkConstraintRows returns TABLE_CONSTRAINTS rows for t's foreign keys.
func fkConstraintRows(t *catalog.Table) [][]types.Value {
	var rows [][]types.Value
	for _, fk := range t.ForeignKeys {
		rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(fk.Name), stringVal(t.DB), stringVal(t.Name), stringVal("FOREIGN KEY"), stringVal("YES")})
	}
	for _, ck := range t.Checks {
		enf := "YES"
		if !ck.Enforced {
			enf = "NO"
		}
		rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(ck.Name), stringVal(t.DB), stringVal(t.Name), stringVal("CHECK"), stringVal(enf)})
	}
	return rows
}

// fkKeyUsageRows returns KEY_COLUMN_USAGE rows for t's foreign keys.
func fkKeyUsageRows(t *catalog.Table) [][]types.Value {
	var rows [][]types.Value
	for _, fk := range t.ForeignKeys {
		for i, id := range fk.Cols {
			p := t.ColPos[id]
			if p < 0 {
				continue
			}
			rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(fk.Name), stringVal("def"), stringVal(t.DB), stringVal(t.Name), stringVal(t.Columns[p].Name), intVal(int64(i + 1)), intVal(int64(i + 1)), stringVal(fk.RefDB), stringVal(fk.RefTable), stringVal(fk.RefCols[i])})
		}
	}
	return rows
}

// referentialRows returns REFERENTIAL_CONSTRAINTS rows for every foreign key in cat.
func referentialRows(cat *catalog.Catalog) [][]types.Value {
	var rows [][]types.Value
	for _, dbn := range cat.DBNames() {
		for _, t := range cat.Tables(dbn) {
			for _, fk := range t.ForeignKeys {
				uniq := types.Null
				if p, pcols, ok := resolveParent(cat, fk); ok {
					if ix := prefixIndex(p, pcols); ix != nil && ix.Unique {
						uniq = stringVal(ix.Name)
					}
				}
				rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(fk.Name), stringVal("def"), stringVal(fk.RefDB), uniq, stringVal("NONE"), stringVal(refRule(fk.OnUpdate)), stringVal(refRule(fk.OnDelete)), stringVal(t.Name), stringVal(fk.RefTable)})
			}
		}
	}
	return rows
}

// viewRows returns information_schema.VIEWS rows.
func viewRows(cat *catalog.Catalog) [][]types.Value {
	var rows [][]types.Value
	for _, dbn := range cat.DBNames() {
		for _, v := range cat.Views(dbn) {
			rows = append(rows, []types.Value{stringVal("def"), stringVal(v.DB), stringVal(v.Name), stringVal(v.Select), stringVal(v.CheckOption), stringVal("NO"), stringVal(strings.ReplaceAll(v.Definer, "`", "")), stringVal(v.Security), stringVal(v.Charset), stringVal(v.Collation)})
		}
	}
	return rows
}

// viewTableRows returns information_schema.TABLES rows for views (MySQL: NULL storage fields,
// comment 'VIEW').
func viewTableRows(cat *catalog.Catalog, dbn string) [][]types.Value {
	var rows [][]types.Value
	for _, v := range cat.Views(dbn) {
		r := []types.Value{stringVal("def"), stringVal(v.DB), stringVal(v.Name), stringVal("VIEW")}
		for range 16 {
			r = append(r, types.Null)
		}
		r = append(r, stringVal("VIEW"))
		rows = append(rows, r)
	}
	return rows
}

// viewAsTable describes a view as a table without indexes (for SHOW COLUMNS).
func (s *Session) viewAsTable(v *catalog.View) (*catalog.Table, error) {
	cols, err := s.viewColumns(v)
	if err != nil {
		return nil, err
	}
	t := &catalog.Table{DB: v.DB, Name: v.Name}
	for i, pc := range cols {
		t.Columns = append(t.Columns, &catalog.Column{ID: uint32(i + 1), Name: pc.Name, Type: colTypeOf(pc), NotNull: pc.Flags&uint16(mysql.NotNullFlag) != 0})
	}
	t.Init()
	return t, nil
}
