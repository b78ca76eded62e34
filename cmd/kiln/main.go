// Command kiln is the Kiln server and its tools: `kiln serve` runs a node.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/mysql"
	"github.com/kiln-db/kiln/internal/server"
)

// version is the Kiln release; the server reports 8.0.40-kiln-<version>.
const version = "0.1.0"

func main() {
	root := &cobra.Command{Use: "kiln", Short: "Kiln: a MySQL-compatible OLTP database on a replicated binlog", SilenceUsage: true}
	root.AddCommand(serveCmd())
	root.AddCommand(checkCmd())
	root.AddCommand(benchCmd())
	root.AddCommand(clusterCmd())
	root.AddCommand(tlsCmd())
	root.AddCommand(backupCmd(), restoreCmd(), logCmd())
	root.AddCommand(&cobra.Command{Use: "version", Short: "Print the version", Run: func(*cobra.Command, []string) {
		fmt.Println(serverVersion())
	}})
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}

func serverVersion() string { return "8.0.40-kiln-" + version }

func serveCmd() *cobra.Command {
	var dataDir, listen, httpAddr string
	var maxConn int
	var maxPacket int
	var lockWait time.Duration
	var diskReserve uint64
	var durability string
	var syncInterval time.Duration
	var beforeImages, earlyLockRelease bool
	var secureFilePriv string
	var retain, retainFollowers uint64
	var segmentBytes int64
	var purgeEvery time.Duration
	var cl clusterFlags
	var pprofOn bool
	var commitPipeline bool
	var commitWaitCount int
	var commitWaitTime time.Duration
	var tf tlsFlags
	var shutdownTimeout time.Duration
	var memLimit, backupMaxRate string
	var timeSlice time.Duration
	var gcPercent int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Kiln server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
			slog.SetDefault(logger)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			acct, err := memoryAccount(memLimit, logger)
			if err != nil {
				return err
			}
			setGCPercent(gcPercent, acct != nil, logger)
			var bkRate int64
			if backupMaxRate != "" {
				if bkRate, err = memory.ParseSize(backupMaxRate); err != nil || bkRate < 0 {
					return fmt.Errorf("--backup-max-rate %q: want bytes per second with an optional K/M/G suffix (0: unlimited)", backupMaxRate)
				}
			}
			return serve(ctx, logger, server.Config{Memory: acct, DataDir: dataDir, Version: serverVersion(), MaxConnections: maxConn, LockWaitTimeout: lockWait, DiskReserveBytes: diskReserve, Durability: durability, SyncInterval: syncInterval, BeforeImages: beforeImages, EarlyLockRelease: earlyLockRelease, SecureFilePriv: secureFilePriv,
				LogRetainEntries: retain, LogRetainForFollowers: retainFollowers, LogPurgeInterval: purgeEvery, LogSegmentBytes: segmentBytes, CommitPipeline: commitPipeline, CommitWaitCount: commitWaitCount, CommitWaitTime: commitWaitTime, Logger: logger}, serveOpts{timeSlice: sliceOrNever(timeSlice), listen: listen, http: httpAddr, maxPacket: maxPacket, cluster: cl, pprof: pprofOn, shutdownTimeout: shutdownTimeout, tls: tf, backupMaxRate: bkRate})
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", "./kiln-data", "data directory (created and initialised on first start)")
	f.StringVar(&listen, "listen", "127.0.0.1:3306", "MySQL protocol address")
	f.StringVar(&httpAddr, "http", "127.0.0.1:8080", "HTTP address for /health and /metrics")
	f.IntVar(&maxConn, "max-connections", 151, "maximum concurrent client connections (error 1040 beyond)")
	f.IntVar(&maxPacket, "max-allowed-packet", 64<<20, "largest packet accepted from a client, bytes (error 1153 beyond)")
	f.DurationVar(&lockWait, "lock-wait-timeout", 50*time.Second, "default innodb_lock_wait_timeout")
	f.Uint64Var(&diskReserve, "disk-reserve", 64<<20, "free bytes kept on the data directory's filesystem: below it commits fail with 1021")
	f.StringVar(&durability, "durability", "sync", "default commit durability (kiln_durability): sync = acknowledged after the log fsync; async = acknowledged once applied, the log fsynced every --sync-interval (a crash may lose that interval)")
	f.DurationVar(&syncInterval, "sync-interval", 100*time.Millisecond, "background log fsync interval for async commits")
	f.StringVar(&secureFilePriv, "secure-file-priv", "", "directory where SELECT ... INTO OUTFILE/DUMPFILE and LOAD DATA INFILE may read and write server files (secure_file_priv); empty: none, such statements get 1290")
	f.BoolVar(&earlyLockRelease, "early-lock-release", true, "release a commit's row locks once its record has its place in the log, before it is durable; it is still acknowledged only once durable (kiln_early_lock_release): hot rows commit many per fsync; false holds them until durable and applied")
	f.BoolVar(&beforeImages, "log-before-images", false, "commit records carry each written row's previous value, for change data capture (kiln_log_before_images)")
	f.Uint64Var(&retain, "log-retain-entries", 10000, "log entries kept below the engine's flushed index when the log is purged")
	f.Uint64Var(&retainFollowers, "log-retain-for-followers", 100000, "log entries the leader keeps beyond --log-retain-entries for a lagging member; one further behind gets an engine snapshot")
	f.DurationVar(&purgeEvery, "log-purge-interval", 30*time.Second, "how often the engine is flushed and sealed log segments below it are removed (negative: never)")
	f.Int64Var(&segmentBytes, "log-segment-bytes", 0, "TESTS ONLY: binlog segment size in bytes (0: 64 MiB); purge removes whole segments, so tests of purging set it small")
	_ = f.MarkHidden("log-segment-bytes")
	f.DurationVar(&shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGTERM/SIGINT, how long running statements (cancelled, their transactions rolled back) and the engine's close may take before the process exits anyway; a second signal exits at once")
	f.StringVar(&memLimit, "memory-limit", "", "server-wide memory limit, bytes with an optional K/M/G/T suffix (default: half of RAM or of the cgroup limit; 0: none): Go's memory limit, and statements that would hold memory past it fail with 3170")
	f.BoolVar(&commitPipeline, "commit-pipeline", false, "on a single node, fsync the log on a goroutine of its own, so the next commit group is appended while one is fsynced (more CPU per commit; see docs/operations.md)")
	f.DurationVar(&commitWaitTime, "commit-wait-time", time.Millisecond, "on a single node, the longest a commit group is held open for commits of other commands in progress, for fewer fsyncs per commit; the log's recent fsync time bounds it further (0: never wait; see docs/operations.md)")
	f.IntVar(&commitWaitCount, "commit-wait-count", 0, "close a held commit group once it has this many commits (MariaDB's binlog_commit_wait_count; 0: no count)")
	f.DurationVar(&timeSlice, "conn-time-slice", 30*time.Microsecond, "how long a connection serves commands without waiting for its client before it lets other runnable connections have its CPU, at a command boundary (0: never; see docs/operations.md)")
	f.IntVar(&gcPercent, "gc-percent", 400, "Go's GOGC when the GOGC environment variable is not set: heap growth between collections, in percent of the live heap; with a --memory-limit the collector still works harder near the limit (with none, 100 is used)")
	f.StringVar(&backupMaxRate, "backup-max-rate", "", "the fastest this node sends a backup stream (bytes per second, K/M/G suffix), whatever kiln backup --max-rate asks; default: unlimited")
	f.BoolVar(&pprofOn, "pprof", false, "serve Go's /debug/pprof/ profiles on the HTTP port (off by default: they expose internals and cost CPU)")
	cl.register(f)
	tf.register(f)
	return cmd
}

// memoryAccount sets up the server-wide memory limit from --memory-limit: Go's soft memory limit
// (the collector works harder as the heap approaches it) and the account statements and
// connections reserve from. nil when the limit is 0.
func memoryAccount(flag string, logger *slog.Logger) (*memory.Account, error) {
	limit := memory.DefaultLimit()
	if flag != "" {
		n, err := memory.ParseSize(flag)
		if err != nil {
			return nil, fmt.Errorf("--memory-limit: %w", err)
		}
		limit = n
	}
	if limit <= 0 {
		logger.Info("no server-wide memory limit")
		return nil, nil
	}
	debug.SetMemoryLimit(limit)
	logger.Info("memory limit", "bytes", limit)
	return memory.NewAccount(limit), nil
}

// sliceOrNever maps --conn-time-slice 0 (never yield) to mysql.Config's "never", a negative value.
func sliceOrNever(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// setGCPercent sets Go's GC percent from --gc-percent unless the GOGC environment variable is set.
// A statement allocates its rows afresh, so at 100 the collector ran about 40 times a second under
// sysbench's read_only with a 30 MB live heap: its mark phases and write barriers cost about 10% of
// the CPU, and each start and end stops the world. A higher percent collects less often; the memory
// limit (Go's soft limit) bounds the heap it allows, so without a limit the default stays.
func setGCPercent(percent int, limited bool, logger *slog.Logger) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	if !limited {
		percent = 100
	}
	debug.SetGCPercent(percent)
	logger.Info("gc percent", "percent", percent)
}

type serveOpts struct {
	timeSlice    time.Duration
	listen, http string
	maxPacket    int
	cluster      clusterFlags
	pprof        bool
	tls          tlsFlags
	// shutdownTimeout bounds a clean shutdown (--shutdown-timeout); past it, or on a second
	// signal, the process exits without waiting, as a crash would (the log holds every
	// acknowledged commit).
	shutdownTimeout time.Duration
	// backupMaxRate caps the pace of every backup stream (--backup-max-rate; 0: none).
	backupMaxRate int64
}

func serve(ctx context.Context, logger *slog.Logger, cfg server.Config, o serveOpts) error {
	start := time.Now()
	logOnly := o.cluster.logOnly
	if logOnly && o.cluster.raftListen == "" {
		return errors.New("--log-only needs --raft-listen and a cluster (--peers or --join)")
	}
	// The MySQL socket is bound first (nothing is accepted until the data directory is open) so the
	// cluster's transport can tell peers the address clients reach this node on. A log-only voter
	// serves no MySQL clients.
	var ln net.Listener
	mysqlAddr := ""
	if !logOnly {
		var err error
		if ln, err = net.Listen("tcp", o.listen); err != nil {
			return fmt.Errorf("listen %s: %w", o.listen, err)
		}
		mysqlAddr = ln.Addr().String()
	}
	hln, err := net.Listen("tcp", o.http)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return fmt.Errorf("listen %s: %w", o.http, err)
	}
	closeListeners := func() {
		if ln != nil {
			ln.Close()
		}
		hln.Close()
	}
	ts, err := o.tls.setUp(&cfg, logger)
	if err != nil {
		closeListeners()
		return err
	}
	cn, err := o.cluster.setUp(&cfg, logger, mysqlAddr, hln.Addr().String(), ts.peer)
	if err != nil {
		closeListeners()
		return err
	}
	srv, err := server.Open(ctx, cfg)
	if err != nil {
		cn.stop()
		closeListeners()
		return err
	}
	cn.attach(srv.Node())
	logger.Info("data directory open", "dir", cfg.DataDir, "took", time.Since(start))
	hs := adminHTTP(srv, o, ts)
	go func() {
		serveHTTP := func() error { return hs.Serve(hln) }
		if ts.peer != nil {
			// Peer TLS covers the HTTP port too (kiln cluster talks to it).
			hs.TLSConfig = ts.peer.PeerServer(false)
			serveHTTP = func() error { return hs.ServeTLS(hln, "", "") }
		}
		if err := serveHTTP(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server", "err", err)
		}
	}()
	errc := make(chan error, 1)
	var ps *mysql.Server
	if ln != nil {
		mcfg := mysql.Config{ServerVersion: serverVersion(), MaxAllowedPacket: o.maxPacket, TLS: ts.mysql(), TimeSlice: o.timeSlice, Running: srv.Running(),
			RequireSecureTransport: func() bool { return srv.DB.GlobalInt("require_secure_transport") != 0 }}
		if cfg.Memory != nil {
			mcfg.Memory = cfg.Memory
		}
		ps = mysql.NewServer(mcfg, srv, logger)
		srv.CloseConn, srv.FlushAuthCache = ps.CloseConn, ps.FlushAuthCache
		go func() { errc <- ps.Serve(ln) }()
	}
	logger.Info("kiln serving", "version", serverVersion(), "mysql", mysqlAddr, "http", hln.Addr().String(), "pid", strconv.Itoa(os.Getpid()),
		"node", srv.Node().ID(), "raft", o.cluster.raftListen, "log_only", logOnly)
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "timeout", o.shutdownTimeout)
	case err := <-errc:
		if err != nil {
			logger.Error("mysql server stopped", "err", err)
		}
	}
	// From here a second SIGTERM/SIGINT, or the timeout, ends the process without waiting.
	force := make(chan os.Signal, 1)
	signal.Notify(force, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(force)
	stopped := make(chan error, 1)
	go func() { stopped <- shutdown(logger, srv, ps, hs, cn) }()
	timeout := o.shutdownTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-stopped:
		return err
	case <-timer.C:
		logger.Error("shutdown timed out: exiting without closing the engine (the next start recovers from the log)", "timeout", timeout)
		return fmt.Errorf("shutdown did not finish within %v", timeout)
	case sig := <-force:
		logger.Error("second signal during shutdown: exiting without closing the engine (the next start recovers from the log)", "signal", sig.String())
		return fmt.Errorf("shutdown interrupted by %v", sig)
	}
}

