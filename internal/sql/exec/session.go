package exec

import (
	"time"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Session is what the executor needs of the session beyond what expressions read
// (expr.Session): the session's transaction and its lock wait, its catalog, and the binder of
// CHECK constraints. Every Env the executor runs in
// holds one as its Sess; the facade's *Session implements it.
type Session interface {
	expr.Session
	// Txn is the session's current transaction.
	Txn() *txn.Txn
	// LockWaitTimeout is innodb_lock_wait_timeout.
	LockWaitTimeout() time.Duration
	// Catalog is the catalog the statement runs against (foreign keys find their tables in it).
	Catalog() *catalog.Catalog
	// CompileCheck binds a CHECK constraint's expression over t's row (the binder is the
	// planner's; the executor caches the result in t.CheckCache).
	CompileCheck(t *catalog.Table, ck *catalog.CheckConstraint) (expr.Expr, error)
}

// TxnOf is the statement's transaction: Env's own (DDL runs in one) or the session's.
func TxnOf(env *expr.Env) *txn.Txn {
	if env.Txn != nil {
		return env.Txn
	}
	return env.Sess.(Session).Txn()
}

// LockRow takes a row lock for the statement's transaction, waiting innodb_lock_wait_timeout.
func LockRow(env *expr.Env, key []byte, mode txn.LockMode) error {
	return lockRow(env, key, mode, env.Sess.(Session).LockWaitTimeout())
}

// lockRow is LockRow waiting at most wait: a scan that locks every row it reads looks the timeout
// up once (reading the variable was 7% of a full-scan UPDATE's CPU).
func lockRow(env *expr.Env, key []byte, mode txn.LockMode, wait time.Duration) error {
	t := TxnOf(env)
	if t.ReadOnly && mode == txn.LockExclusive {
		return sqlerr.New(sqlerr.ErrReadOnlyTrans, "Cannot execute statement in a READ ONLY transaction.")
	}
	err := t.Lock(env.Ctx, key, mode, wait)
	if err != nil && env.Ctx.Err() != nil && !sqlerr.Is(err, sqlerr.ErrLockDeadlock) && !sqlerr.Is(err, sqlerr.ErrLockWaitTimeout) {
		return env.Interrupted()
	}
	return err
}
