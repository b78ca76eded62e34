// Package server owns a running Kiln node's sessions: it opens the data directory (format version,
// engine, commit path, catalog), authenticates users, enforces connection limits, tracks connections
// for KILL and SHOW PROCESSLIST, runs each command under a cancellable context, and exposes status
// and metrics. It implements proto.Handler and proto.Session: the wire protocol (internal/mysql)
// drives it through them and the two never import each other. The SQL layer sits below it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/sql"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// DataFormatVersion is written to DATA/FORMAT on initialisation.
const DataFormatVersion = 1

// Config configures a server.
type Config struct {
	DataDir string
	// DiskReserveBytes: commits fail with 1021 when the data directory's filesystem has less free
	// space, before anything reaches the log (kiln serve's default is 64 MiB; 0 disables the check).
	DiskReserveBytes uint64
	Version          string
	MaxConnections   int
	LockWaitTimeout  time.Duration
	// Durability is the default of kiln_durability: "sync" (default) or "async" (commits acknowledged
	// once applied; the log is fsynced every SyncInterval, default 100 ms). Sessions may override it.
	Durability   string
	SyncInterval time.Duration
	// BeforeImages makes commit records carry the rows' previous values (kiln_log_before_images).
	BeforeImages bool
	// EarlyLockRelease releases a commit's row locks once its record has its place in the log,
	// before it is durable (kiln_early_lock_release; internal/txn/pending.go).
	EarlyLockRelease bool
	// SSLCert, SSLKey and SSLCA name the certificate files clients are served TLS with ("": no TLS)
	// and RequireSecureTransport is require_secure_transport's initial value (sql.Config).
	SSLCert, SSLKey, SSLCA string
	RequireSecureTransport bool
	// SecureFilePriv is secure_file_priv: the directory for server-side files (INTO OUTFILE,
	// LOAD DATA INFILE); empty refuses them.
	SecureFilePriv string
	// LogRetainEntries and LogPurgeInterval configure log purge (repl.Config; 0 = its defaults).
	LogRetainEntries uint64
	LogPurgeInterval time.Duration
	// LogSegmentBytes is the binlog's segment size (0: klog's 64 MiB). Purge removes whole
	// segments, so tests that need a purge set it small (kiln serve's hidden --log-segment-bytes).
	LogSegmentBytes int64
	// CommitPipeline fsyncs a single node's commit groups on a goroutine of their own
	// (repl.Config.PipelineSync).
	CommitPipeline bool
	// CommitWaitCount and CommitWaitTime hold a commit group open for more commits
	// (repl.Config.CommitWaitCount/CommitWaitTime; 0: never).
	CommitWaitCount int
	CommitWaitTime  time.Duration
	// LogRetainForFollowers: the leader keeps up to this many more entries for a lagging member
	// before it sends it an engine snapshot instead (repl.Config.FollowerRetainEntries).
	LogRetainForFollowers uint64
	Logger                *slog.Logger
	// Memory is the server-wide memory account (kiln serve --memory-limit): statements' trackers
	// and connections' long data reserve from it. nil: no server-wide limit.
	Memory *memory.Account

	// Cluster membership (zero values: a cluster of one, as a plain server). NodeID is this node's
	// raft id, Peers the initial members of a new cluster (ignored once the log holds membership),
	// Transport carries raft messages (required with other members), and PrimaryAddr names a member's
	// MySQL address for the 1290 a replica answers to writes.
	NodeID        uint64
	ClusterID     string
	Peers         []repl.Peer
	Join          bool
	Transport     repl.Transport
	TickInterval  time.Duration
	ElectionTicks int
	PrimaryAddr   func(id uint64) string
	// UnsafeNoReadIndex is a test hook (kiln serve --unsafe-no-read-index, hidden): linearizable
	// reads skip raft's ReadIndex and answer from this node's applied state, which a partitioned old
	// leader or a lagging follower serves stale. test/cluster TestLinearizablePartitionCheckerBites
	// uses it to prove the linearizability check catches exactly that. Never set it otherwise.
	UnsafeNoReadIndex bool

	// ClusterUUID and ServerUUID are the GTID identities (ClusterIdentity; "" derives them for this
	// process: a cluster UUID from ClusterID, a random server UUID).
	ClusterUUID, ServerUUID string

	// PeerMySQLAddr is a member's MySQL address as its peers learned it ("" if unknown), and
	// MySQLAddr this node's own (the cluster status tables).
	PeerMySQLAddr func(id uint64) string
	MySQLAddr     string
	// OnNode, if set, is called with the raft node as soon as it runs, before the SQL layer opens
	// (which on a new cluster's replica waits for the leader's catalog: the transport must be able to
	// deliver to the node by then).
	OnNode func(*repl.Node)
	// FetchSnapshot opens a leader's engine snapshot stream (repl.Config.FetchSnapshot).
	FetchSnapshot repl.SnapshotFetcher
	// LogOnly runs a log-only voter: the log and a vote, no SQL layer, no data in the engine.
	LogOnly bool
}

