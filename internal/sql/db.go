// Package sql owns Kiln's SQL layer (the schema definitions and the catalog live in sql/catalog): the
// planner and executor over the TiDB parser's AST, DML and DDL with MySQL semantics, sessions
// (variables, transactions, prepared statements), accounts and the virtual schemas. It reads and writes
// rows through internal/txn and never touches storage directly. The statement runners sit below it
// (issue 14): sql/ddl makes a DDL statement's change, while runDDL (ddl.go) keeps its orchestration
// (implicit commit, table and metadata locks, the catalog copy, the commit and the swap); sql/dml
// runs DML and sql/infoschema answers SHOW and the virtual tables, each through its own
// consumer-side Session interface that this package implements.
//
// Invariants:
//   - The catalog changes only through a committed transaction (DDL writes catalog keys in the same
//     write set as its data changes); the in-memory Catalog is replaced, never mutated, after commit.
//   - DML statements hold the metadata lock (shared) for their transaction's lifetime; DDL takes it
//     exclusively, so no transaction writes rows of a table whose definition changed under it.
//   - Every row write goes with its index entries in the same write set, under the row's lock.
package sql

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/txn"
)

// Config holds server-wide settings the SQL layer needs.
type Config struct {
	Version         string        // server version string, e.g. 8.0.40-kiln-0.1.0
	LockWaitTimeout time.Duration // innodb_lock_wait_timeout default
	MaxConnections  int
	// Durability is kiln_durability's global default: "sync" (or empty) or "async".
	Durability string
	// BeforeImages is kiln_log_before_images' initial value.
	BeforeImages bool
	// EarlyLockRelease is kiln_early_lock_release's initial value (txn's early lock release; the
	// server turns it on unless --early-lock-release=false).
	EarlyLockRelease bool
	// SecureFilePriv is secure_file_priv: the directory SELECT ... INTO OUTFILE and LOAD DATA INFILE
	// may use; empty means NULL (no server-side files).
	SecureFilePriv string
	// SSLCert, SSLKey and SSLCA are the certificate files MySQL clients are served TLS with
	// (ssl_cert, ssl_key, ssl_ca; SSLCert "" means no TLS: have_ssl = DISABLED), and
	// RequireSecureTransport require_secure_transport's initial value.
	SSLCert, SSLKey, SSLCA string
	RequireSecureTransport bool
	// Cluster, if set, says whether this node takes writes and when its catalog must be reloaded.
	Cluster Cluster
	// LogPosition, if set, is the node's log position as GTIDs show it (gtidread.go: @@gtid_executed,
	// session_track_gtids, WAIT_FOR_EXECUTED_GTID_SET); nil: no GTIDs are executed.
	LogPosition LogPosition
	// Memory is the server-wide memory account every statement's tracker reserves from (nil: no
	// server-wide limit; kiln_mem_quota_query still bounds each statement).
	Memory *memory.Account

	// What the SQL layer asks of the server around it (internal/server sets them; each may be nil,
	// and the statements that need one then behave as on a server without connections).

	// Processes lists the server's connections: SHOW PROCESSLIST, and KILL's check of whose
	// connection an id is.
	Processes func() []ProcessInfo
	// Kill ends a connection (query=false) or its running statement (KILL QUERY).
	Kill func(id uint32, query bool) error
	// FlushAuthCache forgets caching_sha2_password's cached digest of an account (of every
	// account for "", ""): FLUSH PRIVILEGES, ALTER USER, SET PASSWORD, RENAME and DROP USER.
	FlushAuthCache func(user, host string)
	// Status returns the server's own status variables (connections, uptime, ...).
	Status func() map[string]string
	// ClusterMembers lists the cluster's members for the status tables.
	ClusterMembers func() []ClusterMember
}

// ProcessInfo is one row of SHOW PROCESSLIST (infoschema builds the rows from it).
type ProcessInfo = infoschema.Process

// DB is one server's SQL state over its storage.
type DB struct {
	cfg   Config
	txm   *txn.Manager
	cat   atomic.Pointer[catalog.Catalog]
	mdlMu sync.Mutex
	mdls  map[string]*mdLock // metadata locks per database (lower-case name)
	ddlMu sync.Mutex

	autoMu  sync.Mutex
	autoInc map[autoKey]*autoIncState

	gen      atomic.Pointer[Generation] // the Cluster generation the catalog was loaded at
	reloadMu sync.Mutex

	globals    *globalVars
	userLocks  userLockTable // GET_LOCK and friends
	tableLocks tableLocks    // LOCK TABLES, FLUSH TABLES WITH READ LOCK

	planCacheHits, planCacheMisses atomic.Uint64 // text statements run on a cached plan, or learned (plancache.go)
}

