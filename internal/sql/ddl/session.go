package ddl

import "github.com/kiln-db/kiln/internal/sql/plan"

// Session is what DDL needs of the session: the consumer-side cut of the facade's *sql.Session, so
// this package does not depend on the facade.
type Session interface {
	// Plan is the session as the planner sees it: the current database (read, and cleared by DROP
	// DATABASE), the virtual schemas, the connection's collation (a view's), and the session's
	// parser (CHECK expressions); DEFAULT, CHECK and view bodies are bound through it.
	Plan() plan.Context
	// AddWarning appends a warning for SHOW WARNINGS.
	AddWarning(level string, code uint16, msg string)
	// SQLModeHas reports whether sql_mode holds flag (upper case, e.g. "NO_ZERO_DATE").
	SQLModeHas(flag string) bool
	// Strict reports a strict sql_mode (STRICT_TRANS_TABLES or STRICT_ALL_TABLES).
	Strict() bool
	// FKChecks is foreign_key_checks: off, foreign keys are neither validated nor protected by DDL.
	FKChecks() bool
	// UserName is the login user name (the error for DDL on a system schema names it).
	UserName() string
	// Definer is the account the session runs as (user, host): a view's default definer.
	Definer() (user, host string)
	// CheckDefiner refuses (1227) naming the account user@host as a view's definer unless it is the
	// session's own account or the session has SET_USER_ID (or SUPER).
	CheckDefiner(user, host string) error
	// SystemLogTable reports one of the mysql schema's log tables (general_log, slow_log, ...),
	// which a dump re-creates with IF NOT EXISTS.
	SystemLogTable(db, name string) bool
	// HoldMetadataLocks marks the databases as locked by this session for the planner, until
	// release is called: the DDL holds their exclusive metadata locks, so planning a view's body
	// must not wait for a shared one.
	HoldMetadataLocks(dbs []string) (release func())
	// Resolve runs planning calls on a planner whose resolutions the session then locks and
	// checks against DDL (plan.Resolve): CREATE VIEW plans its body through it.
	Resolve(build func(p *plan.Planner) error) error
}