// The protocol layer drives the node through these interfaces (cmd/kiln passes a *Server to
// mysql.NewServer); the node never imports internal/mysql.
var (
	_ proto.Handler = (*Server)(nil)
	_ proto.Session = (*Session)(nil)
)

// Server is an open node.
type Server struct {
	cfg     Config
	log     *slog.Logger
	eng     *engine.Engine
	lg      *klog.Log
	node    *repl.Node
	locks   *txn.LockManager
	txm     *txn.Manager
	DB      *sql.DB
	started time.Time
	running *atomic.Int64 // commands being served (Running)

	mu       sync.Mutex
	sessions map[uint32]*Session
	active   atomic.Int64

	// CloseConn closes a client connection by id (KILL CONNECTION), and FlushAuthCache forgets
	// the protocol's cached password digests of an account (all for "", ""): the protocol
	// server owns both, so cmd/kiln sets them once it has made one, before it serves.
	CloseConn      func(id uint32)
	FlushAuthCache func(user, host string)

	queries   atomic.Uint64
	commits   atomic.Uint64
	rollbacks atomic.Uint64
	errors    atomic.Uint64
	aborted   atomic.Uint64
	totalConn atomic.Uint64

	archiveHolds archiveHoldSet // log archivers' purge holds (backup.go)
}

