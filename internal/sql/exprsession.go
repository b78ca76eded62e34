package sql

import (
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// exprSession is what a compiled expression reads and writes of its session while it runs: the
// consumer-side cut of *Session that Env holds, so expressions do not depend on the facade.
type exprSession interface {
	// AddWarning appends a warning for SHOW WARNINGS.
	AddWarning(level string, code uint16, msg string)
	// SysVar reads a system variable (the session value, or the global one when global is set).
	SysVar(v *sysvar.Var, global bool) types.Value
	// SQLModeHas reports whether sql_mode holds flag (upper case, e.g. "NO_ZERO_DATE").
	SQLModeHas(flag string) bool
	// Location is the session's time_zone.
	Location() *time.Location
	// DefaultWeekFormat is default_week_format (WEEK(d), EXTRACT(WEEK ...)).
	DefaultWeekFormat() int
	// UserVar reads @name (NULL when unset); SetUserVar assigns it (@name := v).
	UserVar(name string) types.Value
	SetUserVar(name string, v types.Value)
	// LastInsertID is LAST_INSERT_ID(); SetLastInsertID is LAST_INSERT_ID(n).
	LastInsertID() uint64
	SetLastInsertID(id uint64)
	// RowCount and FoundRows are ROW_COUNT() and FOUND_ROWS() of the previous statement.
	RowCount() int64
	FoundRows() int64
	// ConnectionID is CONNECTION_ID().
	ConnectionID() uint32
	// CurrentDB is DATABASE() ("" when none is selected).
	CurrentDB() string
	// LoginUser is USER() (user@host of the login); CurrentUser is CURRENT_USER() (the account).
	LoginUser() string
	CurrentUser() string
	// ServerVersion is VERSION().
	ServerVersion() string
	// NewMemTracker is a statement's memory tracker: kiln_mem_quota_query under the server's
	// memory budget.
	NewMemTracker() *memory.Tracker
}

var _ exprSession = (*Session)(nil)

// The methods below implement exprSession on *Session.

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
	quota := toIntLenient(s.getSysVar(sysvar.Must("kiln_mem_quota_query"), false))
	return memory.NewTracker(s.db.cfg.Memory, quota)
}

// sessionOf is the facade's *Session behind env: the executor (still in this package) needs more of
// it than expressions do (catalog, foreign_key_checks, the DB's engine and user locks). Every Env
// this package builds holds a *Session, so the assertion cannot fail.
func sessionOf(env *Env) *Session { return env.s.(*Session) }

// txnOf is the statement's transaction: Env's own (DDL runs in one) or the session's.
func txnOf(env *Env) *txn.Txn {
	if env.t != nil {
		return env.t
	}
	return sessionOf(env).txn
}

// lockRow takes a row lock for the statement's transaction, waiting innodb_lock_wait_timeout.
func lockRow(env *Env, key []byte, mode txn.LockMode) error {
	t := txnOf(env)
	if t.ReadOnly && mode == txn.LockExclusive {
		return sqlerr.New(sqlerr.ErrReadOnlyTrans, "Cannot execute statement in a READ ONLY transaction.")
	}
	err := t.Lock(env.ctx, key, mode, sessionOf(env).lockWaitTimeout())
	if err != nil && env.ctx.Err() != nil && !sqlerr.Is(err, sqlerr.ErrLockDeadlock) && !sqlerr.Is(err, sqlerr.ErrLockWaitTimeout) {
		return env.interrupted()
	}
	return err
}
