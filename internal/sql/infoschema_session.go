package sql

import (
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
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

// AccountGrants is the session's account with its privileges.
func (s *Session) AccountGrants() *catalog.Account { return s.account() }

// AllPrivileged reports an account that every check passes (root).
func (s *Session) AllPrivileged() bool { return s.allPrivileged() }

// VisibleDB reports whether listings show a schema (acl_check.go).
func (s *Session) VisibleDB(db string) bool { return s.visibleDB(db) }

// VisibleTable reports whether listings show a table (acl_check.go).
func (s *Session) VisibleTable(db, table string) bool { return s.visibleTable(db, table) }

// ClusterMembers lists the cluster's members (nil when the server gives no list).
func (s *Session) ClusterMembers() []infoschema.ClusterMember {
	if s.db.cfg.ClusterMembers == nil {
		return nil
	}
	return s.db.cfg.ClusterMembers()
}

// allPrivileged reports an account that every check passes (root): listings skip filtering.
func (s *Session) allPrivileged() bool {
	return s.account().Global&(catalog.PrivAllGlobal&^catalog.PrivGrant) == catalog.PrivAllGlobal&^catalog.PrivGrant
}

// StatusVariables are the server's status variables and the connection's TLS ones (empty in the
// global scope, as MySQL shows them).
func (s *Session) StatusVariables(global bool) map[string]string {
	st := map[string]string{}
	if s.db.cfg.Status != nil {
		st = s.db.cfg.Status()
	}
	st["Ssl_version"], st["Ssl_cipher"] = "", ""
	if !global {
		st["Ssl_version"], st["Ssl_cipher"] = s.SSLVersion, s.SSLCipher
	}
	return st
}

// Warnings are a copy of the last statement's diagnostics (SHOW WARNINGS, SHOW ERRORS).
func (s *Session) Warnings() []sqlerr.Warning { return append([]sqlerr.Warning(nil), s.warnings...) }

// AutoIncrementNext is t's next AUTO_INCREMENT value (dumpcompat.go).
func (s *Session) AutoIncrementNext(env *expr.Env, t *catalog.Table) (uint64, error) {
	return s.autoIncNext(env, t)
}
