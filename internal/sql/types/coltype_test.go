package types

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// TestImplicitDefault: the implicit default of each type class, as MySQL gives a NOT NULL column
// without a default outside strict mode.
func TestImplicitDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  ColType
		want string
	}{
		{"int", ColType{Tp: mysql.TypeLong}, "0"},
		{"unsigned", ColType{Tp: mysql.TypeLonglong, Unsigned: true}, "0"},
		{"double", ColType{Tp: mysql.TypeDouble, Frac: -1}, "0"},
		{"varchar", ColType{Tp: mysql.TypeVarchar, Len: 10}, ""},
		{"enum: its first member", ColType{Tp: mysql.TypeEnum, Elems: []string{"b", "a"}}, "b"},
		{"json", ColType{Tp: mysql.TypeJSON}, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.typ.ImplicitDefault()
			if v.IsNull() || ToString(v) != tc.want {
				t.Errorf("ImplicitDefault = %v, want %q", v, tc.want)
			}
		})
	}
}