// PlanCacheStats reports the text statements that ran on a cached parse and plan, and those
// eligible for the cache that were not in it (Kiln_plan_cache_hits and _misses).
func (db *DB) PlanCacheStats() (hits, misses uint64) {
	return db.planCacheHits.Load(), db.planCacheMisses.Load()
}

type autoKey struct {
	table uint64
	col   uint32
}

type autoIncState struct {
	mu     sync.Mutex
	next   uint64
	loaded bool
}

// Open loads the catalog from storage, initialising a fresh store.
func Open(ctx context.Context, txm *txn.Manager, cfg Config) (*DB, error) {
	if cfg.LockWaitTimeout == 0 {
		cfg.LockWaitTimeout = 50 * time.Second
	}
	db := &DB{cfg: cfg, txm: txm, autoInc: map[autoKey]*autoIncState{}, globals: newGlobalVars(cfg)}
	txm.SetEarlyRelease(cfg.EarlyLockRelease)
	eng := txm.Engine()
	v, ok, err := eng.Get(rowenc.FormatVersionKey())
	if err != nil {
		return nil, err
	}
	if !ok && cfg.Cluster != nil {
		// A replica of a new cluster: the leader initialises the catalog, and it arrives through the
		// log. Wait for it (or for this node to lead).
		for !ok {
			if w, _ := cfg.Cluster.Writable(); w {
				break
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the catalog from the leader: %w", ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
			if v, ok, err = eng.Get(rowenc.FormatVersionKey()); err != nil {
				return nil, err
			}
		}
	}
	if !ok {
		// Fresh data directory: record the format version through the commit path.
		t := txm.Begin(txn.RepeatableRead, false)
		t.Set(rowenc.FormatVersionKey(), binary.BigEndian.AppendUint32(nil, rowenc.FormatVersion))
		catalog.SaveNextTableID(t, 100)
		if err := catalog.SaveDB(t, &catalog.Database{Name: "test", Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}); err != nil {
			return nil, err
		}
		// root@localhost without password, every privilege WITH GRANT OPTION (catalog/accounts.go).
		l := catalog.NewAccounts()
		l.Put(catalog.BootstrapRoot())
		if err := l.WriteInit(t); err != nil {
			return nil, err
		}
		if _, err := t.Commit(ctx); err != nil {
			return nil, fmt.Errorf("initialise catalog: %w", err)
		}
	} else if len(v) != 4 || binary.BigEndian.Uint32(v) != rowenc.FormatVersion {
		return nil, fmt.Errorf("data directory has on-disk format version %x, this build reads version %d: refusing to start", v, rowenc.FormatVersion)
	}
	cat, err := loadCatalog(txm)
	if err != nil {
		return nil, err
	}
	if !cat.Accounts.Initialised() && (cfg.Cluster == nil || writable(cfg.Cluster)) {
		// A data directory from before accounts existed: write the implied root@localhost, so every
		// node of the cluster (through the log) and every later start see it as stored.
		t := txm.Begin(txn.RepeatableRead, false)
		l := cat.Accounts.Copy()
		if err := l.WriteInit(t); err != nil {
			t.Rollback()
			return nil, err
		}
		if _, err := t.Commit(ctx); err != nil {
			return nil, fmt.Errorf("initialise accounts: %w", err)
		}
		cat.Accounts = l
	}
	db.cat.Store(cat)
	if cfg.Cluster != nil {
		g := cfg.Cluster.Generation()
		db.gen.Store(&g)
	}
	return db, nil
}

func writable(c Cluster) bool {
	ok, _ := c.Writable()
	return ok
}

func loadCatalog(txm *txn.Manager) (*catalog.Catalog, error) {
	eng := txm.Engine()
	scan := func(lo, hi []byte, fn func(k, v []byte) error) error {
		it, err := eng.NewIter(lo, hi)
		if err != nil {
			return err
		}
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			if err := fn(it.Key(), it.Value()); err != nil {
				return err
			}
		}
		return it.Error()
	}
	return catalog.Load(eng.Get, scan)
}

// Catalog returns the current catalog.
func (db *DB) Catalog() *catalog.Catalog { return db.cat.Load() }

// SetLockManagerDeadlockDetect is the innodb_deadlock_detect switch.
func (db *DB) setDeadlockDetect(on bool) { db.txm.Locks.SetDeadlockDetect(on) }

