package rafthttp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

const (
	// maxBurst bounds the bytes drained into one write, so a queue of large appends does not
	// become one huge buffer.
	maxBurst = 4 << 20
	// keepBuf is the largest write buffer kept between bursts.
	keepBuf = 1 << 20
)

var (
	errStreamClosed    = errors.New("rafthttp: stream closed")
	errClusterMismatch = errors.New("peer belongs to another cluster")
)

// peer is the sending side toward one remote node.
type peer struct {
	t      *Transport
	id     uint64
	queue  chan pb.Message
	ctx    context.Context // canceled by RemovePeer and Stop
	cancel context.CancelFunc
	kick   chan struct{} // the address changed: cut the backoff short

	mu           sync.Mutex
	addr         string
	streamCancel context.CancelFunc // ends the open stream, so a new addr takes effect
}

func newPeer(t *Transport, id uint64, addr string) *peer {
	ctx, cancel := context.WithCancel(t.ctx)
	return &peer{
		t:      t,
		id:     id,
		queue:  make(chan pb.Message, t.cfg.QueueMessages),
		ctx:    ctx,
		cancel: cancel,
		kick:   make(chan struct{}, 1),
		addr:   addr,
	}
}

func (p *peer) setAddr(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.addr == addr {
		return
	}
	p.addr = addr
	if p.streamCancel != nil {
		p.streamCancel()
	}
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *peer) getAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// run owns the stream to the peer: open, pump, and on failure report, drop, back off and reopen.
func (p *peer) run() {
	defer p.t.wg.Done()
	log := p.t.log.With("peer", p.id)
	backoff := minBackoff
	down := false // logged as unreachable; the next success is logged once
	var buf []byte
	for {
		s, err := p.open()
		if err == nil {
			if down {
				log.Info("raft peer reachable again", "addr", s.addr)
				down = false
			}
			log.Debug("raft stream opened", "addr", s.addr)
			start := time.Now()
			err = p.pump(s, &buf)
			s.close()
			if p.ctx.Err() != nil {
				return
			}
			log.Debug("raft stream closed", "addr", s.addr, "err", err)
			// Only a stream that lived a while earns a fast reopen; one the peer refuses right after
			// accepting it keeps backing off.
			if time.Since(start) > maxBackoff {
				backoff = minBackoff
			}
		}
		if p.ctx.Err() != nil {
			return
		}
		if !down {
			// A cluster mismatch is a configuration error that no retry will fix.
			level := slog.LevelWarn
			if errors.Is(err, errClusterMismatch) {
				level = slog.LevelError
			}
			log.Log(p.ctx, level, "raft peer unreachable", "addr", p.getAddr(), "err", err)
			down = true
		} else {
			log.Debug("raft peer still unreachable", "err", err)
		}
		p.dropQueued()
		p.t.reportUnreachable(p.id)
		select {
		case <-p.ctx.Done():
			return
		case <-p.kick:
			backoff = minBackoff
		case <-time.After(backoff):
			backoff = min(2*backoff, maxBackoff)
		}
	}
}

// dropQueued empties the queue: raft resends after ReportUnreachable, and a peer that comes back
// should not first receive a backlog of stale messages.
func (p *peer) dropQueued() {
	for {
		select {
		case <-p.queue:
		default:
			return
		}
	}
}

// stream is one open POST /raft/stream: the writer feeds pw, the HTTP/2 transport sends what it reads
// from the other end of the pipe as the request body.
type stream struct {
	addr   string
	pw     *io.PipeWriter
	body   io.Closer
	cancel context.CancelFunc
	done   chan struct{} // closed once the response has ended: the receiver is gone
}

// close ends the stream. Canceling the request should end the response, but an HTTP/2 stream whose
// receiver is wedged (its handler never returns) and whose request body is stuck on flow control
// was seen to keep the response open: closing the body unblocks the reader, and the wait is bounded
// so a peer can never hold up Stop.
func (s *stream) close() {
	s.cancel()
	_ = s.body.Close()
	select {
	case <-s.done:
	case <-time.After(time.Second):
	}
}

