package types

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// ColType is a column's declared type, as the catalog stores it.
// Tp uses the MySQL type codes of github.com/pingcap/tidb/pkg/parser/mysql (mysql.TypeLong, ...).
type ColType struct {
	Tp        byte     `json:"tp"`
	Unsigned  bool     `json:"unsigned,omitempty"`
	Len       int      `json:"len,omitempty"`  // display width, char/byte length, decimal precision; -1 = unspecified
	Frac      int      `json:"frac,omitempty"` // decimal scale, fsp; -1 = unspecified (FLOAT/DOUBLE)
	Charset   string   `json:"charset,omitempty"`
	Collation string   `json:"collation,omitempty"` // "binary" for binary strings and non-string types
	Elems     []string `json:"elems,omitempty"`     // ENUM/SET members (compatibility issue)
}

// IsString reports whether t is a character or binary string type (CHAR, VARCHAR, BINARY,
// VARBINARY, TEXT, BLOB). ENUM and SET are not.
func (t *ColType) IsString() bool {
	switch t.Tp {
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString,
		mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		return true
	}
	return false
}

// IsBinaryString reports whether t is BINARY, VARBINARY or a BLOB.
func (t *ColType) IsBinaryString() bool {
	return t.IsString() && (t.Collation == "binary" || (t.Collation == "" && t.Charset == "binary"))
}

// IsInteger reports whether t is one of the integer types (not YEAR or BIT).
func (t *ColType) IsInteger() bool {
	switch t.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong:
		return true
	}
	return false
}

// IsTime reports whether t is DATE, DATETIME, TIMESTAMP or TIME.
func (t *ColType) IsTime() bool {
	switch t.Tp {
	case mysql.TypeDate, mysql.TypeNewDate, mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		return true
	}
	return false
}

// IsBlob reports whether t is a TEXT or BLOB type.
func (t *ColType) IsBlob() bool {
	switch t.Tp {
	case mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		return true
	}
	return false
}

// DefaultFrac is the Frac that values of type t carry: the DECIMAL scale (0 if unspecified), the
// fsp of time types (0 if unspecified), D of FLOAT(M,D)/DOUBLE(M,D), FracFloat32 for a plain
// FLOAT, and 0 otherwise.
func (t *ColType) DefaultFrac() int {
	switch t.Tp {
	case mysql.TypeNewDecimal:
		if t.Frac < 0 {
			return 0
		}
		return min(t.Frac, 30)
	case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		return ClampFsp(t.Frac)
	case mysql.TypeFloat:
		if t.Frac > 0 && t.Len > 0 {
			return t.Frac
		}
		return FracFloat32
	case mysql.TypeDouble:
		if t.Frac > 0 && t.Len > 0 {
			return t.Frac
		}
	}
	return 0
}

// decimalPrec returns DECIMAL(M,D)'s M and D with MySQL's defaults (10, 0).
func (t *ColType) decimalPrec() (int, int) {
	m, d := t.Len, t.Frac
	if m <= 0 {
		m = 10
	}
	if d < 0 {
		d = 0
	}
	if m > 65 {
		m = 65
	}
	if d > 30 {
		d = 30
	}
	if d > m {
		d = m
	}
	return m, d
}

