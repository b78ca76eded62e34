package proto

import (
	"context"
	"time"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// Handler is the server behind the protocol: internal/server implements it and internal/mysql
// consumes it, so neither imports the other (cmd/kiln hands the one to the other).
type Handler interface {
	// LookupAccount returns the account a login of user from host (the client's IP address)
	// matches, in MySQL's order; ok=false denies access (1045). The protocol layer verifies the
	// client's token against the account's stored hash (internal/mysql/handshake.go).
	LookupAccount(user, host string) (acct Account, ok bool)
	// OpenSession creates the session of an authenticated connection. An error (e.g. 1040 too
	// many connections, 1049 unknown database) is sent to the client and the connection closed.
	OpenSession(ctx context.Context, info ConnInfo) (Session, error)
}

// Session is one client connection's state, driven by one goroutine at a time (the connection's).
// ctx passed to each call is cancelled when the connection closes, and also, for the calls of a
// command (Query, Prepare, Execute, UseDB, ResetConnection), when the client goes away while the
// call runs (its context.Cause then says so); KILL is the session's business.
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

// MultiStatementsSetter may be implemented by a Session that wants to know when the client turns
// multi-statements on or off with COM_SET_OPTION after the handshake (the handshake's setting is
// in ConnInfo.Capabilities). With it off, a Query text holding several statements is a syntax
// error, as in MySQL.
type MultiStatementsSetter interface {
	SetMultiStatements(on bool)
}
