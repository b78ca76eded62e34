package plan

import (
	"github.com/kiln-db/kiln/internal/sql/catalog"
)

// TableScope is the scope of one table's row.
func TableScope(tbl *catalog.Table, alias string) *Scope {
	sc := &Scope{}
	for _, c := range tbl.Columns {
		name := c.Name
		if c.Hidden {
			name = ""
		}
		sc.Cols = append(sc.Cols, ScopeCol{db: tbl.DB, table: alias, orgTable: tbl.Name, Name: name, T: c.Type, col: c, notNull: c.NotNull})
	}
	return sc
}
