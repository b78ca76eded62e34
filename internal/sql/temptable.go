package sql

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/ddl"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Temporary tables (MySQL 8's CREATE TEMPORARY TABLE) are one session's, in its memory only:
//   - Definitions: Session.temp holds them; the session plans against the base catalog with them
//     added (catalog.WithTemp, built once per base catalog and set of temporary tables), where a
//     temporary table shadows a base table of the same name for every statement but is in no
//     listing (SHOW TABLES, information_schema). No catalog key is written for them.
//   - Rows: in the session's txn.Local, an in-memory store for the key span of temporary table ids
//     (catalog.TempIDBase and up, handed out server-wide so row locks never collide). Every
//     transaction the session begins reads and writes that span through it: the executor and the
//     DML runners work unchanged, ROLLBACK and statement rollback undo temporary rows as any
//     other, and a commit applies them to the store and never to the log (so they are not
//     replicated, not in backups, not recovered).
//   - DDL: CREATE TEMPORARY TABLE [LIKE | ... SELECT] and DROP TEMPORARY TABLE do not commit the
//     open transaction and are not undone by ROLLBACK (MySQL's rule); ALTER TABLE, CREATE/DROP
//     INDEX and TRUNCATE on a temporary table commit first, as MySQL's do. sql/ddl's runners make
//     the change on a copy of the session's catalog in a scratch transaction, whose writes in the
//     temporary span (and index builds) go to the store (txn.ApplyLocal) and whose catalog keys
//     are dropped.
//   - End: Session.Close (disconnect, KILL, COM_RESET_CONNECTION) closes the store: every row and
//     definition goes at once.
//   - Memory: the store reserves what it holds from the server's memory account (--memory-limit)
//     and refuses, with 3170, to hold more than kiln_mem_quota_query for the session.

// tempTables is a session's temporary tables.
type tempTables struct {
	local *txn.Local
	tabs  []*catalog.Table
	base  *catalog.Catalog // the base catalog ov was built on
	ov    *catalog.Catalog
}

var (
	// tempTableIDs counts the temporary table ids handed out (catalog.TempIDBase + n), server-wide:
	// row locks are keyed by table id, and no two live temporary tables may share one.
	tempTableIDs atomic.Uint64
	// tempCatalogVersions numbers the catalogs built by WithTemp: each gets a version no other
	// catalog has, so a plan cached against one is never taken for another's.
	tempCatalogVersions atomic.Uint64
)

// overlay is the catalog the session plans against: base with the temporary tables.
func (tt *tempTables) overlay(base *catalog.Catalog) *catalog.Catalog {
	if len(tt.tabs) == 0 {
		return base
	}
	if tt.ov == nil || tt.base != base {
		tt.base = base
		tt.ov = base.WithTemp(tt.tabs, catalog.TempIDBase|tempCatalogVersions.Add(1))
	}
	return tt.ov
}

func (tt *tempTables) set(tabs []*catalog.Table) { tt.tabs, tt.ov, tt.base = tabs, nil, nil }

// tempTable returns the session's temporary table db.name.
func (s *Session) tempTable(db, name string) (*catalog.Table, bool) {
	if s.temp == nil {
		return nil, false
	}
	for _, t := range s.temp.tabs {
		if strings.EqualFold(t.DB, db) && strings.EqualFold(t.Name, name) {
			return t, true
		}
	}
	return nil, false
}

// isTempName reports whether tn names one of the session's temporary tables.
func (s *Session) isTempName(tn *ast.TableName) bool {
	if s.temp == nil || tn == nil {
		return false
	}
	_, ok := s.tempTable(orDefault(tn.Schema.O, s.CurDB), tn.Name.O)
	return ok
}

// ensureTemp opens the session's store on its first temporary table.
func (s *Session) ensureTemp() error {
	if s.temp != nil {
		return nil
	}
	lo, _ := rowenc.TableSpan(catalog.TempIDBase)
	hi := []byte{rowenc.TablePrefix + 1}
	l, err := txn.NewLocal(lo, hi, ddl.LogicalOps())
	if err != nil {
		return err
	}
	acct := s.db.cfg.Memory
	l.Reserve = func(n int64) error {
		if q := types.ToIntLenient(s.getSysVar(sysvar.Must("kiln_mem_quota_query"), false)); q > 0 && l.Held()+n > q {
			return sqlerr.New(sqlerr.ErrCapacityExceeded,
				"Memory capacity of %d bytes for 'kiln_mem_quota_query' exceeded. The session's temporary tables need more memory than its quota; raise kiln_mem_quota_query or make them hold fewer rows", q)
		}
		if !acct.Reserve(n) {
			return acct.CapacityError()
		}
		return nil
	}
	l.Release = acct.Release
	s.temp = &tempTables{local: l}
	if s.txn != nil {
		s.txn.SetLocal(l)
	}
	return nil
}

