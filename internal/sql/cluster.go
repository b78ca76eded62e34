package sql

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/ddl"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/rowenc"

	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Cluster is the SQL layer's view of the node's place in a cluster (Config.Cluster; nil: a node that
// always takes writes, as in the unit tests).
type Cluster interface {
	// Writable reports whether this node takes writes now; when it does not, primary is the
	// primary's MySQL address ("" when unknown).
	Writable() (ok bool, primary string)
	// Generation changes whenever the catalog in the engine may differ from the one in memory: a
	// record that wrote catalog keys was applied (on a replica, DDL arrives through the log), or this
	// node's leadership began (AUTO_INCREMENT counters and the catalog must start from the engine).
	Generation() Generation
	// ReadBarrier runs before each statement: on the primary it returns once this node is known to
	// still be the primary (a read lease; a deposed primary must not answer from stale state) and
	// has applied everything it knows committed (another member may have shown it already), with an
	// error if it turned out not to be; on a replica it returns at once (local reads, by design).
	ReadBarrier(ctx context.Context) error
}

// Generation is Cluster.Generation's value.
type Generation struct {
	CatalogWrites uint64 // records applied that wrote catalog keys
	Epoch         uint64 // the leadership epoch (0 while not leading)
}

// CatalogPrefix is the first byte of every catalog key: the applier counts records that write under
// it (txn.Applier.CountWrites), which is how a replica knows its catalog changed.
const CatalogPrefix = rowenc.SysPrefix

// NewApplier returns the record applier for this SQL layer's records: its logical operations, and a
// count of records that changed the catalog.
func NewApplier() *txn.Applier {
	a := txn.NewApplier(ddl.LogicalOps())
	a.CountWrites([]byte{CatalogPrefix})
	return a
}

// syncCluster runs before each statement: it reloads the catalog when the engine's may have changed
// under it (see Cluster.Generation) and, when a leadership began, forgets the AUTO_INCREMENT
// counters so they load again from the engine, which now holds every earlier leader's inserts.
func (db *DB) syncCluster() error {
	if db.cfg.Cluster == nil {
		return nil
	}
	g := db.cfg.Cluster.Generation()
	if p := db.gen.Load(); p != nil && *p == g {
		return nil
	}
	db.reloadMu.Lock()
	defer db.reloadMu.Unlock()
	if p := db.gen.Load(); p != nil && *p == g {
		return nil
	}
	cat, err := loadCatalog(db.txm)
	if err != nil {
		return err
	}
	if cur := db.cat.Load(); cur != nil {
		cat.Version = cur.Version + 1 // prepared plans of the old catalog plan again
	}
	db.cat.Store(cat)
	if p := db.gen.Load(); p == nil || p.Epoch != g.Epoch {
		db.autoMu.Lock()
		db.autoInc = map[autoKey]*autoIncState{}
		db.autoMu.Unlock()
	}
	db.gen.Store(&g)
	return nil
}

// readBarrier is Cluster.ReadBarrier for a statement; the transaction ends if it fails (it ran
// under a leadership that is over).
func (s *Session) readBarrier(ctx context.Context) error {
	if s.db.cfg.Cluster == nil {
		return nil
	}
	if err := s.db.cfg.Cluster.ReadBarrier(ctx); err != nil {
		s.rollback()
		if ctx.Err() != nil {
			// KILL QUERY or max_execution_time ended the wait.
			return (&expr.Env{Sess: s, Ctx: ctx}).Interrupted()
		}
		return err
	}
	return nil
}

// refuseWrite answers a statement that would write on a node that takes no writes: 1290, as a MySQL
// replica with read_only does, naming the primary so the client (or its proxy) can go there.
func (db *DB) refuseWrite(st ast.StmtNode) error {
	if db.cfg.Cluster == nil || !writes(st) {
		return nil
	}
	ok, primary := db.cfg.Cluster.Writable()
	if ok {
		return nil
	}
	return ReplicaWriteError(primary)
}

// ReplicaWriteError is 1290 for a write a replica refuses, as a MySQL replica with read_only
// answers, naming the primary's MySQL address ("" when none is known). The server answers commits
// that reach a node no longer leading with the same error.
func ReplicaWriteError(primary string) error {
	return sqlerr.New(sqlerr.ErrOptionPreventsStatement,
		"The MySQL server is running with the --read-only option so it cannot execute this statement (this Kiln node is a replica; %s)", PrimaryPhrase(primary))
}

// PrimaryPhrase says where the primary is, for error messages.
func PrimaryPhrase(primary string) string {
	if primary == "" {
		return "no primary is known at the moment"
	}
	return "the primary is " + primary
}

// writes reports whether a statement writes rows or the catalog.
func writes(st ast.StmtNode) bool {
	switch st.(type) {
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt, *ast.LoadDataStmt:
		return true
	case *ast.CreateUserStmt, *ast.AlterUserStmt, *ast.DropUserStmt, *ast.RenameUserStmt, *ast.SetPwdStmt,
		*ast.GrantStmt, *ast.RevokeStmt:
		return true // account changes are catalog records
	case ast.DDLNode:
		return true
	}
	return false
}

// readOnlyNow is @@read_only / @@super_read_only: ON on a node that takes no writes.
func (db *DB) readOnlyNow() bool {
	if db.cfg.Cluster == nil {
		return false
	}
	ok, _ := db.cfg.Cluster.Writable()
	return !ok
}

// ClusterMember is one row of the cluster status tables (Config.ClusterMembers, set by the server;
// infoschema builds the rows).
type ClusterMember = infoschema.ClusterMember

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
