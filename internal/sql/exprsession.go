package sql

import (
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/ddl"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/txn"
)

var (
	_ expr.Session = (*Session)(nil)
	_ exec.Session = (*Session)(nil) // the executor's row locks and transaction
)

// The methods below implement expr.Session on *Session.

func (s *Session) AddWarning(level string, code uint16, msg string) { s.addWarning(level, code, msg) }
func (s *Session) SysVar(v *sysvar.Var, global bool) types.Value    { return s.getSysVar(v, global) }
func (s *Session) SQLModeHas(flag string) bool                      { return s.sqlModeHas(flag) }
func (s *Session) Location() *time.Location                         { return s.location() }
func (s *Session) DefaultWeekFormat() int                           { return s.defaultWeekFormat() }
func (s *Session) UserVar(name string) types.Value                  { return s.userVars[name] }
func (s *Session) SetUserVar(name string, v types.Value)            { s.userVars[name] = v }
func (s *Session) LastInsertID() uint64                             { return s.lastInsertID }
func (s *Session) SetLastInsertID(id uint64)                        { s.lastInsertID = id }
func (s *Session) RowCount() int64                                  { return s.rowCount }
func (s *Session) FoundRows() int64                                 { return s.foundRows }
func (s *Session) ConnectionID() uint32                             { return s.ConnID }
func (s *Session) CurrentDB() string                                { return s.CurDB }
func (s *Session) LoginUser() string                                { return s.User + "@" + s.Host }
func (s *Session) CurrentUser() string                              { return s.acctUser + "@" + s.acctHost }
func (s *Session) ServerVersion() string                            { return s.db.cfg.Version }

// NewMemTracker is kiln_mem_quota_query under the server's memory budget (memtrack.go).
func (s *Session) NewMemTracker() *memory.Tracker {
	quota := types.ToIntLenient(s.getSysVar(sysvar.Must("kiln_mem_quota_query"), false))
	return memory.NewTracker(s.db.cfg.Memory, quota)
}

// sessionOf is the facade's *Session behind env: the executor (still in this package) needs more of
// it than expressions do (catalog, foreign_key_checks, the DB's engine and user locks). Every Env
// this package builds holds a *Session, so the assertion cannot fail.
func sessionOf(env *expr.Env) *Session { return env.Sess.(*Session) }

// Txn and LockWaitTimeout implement exec.Session: the session's transaction (the statement's
// unless its Env names one) and innodb_lock_wait_timeout, for the row locks the executor takes.
func (s *Session) Txn() *txn.Txn                  { return s.txn }
func (s *Session) LockWaitTimeout() time.Duration { return s.lockWaitTimeout() }

// Catalog and CompileCheck implement the rest of exec.Session: the current catalog, and the binder
// of CHECK constraints (sql/ddl's CompileCheck), for the row primitives' foreign key and CHECK enforcement.
func (s *Session) Catalog() *catalog.Catalog { return s.catalog() }
func (s *Session) CompileCheck(t *catalog.Table, ck *catalog.CheckConstraint) (expr.Expr, error) {
	return ddl.CompileCheck(s.planContext(), t, ck)
}

// defaultWeekFormat is default_week_format (WEEK(d), EXTRACT(WEEK ...)).
func (s *Session) defaultWeekFormat() int {
	return int(types.ToIntLenient(s.getSysVar(sysvar.Must("default_week_format"), false)))
}
