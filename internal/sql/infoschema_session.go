package sql

import (
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// What infoschema reads of a session (infoschema.Session): the facade answers from its own state
// (the AUTO_INCREMENT counters, the planner for a view's columns, the server's process list).
// Catalog and CanSeeAllProcesses are defined beside the expression and ACL code.

var _ infoschema.Session = (*Session)(nil)

// AutoIncrementValue is information_schema.TABLES' AUTO_INCREMENT of t (dumpcompat.go).
func (s *Session) AutoIncrementValue(env *expr.Env, t *catalog.Table) (types.Value, error) {
	return s.autoIncValue(env, t)
}

// ViewAsTable describes a view as a table without indexes, by planning it (viewcolumns.go).
func (s *Session) ViewAsTable(v *catalog.View) (*catalog.Table, error) { return s.viewAsTable(v) }

// Processes lists the server's connections (nil when the server gives no list).
func (s *Session) Processes() []infoschema.Process {
	if s.db.cfg.Processes == nil {
		return nil
	}
	return s.db.cfg.Processes()
}

// SessionUser is the user name the client logged in with.
func (s *Session) SessionUser() string { return s.User }