// shutdown stops a serving node: no new connections, every connection closed and its running
// statement cancelled (open transactions roll back), then the HTTP port, then the commit path and
// the engine (flushed and closed).
func shutdown(logger *slog.Logger, srv *server.Server, ps *mysql.Server, hs *http.Server, cn *clusterNode) error {
	start := time.Now()
	if ps != nil {
		ps.Close()
		logger.Info("sessions ended", "took", time.Since(start))
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutCtx)
	err := srv.Close()
	cn.stop()
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	logger.Info("stopped", "took", time.Since(start))
	return nil
}

// adminHTTP is the HTTP port: metrics, the role checks, cluster status and membership, and pprof when
// asked for.
func adminHTTP(srv *server.Server, o serveOpts, ts tlsSetup) *http.Server {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(srv.Collector())
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	roleHandlers(mux, srv, o.cluster.replicaMaxLag, ts.requireClientCert)
	// Backup streams end when the HTTP server shuts down, before the engine closes under them.
	backups, endBackups := context.WithCancel(context.Background())
	bh := backupHandler(backups, srv, o.backupMaxRate, ts.requireClientCert, slog.Default())
	mux.Handle("GET /backup", bh)
	mux.Handle("POST /backup", bh) // an incremental file-form backup sends what it holds
	mux.Handle("GET /log", logHandler(backups, srv, ts.requireClientCert, slog.Default()))
	holdHandlers(mux, srv, ts.requireClientCert)
	if o.pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		// The storage engine's own counters (levels, compactions, write amplification, caches): what
		// a profile of compaction CPU needs beside it.
		mux.HandleFunc("GET /debug/engine", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, srv.EngineMetrics())
		})
		// Contention is the question profiles of a server that does not use its cores must answer:
		// sample 1 in 100 mutex contentions and blocking events of 100 µs or more.
		runtime.SetMutexProfileFraction(100)
		runtime.SetBlockProfileRate(int(100 * time.Microsecond))
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	hs.RegisterOnShutdown(endBackups)
	return hs
}