// closeTemp drops every temporary table (the session ends).
func (s *Session) closeTemp() {
	if s.temp == nil {
		return
	}
	for _, t := range s.temp.tabs {
		s.db.resetAutoInc(t.ID)
	}
	_ = s.temp.local.Close()
	s.temp = nil
}

// tempDDL runs st if it is a temporary table's DDL (done reports whether it was).
func (s *Session) tempDDL(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) (done bool, err error) {
	switch x := st.(type) {
	case *ast.CreateTableStmt:
		switch x.TemporaryKeyword {
		case ast.TemporaryNone:
			return false, nil
		case ast.TemporaryGlobal:
			return true, notSupported("GLOBAL TEMPORARY tables")
		}
		if x.Select != nil {
			return true, s.createTempSelect(env, x, w, more)
		}
		if err := s.createTemp(env, x); err != nil {
			return true, err
		}
		return true, w.OK(proto.OK{Warnings: s.warningCount()}, more)
	case *ast.DropTableStmt:
		if x.IsView {
			return false, nil
		}
		if x.TemporaryKeyword != ast.TemporaryNone {
			return true, s.dropTemp(env, x, w, more)
		}
		if s.temp == nil {
			return false, nil
		}
		var rest []*ast.TableName
		var temps []*ast.TableName
		for _, tn := range x.Tables {
			if s.isTempName(tn) {
				temps = append(temps, tn)
			} else {
				rest = append(rest, tn)
			}
		}
		if len(temps) == 0 {
			return false, nil
		}
		// DROP TABLE without TEMPORARY commits, whatever it drops; the temporary tables go first.
		if err := s.commit(env.Ctx); err != nil {
			return true, err
		}
		s.dropTempTables(temps)
		if len(rest) == 0 {
			return true, w.OK(proto.OK{Warnings: s.warningCount()}, more)
		}
		base := *x
		base.Tables = rest
		return true, s.runDDL(env, &base, w, more)
	case *ast.TruncateTableStmt:
		if !s.isTempName(x.Table) {
			return false, nil
		}
		if err := s.commit(env.Ctx); err != nil {
			return true, err
		}
		t, _ := s.tempTable(orDefault(x.Table.Schema.O, s.CurDB), x.Table.Name.O)
		lo, hi := rowenc.TableSpan(t.ID)
		if err := s.temp.local.DeleteRange(lo, hi); err != nil {
			return true, err
		}
		s.db.resetAutoInc(t.ID)
		return true, w.OK(proto.OK{}, more)
	case *ast.CreateIndexStmt:
		if !s.isTempName(x.Table) {
			return false, nil
		}
	case *ast.DropIndexStmt:
		if !s.isTempName(x.Table) {
			return false, nil
		}
	case *ast.AlterTableStmt:
		if !s.isTempName(x.Table) {
			return false, nil
		}
	case *ast.CreateViewStmt:
		if s.temp == nil {
			return false, nil
		}
		// A view is everyone's: its SELECT may not name a temporary table (MySQL's 1352).
		v := &tempNameFinder{s: s}
		x.Select.Accept(v)
		if v.found != "" {
			return true, sqlerr.New(sqlerr.ErrViewSelectTmptable, "View's SELECT refers to a temporary table '%s'", v.found)
		}
		return false, nil
	case *ast.RenameTableStmt:
		for _, tt := range x.TableToTables {
			if s.isTempName(tt.OldTable) {
				return true, notSupported("RENAME TABLE of a temporary table (use ALTER TABLE ... RENAME)")
			}
		}
		return false, nil
	default:
		return false, nil
	}
	// ALTER TABLE, CREATE INDEX and DROP INDEX on a temporary table commit first, as in MySQL.
	if err := s.commit(env.Ctx); err != nil {
		return true, err
	}
	if _, err := s.runTempDDL(env, st, 0); err != nil {
		return true, err
	}
	return true, w.OK(proto.OK{Warnings: s.warningCount()}, more)
}

