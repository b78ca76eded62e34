package sql

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/plan"
)

// A view's columns, learned by planning its SELECT: what information_schema.COLUMNS and SHOW
// COLUMNS report for a view. They need the planner, so they stay in the facade; the
// row builders that need only the catalog are internal/sql/infoschema's.

// viewColumns plans a view to learn its columns.
func (s *Session) viewColumns(v *catalog.View) ([]proto.Column, error) {
	var sp *exec.Select
	err := s.resolve(func(p *plan.Planner) (err error) {
		sp, err = p.PlanView(v, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sp.Cols[:sp.NVisible], nil
}

// viewAsTable describes a view as a table without indexes (for SHOW COLUMNS).
func (s *Session) viewAsTable(v *catalog.View) (*catalog.Table, error) {
	cols, err := s.viewColumns(v)
	if err != nil {
		return nil, err
	}
	t := &catalog.Table{DB: v.DB, Name: v.Name}
	for i, pc := range cols {
		t.Columns = append(t.Columns, &catalog.Column{ID: uint32(i + 1), Name: pc.Name, Type: plan.ColTypeOf(pc), NotNull: pc.Flags&uint16(mysql.NotNullFlag) != 0})
	}
	t.Init()
	return t, nil
}
