// Package rafthttp owns the network between raft nodes: it carries the raft messages of the local node
// to its peers and hands the messages that peers send to the local node. It knows nothing of what the
// messages mean; raft retransmits whatever is lost, so the transport may drop messages but must say so
// (Raft.ReportUnreachable) and must never reorder the messages to one peer.
//
// The duties, in the order a message meets them:
//  1. Send queues each message on its peer's bounded queue and returns: it never waits on the
//     network, and it never calls back into Raft, so a raft loop that calls Send may also be the one
//     that serves ReportUnreachable. A full queue drops the message and schedules a ReportUnreachable.
//  2. One goroutine per peer owns one long-lived HTTP/2 (cleartext) stream, POST /raft/stream. It
//     drains everything queued, frames it (uvarint length, marshaled pb.Message) and writes the burst
//     at once. One stream and one writer per peer is what keeps the per-peer order.
//  3. When the stream cannot be opened or breaks, the goroutine reports the peer unreachable once,
//     drops what is queued (stale heartbeats and appends that raft will resend anyway), backs off
//     (50 ms doubling to 1 s) and reopens.
//  4. Snapshots (pb.MsgSnap) go on their own request, POST /raft/snapshot, so a large snapshot never
//     holds up the heartbeats behind it; the result is reported with Raft.ReportSnapshot.
//  5. The handler checks the cluster id (412 on a mismatch, so two clusters never mix), records the
//     sender's metadata from the stream headers (PeerMeta: how followers learn the leader's client
//     address), and steps every received frame into Raft in order.
//  6. Stop cancels every stream and request, also the inbound ones, and waits for the goroutines, so
//     nothing calls into Raft once Stop has returned.
//
// The handler must be served with unencrypted HTTP/2 enabled (Serve does so): the sending side speaks
// HTTP/2 with prior knowledge only. With TLS (Config.ServerTLS and ClientTLS) the same runs over
// HTTPS, HTTP/2 negotiated by ALPN; who may connect is then the TLS configurations' business
// (internal/tlsconf: mutual TLS against the cluster's CA).
package rafthttp

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Raft is what the transport delivers to: the local raft node.
type Raft interface {
	Step(ctx context.Context, m pb.Message) error // deliver one received message
	ReportUnreachable(id uint64)                  // a send to id failed / was dropped
	ReportSnapshot(id uint64, status raft.SnapshotStatus)
}

// Config configures a Transport.
type Config struct {
	ID uint64 // this node's raft id
	// ClusterID is carried by every request; a request with another cluster id is refused (HTTP 412)
	// so two clusters never mix.
	ClusterID string
	// Meta is this node's metadata (e.g. "mysql" -> "127.0.0.1:3306"), sent to every peer on each
	// stream open, so followers learn the leader's client address.
	Meta   map[string]string
	Raft   Raft
	Logger *slog.Logger
	// QueueMessages bounds each peer's outgoing queue (default 4096 messages). When full, messages
	// are dropped and ReportUnreachable(peer) is called: raft retransmits.
	QueueMessages int
	DialTimeout   time.Duration // default 1s
	// Extra are other services of the raft port (pattern -> handler, e.g. the engine snapshot
	// stream); each request must carry this cluster's id and a sender id, as raft's own do.
	Extra map[string]http.Handler
	// ServerTLS, if set, makes Serve serve HTTPS with it; ClientTLS, if set, makes the transport dial
	// its peers over HTTPS with it. Members of one cluster set both or neither.
	ServerTLS, ClientTLS *tls.Config
}

