package infoschema

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// TestColLengths pins information_schema.COLUMNS' length and precision columns to MySQL 8's values.
func TestColLengths(t *testing.T) {
	null := "NULL"
	for _, tc := range []struct {
		name string
		ct   types.ColType
		want [5]string
	}{
		{"varchar utf8mb4", types.ColType{Tp: mysql.TypeVarchar, Len: 10, Charset: "utf8mb4"}, [5]string{"10", "40", null, null, null}},
		{"char latin1", types.ColType{Tp: mysql.TypeString, Len: 5, Charset: "latin1"}, [5]string{"5", "5", null, null, null}},
		{"int", types.ColType{Tp: mysql.TypeLong}, [5]string{null, null, "10", "0", null}},
		{"bigint unsigned", types.ColType{Tp: mysql.TypeLonglong, Unsigned: true}, [5]string{null, null, "20", "0", null}},
		{"decimal(12,3)", types.ColType{Tp: mysql.TypeNewDecimal, Len: 12, Frac: 3}, [5]string{null, null, "12", "3", null}},
		{"datetime(6)", types.ColType{Tp: mysql.TypeDatetime, Frac: 6}, [5]string{null, null, null, null, "6"}},
		{"json", types.ColType{Tp: mysql.TypeJSON}, [5]string{null, null, null, null, null}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ColLengths(tc.ct)
			for i, v := range got {
				s := null
				if !v.IsNull() {
					s = v.String()
				}
				if s != tc.want[i] {
					t.Errorf("column %d = %s, want %s", i, s, tc.want[i])
				}
			}
		})
	}
}

// TestDataType: DATA_TYPE is the bare lower-case type name.
func TestDataType(t *testing.T) {
	for _, tc := range []struct {
		ct   types.ColType
		want string
	}{
		{types.ColType{Tp: mysql.TypeLong, Unsigned: true}, "int"},
		{types.ColType{Tp: mysql.TypeVarchar, Len: 10, Charset: "utf8mb4"}, "varchar"},
	} {
		if got := DataType(tc.ct); got != tc.want {
			t.Errorf("DataType(%s) = %q, want %q", tc.ct.SQL(), got, tc.want)
		}
	}
}

// TestCharsetAndCollationRows: SHOW CHARACTER SET's default collation of utf8mb4 is MySQL 8's, and
// SHOW COLLATION marks exactly one default per character set.
func TestCharsetAndCollationRows(t *testing.T) {
	found := false
	for _, r := range CharsetRows() {
		if r[0].String() == "utf8mb4" {
			found = true
			if r[2].String() != "utf8mb4_0900_ai_ci" {
				t.Errorf("utf8mb4 default collation = %s", r[2].String())
			}
		}
	}
	if !found {
		t.Error("no utf8mb4 row")
	}
	defaults := map[string]int{}
	for _, r := range CollationRows() {
		if r[3].String() == "Yes" {
			defaults[r[1].String()]++
		}
	}
	for cs, n := range defaults {
		if n != 1 {
			t.Errorf("%s has %d default collations", cs, n)
		}
	}
	if defaults["utf8mb4"] != 1 {
		t.Errorf("utf8mb4 has no default collation")
	}
}