// Open opens or initialises the data directory.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = 151
	}
	switch cfg.Durability {
	case "":
		cfg.Durability = "sync"
	case "sync", "async":
	default:
		return nil, fmt.Errorf("durability %q: want sync or async", cfg.Durability)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	if err := checkFormat(cfg.DataDir); err != nil {
		return nil, err
	}
	// The binlog is the only thing fsynced; the engine runs without its WAL and is rebuilt from the
	// log after a crash (repl replays from the engine's applied index).
	lg, err := klog.Open(filepath.Join(cfg.DataDir, "log"), klog.Options{Logger: cfg.Logger, SegmentBytes: cfg.LogSegmentBytes, Preallocate: true})
	if err != nil {
		return nil, err
	}
	eng, err := engine.Open(filepath.Join(cfg.DataDir, "engine"), engine.Options{Logger: cfg.Logger, DisableWAL: true})
	if err != nil {
		lg.Close()
		return nil, err
	}
	// A file-form backup's checkpoint that a crash during the backup left behind.
	if err := eng.RemoveCheckpoints(); err != nil {
		eng.Close()
		lg.Close()
		return nil, fmt.Errorf("remove stale backup checkpoints: %w", err)
	}
	reserve := cfg.DiskReserveBytes
	applier := sql.NewApplier()
	// The commit loop asks how many commands are being served besides the commits it already has
	// (repl.Config.PendingCommits); the transaction manager is made below, over the node.
	var txmRef atomic.Pointer[txn.Manager]
	running := new(atomic.Int64)
	node, err := repl.Start(ctx, repl.Config{Log: lg, Engine: eng, Applier: applier, Logger: cfg.Logger, DiskFree: freeBytes(cfg.DataDir), ReserveBytes: reserve, SyncInterval: cfg.SyncInterval, PipelineSync: cfg.CommitPipeline, CommitWaitCount: cfg.CommitWaitCount, CommitWaitTime: cfg.CommitWaitTime, PendingCommits: pendingCommits(running, &txmRef),
		RetainEntries: cfg.LogRetainEntries, PurgeInterval: cfg.LogPurgeInterval, FollowerRetainEntries: cfg.LogRetainForFollowers,
		ID: cfg.NodeID, Peers: cfg.Peers, Join: cfg.Join, LogOnly: cfg.LogOnly, FetchSnapshot: cfg.FetchSnapshot, Transport: cfg.Transport, TickInterval: cfg.TickInterval, ElectionTicks: cfg.ElectionTicks})
	if err != nil {
		eng.Close()
		lg.Close()
		return nil, err
	}
	if cfg.OnNode != nil {
		cfg.OnNode(node)
	}
	if cfg.LogOnly {
		// No SQL layer: nothing to serve to clients, nothing applied to the engine.
		return &Server{cfg: cfg, log: cfg.Logger, eng: eng, lg: lg, node: node, started: time.Now(), sessions: map[uint32]*Session{}, running: running}, nil
	}
	primary := func() string {
		id := node.Leader()
		if id == 0 || id == node.ID() || cfg.PrimaryAddr == nil {
			return ""
		}
		return cfg.PrimaryAddr(id)
	}
	locks := txn.NewLockManager(txn.DefaultLockConfig())
	txm := txn.NewManager(eng, locks, committer{n: node, primary: primary})
	txmRef.Store(txm)
	logPos, err := newLogPosition(node, cfg)
	if err != nil {
		node.Stop()
		eng.Close()
		lg.Close()
		return nil, fmt.Errorf("cluster uuid: %w", err)
	}
	var cluster sql.Cluster
	if cfg.Transport != nil {
		cluster = clusterView{n: node, applier: applier, primary: primary}
	}
	// The SQL layer reaches back to the node (connections, KILL, status) through Config
	// callbacks on s, which exists before its DB does.
	s := &Server{cfg: cfg, log: cfg.Logger, eng: eng, lg: lg, node: node, locks: locks, txm: txm, started: time.Now(), sessions: map[uint32]*Session{}, running: running}
	db, err := sql.Open(ctx, txm, sql.Config{Version: cfg.Version, LockWaitTimeout: cfg.LockWaitTimeout, MaxConnections: cfg.MaxConnections, Durability: cfg.Durability, BeforeImages: cfg.BeforeImages, EarlyLockRelease: cfg.EarlyLockRelease,
		SecureFilePriv: cfg.SecureFilePriv, Cluster: cluster, LogPosition: logPos, Memory: cfg.Memory,
		SSLCert: cfg.SSLCert, SSLKey: cfg.SSLKey, SSLCA: cfg.SSLCA, RequireSecureTransport: cfg.RequireSecureTransport,
		Processes: s.processes, Kill: s.kill, Status: s.status, ClusterMembers: s.clusterMembers, FlushAuthCache: s.flushAuthCache})
	if err != nil {
		node.Stop()
		eng.Close()
		lg.Close()
		return nil, err
	}
	s.DB = db
	return s, nil
}

// InitDataDir creates and initialises the data directory (DATA/FORMAT) if it is new, or checks its
// format, as Open does first: kiln serve calls it before Open to put its certificates there.
func InitDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	return checkFormat(dir)
}

// checkFormat initialises DATA/FORMAT or refuses a data directory of another format.
func checkFormat(dir string) error {
	p := filepath.Join(dir, "FORMAT")
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		entries, _ := os.ReadDir(dir)
		if len(entries) > 0 {
			return fmt.Errorf("data directory %s is not empty and has no FORMAT file: refusing to start", dir)
		}
		return writeFormat(dir)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] != "kiln-format" {
		return fmt.Errorf("%s is not a Kiln format file: refusing to start", p)
	}
	v, err := strconv.Atoi(f[1])
	if err != nil || v != DataFormatVersion {
		return fmt.Errorf("data directory %s has on-disk format version %s; this build supports version %d: refusing to start", dir, f[1], DataFormatVersion)
	}
	return nil
}