// nextAutoInc allocates n consecutive auto-increment values for a table.
func (db *DB) nextAutoInc(env *expr.Env, tbl *catalog.Table, col *catalog.Column, n uint64) (uint64, error) {
	st := db.autoIncFor(tbl.ID, col.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.load(env, tbl, col); err != nil {
		return 0, err
	}
	v := st.next
	st.next += n
	st.persist(env, tbl, col)
	return v, nil
}

// load initializes the counter: past the largest value stored, past the persisted counter (so a
// restart does not reuse values of deleted rows, as MySQL 8 persists it) and at least the table's
// AUTO_INCREMENT option.
func (st *autoIncState) load(env *expr.Env, tbl *catalog.Table, col *catalog.Column) error {
	if st.loaded {
		return nil
	}
	mx, err := maxAutoInc(env, tbl, col)
	if err != nil {
		return err
	}
	st.next = max(mx+1, 1)
	if !col.Hidden {
		st.next = max(st.next, tbl.AutoIncBase)
		v, ok, err := exec.TxnOf(env).GetLatest(rowenc.AutoIncKey(tbl.ID, col.ID))
		if err != nil {
			return err
		}
		if ok && len(v) == 8 {
			st.next = max(st.next, binary.BigEndian.Uint64(v)+1)
		}
	}
	st.loaded = true
	return nil
}

// persist writes the highest value handed out into the statement's transaction, so that it is
// logged and survives a restart with the rows (the hidden row id of tables without a primary key
// needs no persisting: nobody sees it).
func (st *autoIncState) persist(env *expr.Env, tbl *catalog.Table, col *catalog.Column) {
	if col.Hidden || st.next == 0 {
		return
	}
	exec.TxnOf(env).Set(rowenc.AutoIncKey(tbl.ID, col.ID), binary.BigEndian.AppendUint64(nil, st.next-1))
}

// observeAutoInc moves the counter past an explicitly inserted value.
func (db *DB) observeAutoInc(env *expr.Env, tbl *catalog.Table, col *catalog.Column, v uint64) error {
	st := db.autoIncFor(tbl.ID, col.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.load(env, tbl, col); err != nil {
		return err
	}
	if v >= st.next {
		st.next = v + 1
		st.persist(env, tbl, col)
	}
	return nil
}

func (db *DB) autoIncFor(id uint64, col uint32) *autoIncState {
	db.autoMu.Lock()
	defer db.autoMu.Unlock()
	k := autoKey{id, col}
	st, ok := db.autoInc[k]
	if !ok {
		st = &autoIncState{}
		db.autoInc[k] = st
	}
	return st
}

// resetAutoInc forgets a table's counters (TRUNCATE, DROP, ALTER ... AUTO_INCREMENT).
func (db *DB) resetAutoInc(id uint64) {
	db.autoMu.Lock()
	for k := range db.autoInc {
		if k.table == id {
			delete(db.autoInc, k)
		}
	}
	db.autoMu.Unlock()
}

// maxAutoInc finds the largest value of the auto-increment column in the latest committed state, from
// the last entry of an index that starts with it (MySQL requires one).
func maxAutoInc(env *expr.Env, tbl *catalog.Table, col *catalog.Column) (uint64, error) {
	for _, ix := range tbl.Indexes {
		if len(ix.Offsets) == 0 || ix.Offsets[0] != col.Offset {
			continue
		}
		lo, hi := rowenc.IndexSpan(tbl.ID, ix.ID)
		var eng txn.Reader = sessionOf(env).db.txm.Engine()
		if s := sessionOf(env); catalog.IsTempID(tbl.ID) && s.temp != nil {
			eng = s.temp.local.Reader() // a temporary table's rows (temptable.go)
		}
		it, err := eng.NewIter(lo, hi)
		if err != nil {
			return 0, err
		}
		defer it.Close()
		if !it.Last() {
			return 0, it.Error()
		}
		k := it.Key()[len(lo):]
		v, _, err := rowenc.DecodeKey(k, &col.Type)
		if err != nil {
			return 0, fmt.Errorf("auto-increment of %s: %w", tbl.Name, err)
		}
		if v.IsNull() {
			return 0, nil
		}
		if v.K == types.KindInt && v.I < 0 {
			return 0, nil
		}
		if v.K == types.KindFloat {
			return uint64(v.F), nil
		}
		return expr.ToUint64(v), nil
	}
	return 0, nil
}
