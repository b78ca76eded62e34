// Package infoschema owns what Kiln shows about itself: SHOW's results, the information_schema
// tables, the mysql schema's grant tables, the cluster status tables and the dump-compatibility
// tables (issue 14's sql-stmt layer).
//
// Its duties, for one statement:
//  1. Name the columns (MySQL 8's names and order) of the table or SHOW the statement reads, as a
//     Table: the columns and a row source (tables.go, show.go, privtables.go, cluster.go).
//  2. Take the catalog snapshot when the table is looked up, and compute the rows when the
//     statement runs, never when a plan is cached.
//  3. Filter the listing by the session's privileges: rows of schemas and tables the user may not
//     see, other users' threads without PROCESS, other accounts' grants (filterListing,
//     privTable, Show's SHOW DATABASES/TABLES).
//  4. Render SHOW CREATE TABLE / VIEW / DATABASE and the log tables' definitions as MySQL prints
//     them (show.go, logtables.go).
//
// What it needs of the session comes through the consumer-side Session interface (tables.go),
// which the facade's *sql.Session implements. It must not import internal/sql, plan statements
// (a view's columns come from Session.ViewAsTable), compile SHOW ... WHERE, or decide whether a
// statement may run at all: the facade keeps the dispatch (SHOW GRANTS and SHOW CREATE USER stay
// with the account code), the statement-level privilege checks, and turns a Table into a static
// *exec.Select. The row builders that need only the catalog (rows.go) are shared with those tables.
package infoschema
