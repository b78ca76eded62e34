package rafthttp

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Handler serves the raft endpoints, POST /raft/stream and POST /raft/snapshot. It must be served
// with unencrypted HTTP/2 enabled, as Serve does.
func (t *Transport) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+pathStream, t.serveStream)
	mux.HandleFunc("POST "+pathSnapshot, t.serveSnapshot)
	for pattern, h := range t.cfg.Extra {
		mux.Handle(pattern, t.sameCluster(h))
	}
	return mux
}

// sameCluster admits a request to an Extra service only from a member of this cluster.
func (t *Transport) sameCluster(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := t.checkRequest(w, r); ok {
			h.ServeHTTP(w, r)
		}
	})
}

// Header sets the headers a request to a peer's Extra service needs (cluster id, sender, receiver).
func (t *Transport) Header(h http.Header, to uint64) {
	h.Set(hdrCluster, t.cfg.ClusterID)
	h.Set(hdrFrom, strconv.FormatUint(t.cfg.ID, 10))
	h.Set(hdrTo, strconv.FormatUint(to, 10))
}

// serveStream receives one peer's stream: it accepts at once, so the sender knows the stream is up,
// then steps every frame into Raft in the order it arrives until the sender closes the stream.
func (t *Transport) serveStream(w http.ResponseWriter, r *http.Request) {
	from, ok := t.checkRequest(w, r)
	if !ok {
		return
	}
	meta := map[string]string{}
	if h := r.Header.Get(hdrMeta); h != "" {
		if err := json.Unmarshal([]byte(h), &meta); err != nil {
			http.Error(w, "bad "+hdrMeta+" header: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	ctx, done, ok := t.admit(w, r)
	if !ok {
		return
	}
	defer done()
	t.setMeta(from, meta)

	rc := http.NewResponseController(w)
	// HTTP/1 would otherwise close the request body at the first response write; HTTP/2 needs nothing.
	_ = rc.EnableFullDuplex()
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		t.log.Warn("raft stream accept failed", "peer", from, "err", err)
		return
	}
	log := t.log.With("peer", from)
	log.Info("raft stream opened", "remote", r.RemoteAddr, "proto", r.Proto)
	n, err := t.readFrames(ctx, r.Body, from)
	if err != nil && ctx.Err() == nil {
		log.Info("raft stream closed", "messages", n, "err", err)
	} else {
		log.Info("raft stream closed", "messages", n)
	}
}

// readFrames steps each frame of body into Raft and returns how many it stepped. A clean end of the
// body between frames is a nil error.
func (t *Transport) readFrames(ctx context.Context, body io.Reader, from uint64) (int, error) {
	br := bufio.NewReaderSize(body, 64<<10)
	var buf []byte
	for n := 0; ; n++ {
		size, err := binary.ReadUvarint(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, fmt.Errorf("rafthttp: read frame length from %d: %w", from, err)
		}
		if size > maxFrame {
			return n, fmt.Errorf("rafthttp: frame of %d bytes from %d exceeds the %d byte limit", size, from, maxFrame)
		}
		if uint64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := io.ReadFull(br, buf); err != nil {
			return n, fmt.Errorf("rafthttp: read frame of %d bytes from %d: %w", size, from, err)
		}
		// Unmarshal copies the byte fields, so buf is reused for the next frame.
		var m pb.Message
		if err := m.Unmarshal(buf); err != nil {
			return n, fmt.Errorf("rafthttp: decode frame from %d: %w", from, err)
		}
		if cap(buf) > keepBuf {
			buf = nil
		}
		if err := t.cfg.Raft.Step(ctx, m); err != nil {
			if ctx.Err() != nil {
				return n, ctx.Err()
			}
			// Raft refuses some messages in normal operation (e.g. from a peer it has just removed);
			// the stream stays up for the rest.
			t.log.Debug("raft step failed", "peer", from, "type", m.Type, "err", err)
		}
	}
}

// serveSnapshot receives one MsgSnap and answers once Raft has stepped it, so the sender's
// ReportSnapshot reflects delivery.
func (t *Transport) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	from, ok := t.checkRequest(w, r)
	if !ok {
		return
	}
	ctx, done, ok := t.admit(w, r)
	if !ok {
		return
	}
	defer done()

	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSnapshot))
	if err != nil {
		code := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			code = http.StatusRequestEntityTooLarge
		}
		t.log.Warn("raft snapshot receive failed", "peer", from, "err", err)
		http.Error(w, "read snapshot: "+err.Error(), code)
		return
	}
	var m pb.Message
	if err := m.Unmarshal(data); err != nil {
		http.Error(w, "decode snapshot: "+err.Error(), http.StatusBadRequest)
		return
	}
	if m.Type != pb.MsgSnap {
		http.Error(w, "not a snapshot message: "+m.Type.String(), http.StatusBadRequest)
		return
	}
	if err := t.cfg.Raft.Step(ctx, m); err != nil {
		t.log.Warn("raft snapshot step failed", "peer", from, "index", snapIndex(m), "err", err)
		http.Error(w, "step snapshot: "+err.Error(), http.StatusInternalServerError)
		return
	}
	t.log.Info("raft snapshot received", "peer", from, "index", snapIndex(m), "bytes", len(data))
	w.WriteHeader(http.StatusNoContent)
}

