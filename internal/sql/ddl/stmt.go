package ddl

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Stmt is one DDL statement's change in progress: the catalog copy it edits, the transaction its
// catalog keys and data changes go into, and what the facade needs to know once it has run (Noop,
// Affected, ResetAutoInc, the index builds LogBuilds logs).
type Stmt struct {
	s         Session
	pc        plan.Context // s.Plan(), read once
	env       *expr.Env
	cat       *catalog.Catalog
	t         *txn.Txn
	noop      bool
	resetAuto []uint64
	pending   []string            // index names taken in this statement
	builds    map[uint64][]uint32 // table id -> indexes whose entries the record builds (LogBuilds)
	rw        rewriter            // tables whose rows an ALTER converts (alter_column.go)
	locked    []string            // databases whose metadata locks the statement holds exclusively
	// affected is the statement's affected-row count, as MySQL reports it for DDL: 1 for CREATE
	// DATABASE, the tables and views removed for DROP DATABASE, 0 otherwise.
	affected uint64
}

// New starts a DDL statement against cat (a Copy of the published catalog, which the facade
// publishes once t commits) in transaction t, with env the statement's evaluation state (its Txn is
// t). locked are the databases whose metadata locks the facade holds exclusively (Databases).
func New(s Session, env *expr.Env, cat *catalog.Catalog, t *txn.Txn, locked []string) *Stmt {
	return &Stmt{s: s, pc: s.Plan(), env: env, cat: cat, t: t, locked: locked}
}

// Run makes the change st asks for in the catalog copy and the transaction. A statement it does not
// know (ALTER DATABASE) changes nothing. On an error the facade rolls the transaction back.
func (d *Stmt) Run(st ast.StmtNode) error {
	switch x := st.(type) {
	case *ast.CreateDatabaseStmt:
		return d.createDatabase(x)
	case *ast.DropDatabaseStmt:
		return d.dropDatabase(x)
	case *ast.CreateTableStmt:
		return d.createTable(x)
	case *ast.DropTableStmt:
		return d.dropTables(x)
	case *ast.TruncateTableStmt:
		return d.truncate(x)
	case *ast.RenameTableStmt:
		return d.rename(x)
	case *ast.CreateIndexStmt:
		return d.createIndex(x)
	case *ast.DropIndexStmt:
		return d.dropIndex(x)
	case *ast.AlterTableStmt:
		return d.alterTable(x)
	case *ast.CreateViewStmt:
		return d.createView(x)
	}
	return nil
}

// Noop reports a statement that changed nothing (IF [NOT] EXISTS found its answer): the facade
// rolls the transaction back and reports OK with the statement's notes.
func (d *Stmt) Noop() bool { return d.noop }

// Affected is the statement's affected-row count for the OK packet.
func (d *Stmt) Affected() uint64 { return d.affected }

// ResetAutoInc lists the tables whose AUTO_INCREMENT counters the facade must forget once the
// statement commits (dropped, truncated, or given a new AUTO_INCREMENT base).
func (d *Stmt) ResetAutoInc() []uint64 { return d.resetAuto }

// curDB is the session's current database.
func (d *Stmt) curDB() string { return d.pc.CurrentDB() }

func (d *Stmt) dbName(n string) (string, error) {
	if n == "" {
		n = d.curDB()
		if n == "" {
			return "", sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
	}
	db, ok := d.cat.DB(n)
	if !ok {
		return "", sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", n)
	}
	return db.Name, nil
}

// Databases lists, sorted and lower-case, the databases a DDL statement changes (cur: the
// current database, for unqualified names): the facade takes their metadata locks exclusively, in
// this order, before New.
func Databases(st ast.StmtNode, cur string) []string {
	set := map[string]bool{}
	add := func(n string) {
		if n == "" {
			n = cur
		}
		set[strings.ToLower(n)] = true
	}
	switch x := st.(type) {
	case *ast.CreateDatabaseStmt:
		add(x.Name.O)
	case *ast.DropDatabaseStmt:
		add(x.Name.O)
	case *ast.AlterDatabaseStmt:
		add(x.Name.O)
	case *ast.CreateTableStmt:
		add(x.Table.Schema.O)
		if x.ReferTable != nil {
			add(x.ReferTable.Schema.O)
		}
	case *ast.DropTableStmt:
		for _, t := range x.Tables {
			add(t.Schema.O)
		}
	case *ast.TruncateTableStmt:
		add(x.Table.Schema.O)
	case *ast.RenameTableStmt:
		for _, tt := range x.TableToTables {
			add(tt.OldTable.Schema.O)
			add(tt.NewTable.Schema.O)
		}
	case *ast.CreateIndexStmt:
		add(x.Table.Schema.O)
	case *ast.DropIndexStmt:
		add(x.Table.Schema.O)
	case *ast.AlterTableStmt:
		add(x.Table.Schema.O)
		for _, spec := range x.Specs {
			if spec.NewTable != nil {
				add(spec.NewTable.Schema.O)
			}
		}
	case *ast.CreateViewStmt:
		add(x.ViewName.Schema.O)
	}
	delete(set, "")
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