// SQL renders t as MySQL 8's SHOW CREATE TABLE does (without charset/collation clauses): integer
// display widths are dropped except tinyint(1).
func (t *ColType) SQL() string {
	var b []byte
	uns := func() {
		if t.Unsigned {
			b = append(b, " unsigned"...)
		}
	}
	withLen := func(name string, def int) {
		n := t.Len
		if n < 0 {
			n = def
		}
		b = append(b, name...)
		b = append(b, '(')
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ')')
	}
	withFsp := func(name string) {
		b = append(b, name...)
		if t.Frac > 0 {
			b = append(b, '(')
			b = strconv.AppendInt(b, int64(ClampFsp(t.Frac)), 10)
			b = append(b, ')')
		}
	}
	bin := t.IsBinaryString()
	switch t.Tp {
	case mysql.TypeTiny:
		if t.Len == 1 {
			b = append(b, "tinyint(1)"...)
		} else {
			b = append(b, "tinyint"...)
		}
		uns()
	case mysql.TypeShort:
		b = append(b, "smallint"...)
		uns()
	case mysql.TypeInt24:
		b = append(b, "mediumint"...)
		uns()
	case mysql.TypeLong:
		b = append(b, "int"...)
		uns()
	case mysql.TypeLonglong:
		b = append(b, "bigint"...)
		uns()
	case mysql.TypeFloat, mysql.TypeDouble:
		if t.Tp == mysql.TypeFloat {
			b = append(b, "float"...)
		} else {
			b = append(b, "double"...)
		}
		if t.Len > 0 && t.Frac >= 0 {
			b = append(b, '(')
			b = strconv.AppendInt(b, int64(t.Len), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(t.Frac), 10)
			b = append(b, ')')
		}
		uns()
	case mysql.TypeNewDecimal:
		m, d := t.decimalPrec()
		b = append(b, "decimal("...)
		b = strconv.AppendInt(b, int64(m), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(d), 10)
		b = append(b, ')')
		uns()
	case mysql.TypeString:
		if bin {
			withLen("binary", 1)
		} else {
			withLen("char", 1)
		}
	case mysql.TypeVarchar, mysql.TypeVarString:
		if bin {
			withLen("varbinary", 0)
		} else {
			withLen("varchar", 0)
		}
	case mysql.TypeTinyBlob:
		b = append(b, Pick(bin, "tinyblob", "tinytext")...)
	case mysql.TypeBlob:
		b = append(b, Pick(bin, "blob", "text")...)
	case mysql.TypeMediumBlob:
		b = append(b, Pick(bin, "mediumblob", "mediumtext")...)
	case mysql.TypeLongBlob:
		b = append(b, Pick(bin, "longblob", "longtext")...)
	case mysql.TypeDate, mysql.TypeNewDate:
		b = append(b, "date"...)
	case mysql.TypeDatetime:
		withFsp("datetime")
	case mysql.TypeTimestamp:
		withFsp("timestamp")
	case mysql.TypeDuration:
		withFsp("time")
	case mysql.TypeYear:
		b = append(b, "year"...)
	case mysql.TypeBit:
		withLen("bit", 1)
	case mysql.TypeJSON:
		b = append(b, "json"...)
	case mysql.TypeEnum, mysql.TypeSet:
		b = append(b, Pick(t.Tp == mysql.TypeEnum, "enum(", "set(")...)
		for i, e := range t.Elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\'')
			for j := 0; j < len(e); j++ {
				switch e[j] {
				case '\'':
					b = append(b, '\'', '\'')
				case '\\':
					b = append(b, '\\', '\\')
				default:
					b = append(b, e[j])
				}
			}
			b = append(b, '\'')
		}
		b = append(b, ')')
	default:
		b = append(b, "unknown"...)
	}
	return string(b)
}

func Pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// Coll returns the collation that compares values of t: the column's collation, else its charset's
// default, else utf8mb4_0900_ai_ci for character types and binary for everything else.
func (t *ColType) Coll() *Collation {
	if t.Collation != "" {
		if c, ok := LookupCollation(t.Collation); ok {
			return c
		}
	}
	if t.Charset != "" {
		if c, ok := DefaultCollation(t.Charset); ok {
			return c
		}
	}
	if t.IsString() || t.Tp == mysql.TypeEnum || t.Tp == mysql.TypeSet {
		return collUTF8MB4Default
	}
	return collBinary
}

// KeyColl returns the collation that orders t's values in index keys: Coll, except that binary
// strings are keyed by their bytes.
func (t *ColType) KeyColl() *Collation {
	if t.IsBinaryString() {
		return collBinary
	}
	return t.Coll()
}

// ImplicitDefault is the value MySQL gives a NOT NULL column of type t that has no default, outside
// strict mode: an INSERT or LOAD DATA that omits it or gives NULL, and the rows an ALTER TABLE
// converts or extends with a new column (so both sql/dml and sql/ddl use it).
func (t *ColType) ImplicitDefault() Value {
	switch {
	case t.IsInteger():
		if t.Unsigned {
			return NewUint(0)
		}
		return NewInt(0)
	case t.Tp == mysql.TypeFloat || t.Tp == mysql.TypeDouble:
		return NewFloat(0)
	case t.Tp == mysql.TypeNewDecimal:
		v, _, _ := Convert(NewInt(0), t, ConvertCtx{})
		return v
	case t.Tp == mysql.TypeDate:
		return NewDate(0)
	case t.Tp == mysql.TypeDatetime || t.Tp == mysql.TypeTimestamp:
		return NewDatetime(0, max(t.Frac, 0))
	case t.Tp == mysql.TypeDuration:
		return NewDuration(0, max(t.Frac, 0))
	case t.IsBinaryString():
		return NewBytes("")
	case t.Tp == mysql.TypeEnum && len(t.Elems) > 0:
		return NewString(t.Elems[0])
	case t.Tp == mysql.TypeBit:
		return NewUint(0)
	case t.Tp == mysql.TypeJSON:
		return NewString("null")
	}
	return NewString("")
}
