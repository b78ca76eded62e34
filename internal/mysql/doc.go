// Package mysql owns the server side of the MySQL client/server protocol: packet framing with size
// limits, the v10 handshake and authentication (mysql_native_password, caching_sha2_password with
// its server-side cache and RSA key retrieval, verified against the account's stored hash from
// Handler.LookupAccount: the protocol never sees a stored password), command dispatch, text and
// binary result sets, and prepared statements. It knows nothing about SQL: every statement goes to
// the proto.Handler/proto.Session that internal/server implements (internal/proto/handler.go is the
// contract); it imports neither internal/server nor internal/sql.
//
// Invariants:
//   - A client payload larger than Config.MaxAllowedPacket is never buffered: its remainder is
//     discarded (bounded in time), the client gets ERR 1153 and the connection is closed. Before
//     authentication the bound is much smaller (maxHandshakeBytes).
//   - Every byte a client sends is bounds-checked before use; malformed input gets an ERR packet,
//     never a panic. Packets must arrive with the expected sequence id.
//   - The server writes whole packets into a buffered writer and flushes once per command, so a
//     response costs one write system call unless it is larger than the buffer.
//   - A Session is driven by one goroutine (its connection's). A panic in a session call is
//     recovered, logged and answered with ERR 1105; the connection survives whenever the client
//     can still be sent a well-formed reply.
//   - A session call made for a command gets a context that is cancelled when the connection
//     closes or, once the command has run for a few milliseconds, as soon as the client closes its
//     end (watch.go): the socket is watched without consuming bytes, so a pipelined next command
//     is never lost.
//   - The ResultWriter a statement gets can ask the client for a file (LOAD DATA LOCAL INFILE:
//     OpenLocalFile, localinfile.go). The transfer is always read to its end before the statement's
//     reply, whatever the session does, so the connection stays in sync.
//   - Protocol state the client relies on (prepared statement parameter types, long data, the
//     multi-statements option) lives here; everything else is session state and lives behind
//     Session.
package mysql
