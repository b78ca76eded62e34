package sql

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// information_schema and SHOW helpers that still need the session or the planner: a view's columns
// (planned), REFERENTIAL_CONSTRAINTS (the FK parent lookup lives in fk.go). The row builders that need
// only the catalog moved to internal/sql/infoschema.

// viewColumns plans a view to learn its columns.
func (s *Session) viewColumns(v *catalog.View) ([]proto.Column, error) {
	sp, err := (&planner{s: s}).planView(v, 0)
	if err != nil {
		return nil, err
	}
	return sp.Cols[:sp.NVisible], nil
}

// referentialRows returns REFERENTIAL_CONSTRAINTS rows for every foreign key in cat.
func referentialRows(cat *catalog.Catalog) [][]types.Value {
	var rows [][]types.Value
	for _, dbn := range cat.DBNames() {
		for _, t := range cat.Tables(dbn) {
			for _, fk := range t.ForeignKeys {
				uniq := types.Null
				if p, pcols, ok := exec.ResolveParent(cat, fk); ok {
					if ix := exec.PrefixIndex(p, pcols); ix != nil && ix.Unique {
						uniq = stringVal(ix.Name)
					}
				}
				rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(fk.Name), stringVal("def"), stringVal(fk.RefDB), uniq, stringVal("NONE"), stringVal(infoschema.RefRule(fk.OnUpdate)), stringVal(infoschema.RefRule(fk.OnDelete)), stringVal(t.Name), stringVal(fk.RefTable)})
			}
		}
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
