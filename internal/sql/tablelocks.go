package sql

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Table locks: LOCK TABLES ... READ | WRITE and FLUSH TABLES WITH READ LOCK, enforced between the
// sessions of this node the way MySQL enforces them with metadata locks.
//
//  1. A session that holds no table locks records each table its statements read or write, for the
//     rest of its transaction (a "use", MySQL's shared metadata lock). It waits while another session
//     holds a conflicting lock: a WRITE lock conflicts with any use, a READ lock with writes, a global
//     read lock (FLUSH TABLES WITH READ LOCK) with writes to any table.
//  2. LOCK TABLES commits the session's transaction and drops its previous locks, then waits until
//     every requested lock is compatible with the other sessions' locks and uses, and takes them all
//     at once: it never holds some locks while it waits for others, so lockers cannot deadlock.
//  3. A session holding table locks may use only the tables it locked (1100) and write only those it
//     locked WRITE (1099); its own uses are covered by its locks and not recorded. A session holding
//     the global read lock cannot write (1223).
//  4. Waits end with the statement (KILL, max_execution_time, the client gone) and after
//     lock_wait_timeout (1205). A use that waits for a lock holder which itself waits for a database
//     metadata lock this session holds (the holder's DDL) is a deadlock (1213), as MySQL detects.
//  5. UNLOCK TABLES, START TRANSACTION / BEGIN and the end of the connection release the locks. Locks
//     are local to this node: as in MySQL, they are not replicated.
//
// Known simplifications: a lock names a table, not an alias (LOCK TABLES t AS a READ lets the session
// use t under any alias), and locking a view locks the tables its definition names.

type tableLocks struct {
	mu      sync.Mutex
	tables  map[string]*tableLockState // tableLockKey
	global  map[*Session]bool          // FLUSH TABLES WITH READ LOCK holders
	ddlWait map[*Session][]string      // sessions waiting for databases' exclusive metadata locks
	changed chan struct{}              // closed when a lock or use is released (waiters re-check)
}

type tableLockState struct {
	readLocks map[*Session]bool
	writeLock *Session
	uses      map[*Session]bool // true: the session's transaction writes the table
}

// tableLockReq is one table of a LOCK TABLES statement, or a table a prepared plan uses.
type tableLockReq struct {
	db, name string
	write    bool
}

func tableLockKey(db, name string) string {
	return strings.ToLower(db) + "." + strings.ToLower(name)
}

// tableKeyMemo remembers the lock keys of the last tables a session used: every statement of
// sysbench's point select would otherwise build the same string again.
type tableKeyMemo struct {
	e    [4]struct{ db, name, key string }
	next int
}

func (m *tableKeyMemo) key(db, name string) string {
	for i := range m.e {
		if e := &m.e[i]; e.key != "" && e.db == db && e.name == name {
			return e.key
		}
	}
	k := tableLockKey(db, name)
	m.e[m.next] = struct{ db, name, key string }{db, name, k}
	m.next = (m.next + 1) % len(m.e)
	return k
}

// maxIdleTableStates bounds the lock states kept for tables nobody locks or uses: they are kept
// (with their maps) so that the next statement's use allocates nothing, and dropped beyond this
// many so that tables created and dropped over time do not accumulate.
const maxIdleTableStates = 1024

func (l *tableLocks) state(key string) *tableLockState {
	if l.tables == nil {
		l.tables = map[string]*tableLockState{}
	}
	st := l.tables[key]
	if st == nil {
		st = &tableLockState{}
		l.tables[key] = st
	}
	return st
}

func (st *tableLockState) empty() bool {
	return len(st.readLocks) == 0 && st.writeLock == nil && len(st.uses) == 0
}

// wakeLocked wakes every waiter; l.mu is held.
func (l *tableLocks) wakeLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

func (l *tableLocks) waitChan() <-chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// useConflict returns a session whose lock keeps s from using the table; l.mu is held.
func (l *tableLocks) useConflict(s *Session, key string, write bool) *Session {
	if write {
		for g := range l.global {
			if g != s {
				return g
			}
		}
	}
	st := l.tables[key]
	if st == nil {
		return nil
	}
	if st.writeLock != nil && st.writeLock != s {
		return st.writeLock
	}
	if write {
		for r := range st.readLocks {
			if r != s {
				return r
			}
		}
	}
	return nil
}

