package mysql

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kiln-db/kiln/internal/proto"
)

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	// ServerVersion is sent in the greeting and should start with a MySQL version clients
	// understand. Default "8.0.40-kiln".
	ServerVersion string
	// MaxAllowedPacket bounds a payload a client may send (max_allowed_packet). Default 64 MiB.
	MaxAllowedPacket int
	// AuthPlugin is the authentication plugin advertised in the greeting and switched to when a
	// client uses one we do not speak: CachingSHA2Password (default) or NativePassword.
	AuthPlugin string
	// CachingSHA2FullAuth makes caching_sha2_password always ask for full authentication (the
	// password RSA-encrypted with RSAKey), as MySQL does before an account's first login since
	// restart. Off, a matching token is enough, which saves a round trip and an RSA decryption.
	CachingSHA2FullAuth bool
	// RSAKey decrypts caching_sha2_password full authentication
	// (caching_sha2_password_private_key_path). Nil: a 2048-bit key is generated on first use.
	RSAKey *rsa.PrivateKey
	// ConnectTimeout bounds the whole handshake (connect_timeout). Default 10s.
	ConnectTimeout time.Duration
	// NetReadTimeout bounds the wait for each packet of a file the client sends for LOAD DATA
	// LOCAL (net_read_timeout). Default 30s.
	NetReadTimeout time.Duration
	// TLS, if set, is offered to clients (CLIENT_SSL) and used when they ask for it (tls.go). Nil:
	// no TLS; a client that requires it fails on its side.
	TLS *tls.Config
	// RequireSecureTransport, if set, is asked after each handshake response: true refuses a
	// client on plain TCP (neither TLS nor a Unix socket) with error 3159
	// (require_secure_transport).
	RequireSecureTransport func() bool
	// Memory, if set, is the server-wide memory account: long data (COM_STMT_SEND_LONG_DATA) and
	// payload buffers beyond keepBufferBytes reserve from it, so many connections cannot together
	// hold more than the server's limit. A refusal answers 3170.
	Memory MemoryAccount
	// TimeSlice is how long a connection serves commands without waiting for its client before it
	// lets other runnable goroutines have its processor (slice.go). Default 30µs; < 0: never.
	TimeSlice time.Duration
	// Running, if set, counts the commands being served (read, not yet answered): MySQL's
	// Threads_running, and what the commit loop asks to know whether other commits may be coming.
	Running *atomic.Int64

	// peerWatchDelay is how long a command runs before the server watches for its client going
	// away (watch.go); < 0 watches from the start. Default defaultPeerWatchDelay. Tests and
	// benchmarks set it.
	peerWatchDelay time.Duration
}

const (
	defaultServerVersion    = "8.0.40-kiln"
	defaultMaxAllowedPacket = 64 << 20
	defaultConnectTimeout   = 10 * time.Second
	defaultNetReadTimeout   = 30 * time.Second
	// oversizeDiscardTime bounds how long we keep reading an oversized packet's remainder so that
	// its sender can see the 1153 error.
	oversizeDiscardTime  = 5 * time.Second
	oversizeDiscardBytes = 1 << 30
	rsaKeyBits           = 2048
)

// MemoryAccount is the server-wide memory account (package memory's Account); the protocol layer
// only reserves and releases bytes from it.
type MemoryAccount interface {
	Reserve(n int64) bool
	Release(n int64)
	// CapacityError is the error a refusal answers (3170 naming the limit).
	CapacityError() error
}

// Server accepts MySQL connections and serves each one in its own goroutine.
type Server struct {
	cfg     Config
	handler proto.Handler
	log     *slog.Logger
	started time.Time

	lastConnID atomic.Uint32
	questions  atomic.Uint64 // statements received, for COM_STATISTICS

	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyErr  error

	// sha2Cache is caching_sha2_password's server-side cache: per account, SHA256(SHA256(password))
	// after a successful full authentication, with the stored hash it was verified against (an
	// entry whose account's hash changed since, e.g. ALTER USER arriving through the log on a
	// replica, is ignored).
	sha2Mu    sync.Mutex
	sha2Cache map[string]sha2Entry

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	wg        sync.WaitGroup // connection goroutines

	baseCtx    context.Context
	cancelBase context.CancelFunc

	// ready finds parked connections whose command has arrived (ready_linux.go); made at the first
	// connection that can use it.
	readyOnce sync.Once
	ready     *readyPoller
}