const (
	pathStream   = "/raft/stream"
	pathSnapshot = "/raft/snapshot"

	hdrCluster = "X-Kiln-Cluster"
	hdrFrom    = "X-Kiln-From"
	hdrTo      = "X-Kiln-To"
	hdrMeta    = "X-Kiln-Meta"

	// maxFrame bounds one message on the stream; a bigger frame means a broken or hostile sender.
	maxFrame = 64 << 20
	// maxSnapshot bounds a snapshot request's body, which is held in memory whole on both sides.
	maxSnapshot = 1 << 30

	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

// Transport sends raft messages to peers and serves the messages peers send. It is safe for
// concurrent use.
type Transport struct {
	cfg     Config
	log     *slog.Logger
	client  *http.Client
	scheme  string // of the peers' URLs: "https" with ClientTLS
	metaHdr string // cfg.Meta as JSON, sent on every stream open

	ctx    context.Context // canceled by Stop
	cancel context.CancelFunc
	// wg counts every goroutine that may call into Raft: peer writers, snapshot senders, the
	// reporter and the inbound handlers. Add happens only under mu with stopped false, so Stop's Wait
	// never races an Add.
	wg sync.WaitGroup

	mu      sync.Mutex
	peers   map[uint64]*peer
	unknown map[uint64]bool // unknown destinations already logged
	stopped bool

	metaMu sync.Mutex
	meta   map[uint64]map[string]string

	// unreach collects the peers to report unreachable; the reporter goroutine makes the calls so
	// that Send never calls into Raft, and reports that pile up before it runs coalesce into one.
	repMu   sync.Mutex
	unreach map[uint64]struct{}
	reportc chan struct{}
}

// New returns a Transport with no peers. Serve its Handler (or call Serve) to receive.
func New(cfg Config) *Transport {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.QueueMessages <= 0 {
		cfg.QueueMessages = 4096
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = time.Second
	}
	meta := make(map[string]string, len(cfg.Meta))
	for k, v := range cfg.Meta {
		meta[k] = v
	}
	cfg.Meta = meta
	hdr, err := json.Marshal(meta)
	if err != nil {
		// A map[string]string always marshals.
		panic(fmt.Sprintf("rafthttp: marshal meta: %v", err))
	}

	var protos http.Protocols
	scheme := "http"
	if cfg.ClientTLS != nil {
		// HTTP/2 only, as without TLS: one multiplexed connection per peer.
		protos.SetHTTP2(true)
		scheme = "https"
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	ht := &http.Transport{
		DialContext:     (&net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig: cfg.ClientTLS,
		// The TLS handshake is bounded like the dial: a peer that accepts and says nothing is down.
		TLSHandshakeTimeout: 2 * cfg.DialTimeout,
		Protocols:           &protos,
		HTTP2: &http.HTTP2Config{
			// The stream carries nothing back, so only pings tell a silent dead peer from an idle one.
			SendPingTimeout: 5 * time.Second,
			PingTimeout:     5 * time.Second,
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{
		cfg:     cfg,
		log:     cfg.Logger.With("raft_id", cfg.ID),
		client:  &http.Client{Transport: ht},
		scheme:  scheme,
		metaHdr: string(hdr),
		ctx:     ctx,
		cancel:  cancel,
		peers:   make(map[uint64]*peer),
		unknown: make(map[uint64]bool),
		meta:    make(map[uint64]map[string]string),
		unreach: make(map[uint64]struct{}),
		reportc: make(chan struct{}, 1),
	}
	t.wg.Add(1)
	go t.reporter()
	return t
}

// AddPeer adds peer id at addr ("host:port" of its raft listener). It is idempotent; a changed addr
// replaces the old one and reopens the stream at once.
func (t *Transport) AddPeer(id uint64, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	if p, ok := t.peers[id]; ok {
		p.setAddr(addr)
		return
	}
	p := newPeer(t, id, addr)
	t.peers[id] = p
	delete(t.unknown, id)
	t.wg.Add(1)
	go p.run()
}

// RemovePeer stops sending to peer id and forgets its metadata. What is queued for it is dropped.
func (t *Transport) RemovePeer(id uint64) {
	t.mu.Lock()
	p, ok := t.peers[id]
	delete(t.peers, id)
	t.mu.Unlock()
	if ok {
		p.cancel()
	}
	t.metaMu.Lock()
	delete(t.meta, id)
	t.metaMu.Unlock()
}

// Send queues msgs for their peers (m.To) and returns without waiting on the network. Messages to
// unknown peers, and all messages after Stop, are dropped.
func (t *Transport) Send(msgs []pb.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	for i := range msgs {
		m := msgs[i]
		p, ok := t.peers[m.To]
		if !ok {
			if !t.unknown[m.To] {
				t.unknown[m.To] = true
				t.log.Debug("raft message to unknown peer dropped", "peer", m.To, "type", m.Type)
			}
			continue
		}
		if m.Type == pb.MsgSnap {
			t.wg.Add(1)
			go t.sendSnapshot(p, m)
			continue
		}
		select {
		case p.queue <- m:
		default:
			t.reportUnreachable(m.To)
		}
	}
}

// PeerMeta returns a copy of the metadata last received from peer id, nil if none was.
func (t *Transport) PeerMeta(id uint64) map[string]string {
	t.metaMu.Lock()
	defer t.metaMu.Unlock()
	m, ok := t.meta[id]
	if !ok {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Stop closes every stream, outbound and inbound, and waits for the transport's goroutines. Send
// after Stop drops. Stop is idempotent.
func (t *Transport) Stop() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	t.stopped = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	t.client.CloseIdleConnections()
}

// Serve listens on addr (port 0 picks one) with an http.Server that speaks unencrypted HTTP/2 and
// HTTP/1.1 (or, with ServerTLS, both over TLS), serves Handler, and returns the bound address and a
// func that shuts the server down.
// The stop func ends the inbound streams (they never finish on their own) and closes the server.
func (t *Transport) Serve(addr string) (bound string, stop func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("rafthttp: listen on %s: %w", addr, err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	if t.cfg.ServerTLS != nil {
		protos.SetHTTP2(true)
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	baseCtx, cancelBase := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           t.Handler(),
		Protocols:         &protos,
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		TLSConfig:         t.cfg.ServerTLS,
		ErrorLog:          slog.NewLogLogger(t.log.Handler(), slog.LevelDebug),
		HTTP2: &http.HTTP2Config{
			// Wider windows than the 1 MiB defaults: a stream whose Step is slow must not take the
			// whole connection window from the snapshot requests that share the connection.
			MaxReceiveBufferPerStream:     4 << 20,
			MaxReceiveBufferPerConnection: 16 << 20,
			SendPingTimeout:               5 * time.Second,
			PingTimeout:                   5 * time.Second,
		},
	}
	served := make(chan error, 1)
	go func() {
		if t.cfg.ServerTLS != nil {
			served <- srv.ServeTLS(ln, "", "")
			return
		}
		served <- srv.Serve(ln)
	}()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			// Canceling the base context ends every handler (see handlerContext). A graceful Shutdown
			// would gain nothing over Close: it cannot tell an unencrypted HTTP/2 connection is idle,
			// so it waits out the HTTP/2 GOAWAY grace (1 s) on every connection a peer holds open.
			cancelBase()
			if err := srv.Close(); err != nil {
				stopErr = fmt.Errorf("rafthttp: close server on %s: %w", ln.Addr(), err)
			}
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				stopErr = errors.Join(stopErr, fmt.Errorf("rafthttp: serve %s: %w", ln.Addr(), err))
			}
		})
		return stopErr
	}
	return ln.Addr().String(), stop, nil
}

// reportUnreachable schedules Raft.ReportUnreachable(id) on the reporter goroutine.
func (t *Transport) reportUnreachable(id uint64) {
	t.repMu.Lock()
	t.unreach[id] = struct{}{}
	t.repMu.Unlock()
	select {
	case t.reportc <- struct{}{}:
	default:
	}
}

func (t *Transport) reporter() {
	defer t.wg.Done()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-t.reportc:
		}
		t.repMu.Lock()
		ids := t.unreach
		t.unreach = make(map[uint64]struct{}, len(ids))
		t.repMu.Unlock()
		for id := range ids {
			if t.ctx.Err() != nil {
				return
			}
			t.cfg.Raft.ReportUnreachable(id)
		}
	}
}

// enter registers an inbound handler with wg, so Stop waits for it; false after Stop.
func (t *Transport) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *Transport) setMeta(id uint64, m map[string]string) {
	t.metaMu.Lock()
	t.meta[id] = m
	t.metaMu.Unlock()
}