// lockConflict returns a session whose lock or use keeps s from taking req; l.mu is held.
func (l *tableLocks) lockConflict(s *Session, key string, write bool) *Session {
	if c := l.useConflict(s, key, write); c != nil {
		return c
	}
	st := l.tables[key]
	if st == nil {
		return nil
	}
	for u, w := range st.uses {
		if u != s && (write || w) {
			return u
		}
	}
	if write {
		for r := range st.readLocks {
			if r != s {
				return r
			}
		}
	}
	return nil
}

// deadlocked reports that holder waits for a database metadata lock that s holds; l.mu is held.
func (l *tableLocks) deadlocked(s, holder *Session) bool {
	for _, db := range l.ddlWait[holder] {
		if s.mdl[db] {
			return true
		}
	}
	return false
}

// waitFor waits while blocked says so, re-asking it whenever a lock or use is released, until the
// statement ends or timeout passes; blocked may end the wait with an error (a deadlock). l.mu is held
// on entry and on return.
func (l *tableLocks) waitFor(ctx context.Context, timeout time.Duration, blocked func() (bool, error)) error {
	var deadline *time.Timer
	for {
		wait, err := blocked()
		if err != nil || !wait {
			return err
		}
		if deadline == nil {
			deadline = time.NewTimer(timeout)
			defer deadline.Stop()
		}
		if err := l.wait(ctx, deadline); err != nil {
			return err
		}
	}
}

// wait blocks until something is released, the statement ends or the deadline passes; l.mu is held
// on entry and on return.
func (l *tableLocks) wait(ctx context.Context, deadline *time.Timer) error {
	ch := l.waitChan()
	l.mu.Unlock()
	defer l.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return sqlerr.New(sqlerr.ErrQueryInterrupted, "Query execution was interrupted")
	case <-deadline.C:
		return sqlerr.New(sqlerr.ErrLockWaitTimeout, "Lock wait timeout exceeded; try restarting transaction")
	}
}

