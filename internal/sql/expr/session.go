package expr

import (
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Session is what a compiled expression reads and writes of its session while it runs: the
// consumer-side cut of the facade's *sql.Session that Env holds, so expressions do not depend on
// the facade.
type Session interface {
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