// readyPollerFor returns the server's readiness poller, nil where there is none or time slices
// are off (a connection then never yields, so nothing would collect its events).
func (s *Server) readyPollerFor() *readyPoller {
	if !readySupported || s.cfg.TimeSlice <= 0 {
		return nil
	}
	s.readyOnce.Do(func() { s.ready = newReadyPoller() })
	return s.ready
}

// NewServer returns a server for h. A nil logger logs to slog.Default().
func NewServer(cfg Config, h proto.Handler, logger *slog.Logger) *Server {
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = defaultServerVersion
	}
	if cfg.MaxAllowedPacket <= 0 {
		cfg.MaxAllowedPacket = defaultMaxAllowedPacket
	}
	if cfg.AuthPlugin != NativePassword {
		cfg.AuthPlugin = CachingSHA2Password
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.NetReadTimeout <= 0 {
		cfg.NetReadTimeout = defaultNetReadTimeout
	}
	if cfg.TimeSlice == 0 {
		cfg.TimeSlice = defaultTimeSlice
	}
	if cfg.peerWatchDelay == 0 {
		cfg.peerWatchDelay = defaultPeerWatchDelay
	}
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:        cfg,
		handler:    h,
		log:        logger,
		started:    time.Now(),
		listeners:  make(map[net.Listener]struct{}),
		conns:      make(map[*conn]struct{}),
		baseCtx:    ctx,
		cancelBase: cancel,
	}
	if cfg.RSAKey != nil {
		s.keyOnce.Do(func() { s.key = cfg.RSAKey })
	}
	return s
}

// rsaKey returns the key for caching_sha2_password full authentication. It is generated lazily:
// most deployments never need it, and generation costs tens of milliseconds of CPU.
func (s *Server) rsaKey() (*rsa.PrivateKey, error) {
	s.keyOnce.Do(func() {
		s.key, s.keyErr = rsa.GenerateKey(rand.Reader, rsaKeyBits)
	})
	return s.key, s.keyErr
}

type sha2Entry struct {
	authString string
	digest     [32]byte
}

func accountKey(user, host string) string { return user + "\x00" + host }

func (s *Server) cachedDigest(a proto.Account) ([32]byte, bool) {
	s.sha2Mu.Lock()
	defer s.sha2Mu.Unlock()
	e, ok := s.sha2Cache[accountKey(a.User, a.Host)]
	if !ok || e.authString != a.AuthString {
		return [32]byte{}, false
	}
	return e.digest, true
}

func (s *Server) cacheDigest(a proto.Account, d [32]byte) {
	s.sha2Mu.Lock()
	defer s.sha2Mu.Unlock()
	if s.sha2Cache == nil {
		s.sha2Cache = make(map[string]sha2Entry)
	}
	s.sha2Cache[accountKey(a.User, a.Host)] = sha2Entry{authString: a.AuthString, digest: d}
}

// FlushAuthCache forgets caching_sha2_password's cached digest of the account user@host, or of
// every account when both are empty (FLUSH PRIVILEGES). ALTER USER, RENAME USER and DROP USER call
// it for the accounts they change, so the next login does a full authentication, as in MySQL.
func (s *Server) FlushAuthCache(user, host string) {
	s.sha2Mu.Lock()
	defer s.sha2Mu.Unlock()
	if user == "" && host == "" {
		s.sha2Cache = nil
		return
	}
	delete(s.sha2Cache, accountKey(user, host))
}

// nextConnID allocates connection ids from 1 upwards. After 2^32-1 connections it wraps, skipping
// 0, which clients read as "no id".
func (s *Server) nextConnID() uint32 {
	for {
		if id := s.lastConnID.Add(1); id != 0 {
			return id
		}
	}
}

// Serve accepts connections on ln until ln is closed or Close is called. It returns nil after
// Close, otherwise the error that stopped accepting.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			if !errors.Is(err, net.ErrClosed) {
				// Typically out of file descriptors (EMFILE): wait instead of spinning.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("mysql: accept failed; retrying", "err", err, "delay", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops every Serve, closes every connection (cancelling the context of running session
// calls) and waits until their goroutines have ended, Session.Close included.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.cancelBase()
	s.wg.Wait()
	s.readyOnce.Do(func() {}) // no poller is made after this
	s.ready.close()
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

func (s *Server) connCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
