// Package exec owns the execution of a plan the planner built: the plan nodes it runs (Select and
// its Levels, Access with its AccessKind and OrRanges, Agg, SortKey, Union), the iterators that
// run them (access paths, nested-loop join, filter, aggregation incl. GROUP_CONCAT and the JSON
// aggregates, window functions, DISTINCT, sort, LIMIT, UNION / EXCEPT / INTERSECT), the subquery runner that
// implements expr.Subplan (Select.Materialize), the key and row encodings of a table's entries
// (PrimaryKey, SecondaryKey, EncodeRow, DecodeRow), and the row primitives every write uses
// (PutRow, UpdateRow, DeleteRow, FindDuplicate) with CHECK and foreign key enforcement.
//
// Running a plan, as numbered duties:
//  1. The planner (sql/plan) fills the nodes'
//     exported fields and never changes them afterwards: a plan is immutable and shared by every
//     execution of a cached or prepared statement. The nodes hold compiled expressions (expr.Expr)
//     only; what only the planner needs (its conjunct lists, index hints) stays with the planner.
//  2. Select.Open builds one iterator chain per execution over the statement's expr.Env: the join
//     of the levels (or a virtual table's Static rows), WHERE, aggregation and HAVING, window
//     functions (window.go: one sort per distinct window over the materialised rows), projection,
//     DISTINCT, sort, LIMIT/OFFSET (evaluated at open, so parameters bind per execution), and the
//     trim of hidden ORDER BY columns. OpenStreaming is Open for a consumer that keeps no row
//     (the session's result writer): a one-table plan that keeps none either (no sort,
//     aggregation or window) then decodes and projects every row into the same buffers; an
//     aggregation of only COUNT/SUM/AVG over one table reads its input that way under Open too
//     (foldsRows). A Union materialises its members and combines them left to
//     right, INTERSECT first. A recursive CTE (RecursiveCTE, cte.go) is the Static source of its
//     plan: the anchor, then the recursive members over the previous iteration's rows (kept in the
//     Env, read through a WorkTable) until one adds none, at most cte_max_recursion_depth times.
//  3. Each level of the join opens its Access once per outer row: the equality prefix and bounds
//     are evaluated against the row built so far (index nested loop). A level that reads nothing of
//     the earlier ones (Indep) is read and filtered once per execution and served from memory, up to
//     maxJoinCacheRows. An inner derived table, view, CTE or constant table function is
//     materialised once per execution, on its first opening (constFnRows). Either kind, given
//     equality conditions against earlier levels (Level.Keys), serves each outer row the rows
//     whose keys match, found by hash (lookupRows); the level's filter still checks them.
//  4. Reads go through the statement's transaction (TxnOf: the Env's own, else the session's);
//     a locking read (Access.Lock) takes its row lock first, also on a key that does not exist,
//     waiting innodb_lock_wait_timeout (LockRow), and then reads the latest committed version.
//  5. Every loop checks the Env for cancellation (CheckKilled every 64 rows, SortTick every 1024
//     comparisons) and counts the rows it keeps (join caches, sort buffers, DISTINCT and GROUP BY
//     state, materialised rows) against the statement's memory quota, so KILL QUERY, max_execution_time
//     and kiln_mem_quota_query stop any of them. Nothing allocates per row that did not before the
//     move out of the facade.
//  6. A row is written by PutRow: its CHECK constraints first (compiled once per table definition
//     by the session's binder, Session.CompileCheck, cached in the catalog's table), then the row
//     and each index entry that changed, then its foreign keys' parent rows (found by a current
//     read and locked shared; after the write, so a row may reference itself). FindDuplicate locks
//     every unique key a row would take, also absent ones. UpdateRow and DeleteRow act on the child
//     rows of the constraints that reference the table (RESTRICT 1451, CASCADE, SET NULL; 15 levels
//     deep at most, Env.FKDepth), locking them exclusive first. foreign_key_checks=0 turns all of
//     that off, as in MySQL.
//
// What the executor needs of the session beyond expressions comes through the consumer-side
// Session interface (its transaction and lock wait timeout, its catalog, the CHECK binder), which
// the Env's Sess implements; exec never imports internal/sql.
//
// What exec must not do: hold or read AST nodes (it does not import the parser's ast package, and
// tools/importcheck fails if it does); resolve names, bind expressions or choose access paths (the
// planner's job); write the catalog (it only reads the session's) or take metadata locks (the
// facade takes them while the planner resolves names, through plan.Context); import the facade or
// the planner. It imports down only:
// expr, catalog, rowenc, sysvar, types, txn, proto (the result columns), sqlerr.
package exec
