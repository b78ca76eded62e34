// Package infoschema owns the rows of Kiln's virtual tables: information_schema, SHOW output and the
// dump-compatibility tables (issue 14's sql-stmt layer). It imports the catalog and the types
// package, never internal/sql: what it needs from a session comes in as arguments.
//
// The move is in steps; this is the first:
//  1. Done: the row builders that need only the catalog and types (rows.go): COLUMNS' lengths and
//     DATA_TYPE (which JDBC's DatabaseMetaData reads), TABLE_CONSTRAINTS and KEY_COLUMN_USAGE rows of
//     foreign keys and CHECKs, VIEWS, the view rows of TABLES, SHOW INDEX (and STATISTICS), SHOW
//     CHARACTER SET and SHOW COLLATION.
//  2. Not yet: the table definitions and the planner's entry (Session.virtualTable in
//     internal/sql/show.go returns an *exec.Select whose Static function produces the rows: since
//     the exec split that type is below this layer, so the tables can move). The planner already
//     calls through a virtualTables interface (internal/sql/plan.go); the cut: its result becomes
//     columns and a row source, an infoschema type implements it and the facade wires it in, and a consumer-side Session interface here (current db, catalog snapshot, the
//     user's privilege check for filtering, process list, status, cluster members, warnings).
//  3. Not yet: SHOW (show.go, dumpcompat.go), log tables, mysql.* ACL tables and cluster tables,
//     which read session state through that interface.
package infoschema
