package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/ddl"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/txn"
)

// runDDL commits any open transaction (DDL causes an implicit commit, as in MySQL), takes the
// metadata lock exclusively, and applies the change through one transaction: catalog keys and data
// changes (index builds, range deletions) commit together or not at all. The change itself is
// sql/ddl's (ddl.Stmt); the facade keeps what orders it against other sessions: the implicit
// commit, the table locks, the metadata locks and the DDL mutex, the catalog copy and its swap
// after the commit, and the AUTO_INCREMENT counters' reset. Under kiln_commit_ack = applied the OK
// waits as a COMMIT's does (commitack.go), after every lock is released.
func (s *Session) runDDL(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) error {
	if err := s.commit(env.Ctx); err != nil {
		return err
	}
	pos, affected, err := s.applyDDL(env, st)
	if err != nil {
		return err
	}
	// The wait is outside the metadata locks and the DDL mutex: the change is committed and visible
	// here, so other sessions' statements need not queue behind the followers' apply.
	if err := s.ackApplied(env.Ctx, pos); err != nil {
		return err
	}
	return w.OK(proto.OK{AffectedRows: affected, Warnings: s.warningCount()}, more)
}

// applyDDL is runDDL under the locks: it returns the commit's log index (0 when the statement
// changed nothing) and the affected-rows count for the OK.
func (s *Session) applyDDL(env *expr.Env, st ast.StmtNode) (pos uint64, affected uint64, err error) {
	return s.applyDDLThen(env, st, nil)
}

// ddlThen runs after a DDL's change, in its transaction and under its locks, with the changed
// catalog copy (next) and the databases locked: CREATE TABLE ... SELECT's rows (ctas.go). Its
// count replaces the statement's affected rows.
type ddlThen func(denv *expr.Env, next *catalog.Catalog, locked []string) (affected uint64, err error)

// applyDDLThen is applyDDL with then (if not nil) run before the commit: an error rolls the whole
// statement back.
func (s *Session) applyDDLThen(env *expr.Env, st ast.StmtNode, then ddlThen) (pos uint64, affected uint64, err error) {
	db := s.db
	if err := s.ddlTableLocks(st); err != nil {
		return 0, 0, err
	}
	// Exclusive metadata locks on every database the statement touches, in name order (no
	// deadlock between two DDLs), then the catalog writer lock.
	names := ddl.Databases(st, s.CurDB)
	if s.tlocks != nil {
		// A session waiting on this one's table locks may hold one of these (tablelocks.go).
		db.tableLocks.waitingForDDL(s, names)
	}
	for _, n := range names {
		m := db.mdlFor(n)
		if err := m.lock(env.Ctx, s.metadataLockTimeout()); err != nil {
			if s.tlocks != nil {
				db.tableLocks.waitingForDDL(s, nil)
			}
			return 0, 0, err
		}
		defer m.unlock()
	}
	if s.tlocks != nil {
		db.tableLocks.waitingForDDL(s, nil)
	}
	db.ddlMu.Lock()
	defer db.ddlMu.Unlock()
	cur := db.Catalog()
	next := cur.Copy()
	t := db.txm.Begin(txn.RepeatableRead, false)
	// The statement's one memory account (env.Tracker) is closed by its caller.
	denv := &expr.Env{Sess: s, Ctx: env.Ctx, Txn: t, Mem: env.Tracker()}
	stmt := ddl.New(s.ddlSess(), denv, next, t, names)
	if err := stmt.Run(st); err != nil {
		t.Rollback()
		return 0, 0, err
	}
	if stmt.Noop() {
		t.Rollback()
		return 0, 0, nil
	}
	affected = stmt.Affected()
	if then != nil {
		if affected, err = then(denv, next, names); err != nil {
			t.Rollback()
			return 0, 0, err
		}
	}
	if err := stmt.LogBuilds(); err != nil {
		t.Rollback()
		return 0, 0, err
	}
	catalog.SaveNextTableID(t, next.NextTableID())
	pos, err = t.Commit(env.Ctx)
	if err != nil {
		return 0, 0, commitError(err)
	}
	s.lastPos = pos
	db.cat.Store(next)
	for _, id := range stmt.ResetAutoInc() {
		db.resetAutoInc(id)
	}
	return pos, affected, nil
}

// orDefault is s, or def when s is empty (a table name's database, or the current one).
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
