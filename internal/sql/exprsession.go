package sql

import (
	"time"

	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
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
	// Txn is the session's open transaction (the statement's unless Env overrides it).
	Txn() *txn.Txn
	// LockWaitTimeout is innodb_lock_wait_timeout, for row locks.
	LockWaitTimeout() time.Duration
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
func (s *Session) Txn() *txn.Txn                                    { return s.txn }
func (s *Session) LockWaitTimeout() time.Duration                   { return s.lockWaitTimeout() }

// session is the facade's *Session behind env: the executor (still in this package) needs more of
// it than expressions do (catalog, foreign_key_checks, the DB's engine and user locks). Every Env
// this package builds holds a *Session, so the assertion cannot fail.
func (env *Env) session() *Session { return env.s.(*Session) }
