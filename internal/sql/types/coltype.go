package types

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
