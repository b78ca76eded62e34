// Package ddl runs the statements that change the schema (issue 14's sql-stmt layer): CREATE/DROP
// DATABASE, CREATE/DROP/ALTER/TRUNCATE/RENAME TABLE with column changes (alter_column.go),
// CREATE/DROP INDEX, CREATE [OR REPLACE]/DROP VIEW, the DDL side of foreign keys (fk.go) and CHECK
// constraints (check.go), and the build-indexes logical operation every node runs when it applies
// a DDL record (logical.go).
//
// Its duties, for one statement (a Stmt, which the facade starts with New once it holds the locks):
//  1. Resolve and validate names against the catalog copy the statement edits (database, table,
//     column, index and constraint names as MySQL checks them, with its error codes).
//  2. Build the new definitions: column types from the parser's (column.go), defaults evaluated
//     once, keys, foreign keys (validated against the parent, with the child index made if none
//     fits), CHECK constraints bound by the planner's compiler (CompileCheck), views planned once
//     so an unknown table or column is an error at CREATE time.
//  3. Check the existing rows where the change could fail on them, before anything is logged:
//     uniqueness of a new unique index, an added CHECK or foreign key, the values an ALTER converts
//     to a new column type (strict mode errors abort the ALTER).
//  4. Put the change into the statement's transaction: catalog keys (catalog.SaveTable and the
//     rest), range deletions for dropped tables and indexes, the rewritten rows of a column type
//     change, and one logical build-indexes operation per table whose indexes are new (LogBuilds),
//     so the log holds a small record, not one entry per row.
//  5. Tell the facade what happened: Noop (IF [NOT] EXISTS found its answer), Affected, and the
//     tables whose AUTO_INCREMENT counters to forget (ResetAutoInc).
//
// What it needs of the session comes through the consumer-side Session interface (session.go),
// which the facade implements over a defined type (internal/sql/ddlsession.go). It must not import
// internal/sql or another statement package (sql/dml, sql/infoschema), take or release metadata or
// table locks, commit or roll back the transaction, publish the catalog copy, hold the
// AUTO_INCREMENT counters, or check statement privileges: the facade's runDDL (internal/sql/ddl.go)
// keeps the implicit commit, the table and metadata locks (Databases says which), the DDL mutex,
// the catalog copy and its swap after the commit through the log, and the privilege checks (the
// one check inside a statement, CREATE VIEW's DEFINER, is asked of Session.CheckDefiner).
package ddl
