// Package dml runs the statements that change rows: INSERT and REPLACE (VALUES lists and
// INSERT ... SELECT, IGNORE, ON DUPLICATE KEY UPDATE, auto-increment allocation), single-table
// UPDATE and DELETE, and LOAD DATA's field reader and row loop (issue 14's sql-stmt layer).
//
// Its duties, for one statement:
//  1. Resolve the target table (TableRef, LookupTable): the database's metadata lock and the
//     table's use are taken through the planner's context, as a SELECT takes them.
//  2. Plan the row source through sql/plan: the SELECT of INSERT ... SELECT, or the locking
//     current read of UPDATE/DELETE (TargetPlan), and compile SET and ON DUPLICATE KEY UPDATE
//     expressions with the planner's compiler.
//  3. Build each new row (Inserter): given values, column defaults, auto-increment values from
//     the session's counters, each converted to its column's type under sql_mode (strict: an
//     error; otherwise a warning and MySQL's implicit default).
//  4. Write it with sql/exec's row primitives (PutRow, UpdateRow, DeleteRow, FindDuplicate), which
//     enforce keys, foreign keys and CHECK constraints, resolving a duplicate key as REPLACE,
//     IGNORE or ON DUPLICATE KEY UPDATE say.
//  5. Count what happened for the OK packet (affected rows, CLIENT_FOUND_ROWS, the Info line,
//     LAST_INSERT_ID).
//
// LOAD DATA (LoadData) takes steps 1, 3, 4 and 5 with its rows read from a file as a stream
// (fieldReader, a port of MySQL's READ_INFO): the client's through LocalFile, or a server file
// the session opens inside secure_file_priv.
//
// What it needs of the session comes through the consumer-side Session interface (session.go),
// which the facade implements. It must not import internal/sql, take the statement scope, commit
// or roll back, check privileges, decide whether LOCAL INFILE is allowed, or hold the
// auto-increment counters (they are the DB's, reached through Session): the facade keeps
// dispatch, privilege checks and statement/transaction control.
package dml