// use records that s's transaction reads (or writes) the table, waiting for conflicting locks.
func (l *tableLocks) use(ctx context.Context, s *Session, key string, write bool, timeout time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.waitFor(ctx, timeout, func() (bool, error) {
		holder := l.useConflict(s, key, write)
		if holder != nil && l.deadlocked(s, holder) {
			return false, sqlerr.New(sqlerr.ErrLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction")
		}
		return holder != nil, nil
	})
	if err != nil {
		return err
	}
	st := l.state(key)
	if st.uses == nil {
		st.uses = map[*Session]bool{}
	}
	st.uses[s] = st.uses[s] || write
	return nil
}

// releaseUses forgets s's uses (its transaction or statement ended).
func (l *tableLocks) releaseUses(s *Session, keys map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key := range keys {
		if st := l.tables[key]; st != nil {
			delete(st.uses, s)
			if st.empty() && len(l.tables) > maxIdleTableStates {
				delete(l.tables, key)
			}
		}
	}
	l.wakeLocked()
}

// lock takes all of reqs for s at once, waiting until none conflicts.
func (l *tableLocks) lock(ctx context.Context, s *Session, reqs map[string]bool, timeout time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.waitFor(ctx, timeout, func() (bool, error) {
		for key, write := range reqs {
			if l.lockConflict(s, key, write) != nil {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	for key, write := range reqs {
		st := l.state(key)
		if write {
			st.writeLock = s
		} else {
			if st.readLocks == nil {
				st.readLocks = map[*Session]bool{}
			}
			st.readLocks[s] = true
		}
	}
	return nil
}

// lockGlobal takes the global read lock for s once no other session writes a table.
func (l *tableLocks) lockGlobal(ctx context.Context, s *Session, timeout time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.waitFor(ctx, timeout, func() (bool, error) {
		for _, st := range l.tables {
			if st.writeLock != nil && st.writeLock != s {
				return true, nil
			}
			for u, w := range st.uses {
				if w && u != s {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if l.global == nil {
		l.global = map[*Session]bool{}
	}
	l.global[s] = true
	return nil
}

// unlock drops the table locks of s, and its global read lock if global.
func (l *tableLocks) unlock(s *Session, keys map[string]bool, global bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key := range keys {
		if st := l.tables[key]; st != nil {
			if st.writeLock == s {
				st.writeLock = nil
			}
			delete(st.readLocks, s)
			if st.empty() {
				delete(l.tables, key)
			}
		}
	}
	if global {
		delete(l.global, s)
	}
	l.wakeLocked()
}

// waitingForDDL records (dbs != nil) or clears that s waits for databases' exclusive metadata locks,
// so that uses waiting on s's table locks can see the deadlock.
func (l *tableLocks) waitingForDDL(s *Session, dbs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if dbs == nil {
		delete(l.ddlWait, s)
		return
	}
	if l.ddlWait == nil {
		l.ddlWait = map[*Session][]string{}
	}
	l.ddlWait[s] = dbs
	l.wakeLocked()
}

// holdsTableLocks reports LOCK TABLES or FLUSH TABLES WITH READ LOCK in effect for the session.
func (s *Session) holdsTableLocks() bool { return s.tlocks != nil || s.globalRead }

// useTable is called whenever a statement resolves a base table it will read or write: under
// LOCK TABLES it checks the session's own locks, otherwise it records the use and waits for other
// sessions' conflicting locks (see the comment at the top of this file).
func (s *Session) useTable(db, name string, write bool) error {
	if isVirtualDB(db) {
		return nil
	}
	if s.temp != nil {
		if _, ok := s.tempTable(db, name); ok {
			return nil // the session's own temporary table: LOCK TABLES does not cover it (MySQL)
		}
	}
	key := s.tableKeys.key(db, name)
	if s.holdsTableLocks() {
		if write && s.globalRead {
			return sqlerr.New(sqlerr.ErrCantUpdateWithReadlock, "Can't execute the query because you have a conflicting read lock")
		}
		if s.tlocks == nil {
			return nil
		}
		w, ok := s.tlocks[key]
		if !ok {
			return sqlerr.New(sqlerr.ErrTableNotLocked, "Table '%s' was not locked with LOCK TABLES", name)
		}
		if write && !w {
			return sqlerr.New(sqlerr.ErrTableNotLockedForWrite, "Table '%s' was locked with a READ lock and can't be updated", name)
		}
		return nil
	}
	if w, ok := s.tuses[key]; ok && (w || !write) {
		return nil
	}
	if err := s.db.tableLocks.use(s.stmtCtx(), s, key, write, s.metadataLockTimeout()); err != nil {
		if sqlerr.Is(err, sqlerr.ErrLockDeadlock) {
			s.rollback() // frees the metadata lock the other session waits for
		}
		return err
	}
	if s.tuses == nil {
		s.tuses = map[string]bool{}
	}
	s.tuses[key] = s.tuses[key] || write
	return nil
}

// releaseTableUses ends the uses of the session's transaction (called with its metadata locks).
func (s *Session) releaseTableUses() {
	if len(s.tuses) == 0 {
		return
	}
	s.db.tableLocks.releaseUses(s, s.tuses)
	clear(s.tuses)
}

// unlockTables releases LOCK TABLES and FLUSH TABLES WITH READ LOCK; it reports whether the
// session held any.
func (s *Session) unlockTables() bool {
	if !s.holdsTableLocks() {
		return false
	}
	s.db.tableLocks.unlock(s, s.tlocks, true)
	s.tlocks, s.globalRead = nil, false
	return true
}

// unlockTableLocks releases LOCK TABLES' locks but keeps a global read lock (START TRANSACTION).
func (s *Session) unlockTableLocks() {
	if s.tlocks == nil {
		return
	}
	s.db.tableLocks.unlock(s, s.tlocks, false)
	s.tlocks = nil
}

func (s *Session) stmtCtx() context.Context {
	if s.ctx != nil {
		return s.ctx
	}
	return context.Background()
}

func (s *Session) metadataLockTimeout() time.Duration {
	v := s.memoVal(&s.lockTimeout, svLockWaitTimeout) // every statement's table and metadata locks
	return time.Duration(types.ToIntLenient(v)) * time.Second
}

// lockTables runs LOCK TABLES: it commits, drops the session's previous locks, resolves the tables
// (a view stands for the tables its definition reads) and takes all the locks at once.
func (s *Session) lockTables(env *expr.Env, x *ast.LockTablesStmt, w proto.ResultWriter, more bool) error {
	if err := s.commit(env.Ctx); err != nil {
		return err
	}
	s.unlockTables()
	reqs := map[string]bool{}
	cat := s.catalog()
	var add func(db, name string, write bool, depth int) error
	add = func(db, name string, write bool, depth int) error {
		if db == "" {
			if db = s.CurDB; db == "" {
				return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
			}
		}
		if isVirtualDB(db) {
			return sqlerr.New(sqlerr.ErrDBAccessDenied, "Access denied for user '%s'@'%s' to database '%s'", s.User, s.Host, strings.ToLower(db))
		}
		key := tableLockKey(db, name)
		if tbl, ok := cat.Table(db, name); ok {
			key = tableLockKey(tbl.DB, tbl.Name)
		} else if v, ok := cat.View(db, name); ok && depth < plan.MaxViewDepth {
			reqs[key] = reqs[key] || write
			for _, t := range s.viewTables(v.Select) {
				if err := add(orDefault(t.Schema.O, db), t.Name.O, write, depth+1); err != nil {
					return err
				}
			}
			return nil
		} else if depth > 0 {
			return nil // a CTE's name in a view's definition, or a table dropped since
		} else {
			return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, name)
		}
		reqs[key] = reqs[key] || write
		return nil
	}
	for _, tl := range x.TableLocks {
		write := tl.Type == ast.TableLockWrite || tl.Type == ast.TableLockWriteLocal
		if err := add(tl.Table.Schema.O, tl.Table.Name.O, write, 0); err != nil {
			return err
		}
	}
	if err := s.db.tableLocks.lock(env.Ctx, s, reqs, s.metadataLockTimeout()); err != nil {
		return err
	}
	s.tlocks = reqs
	return w.OK(proto.OK{}, more)
}

// flushWithReadLock runs FLUSH TABLES WITH READ LOCK.
func (s *Session) flushWithReadLock(env *expr.Env, w proto.ResultWriter, more bool) error {
	if err := s.commit(env.Ctx); err != nil {
		return err
	}
	s.unlockTables()
	if err := s.db.tableLocks.lockGlobal(env.Ctx, s, s.metadataLockTimeout()); err != nil {
		return err
	}
	s.globalRead = true
	return w.OK(proto.OK{}, more)
}

// viewTables lists the tables a view's definition names (in any FROM, subquery or union arm).
func (s *Session) viewTables(sel string) []*ast.TableName {
	stmts, _, err := s.parser.ParseSQL(sel)
	if err != nil {
		return nil
	}
	c := &tableNameCollector{}
	for _, st := range stmts {
		st.Accept(c)
	}
	sort.Slice(c.names, func(i, j int) bool { return c.names[i].Name.L < c.names[j].Name.L })
	return c.names
}

type tableNameCollector struct{ names []*ast.TableName }

func (c *tableNameCollector) Enter(n ast.Node) (ast.Node, bool) {
	if t, ok := n.(*ast.TableName); ok {
		c.names = append(c.names, t)
	}
	return n, false
}

func (c *tableNameCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// ddlTableLocks treats every existing table a DDL statement names as written: the statement waits
// for other sessions' locks on it, and under LOCK TABLES it must be locked WRITE. Tables the
// statement creates do not exist yet and need no lock.
func (s *Session) ddlTableLocks(st ast.StmtNode) error {
	if _, ok := st.(*ast.DropDatabaseStmt); ok && s.tlocks != nil {
		return sqlerr.New(sqlerr.ErrLockedTablesOrTxn, "Can't execute the given command because you have active locked tables or an active transaction")
	}
	c := &tableNameCollector{}
	st.Accept(c)
	cat := s.catalog()
	for _, tn := range c.names {
		db := orDefault(tn.Schema.O, s.CurDB)
		if db == "" {
			continue
		}
		tbl, ok := cat.Table(db, tn.Name.O)
		if !ok {
			continue
		}
		if err := s.useTable(tbl.DB, tbl.Name, true); err != nil {
			return err
		}
	}
	return nil
}
