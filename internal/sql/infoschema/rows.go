package infoschema

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Row builders of information_schema tables and SHOW statements that need only the catalog and the
// types package: the lengths and DATA_TYPE of COLUMNS, the foreign-key and CHECK rows of
// TABLE_CONSTRAINTS and KEY_COLUMN_USAGE, VIEWS, the view rows of TABLES, and SHOW CHARACTER SET /
// SHOW COLLATION. Their column orders are MySQL 8's; the facade builds the tables around them.

func stringVal(s string) types.Value { return types.NewString(s) }
func intVal(i int64) types.Value     { return types.NewInt(i) }

// ColLengths returns CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION,
// NUMERIC_SCALE and DATETIME_PRECISION as MySQL 8 reports them.
func ColLengths(t types.ColType) [5]types.Value {
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

func RefRule(r string) string {
	if r == "" {
		return "NO ACTION"
	}
	return r
}

// FKConstraintRows returns TABLE_CONSTRAINTS rows for t's foreign keys.
func FKConstraintRows(t *catalog.Table) [][]types.Value {
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

// FKKeyUsageRows returns KEY_COLUMN_USAGE rows for t's foreign keys.
func FKKeyUsageRows(t *catalog.Table) [][]types.Value {
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

// ViewRows returns information_schema.VIEWS rows.
func ViewRows(cat *catalog.Catalog) [][]types.Value {
	var rows [][]types.Value
	for _, dbn := range cat.DBNames() {
		for _, v := range cat.Views(dbn) {
			rows = append(rows, []types.Value{stringVal("def"), stringVal(v.DB), stringVal(v.Name), stringVal(v.Select), stringVal(v.CheckOption), stringVal("NO"), stringVal(strings.ReplaceAll(v.Definer, "`", "")), stringVal(v.Security), stringVal(v.Charset), stringVal(v.Collation)})
		}
	}
	return rows
}

// ViewTableRows returns information_schema.TABLES rows for views (MySQL: NULL storage fields,
// comment 'VIEW').
func ViewTableRows(cat *catalog.Catalog, dbn string) [][]types.Value {
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

// CharsetRows: Charset, Description, Default collation, Maxlen (SHOW CHARACTER SET).
func CharsetRows() [][]types.Value {
	var rows [][]types.Value
	for _, cs := range []struct {
		name, desc string
		maxlen     int64
	}{{"ascii", "US ASCII", 1}, {"binary", "Binary pseudo charset", 1}, {"latin1", "cp1252 West European", 1}, {"utf8mb3", "UTF-8 Unicode", 3}, {"utf8mb4", "UTF-8 Unicode", 4}} {
		d, _ := types.DefaultCollation(cs.name)
		dn := cs.name
		if d != nil {
			dn = d.Name
		}
		rows = append(rows, []types.Value{stringVal(cs.name), stringVal(cs.desc), stringVal(dn), intVal(cs.maxlen)})
	}
	return rows
}

// CollationRows: Collation, Charset, Id, Default, Compiled, Sortlen, Pad_attribute (SHOW COLLATION).
func CollationRows() [][]types.Value {
	var rows [][]types.Value
	for _, c := range AllCollations() {
		def := ""
		if d, ok := types.DefaultCollation(c.Charset); ok && d.Name == c.Name {
			def = "Yes"
		}
		pad := "PAD SPACE"
		if strings.Contains(c.Name, "0900") || c.Name == "binary" {
			pad = "NO PAD"
		}
		rows = append(rows, []types.Value{stringVal(c.Name), stringVal(c.Charset), intVal(int64(c.ID)), stringVal(def), stringVal("Yes"), intVal(1), stringVal(pad)})
	}
	return rows
}

// DataType is information_schema.COLUMNS.DATA_TYPE: the type's name without length or attributes
// ("int" for int unsigned, "varchar" for varchar(10)).
func DataType(t types.ColType) string {
	s := t.SQL()
	if i := strings.IndexAny(s, "( "); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(s)
}

// AllCollations lists the collations Kiln knows, by id.
func AllCollations() []*types.Collation {
	var out []*types.Collation
	for id := uint16(1); id < 512; id++ {
		if c, ok := types.CollationByID(id); ok {
			out = append(out, c)
		}
	}
	return out
}

// IndexRows returns SHOW INDEX rows (also information_schema.STATISTICS'): Table, Non_unique,
// Key_name, Seq_in_index, Column_name, Collation, Cardinality, Sub_part, Packed, Null, Index_type,
// Comment, Index_comment.
func IndexRows(t *catalog.Table) [][]types.Value {
	var rows [][]types.Value
	for _, ix := range t.Indexes {
		if ix.Primary && t.HiddenPK {
			continue
		}
		nonUnique := int64(1)
		if ix.Unique {
			nonUnique = 0
		}
		for i, ci := range ix.Offsets {
			c := t.Columns[ci]
			null := ""
			if !c.NotNull {
				null = "YES"
			}
			sub := types.Null
			if ix.Columns[i].Prefix > 0 {
				sub = intVal(int64(ix.Columns[i].Prefix))
			}
			coll := "A"
			if ix.Columns[i].Desc {
				coll = "D"
			}
			rows = append(rows, []types.Value{stringVal(t.Name), intVal(nonUnique), stringVal(ix.Name), intVal(int64(i + 1)), stringVal(c.Name), stringVal(coll), intVal(0), sub, types.Null, stringVal(null), stringVal("BTREE"), stringVal(""), stringVal("")})
		}
	}
	return rows
}
