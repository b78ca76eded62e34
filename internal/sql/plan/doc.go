// Package plan owns planning: it turns a parsed SELECT (or UNION, or a view's body) into the plan
// nodes sql/exec runs (exec.Select with its Levels, Access, Agg, SortKey; exec.Union), and binds
// AST expressions to compiled ones (expr.Expr) for every statement that has any. It owns the
// binder (Scope, Compiler: name resolution, literals, operators, subqueries, user and system
// variables, the builtin registry's calls through expr.BindBuiltin), the query-block phases, the
// access-path choice (planaccess.go), the join order, UNION / EXCEPT / INTERSECT, the
// ONLY_FULL_GROUP_BY checks (fullgroupby.go), view expansion (view.go) and the query-block nesting
// limit (MySQL's 63).
//
// Planning one query block (Planner.planSelectOrdered), as numbered steps; each reads what the
// earlier ones left in the selectBuilder and nothing survives the block but the plan:
//  1. Build levels: flatten the join tree and resolve each FROM item to a CTE in scope (cte.go:
//     planned as a derived table at each reference; WITH RECURSIVE in cte_recursive.go), a base table, a view
//     (planned as a derived table, at most MaxViewDepth deep), a virtual table (through the
//     Context's VirtualTables: information_schema, mysql.*, the cluster tables) or a derived table,
//     adding its columns to the Scope.
//  2. USING and NATURAL joins become equality ON conditions.
//  3. Place conjuncts: each ON condition at its own level (or the deepest level it reads, for inner
//     joins), each WHERE conjunct at the first level that has all its columns, or after the join
//     when it reads a LEFT-joined level.
//  4. Order joins: for three or more inner-joined tables pick an order in which each new level is
//     connected to the placed ones by a condition, and plan the block again in that order.
//  5. Aggregation: GROUP BY items and the ONLY_FULL_GROUP_BY check they define, aggregate calls;
//     then, only for a block that has window function calls, its windows (window.go).
//  6. Projection: the select list with wildcards expanded, and its ONLY_FULL_GROUP_BY check.
//  7. HAVING, which may name select-list aliases.
//  8. ORDER BY (by alias, position or expression; hidden sort columns), LIMIT/OFFSET, the
//     locking clause.
//  9. Choose each level's access path (full scan, point get, batch point get, range, multi-range,
//     ordered index scan, covering reads; FORCE/IGNORE/USE INDEX) and its filter. Last, because it
//     depends on everything above: the conditions placed at the level, the columns the query reads
//     and the ORDER BY/LIMIT an index may deliver.
//
// What plan reads of the session comes through the consumer-side Context interface (current
// database, catalog, virtual tables, sql_mode's ONLY_FULL_GROUP_BY, collation_connection, user
// variables' types, the statement's expression nesting depth, the parser for a view's body),
// which the facade's *Session implements (internal/sql/plancontext.go); plan never imports
// internal/sql.
//
// What plan must not do: read or write table rows (no engine or transaction reads: a plan is built
// from the catalog alone), write the catalog, or keep anything of a statement after its plan is
// returned (a plan is immutable and may be cached by the facade). The one session state it touches
// is the default database, switched to a view's own database while that view's body is planned
// (Context.SetCurrentDB) and restored after. Metadata locks: the planner takes none. It resolves
// names in one catalog snapshot (Uses.Cat) and records each resolution in Uses (a base table, a
// view, or a name that resolved to nothing), in resolution order; its caller takes the locks from
// that record after planning and plans again if DDL changed a resolved name in between
// (Resolve: the facade and the statement runners plan through it). A plan the facade caches keeps
// its Uses, so their locks are taken again before each run without planning again.
//
// EXPLAIN's rendering of a plan (explainRows) is still in the facade's show.go.
package plan