// open opens the stream and returns once the receiver has accepted it (answered 200).
func (p *peer) open() (*stream, error) {
	ctx, cancel := context.WithCancel(p.ctx)
	p.mu.Lock()
	addr := p.addr
	p.streamCancel = cancel
	p.mu.Unlock()

	pr, pw := io.Pipe()
	// Closing the pipe is what unblocks a write stuck on HTTP/2 flow control once the stream ends.
	context.AfterFunc(ctx, func() { pw.CloseWithError(errStreamClosed) })
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.t.scheme+"://"+addr+pathStream, pr)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("rafthttp: stream request to %d at %s: %w", p.id, addr, err)
	}
	p.t.setHeaders(req, p.id)
	req.Header.Set(hdrMeta, p.t.metaHdr)
	req.Header.Set("Content-Type", "application/octet-stream")

	// The receiver answers before reading anything, so a slow answer means a wedged peer.
	timer := time.AfterFunc(2*p.t.cfg.DialTimeout, cancel)
	resp, err := p.t.client.Do(req)
	timer.Stop()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("rafthttp: open stream to %d at %s: %w", p.id, addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		err := statusError(resp)
		cancel()
		if resp.StatusCode == http.StatusPreconditionFailed {
			err = fmt.Errorf("%w: %w", errClusterMismatch, err)
		}
		return nil, fmt.Errorf("rafthttp: open stream to %d at %s: %w", p.id, addr, err)
	}
	s := &stream{addr: addr, pw: pw, body: resp.Body, cancel: cancel, done: make(chan struct{})}
	go func() {
		// The receiver never writes a body; the response ends when the stream does.
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		cancel()
		close(s.done)
	}()
	return s, nil
}

// pump writes queued messages to s until s breaks or the peer goes away. Each burst (everything
// queued, up to maxBurst bytes) is one write.
func (p *peer) pump(s *stream, buf *[]byte) error {
	for {
		var m pb.Message
		select {
		case <-p.ctx.Done():
			return p.ctx.Err()
		case <-s.done:
			return errStreamClosed
		case m = <-p.queue:
		}
		b := p.appendFrame((*buf)[:0], &m)
	drain:
		for len(b) < maxBurst {
			select {
			case m = <-p.queue:
				b = p.appendFrame(b, &m)
			default:
				break drain
			}
		}
		var err error
		if len(b) > 0 {
			_, err = s.pw.Write(b)
		}
		if cap(b) > keepBuf {
			b = nil
		}
		*buf = b
		if err != nil {
			return fmt.Errorf("rafthttp: write to %d: %w", p.id, err)
		}
	}
}

// appendFrame appends m as a frame: its uvarint length, then the marshaled message. A message the
// receiver would refuse is dropped here instead, since sending it would only break the stream.
func (p *peer) appendFrame(b []byte, m *pb.Message) []byte {
	n := m.Size()
	if n > maxFrame {
		p.t.log.Error("raft message too large to send; dropped", "peer", p.id, "type", m.Type, "bytes", n, "max", maxFrame)
		p.t.reportUnreachable(p.id)
		return b
	}
	frame := len(b)
	b = binary.AppendUvarint(b, uint64(n))
	start := len(b)
	b = append(b, make([]byte, n)...)
	if _, err := m.MarshalToSizedBuffer(b[start:]); err != nil {
		// Marshaling a well-formed message into a buffer of its own Size cannot fail.
		p.t.log.Error("raft message marshal failed; dropped", "peer", p.id, "type", m.Type, "err", err)
		p.t.reportUnreachable(p.id)
		return b[:frame]
	}
	return b
}

// sendSnapshot posts one MsgSnap on its own request and reports the outcome to raft.
func (t *Transport) sendSnapshot(p *peer, m pb.Message) {
	defer t.wg.Done()
	err := t.postSnapshot(p, m)
	if p.ctx.Err() != nil {
		// The peer was removed or the transport stopped: raft no longer waits for this report.
		return
	}
	status := raft.SnapshotFinish
	if err != nil {
		status = raft.SnapshotFailure
		t.log.Warn("raft snapshot send failed", "peer", m.To, "index", snapIndex(m), "err", err)
	} else {
		t.log.Info("raft snapshot sent", "peer", m.To, "index", snapIndex(m))
	}
	t.cfg.Raft.ReportSnapshot(m.To, status)
}

func (t *Transport) postSnapshot(p *peer, m pb.Message) error {
	data, err := m.Marshal()
	if err != nil {
		return fmt.Errorf("rafthttp: marshal snapshot for %d: %w", m.To, err)
	}
	addr := p.getAddr()
	req, err := http.NewRequestWithContext(p.ctx, http.MethodPost, t.scheme+"://"+addr+pathSnapshot, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("rafthttp: snapshot request to %d at %s: %w", m.To, addr, err)
	}
	t.setHeaders(req, m.To)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("rafthttp: send snapshot to %d at %s: %w", m.To, addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("rafthttp: send snapshot to %d at %s: %w", m.To, addr, statusError(resp))
	}
	return nil
}

func (t *Transport) setHeaders(req *http.Request, to uint64) {
	req.Header.Set(hdrCluster, t.cfg.ClusterID)
	req.Header.Set(hdrFrom, strconv.FormatUint(t.cfg.ID, 10))
	req.Header.Set(hdrTo, strconv.FormatUint(to, 10))
}

// statusError turns a refusal into an error carrying the receiver's reason.
func statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_ = resp.Body.Close()
	return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(body))
}

func snapIndex(m pb.Message) uint64 {
	if m.Snapshot == nil {
		return 0
	}
	return m.Snapshot.Metadata.Index
}
