package sql

import (
	"io"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// dmlSession is the session as the DML runners see it (their dml.Session): a defined type over
// Session, like planSession, so dml's methods do not join Session's own API and converting costs
// nothing per statement. The auto-increment counters stay the DB's; dml reaches them here.
type dmlSession Session

var _ dml.Session = (*dmlSession)(nil)

// dmlSess returns the session as dml's Session.
func (s *Session) dmlSess() *dmlSession { return (*dmlSession)(s) }

func (d *dmlSession) sess() *Session         { return (*Session)(d) }
func (d *dmlSession) Plan() plan.Context     { return d.sess().planContext() }
func (d *dmlSession) LockDB(db string) error { return d.sess().lockDB(db) }
func (d *dmlSession) UseTable(db, name string, write bool) error {
	return d.sess().useTable(db, name, write)
}
func (d *dmlSession) Resolve(build func(p *plan.Planner) error) error {
	return d.sess().resolve(build)
}
func (d *dmlSession) WarningCount() int           { return len(d.warnings) }
func (d *dmlSession) SQLModeHas(flag string) bool { return d.sess().sqlModeHas(flag) }
func (d *dmlSession) Strict() bool                { return d.sess().strict() }
func (d *dmlSession) SetLastInsertID(id uint64)   { d.lastInsertID = id }
func (d *dmlSession) ClientFoundRows() bool       { return d.FoundRowsFlag }
func (d *dmlSession) AddWarning(level string, code uint16, msg string) {
	d.sess().addWarning(level, code, msg)
}

func (d *dmlSession) NextAutoInc(env *expr.Env, tbl *catalog.Table, col *catalog.Column, n uint64) (uint64, error) {
	return d.db.nextAutoInc(env, tbl, col, n)
}

func (d *dmlSession) ObserveAutoInc(env *expr.Env, tbl *catalog.Table, col *catalog.Column, v uint64) error {
	return d.db.observeAutoInc(env, tbl, col, v)
}

func (d *dmlSession) SysVar(v *sysvar.Var, global bool) types.Value {
	return d.sess().getSysVar(v, global)
}
func (d *dmlSession) SetUserVar(name string, v types.Value) { d.userVars[name] = v }
func (d *dmlSession) UnsetUserVar(name string)              { delete(d.userVars, name) }

// OpenServerFile opens a file inside secure_file_priv (outfile.go).
func (d *dmlSession) OpenServerFile(path string) (io.ReadCloser, error) {
	return d.sess().openServerFile(path)
}