// writeFormat records this build's on-disk format in DATA/FORMAT (temporary file, rename, fsync).
func writeFormat(dir string) error {
	p := filepath.Join(dir, "FORMAT")
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("kiln-format %d\n", DataFormatVersion)), 0o644); err != nil {
		return fmt.Errorf("initialise data directory: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("initialise data directory: %w", err)
	}
	return syncPath(dir)
}

// syncPath fsyncs a file or a directory (after a create or rename in it).
func syncPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ClusterID is the cluster this data directory belongs to ("" for a node started without one).
func (s *Server) ClusterID() string { return s.cfg.ClusterID }

// Node is the raft member under this server (cluster status, the HTTP role endpoints).
func (s *Server) Node() *repl.Node { return s.node }

// EngineMetrics is the storage engine's report of its levels, compactions and caches, as text.
func (s *Server) EngineMetrics() string { return s.eng.Metrics().String() }

// Close stops the node: sessions roll back, the engine flushes and closes.
func (s *Server) Close() error {
	s.mu.Lock()
	sessions := make([]*Session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.cancelQuery()
	}
	s.node.Stop()
	// A flushed engine makes the next start's replay short; it is not needed for durability.
	ferr := s.eng.Flush()
	eerr := s.eng.Close()
	lerr := s.lg.Close()
	return errors.Join(ferr, eerr, lerr)
}

// freeBytes reports the free space of the filesystem holding dir.
func freeBytes(dir string) func() (uint64, error) {
	return func() (uint64, error) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return 0, err
		}
		return st.Bavail * uint64(st.Bsize), nil
	}
}

// LookupAccount implements the protocol's account lookup: the account (from the catalog's
// accounts, in MySQL's matching order) a login of user from host authenticates as.
func (s *Server) LookupAccount(user, host string) (proto.Account, bool) {
	if s.DB == nil {
		return proto.Account{}, false
	}
	return s.DB.LookupAccount(user, host)
}

// OpenSession creates the session of an authenticated connection (proto.Handler).
func (s *Server) OpenSession(ctx context.Context, info proto.ConnInfo) (proto.Session, error) {
	maxConn := s.DB.GlobalInt("max_connections")
	if n := s.active.Add(1); n > maxConn {
		s.active.Add(-1)
		s.aborted.Add(1)
		return nil, sqlerr.New(sqlerr.ErrConCount, "Too many connections")
	}
	ss := &Session{srv: s, sql: s.DB.NewSession(info.ConnID, info.User, info.Host, ""), id: info.ConnID, started: time.Now()}
	if info.Account.User != "" || info.Account.Host != "" {
		ss.sql.SetAccount(info.Account.User, info.Account.Host)
	}
	ss.sql.FoundRowsFlag = info.Capabilities&clientFoundRows != 0
	ss.sql.SingleStatement = info.Capabilities&clientMultiStatements == 0
	ss.sql.SetHandshakeCollation(info.Collation)
	ss.sql.SSLVersion, ss.sql.SSLCipher = info.TLSVersion, info.TLSCipher
	if info.DB != "" {
		if err := ss.sql.UseDB(info.DB); err != nil {
			s.active.Add(-1)
			return nil, err
		}
	}
	s.totalConn.Add(1)
	// Listed as sleeping from the start, before its first command (SHOW PROCESSLIST showed a
	// connection that had sent none as thread 0 with no user).
	ss.end()
	s.mu.Lock()
	s.sessions[info.ConnID] = ss
	s.mu.Unlock()
	return ss, nil
}

// Capability flags the SQL layer acts on (protocol constants; the server does not import the
// protocol package).
const (
	clientFoundRows       = 2
	clientMultiStatements = 1 << 16
)

// flushAuthCache is the SQL layer's Config.FlushAuthCache: account changes reach the protocol's
// cache through the server, which the protocol server is attached to after the DB is open.
func (s *Server) flushAuthCache(user, host string) {
	if f := s.FlushAuthCache; f != nil {
		f(user, host)
	}
}

