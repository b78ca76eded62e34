// Package expr owns compiled expressions: the tree an expression becomes once its names are bound
// (Expr and its node types: Const, Col, Param, Arith, Bit, Cmp, Logic, Not, Neg, IsNull, IsTruth,
// In, Between, Like, Func, Closure, Case, Row, RowCmp, Collate, OuterCol, Subquery), the state one
// statement evaluates them in (Env), the cast, coercion, JSON, regular expression, interval and time
// helpers they call, and ONE builtin registry: every SQL function is an entry {name, arity, result
// type rule, constructor from compiled arguments} (registry.go).
//
// Evaluating an expression, as numbered duties:
//  1. The binder (the facade's compiler, the future sql/plan) resolves names against its scope and
//     builds the tree from the exported node types and constructors. A function call becomes an
//     expr.Call (compiled arguments, plus the parser's time unit, TRIM direction or GET_FORMAT
//     selector, and the connection collation) and BindBuiltin looks the name up: 1305 when it is
//     unknown, 1582 ("Incorrect parameter count in the call to native function '%s'", the name as
//     written) when the count is not the entry's, else the entry's constructor builds the node.
//     The facade registers the functions whose state is the server's (GET_LOCK & co.,
//     WAIT_FOR_EXECUTED_GTID_SET) with Register from its init; the builtins library
//     (internal/sql/builtins) supplies every name no entry here defines.
//  2. The executor makes one Env per statement: its Session (the consumer-side interface of what
//     expressions read and write of the session: warnings, system and user variables, sql_mode,
//     time zone, LAST_INSERT_ID, FOUND_ROWS, ROW_COUNT, connection id, current database and user),
//     the bound parameters, the context that cancels it, and the fields the executor keeps per
//     statement (Txn overriding the session's transaction, FKDepth, DivZeroErr, the memory tracker).
//  3. Eval(env, row) computes a node's value over one row of its scope. It allocates nothing per
//     row that the node did not allocate before the move; Env's methods are field reads, interface
//     calls on Session, or counters (CheckKilled checks the context every 64 rows, SortTick every
//     1024 comparisons).
//  4. A subquery node runs its plan through Subplan (the planner's plan implements it): once per
//     statement when it is not correlated (the rows are cached in the Env), once per outer row when
//     it is, with that row pushed on the Env's stack of outer rows that OuterCol reads.
//  5. Errors are MySQL's: a bad value is a warning and the best value (CAST, STR_TO_DATE), a
//     string result past max_allowed_packet is NULL with warning 1301 (ResultTooLarge), division
//     by zero is warning 1365 or, under strict ERROR_FOR_DIVISION_BY_ZERO writes, the error.
//
// What expr must not do: bind AST nodes or resolve names (it never imports the parser's ast
// package; the binder hands it compiled arguments); plan or execute (it does not import the
// planner or the executor: Subplan is the seam); write the catalog or take metadata or row locks;
// touch the engine other than through the reads a Subplan's runner makes in the statement's
// transaction. It imports down only: sysvar, builtins, types, txn (Env's transaction field), memory,
// sqlerr, and of the parser only its type and operator constants (parser/mysql, parser/opcode).
package expr