// createTemp is CREATE TEMPORARY TABLE [LIKE]: no implicit commit; a base table of the same name
// stays, shadowed.
func (s *Session) createTemp(env *expr.Env, x *ast.CreateTableStmt) error {
	db := orDefault(x.Table.Schema.O, s.CurDB)
	if db == "" {
		return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
	}
	if s.planContext().IsVirtualDB(db) {
		return sqlerr.New(sqlerr.ErrDBAccessDenied, "Access denied for user '%s'@'%%' to database '%s'", s.User, db)
	}
	if _, ok := s.tempTable(db, x.Table.Name.O); ok {
		if x.IfNotExists {
			s.AddWarning("Note", sqlerr.ErrTableExists, fmt.Sprintf("Table '%s' already exists", x.Table.Name.O))
			return nil
		}
		return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", x.Table.Name.O)
	}
	if err := s.ensureTemp(); err != nil {
		return err
	}
	// sql/ddl makes a base table of the statement; the id (in the temporary range) and the
	// store its writes go to make it temporary.
	x.TemporaryKeyword = ast.TemporaryNone
	defer func() { x.TemporaryKeyword = ast.TemporaryLocal }()
	created, err := s.runTempDDL(env, x, catalog.TempIDBase+tempTableIDs.Add(1))
	if err != nil {
		return err
	}
	if created != nil && x.ReferTable != nil {
		created.ForeignKeys = nil // CREATE TABLE ... LIKE copies no foreign key, as in MySQL
	}
	if created != nil && len(created.ForeignKeys) > 0 {
		// MySQL: foreign keys on temporary tables are refused (InnoDB's temporary tables have none).
		s.dropTempTables([]*ast.TableName{x.Table})
		return sqlerr.New(sqlerr.ErrCannotAddForeign, "Cannot add foreign key constraint")
	}
	return nil
}

// runTempDDL runs a DDL statement on the session's temporary tables: sql/ddl's runner on a copy of
// the session's catalog (for CREATE, newID is the id the new table takes, and a base table or
// view of its name is hidden from the copy so that it may be shadowed), in a scratch transaction
// whose temporary rows and index builds go to the store and whose catalog keys go nowhere. It
// returns the table a CREATE made.
func (s *Session) runTempDDL(env *expr.Env, st ast.StmtNode, newID uint64) (*catalog.Table, error) {
	if err := s.ensureTemp(); err != nil {
		return nil, err
	}
	next := s.catalog().Copy()
	var db, name string
	if newID != 0 {
		x := st.(*ast.CreateTableStmt)
		db, name = orDefault(x.Table.Schema.O, s.CurDB), x.Table.Name.O
		if t, ok := next.Table(db, name); ok && !catalog.IsTempID(t.ID) {
			next.RemoveTable(t)
		}
		if v, ok := next.View(db, name); ok {
			next.RemoveView(v)
		}
		next.SetNextTableID(newID)
	}
	t := s.db.txm.Begin(txn.RepeatableRead, false)
	t.SetLocal(s.temp.local)
	denv := &expr.Env{Sess: s, Ctx: env.Ctx, Txn: t, Mem: env.Tracker(), Params: env.Params}
	stmt := ddl.New(s.ddlSess(), denv, next, t, nil)
	if err := stmt.Run(st); err != nil {
		t.Rollback()
		return nil, err
	}
	if stmt.Noop() {
		t.Rollback()
		return nil, nil
	}
	if err := stmt.LogBuilds(); err != nil {
		t.Rollback()
		return nil, err
	}
	if err := t.ApplyLocal(); err != nil {
		return nil, err
	}
	old := s.temp.tabs
	now := next.TempTables()
	s.temp.set(now)
	for _, id := range stmt.ResetAutoInc() {
		s.db.resetAutoInc(id)
	}
	for _, o := range old {
		if _, ok := next.TableByID(o.ID); !ok {
			s.db.resetAutoInc(o.ID)
		}
	}
	if newID != 0 {
		created, _ := next.TableByID(newID)
		return created, nil
	}
	return nil, nil
}