func (s *Server) processes() []sql.ProcessInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]sql.ProcessInfo, 0, len(s.sessions))
	now := time.Now()
	for _, ss := range s.sessions {
		ss.mu.Lock()
		p := ss.info
		// Seconds in the current state (a statement running, or idle since the last one), which
		// monitoring tools (pt-kill --busy-time, innotop) read to find long-running statements.
		p.Time = int64(now.Sub(ss.since) / time.Second)
		ss.mu.Unlock()
		out = append(out, p)
	}
	return out
}

func (s *Server) kill(id uint32, query bool) error {
	s.mu.Lock()
	ss, ok := s.sessions[id]
	s.mu.Unlock()
	if !ok {
		return sqlerr.New(sqlerr.ErrNoSuchThread, "Unknown thread id: %d", id)
	}
	ss.cancelQuery()
	if !query {
		ss.killed.Store(true)
		if s.CloseConn != nil {
			s.CloseConn(id)
		}
	}
	return nil
}

func (s *Server) status() map[string]string {
	ns := &s.node.Stats
	commits, groups := ns.Commits.Load(), ns.Groups.Load()
	var ls txn.LockStats
	if s.locks != nil {
		ls = s.locks.Stats()
	}
	lst := s.lg.Stats()
	m := map[string]string{
		"Kiln_memory_limit":             strconv.FormatInt(s.cfg.Memory.Limit(), 10),
		"Kiln_memory_accounted":         strconv.FormatInt(s.cfg.Memory.Used(), 10),
		"Kiln_memory_accounted_peak":    strconv.FormatInt(s.cfg.Memory.Peak(), 10),
		"Kiln_memory_refused":           strconv.FormatInt(s.cfg.Memory.Refused(), 10),
		"Uptime":                        strconv.FormatInt(int64(time.Since(s.started).Seconds()), 10),
		"Threads_connected":             strconv.FormatInt(s.active.Load(), 10),
		"Threads_running":               strconv.FormatInt(s.running.Load(), 10),
		"Connections":                   strconv.FormatUint(s.totalConn.Load(), 10),
		"Aborted_connects":              strconv.FormatUint(s.aborted.Load(), 10),
		"Questions":                     strconv.FormatUint(s.queries.Load(), 10),
		"Queries":                       strconv.FormatUint(s.queries.Load(), 10),
		"Com_commit":                    strconv.FormatUint(s.commits.Load(), 10),
		"Com_rollback":                  strconv.FormatUint(s.rollbacks.Load(), 10),
		"Kiln_commits":                  strconv.FormatUint(commits, 10),
		"Kiln_commit_groups":            strconv.FormatUint(groups, 10),
		"Innodb_row_lock_waits":         strconv.FormatUint(ls.Waits, 10),
		"Innodb_deadlocks":              strconv.FormatUint(ls.Deadlocks, 10),
		"Kiln_lock_wait_timeouts":       strconv.FormatUint(ls.Timeouts, 10),
		"Innodb_row_lock_current_waits": strconv.FormatInt(int64(ls.CurrentWaits), 10),
		"Max_used_connections":          strconv.FormatInt(s.active.Load(), 10),
		"Kiln_log_fsyncs":               strconv.FormatUint(ns.Syncs.Load(), 10),
		"Kiln_log_bytes_written":        strconv.FormatUint(lst.BytesWritten, 10),
		"Kiln_applied_index":            strconv.FormatUint(s.node.Applied(), 10),
		"Kiln_durable_index":            strconv.FormatUint(s.node.Durable(), 10),
		"Kiln_last_recovery_seconds":    strconv.FormatFloat(s.node.RecoveryTime.Seconds(), 'f', 3, 64),
		"Kiln_commit_index":             strconv.FormatUint(s.node.CommitIndex(), 10),
		"Kiln_raft_term":                strconv.FormatUint(s.node.Term(), 10),
		"Kiln_raft_leader":              strconv.FormatUint(s.node.Leader(), 10),
		"Kiln_node_id":                  strconv.FormatUint(s.node.ID(), 10),
		"Kiln_role":                     s.role(),
		"Kiln_snapshots_installed":      strconv.FormatUint(s.node.Stats.SnapshotsInstalled.Load(), 10),
		"Kiln_commit_inline_applies":    strconv.FormatUint(s.node.Stats.InlineApplies.Load(), 10),
		"Kiln_commit_wait_timeouts":     strconv.FormatUint(s.node.Stats.CommitWaitTimeouts.Load(), 10),
		"Kiln_engine_version_flushes":   strconv.FormatUint(s.eng.VersionFlushes(), 10),
	}
	if s.DB != nil {
		hits, misses := s.DB.PlanCacheStats()
		m["Kiln_plan_cache_hits"] = strconv.FormatUint(hits, 10)
		m["Kiln_plan_cache_misses"] = strconv.FormatUint(misses, 10)
	}
	if s.txm != nil {
		// Early lock release: rows with a placed, not yet applied version, and the current reads
		// that returned one (a successor that did not wait for the fsync).
		m["Kiln_pending_versions"] = strconv.Itoa(s.txm.Pending())
		m["Kiln_pending_reads"] = strconv.FormatUint(s.txm.PendingReads(), 10)
	}
	lagN, lagT := s.node.Lag()
	m["Kiln_replica_lag_entries"] = strconv.FormatUint(lagN, 10)
	m["Kiln_replica_lag_seconds"] = strconv.FormatFloat(lagT.Seconds(), 'f', 3, 64)
	return m
}