// checkRequest validates the headers every request carries and answers the refusals itself.
func (t *Transport) checkRequest(w http.ResponseWriter, r *http.Request) (from uint64, ok bool) {
	if got := r.Header.Get(hdrCluster); got != t.cfg.ClusterID {
		t.log.Warn("raft request from another cluster refused", "cluster", got, "remote", r.RemoteAddr)
		http.Error(w, fmt.Sprintf("cluster id mismatch: got %q, want %q", got, t.cfg.ClusterID), http.StatusPreconditionFailed)
		return 0, false
	}
	from, err := strconv.ParseUint(r.Header.Get(hdrFrom), 10, 64)
	if err != nil || from == 0 {
		http.Error(w, "bad "+hdrFrom+" header", http.StatusBadRequest)
		return 0, false
	}
	// A peer whose idea of our id is wrong (an address reused by another node) would have its
	// messages stepped into the wrong raft node.
	if h := r.Header.Get(hdrTo); h != "" {
		if to, err := strconv.ParseUint(h, 10, 64); err != nil || to != t.cfg.ID {
			http.Error(w, fmt.Sprintf("addressed to raft node %s, this is %d", h, t.cfg.ID), http.StatusConflict)
			return 0, false
		}
	}
	return from, true
}

// admit lets a handler that calls into Raft run, unless the transport has stopped (503). Its ctx is
// handlerContext's; done must run before the handler returns (Stop waits for it).
func (t *Transport) admit(w http.ResponseWriter, r *http.Request) (ctx context.Context, done func(), ok bool) {
	if !t.enter() {
		http.Error(w, "raft transport stopped", http.StatusServiceUnavailable)
		return nil, nil, false
	}
	ctx, release := t.handlerContext(w, r)
	return ctx, func() { release(); t.wg.Done() }, true
}

// handlerContext returns the context for Raft.Step: it ends with the request, at Stop, and when the
// server shuts down (its base context). Its end also fails a pending body read, which otherwise
// would wait for the sender forever. release must run before the handler returns.
func (t *Transport) handlerContext(w http.ResponseWriter, r *http.Request) (context.Context, func()) {
	ctx, cancel := context.WithCancel(r.Context())
	stopOnStop := context.AfterFunc(t.ctx, cancel)
	rc := http.NewResponseController(w)
	var mu sync.Mutex
	live := true
	stopInterrupt := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		// The ResponseWriter must not be touched once the handler has returned.
		if live {
			_ = rc.SetReadDeadline(time.Unix(1, 0))
		}
	})
	return ctx, func() {
		stopOnStop()
		stopInterrupt()
		mu.Lock()
		live = false
		mu.Unlock()
		cancel()
	}
}
