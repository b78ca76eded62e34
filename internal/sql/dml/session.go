package dml

import (
	"io"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Session is what the DML runners need of the session: the consumer-side cut of the facade's
// *sql.Session, so this package does not depend on the facade.
type Session interface {
	// Plan is the session as the planner sees it: current database, catalog, user variables.
	Plan() plan.Context
	// Resolve runs planning calls on a planner whose resolutions the session then locks and
	// checks against DDL (plan.Resolve): the planner takes no metadata lock itself.
	Resolve(build func(p *plan.Planner) error) error
	// LockDB takes a database's shared metadata lock for the statement (or its transaction);
	// UseTable records (under LOCK TABLES: checks) the use of a table, for writing if write.
	LockDB(db string) error
	UseTable(db, name string, write bool) error
	// AddWarning appends a warning for SHOW WARNINGS.
	AddWarning(level string, code uint16, msg string)
	// WarningCount is the number of warnings the statement has so far (the Info line's).
	WarningCount() int
	// SQLModeHas reports whether sql_mode holds flag (upper case, e.g. "NO_ZERO_DATE").
	SQLModeHas(flag string) bool
	// Strict reports a strict sql_mode (STRICT_TRANS_TABLES or STRICT_ALL_TABLES).
	Strict() bool
	// SetLastInsertID sets LAST_INSERT_ID() after an INSERT allocated an id.
	SetLastInsertID(id uint64)
	// ClientFoundRows reports CLIENT_FOUND_ROWS: affected rows count matched rows.
	ClientFoundRows() bool
	// NextAutoInc allocates n consecutive auto-increment values of tbl's column col.
	NextAutoInc(env *expr.Env, tbl *catalog.Table, col *catalog.Column, n uint64) (uint64, error)
	// ObserveAutoInc moves tbl's counter past an explicitly inserted value v.
	ObserveAutoInc(env *expr.Env, tbl *catalog.Table, col *catalog.Column, v uint64) error
	// SysVar reads a system variable (LOAD DATA: character_set_database, max_allowed_packet).
	SysVar(v *sysvar.Var, global bool) types.Value
	// SetUserVar assigns @name; UnsetUserVar removes it (LOAD DATA's column list and SET; reads
	// go through Plan().LookupUserVar).
	SetUserVar(name string, v types.Value)
	UnsetUserVar(name string)
	// OpenServerFile opens LOAD DATA INFILE's file on the server, inside secure_file_priv.
	OpenServerFile(path string) (io.ReadCloser, error)
}