// role is this node's part in the cluster now: primary (takes writes), replica (follows a known
// leader), or candidate (no leader known: an election is running or this node is cut off).
func (s *Server) role() string {
	switch {
	case s.node.IsLeader():
		return "primary"
	case s.node.Leader() != 0:
		return "replica"
	}
	return "candidate"
}

// Session is one connection's session: it implements the protocol's Session.
type Session struct {
	srv     *Server
	sql     *sql.Session
	id      uint32
	started time.Time
	killed  atomic.Bool

	// cmdCtx is the cancellable context of the session's commands (KILL QUERY cancels it), a
	// child of cmdParent, the context the protocol gave. It lives across commands and is replaced
	// only once cancelled or when the protocol's context changes: a context per command (its
	// allocations, and registering with and unregistering from its parent under the parent's
	// mutex) cost as much as a tenth of a point select. Owned by the connection's goroutine.
	cmdCtx    context.Context
	cmdCancel context.CancelFunc
	cmdParent context.Context

	mu     sync.Mutex
	cancel context.CancelFunc // cmdCancel while a command runs, nil between commands
	info   sql.ProcessInfo
	since  time.Time // when info's command began or the session went idle: SHOW PROCESSLIST's Time
}

// begin runs at the start of each command: the context for KILL QUERY. end must follow.
func (ss *Session) begin(ctx context.Context, cmd, text string) context.Context {
	if ss.cmdCtx == nil || ss.cmdParent != ctx || ss.cmdCtx.Err() != nil {
		if ss.cmdCancel != nil {
			ss.cmdCancel() // unregisters it from its parent
		}
		ss.cmdCtx, ss.cmdCancel = context.WithCancel(ctx)
		ss.cmdParent = ctx
	}
	ss.mu.Lock()
	ss.cancel = ss.cmdCancel
	ss.info = sql.ProcessInfo{ID: ss.id, User: ss.sql.User, Host: ss.sql.Host, DB: ss.sql.CurDB, Command: cmd, State: "executing", Info: text}
	ss.since = time.Now()
	ss.mu.Unlock()
	return ss.cmdCtx
}

// end runs at the end of each command: KILL QUERY no longer reaches it. A KILL QUERY that
// cancelled the command's context makes the next begin replace it.
func (ss *Session) end() {
	ss.mu.Lock()
	ss.cancel = nil
	ss.info = sql.ProcessInfo{ID: ss.id, User: ss.sql.User, Host: ss.sql.Host, DB: ss.sql.CurDB, Command: "Sleep"}
	ss.since = time.Now()
	ss.mu.Unlock()
}

