package mysql

import (
	"context"
	"time"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// Column describes one result-set column (a ColumnDefinition41 packet).
type Column struct {
	Schema   string
	Table    string // alias
	OrgTable string
	Name     string // alias
	OrgName  string
	Type     byte   // MySQL type code (parser/mysql.TypeXxx)
	Flags    uint16 // NOT_NULL, PRI_KEY, UNSIGNED, BINARY, ... (parser/mysql.XxxFlag)
	Length   uint32
	Decimals byte
	Charset  uint16 // collation id: 63 binary, 255 utf8mb4_0900_ai_ci, 46 utf8mb4_bin, ...
}

// OK is the outcome of a statement that returns no rows.
type OK struct {
	AffectedRows uint64
	LastInsertID uint64
	Warnings     uint16
	Info         string
	// SessionState, when set, is sent as session-state-change data (CLIENT_SESSION_TRACK) if the
	// client asked for it: the commit's log position, as DESIGN.md describes.
	SessionState []byte
}

// ResultWriter receives the results of one COM_QUERY or COM_STMT_EXECUTE. Each statement produces
// either OK, or Columns, then Rows, then EndRows. more says whether another result follows (multi
// statements), which sets SERVER_MORE_RESULTS_EXISTS.
type ResultWriter interface {
	Columns(cols []Column) error
	Row(vals []types.Value) error
	EndRows(warnings uint16, more bool) error
	OK(ok OK, more bool) error
}

// ConnInfo is what the handshake learned about a client.
type ConnInfo struct {
	ConnID       uint32
	User         string
	Host         string // the client's address, without port
	DB           string // database from the handshake, "" if none
	Capabilities uint32
	Collation    uint16 // the client's handshake collation id
	Attrs        map[string]string
}

// Handler is the server behind the protocol. internal/server implements it.
type Handler interface {
	// LookupUser returns the plaintext password of user connecting from host; ok=false denies access
	// (1045). The protocol layer does the scrambles (mysql_native_password, caching_sha2_password).
	LookupUser(user, host string) (password string, ok bool)
	// Open creates the session of an authenticated connection. An error (e.g. 1040 too many
	// connections, 1049 unknown database) is sent to the client and the connection closed.
	Open(ctx context.Context, info ConnInfo) (Session, error)
}

// StmtInfo describes a prepared statement.
type StmtInfo struct {
	ID      uint32
	Params  int      // number of placeholders
	Columns []Column // result columns, nil if none or unknown until execution
}

// Session is one client connection's state, driven by one goroutine at a time (the connection's).
// ctx passed to each call is cancelled when the connection closes; KILL is the session's business.
type Session interface {
	// Query runs a COM_QUERY; text may hold several statements when multi-statements is on.
	Query(ctx context.Context, text string, w ResultWriter) error
	// Prepare parses a COM_STMT_PREPARE.
	Prepare(ctx context.Context, text string) (StmtInfo, error)
	// Execute runs a prepared statement with its bound arguments (long data already merged).
	// Arguments arrive as Values decoded from the binary protocol: integers as KindInt/KindUint,
	// floats as KindFloat, strings as KindString (KindBytes for blobs sent as binary), NULL as Null,
	// dates/times as KindDate/KindDatetime/KindDuration, decimals as KindString (MySQL sends text).
	Execute(ctx context.Context, id uint32, args []types.Value, w ResultWriter) error
	CloseStmt(id uint32)
	// UseDB handles COM_INIT_DB.
	UseDB(ctx context.Context, db string) error
	// Status returns the status flags to put in OK/EOF packets (SERVER_STATUS_IN_TRANS,
	// SERVER_STATUS_AUTOCOMMIT, ...).
	Status() uint16
	// ResetConnection handles COM_RESET_CONNECTION.
	ResetConnection(ctx context.Context) error
	// IdleTimeout is how long the connection may wait for the next command (wait_timeout); past it
	// the connection is closed. Zero means no limit.
	IdleTimeout() time.Duration
	// Close is called once when the connection ends, for whatever reason.
	Close()
}