// dropTemp is DROP TEMPORARY TABLE: only temporary tables (1051 for any other name), no commit.
func (s *Session) dropTemp(env *expr.Env, x *ast.DropTableStmt, w proto.ResultWriter, more bool) error {
	var found []*ast.TableName
	var missing []string
	for _, tn := range x.Tables {
		db := orDefault(tn.Schema.O, s.CurDB)
		if s.isTempName(tn) {
			found = append(found, tn)
			continue
		}
		if db == "" {
			return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
		missing = append(missing, db+"."+tn.Name.O)
	}
	if len(missing) > 0 && !x.IfExists {
		return sqlerr.New(sqlerr.ErrBadTable, "Unknown table '%s'", strings.Join(missing, ","))
	}
	for _, m := range missing {
		s.AddWarning("Note", sqlerr.ErrBadTable, fmt.Sprintf("Unknown table '%s'", m))
	}
	s.dropTempTables(found)
	return w.OK(proto.OK{Warnings: s.warningCount()}, more)
}

// dropTempTables removes temporary tables and their rows at once. Writes the open transaction made
// to them are dropped with them: a range deletion in its write set supersedes them, so its commit
// leaves nothing of the table behind (the ids are never used again).
func (s *Session) dropTempTables(names []*ast.TableName) {
	if s.temp == nil {
		return
	}
	drop := map[uint64]bool{}
	for _, tn := range names {
		if t, ok := s.tempTable(orDefault(tn.Schema.O, s.CurDB), tn.Name.O); ok {
			drop[t.ID] = true
		}
	}
	keep := make([]*catalog.Table, 0, len(s.temp.tabs))
	for _, t := range s.temp.tabs {
		if !drop[t.ID] {
			keep = append(keep, t)
			continue
		}
		lo, hi := rowenc.TableSpan(t.ID)
		_ = s.temp.local.DeleteRange(lo, hi) // an in-memory store: it fails only once closed
		if s.txn != nil {
			s.txn.DeleteRange(lo, hi)
		}
		s.db.resetAutoInc(t.ID)
	}
	s.temp.set(keep)
}

// createTempSelect is CREATE TEMPORARY TABLE ... SELECT: the table is made as for CREATE TABLE ...
// SELECT (ctas.go) and the rows are inserted in the session's transaction, as one statement; if
// the insert fails the table is dropped again (MySQL 8's statement is atomic).
func (s *Session) createTempSelect(env *expr.Env, x *ast.CreateTableStmt, w proto.ResultWriter, more bool) error {
	db := orDefault(x.Table.Schema.O, s.CurDB)
	if db == "" {
		return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
	}
	if _, ok := s.tempTable(db, x.Table.Name.O); ok {
		return s.tableExists(x, w, more)
	}
	create, names, err := s.ctasCreateStmt(x)
	if err != nil {
		return err
	}
	create.TemporaryKeyword = ast.TemporaryLocal
	if err := s.createTemp(env, create); err != nil {
		return err
	}
	var ok proto.OK
	err = s.stmtScope(env, func() error {
		denv := &expr.Env{Sess: s, Ctx: env.Ctx, Txn: s.txn, Mem: env.Tracker(), Params: env.Params}
		var err error
		ok, err = s.ctasRows(denv, s.catalog(), nil, x, names)
		return err
	})
	if err != nil {
		s.dropTempTables([]*ast.TableName{x.Table})
		return err
	}
	ok.Warnings = s.warningCount()
	s.rowCount = int64(ok.AffectedRows)
	return w.OK(ok, more)
}

// writesOnlyTemp reports a statement that writes only the session's temporary tables (or makes
// one), which a replica runs as MySQL's read_only server does: nothing of it reaches the log.
func (s *Session) writesOnlyTemp(st ast.StmtNode) bool {
	all := func(tns []*ast.TableName) bool {
		for _, tn := range tns {
			if !s.isTempName(tn) {
				return false
			}
		}
		return len(tns) > 0
	}
	switch x := st.(type) {
	case *ast.CreateTableStmt:
		return x.TemporaryKeyword == ast.TemporaryLocal
	case *ast.DropTableStmt:
		return !x.IsView && (x.TemporaryKeyword != ast.TemporaryNone || all(x.Tables))
	case *ast.InsertStmt:
		return all(targets(x.Table))
	case *ast.UpdateStmt:
		return all(targets(x.TableRefs))
	case *ast.DeleteStmt:
		return all(targets(x.TableRefs))
	case *ast.LoadDataStmt:
		return s.isTempName(x.Table)
	case *ast.TruncateTableStmt:
		return s.isTempName(x.Table)
	case *ast.CreateIndexStmt:
		return s.isTempName(x.Table)
	case *ast.DropIndexStmt:
		return s.isTempName(x.Table)
	case *ast.AlterTableStmt:
		return s.isTempName(x.Table)
	}
	return false
}

// tempNameFinder finds the first table name in a statement that names a temporary table of the
// session (a CTE of the same name counts too: the refusal errs on the safe side).
type tempNameFinder struct {
	s     *Session
	found string
}

func (f *tempNameFinder) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok && f.found == "" && f.s.isTempName(tn) {
		f.found = tn.Name.O
	}
	return n, f.found != ""
}

func (f *tempNameFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// checkTempUses refuses a statement that names one temporary table twice (1137), as MySQL 8 does
// (its temporary table has one handle per session). It runs on what planning resolved.
func (s *Session) checkTempUses(uses []plan.TableUse) error {
	var seen []uint64
	for _, u := range uses {
		if u.Table == nil || !catalog.IsTempID(u.Table.ID) {
			continue
		}
		for _, id := range seen {
			if id == u.Table.ID {
				return sqlerr.New(sqlerr.ErrCantReopenTable, "Can't reopen table: '%s'", u.Table.Name)
			}
		}
		seen = append(seen, u.Table.ID)
	}
	return nil
}