func (ss *Session) cancelQuery() {
	ss.mu.Lock()
	if ss.cancel != nil {
		ss.cancel()
	}
	ss.mu.Unlock()
}

func (ss *Session) count(err error) {
	ss.srv.queries.Add(1)
	if err != nil {
		ss.srv.errors.Add(1)
	}
}

// Query implements the protocol Session.
func (ss *Session) Query(ctx context.Context, text string, w proto.ResultWriter) error {
	ctx = ss.begin(ctx, "Query", text)
	defer ss.end()
	err := ss.sql.Query(ctx, text, w)
	ss.count(err)
	return err
}

// Prepare implements the protocol Session.
func (ss *Session) Prepare(ctx context.Context, text string) (proto.StmtInfo, error) {
	ctx = ss.begin(ctx, "Prepare", text)
	defer ss.end()
	return ss.sql.Prepare(ctx, text)
}

// Execute implements the protocol Session.
func (ss *Session) Execute(ctx context.Context, id uint32, args []types.Value, w proto.ResultWriter) error {
	ctx = ss.begin(ctx, "Execute", ss.sql.PreparedText(id))
	defer ss.end()
	err := ss.sql.Execute(ctx, id, args, w)
	ss.count(err)
	return err
}

// CloseStmt implements the protocol Session.
func (ss *Session) CloseStmt(id uint32) { ss.sql.CloseStmt(id) }

// UseDB implements the protocol Session.
func (ss *Session) UseDB(ctx context.Context, db string) error { return ss.sql.UseDB(db) }

// Status implements the protocol Session.
func (ss *Session) Status() uint16 { return ss.sql.Status() }

// ResetConnection implements the protocol Session: roll back, forget statements and variables.
func (ss *Session) ResetConnection(ctx context.Context) error {
	cur := ss.sql.CurDB
	ss.sql.Close()
	u, h := ss.sql.Account()
	old := ss.sql
	ss.sql = ss.srv.DB.NewSession(ss.id, old.User, old.Host, cur)
	ss.sql.SetAccount(u, h) // the connection stays authenticated as the same account
	ss.sql.SSLVersion, ss.sql.SSLCipher = old.SSLVersion, old.SSLCipher
	return nil
}

// SetMultiStatements follows COM_SET_OPTION (proto.MultiStatementsSetter).
func (ss *Session) SetMultiStatements(on bool) { ss.sql.SingleStatement = !on }

// IdleTimeout implements the protocol Session (wait_timeout).
func (ss *Session) IdleTimeout() time.Duration { return ss.sql.WaitTimeout() }

// Close implements the protocol Session.
func (ss *Session) Close() {
	ss.cancelQuery()
	if ss.cmdCancel != nil {
		ss.cmdCancel()
	}
	ss.sql.Close()
	ss.srv.mu.Lock()
	delete(ss.srv.sessions, ss.id)
	ss.srv.mu.Unlock()
	ss.srv.active.Add(-1)
}

// pendingCommits reports the commands being served that may still commit soon: not the commits
// already handed to the commit loop, nor statements blocked on a row lock. Without early lock
// release a blocked statement's lock may be held by a commit in the very group being held open,
// which keeps its locks until the group is applied: holding the group would hold them longer, so
// while any statement is blocked nothing is reported. Reads count (a command's kind is not known
// when it is read); they only make a group wait its bound, and the loop backs off from waits that
// gain nothing.
func pendingCommits(running *atomic.Int64, ref *atomic.Pointer[txn.Manager]) func() int64 {
	return func() int64 {
		m := ref.Load()
		if m == nil {
			return 0
		}
		blocked := m.Locks.CurrentWaits()
		if blocked > 0 && !m.EarlyRelease() {
			return 0
		}
		return running.Load() - m.Committing() - blocked
	}
}

// Running is the count of commands being served, which the protocol layer keeps
// (mysql.Config.Running): Threads_running, and the commit loop's hint that more commits are coming.
func (s *Server) Running() *atomic.Int64 { return s.running }
