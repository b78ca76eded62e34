package rafthttp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// fakeRaft records what the transport delivers.
type fakeRaft struct {
	steps atomic.Int64

	mu      sync.Mutex
	stepErr error
	block   bool                    // Step waits for its context: a wedged raft node
	discard bool                    // count only
	msgs    map[uint64][]pb.Message // by sender
	unreach map[uint64]int
	snaps   map[uint64][]raft.SnapshotStatus
}

func newFakeRaft() *fakeRaft {
	return &fakeRaft{
		msgs:    make(map[uint64][]pb.Message),
		unreach: make(map[uint64]int),
		snaps:   make(map[uint64][]raft.SnapshotStatus),
	}
}

func (f *fakeRaft) Step(ctx context.Context, m pb.Message) error {
	f.mu.Lock()
	block, err := f.block, f.stepErr
	if !block && err == nil && !f.discard {
		f.msgs[m.From] = append(f.msgs[m.From], m)
	}
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	f.steps.Add(1)
	return nil
}

func (f *fakeRaft) set(fn func(f *fakeRaft)) {
	f.mu.Lock()
	fn(f)
	f.mu.Unlock()
}

func (f *fakeRaft) ReportUnreachable(id uint64) {
	f.mu.Lock()
	f.unreach[id]++
	f.mu.Unlock()
}

func (f *fakeRaft) ReportSnapshot(id uint64, status raft.SnapshotStatus) {
	f.mu.Lock()
	f.snaps[id] = append(f.snaps[id], status)
	f.mu.Unlock()
}

func (f *fakeRaft) from(id uint64) []pb.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pb.Message(nil), f.msgs[id]...)
}

func (f *fakeRaft) unreachable(id uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unreach[id]
}

func (f *fakeRaft) snapshots(id uint64) []raft.SnapshotStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]raft.SnapshotStatus(nil), f.snaps[id]...)
}

var quiet = slog.New(slog.DiscardHandler)

type node struct {
	id   uint64
	addr string
	tr   *Transport
	raft *fakeRaft
	meta map[string]string
	stop func() error
}

// startNode starts a transport serving on addr ("127.0.0.1:0" for any port).
func startNode(t testing.TB, id uint64, cluster, addr string, mod func(*Config)) *node {
	t.Helper()
	n := &node{id: id, raft: newFakeRaft(), meta: map[string]string{"mysql": fmt.Sprintf("127.0.0.1:%d", 3300+id)}}
	cfg := Config{ID: id, ClusterID: cluster, Meta: n.meta, Raft: n.raft, Logger: quiet}
	if mod != nil {
		mod(&cfg)
	}
	n.tr = New(cfg)
	bound, stop, err := n.tr.Serve(addr)
	if err != nil {
		n.tr.Stop()
		t.Fatal(err)
	}
	n.addr, n.stop = bound, stop
	t.Cleanup(n.close)
	return n
}

func (n *node) close() {
	n.tr.Stop()
	_ = n.stop()
}

// deadAddr returns a loopback address nothing listens on (until someone binds it again).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	// Generous: a 3 MiB snapshot under -race on a loaded 2-core machine took 17 s once.
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func app(from, to, index uint64) pb.Message {
	return pb.Message{Type: pb.MsgApp, From: from, To: to, Term: 1, Index: index,
		Entries: []pb.Entry{{Term: 1, Index: index + 1, Data: []byte("payload")}}}
}

// checkOrder fails unless got holds exactly the indexes 1..n in order.
func checkOrder(t *testing.T, from, to uint64, got []pb.Message, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d->%d: got %d messages, want %d", from, to, len(got), n)
	}
	for i, m := range got {
		if m.Index != uint64(i+1) || m.To != to || len(m.Entries) != 1 || string(m.Entries[0].Data) != "payload" {
			t.Fatalf("%d->%d: message %d is %+v, want index %d", from, to, i, m, i+1)
		}
	}
}

func TestExchange(t *testing.T) {
	for _, tc := range []struct {
		nodes, msgs int
	}{
		{nodes: 2, msgs: 3000},
		{nodes: 3, msgs: 2000},
	} {
		t.Run(fmt.Sprintf("%d_nodes", tc.nodes), func(t *testing.T) {
			var nodes []*node
			for i := 1; i <= tc.nodes; i++ {
				nodes = append(nodes, startNode(t, uint64(i), "c1", "127.0.0.1:0", nil))
			}
			for _, a := range nodes {
				for _, b := range nodes {
					if a != b {
						a.tr.AddPeer(b.id, b.addr)
						a.tr.AddPeer(b.id, b.addr) // idempotent
					}
				}
			}
			// Every node sends to every other from its own goroutine, in uneven batches, the way a
			// raft loop hands over a Ready's messages.
			var wg sync.WaitGroup
			for _, a := range nodes {
				wg.Go(func() {
					var batch []pb.Message
					for i := 1; i <= tc.msgs; i++ {
						for _, b := range nodes {
							if b != a {
								batch = append(batch, app(a.id, b.id, uint64(i)))
							}
						}
						if len(batch) >= i%37+1 {
							a.tr.Send(batch)
							batch = nil
						}
					}
					a.tr.Send(batch)
				})
			}
			wg.Wait()
			want := int64(tc.msgs * (tc.nodes - 1))
			for _, b := range nodes {
				waitFor(t, fmt.Sprintf("node %d to receive %d messages", b.id, want), func() bool { return b.raft.steps.Load() >= want })
			}
			for _, b := range nodes {
				for _, a := range nodes {
					if a == b {
						continue
					}
					checkOrder(t, a.id, b.id, b.raft.from(a.id), tc.msgs)
					if got := b.tr.PeerMeta(a.id); !maps.Equal(got, a.meta) {
						t.Errorf("node %d PeerMeta(%d) = %v, want %v", b.id, a.id, got, a.meta)
					}
					if n := a.raft.unreachable(b.id); n != 0 {
						t.Errorf("node %d reported %d unreachable %d times on a healthy loopback", a.id, b.id, n)
					}
				}
			}
			// PeerMeta hands out a copy.
			nodes[0].tr.PeerMeta(2)["mysql"] = "changed"
			if got := nodes[0].tr.PeerMeta(2)["mysql"]; got != nodes[1].meta["mysql"] {
				t.Errorf("PeerMeta returned the stored map: now %q", got)
			}
			if got := nodes[0].tr.PeerMeta(99); got != nil {
				t.Errorf("PeerMeta of a stranger = %v, want nil", got)
			}
		})
	}
}

// The sender speaks HTTP/2 with prior knowledge, and one stream carries every message.
func TestStreamIsHTTP2(t *testing.T) {
	b := New(Config{ID: 2, ClusterID: "c1", Raft: newFakeRaft(), Logger: quiet})
	defer b.Stop()
	var mu sync.Mutex
	protos := map[string]int{}
	h := b.Handler()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos[r.Proto+" "+r.URL.Path]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv.Config.Protocols = &p
	srv.Start()
	defer srv.Close()

	a := startNode(t, 1, "c1", "127.0.0.1:0", nil)
	a.tr.AddPeer(2, strings.TrimPrefix(srv.URL, "http://"))
	for i := 1; i <= 100; i++ {
		a.tr.Send([]pb.Message{app(1, 2, uint64(i))})
	}
	fr := b.cfg.Raft.(*fakeRaft)
	waitFor(t, "100 messages", func() bool { return fr.steps.Load() == 100 })
	checkOrder(t, 1, 2, fr.from(1), 100)
	a.close()
	b.Stop()
	mu.Lock()
	defer mu.Unlock()
	if want := map[string]int{"HTTP/2.0 /raft/stream": 1}; !maps.Equal(protos, want) {
		t.Errorf("requests = %v, want %v", protos, want)
	}
}

func TestPeerDown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		queue int
	}{
		{"default queue", 0},
		{"queue overflows", 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := deadAddr(t)
			a := startNode(t, 1, "c1", "127.0.0.1:0", func(c *Config) { c.QueueMessages = tc.queue })
			a.tr.AddPeer(2, addr)

			start := time.Now()
			for i := 1; i <= 20000; i++ {
				a.tr.Send([]pb.Message{app(1, 2, uint64(i))})
			}
			if d := time.Since(start); d > 5*time.Second { // a hang, not a speed check
				t.Fatalf("20000 sends to a down peer took %v", d)
			}
			waitFor(t, "ReportUnreachable(2)", func() bool { return a.raft.unreachable(2) > 0 })

			b := startNode(t, 2, "c1", addr, nil)
			// Messages queued while the peer was down are dropped; new ones flow once the stream is
			// back (within the 1 s maximum backoff).
			next := uint64(100000)
			waitFor(t, "a message after the peer came up", func() bool {
				next++
				a.tr.Send([]pb.Message{app(1, 2, next)})
				time.Sleep(5 * time.Millisecond)
				return len(b.raft.from(1)) > 0
			})
			got := b.raft.from(1)
			for i := 1; i < len(got); i++ {
				if got[i].Index <= got[i-1].Index {
					t.Fatalf("out of order after reconnect: %d then %d", got[i-1].Index, got[i].Index)
				}
			}
			if got := b.tr.PeerMeta(1); !maps.Equal(got, a.meta) {
				t.Errorf("PeerMeta(1) = %v, want %v", got, a.meta)
			}
		})
	}
}

// A changed address takes effect at once, without waiting out the backoff toward the old one.
func TestAddPeerNewAddr(t *testing.T) {
	a := startNode(t, 1, "c1", "127.0.0.1:0", nil)
	b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
	a.tr.AddPeer(2, deadAddr(t))
	waitFor(t, "ReportUnreachable(2)", func() bool { return a.raft.unreachable(2) > 0 })
	time.Sleep(300 * time.Millisecond) // let the backoff grow
	a.tr.AddPeer(2, b.addr)
	start := time.Now()
	waitFor(t, "a message at the new address", func() bool {
		a.tr.Send([]pb.Message{app(1, 2, 1)})
		time.Sleep(2 * time.Millisecond)
		return len(b.raft.from(1)) > 0
	})
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("took %v to reach the new address", d)
	}
}

func TestRemovePeer(t *testing.T) {
	a := startNode(t, 1, "c1", "127.0.0.1:0", nil)
	b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
	a.tr.AddPeer(2, b.addr)
	b.tr.AddPeer(1, a.addr)
	a.tr.Send([]pb.Message{app(1, 2, 1)})
	b.tr.Send([]pb.Message{app(2, 1, 1)})
	waitFor(t, "both directions", func() bool { return len(b.raft.from(1)) == 1 && len(a.raft.from(2)) == 1 })

	a.tr.RemovePeer(2)
	if got := a.tr.PeerMeta(2); got != nil {
		t.Errorf("PeerMeta after RemovePeer = %v, want nil", got)
	}
	a.tr.Send([]pb.Message{app(1, 2, 2), app(1, 3, 1)}) // now both unknown: dropped
	b.tr.Send([]pb.Message{app(2, 1, 2)})
	waitFor(t, "the message from the removed peer", func() bool { return len(a.raft.from(2)) == 2 })
	time.Sleep(50 * time.Millisecond)
	if got := len(b.raft.from(1)); got != 1 {
		t.Errorf("removed peer received %d messages, want 1", got)
	}
	if got := a.raft.unreachable(2); got != 0 {
		t.Errorf("dropping to a removed peer reported it unreachable %d times", got)
	}
}

func TestClusterMismatch(t *testing.T) {
	a := startNode(t, 1, "c1", "127.0.0.1:0", nil)
	b := startNode(t, 2, "other", "127.0.0.1:0", nil)
	a.tr.AddPeer(2, b.addr)
	a.tr.Send([]pb.Message{app(1, 2, 1)})
	waitFor(t, "ReportUnreachable(2)", func() bool { return a.raft.unreachable(2) > 0 })
	a.tr.Send([]pb.Message{app(1, 2, 2)})
	time.Sleep(100 * time.Millisecond)
	if got := b.raft.steps.Load(); got != 0 {
		t.Errorf("a node of another cluster stepped %d messages", got)
	}
	if got := b.tr.PeerMeta(1); got != nil {
		t.Errorf("a node of another cluster recorded meta %v", got)
	}
}

func TestHandlerRefusals(t *testing.T) {
	tr := New(Config{ID: 2, ClusterID: "c1", Raft: newFakeRaft(), Logger: quiet})
	defer tr.Stop()
	h := tr.Handler()
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		want    int
	}{
		{"cluster mismatch", "POST", pathStream, map[string]string{hdrCluster: "c2", hdrFrom: "1"}, http.StatusPreconditionFailed},
		{"no cluster", "POST", pathStream, map[string]string{hdrFrom: "1"}, http.StatusPreconditionFailed},
		{"snapshot cluster mismatch", "POST", pathSnapshot, map[string]string{hdrCluster: "c2", hdrFrom: "1"}, http.StatusPreconditionFailed},
		{"no from", "POST", pathStream, map[string]string{hdrCluster: "c1"}, http.StatusBadRequest},
		{"bad from", "POST", pathStream, map[string]string{hdrCluster: "c1", hdrFrom: "x"}, http.StatusBadRequest},
		{"zero from", "POST", pathSnapshot, map[string]string{hdrCluster: "c1", hdrFrom: "0"}, http.StatusBadRequest},
		{"bad meta", "POST", pathStream, map[string]string{hdrCluster: "c1", hdrFrom: "1", hdrMeta: "{"}, http.StatusBadRequest},
		{"addressed to another node", "POST", pathStream, map[string]string{hdrCluster: "c1", hdrFrom: "1", hdrTo: "3"}, http.StatusConflict},
		{"GET", "GET", pathStream, nil, http.StatusMethodNotAllowed},
		{"unknown path", "POST", "/raft/other", nil, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(""))
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("status %d (%s), want %d", rec.Code, strings.TrimSpace(rec.Body.String()), tc.want)
			}
		})
	}
	if got := tr.PeerMeta(1); got != nil {
		t.Errorf("refused requests recorded meta %v", got)
	}
}

func frame(m pb.Message) []byte {
	data, err := m.Marshal()
	if err != nil {
		panic(err)
	}
	return append(binary.AppendUvarint(nil, uint64(len(data))), data...)
}

func TestReadFrames(t *testing.T) {
	good := append(frame(app(1, 2, 1)), frame(app(1, 2, 2))...)
	for _, tc := range []struct {
		name    string
		body    []byte
		steps   int
		wantErr string
	}{
		{"clean end", good, 2, ""},
		{"empty", nil, 0, ""},
		{"oversized frame", append(append([]byte(nil), good...), binary.AppendUvarint(nil, maxFrame+1)...), 2, "exceeds"},
		{"truncated frame", good[:len(good)-3], 1, "unexpected EOF"},
		{"truncated length", append(append([]byte(nil), good...), 0x80), 2, "frame length"},
		{"garbage", append(binary.AppendUvarint(nil, 3), 0xff, 0xff, 0xff), 0, "decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFakeRaft()
			tr := New(Config{ID: 2, ClusterID: "c1", Raft: fr, Logger: quiet})
			defer tr.Stop()
			n, err := tr.readFrames(context.Background(), bytes.NewReader(tc.body), 1)
			if n != tc.steps || int(fr.steps.Load()) != tc.steps {
				t.Errorf("stepped %d (raft saw %d), want %d", n, fr.steps.Load(), tc.steps)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// An oversized frame on a real stream ends the stream: what follows it is never stepped, and the
// sender sees the stream end.
func TestOversizedFrameClosesStream(t *testing.T) {
	b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &p}}
	defer client.CloseIdleConnections()

	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", "http://"+b.addr+pathStream, pr)
	req.Header.Set(hdrCluster, "c1")
	req.Header.Set(hdrFrom, "1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	if _, err := pw.Write(frame(app(1, 2, 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := pw.Write(binary.AppendUvarint(nil, maxFrame+1)); err != nil {
		t.Fatal(err)
	}
	// The receiver ends the stream without reading further: the response ends.
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Logf("response ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the stream stayed open after an oversized frame")
	}
	_, _ = pw.Write(frame(app(1, 2, 2))) // may or may not fail, depending on the reset's timing
	pw.Close()
	time.Sleep(20 * time.Millisecond)
	if got := b.raft.from(1); len(got) != 1 || got[0].Index != 1 {
		t.Errorf("stepped %v, want only index 1", got)
	}
}

// The handler also takes a stream over HTTP/1.1 (chunked), for tools that cannot speak h2c.
func TestStreamOverHTTP1(t *testing.T) {
	b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", "http://"+b.addr+pathStream, pr)
	req.Header.Set(hdrCluster, "c1")
	req.Header.Set(hdrFrom, "1")
	req.Header.Set(hdrMeta, `{"mysql":"x"}`)
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		done <- result{resp, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no response before the body")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	defer res.resp.Body.Close()
	if res.resp.StatusCode != http.StatusOK || res.resp.ProtoMajor != 1 {
		t.Fatalf("got %s %s", res.resp.Proto, res.resp.Status)
	}
	for i := 1; i <= 3; i++ {
		if _, err := pw.Write(frame(app(1, 2, uint64(i)))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "3 messages", func() bool { return b.raft.steps.Load() == 3 })
	checkOrder(t, 1, 2, b.raft.from(1), 3)
	if got := b.tr.PeerMeta(1); got["mysql"] != "x" {
		t.Errorf("PeerMeta(1) = %v", got)
	}
	pw.Close()
}

// A message bigger than a frame may be is dropped by the sender (the receiver would cut the
// stream), reported, and the messages after it still arrive.
func TestOversizedMessageDroppedOnSend(t *testing.T) {
	a := startNode(t, 1, "c1", "127.0.0.1:0", nil)
	b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
	a.tr.AddPeer(2, b.addr)
	big := app(1, 2, 2)
	big.Entries[0].Data = make([]byte, maxFrame)
	a.tr.Send([]pb.Message{app(1, 2, 1), big, app(1, 2, 3)})
	waitFor(t, "2 messages", func() bool { return b.raft.steps.Load() == 2 })
	got := b.raft.from(1)
	if got[0].Index != 1 || got[1].Index != 3 {
		t.Errorf("got indexes %d, %d, want 1, 3", got[0].Index, got[1].Index)
	}
	waitFor(t, "ReportUnreachable(2)", func() bool { return a.raft.unreachable(2) == 1 })
}

func TestSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name     string
		down     bool
		stepErr  error
		want     raft.SnapshotStatus
		received bool
	}{
		{"delivered", false, nil, raft.SnapshotFinish, true},
		{"receiver refuses", false, errors.New("no"), raft.SnapshotFailure, false},
		{"receiver down", true, nil, raft.SnapshotFailure, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startNode(t, 1, "c1", "127.0.0.1:0", nil)
			b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
			b.raft.set(func(f *fakeRaft) { f.stepErr = tc.stepErr })
			addr := b.addr
			if tc.down {
				b.close()
				addr = deadAddr(t)
			}
			a.tr.AddPeer(2, addr)
			snap := pb.Message{Type: pb.MsgSnap, From: 1, To: 2, Term: 3,
				Snapshot: &pb.Snapshot{Data: bytes.Repeat([]byte("s"), 3<<20), Metadata: pb.SnapshotMetadata{Index: 42, Term: 3}}}
			a.tr.Send([]pb.Message{snap})
			waitFor(t, "ReportSnapshot", func() bool { return len(a.raft.snapshots(2)) > 0 })
			if got := a.raft.snapshots(2); len(got) != 1 || got[0] != tc.want {
				t.Errorf("ReportSnapshot = %v, want [%v]", got, tc.want)
			}
			got := b.raft.from(1)
			if tc.received != (len(got) == 1) {
				t.Fatalf("receiver stepped %d messages", len(got))
			}
			if tc.received {
				m := got[0]
				if m.Type != pb.MsgSnap || m.Snapshot.Metadata.Index != 42 || !bytes.Equal(m.Snapshot.Data, snap.Snapshot.Data) {
					t.Errorf("received %v index %d with %d bytes", m.Type, m.Snapshot.Metadata.Index, len(m.Snapshot.Data))
				}
			}
		})
	}
}

// The snapshot handler refuses what is not a snapshot.
func TestSnapshotHandlerRefusesOtherMessages(t *testing.T) {
	fr := newFakeRaft()
	tr := New(Config{ID: 2, ClusterID: "c1", Raft: fr, Logger: quiet})
	defer tr.Stop()
	data, _ := (&pb.Message{Type: pb.MsgApp, From: 1, To: 2}).Marshal()
	req := httptest.NewRequest("POST", pathSnapshot, bytes.NewReader(data))
	req.Header.Set(hdrCluster, "c1")
	req.Header.Set(hdrFrom, "1")
	rec := httptest.NewRecorder()
	tr.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || fr.steps.Load() != 0 {
		t.Errorf("status %d, steps %d", rec.Code, fr.steps.Load())
	}
}

func TestStopPrompt(t *testing.T) {
	for _, tc := range []struct {
		name string
		peer func(t *testing.T) string
	}{
		{"peer down", deadAddr},
		{"peer's raft wedged", func(t *testing.T) string {
			b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
			b.raft.set(func(f *fakeRaft) { f.block = true })
			return b.addr
		}},
		{"peer accepts and never answers", func(t *testing.T) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var conns []net.Conn
			var mu sync.Mutex
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}
			}()
			t.Cleanup(func() {
				ln.Close()
				mu.Lock()
				defer mu.Unlock()
				for _, c := range conns {
					c.Close()
				}
			})
			return ln.Addr().String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startNode(t, 1, "c1", "127.0.0.1:0", func(c *Config) { c.QueueMessages = 64 })
			a.tr.AddPeer(2, tc.peer(t))
			// Large messages fill the stream's flow-control windows, then the queue.
			for i := 1; i <= 2000; i++ {
				m := app(1, 2, uint64(i))
				m.Entries[0].Data = make([]byte, 16<<10)
				a.tr.Send([]pb.Message{m})
			}
			time.Sleep(50 * time.Millisecond)
			start := time.Now()
			a.tr.Stop()
			if d := time.Since(start); d > 5*time.Second { // a hang, not a speed check
				t.Errorf("Stop took %v", d)
			}
			a.tr.Send([]pb.Message{app(1, 2, 1)}) // dropped, must not panic
			if err := a.stop(); err != nil {
				t.Errorf("server stop: %v", err)
			}
		})
	}
}

// The server's stop func ends inbound streams, which never end on their own, instead of waiting
// out its shutdown timeout.
func TestServeStopWithOpenStreams(t *testing.T) {
	a := startNode(t, 1, "c1", "127.0.0.1:0", nil)
	b := startNode(t, 2, "c1", "127.0.0.1:0", nil)
	a.tr.AddPeer(2, b.addr)
	a.tr.Send([]pb.Message{app(1, 2, 1)})
	waitFor(t, "the stream", func() bool { return b.raft.steps.Load() == 1 })
	start := time.Now()
	if err := b.stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second { // a hang, not a speed check
		t.Errorf("server stop took %v", d)
	}
	waitFor(t, "ReportUnreachable(2)", func() bool {
		a.tr.Send([]pb.Message{app(1, 2, 2)})
		time.Sleep(2 * time.Millisecond)
		return a.raft.unreachable(2) > 0
	})
}

func BenchmarkSend(b *testing.B) {
	const window = 8192 // messages in flight, under the queue bound so nothing is dropped
	src := startNode(b, 1, "c1", "127.0.0.1:0", func(c *Config) { c.QueueMessages = 2 * window })
	dst := startNode(b, 2, "c1", "127.0.0.1:0", nil)
	src.tr.AddPeer(2, dst.addr)
	// Warm up: the stream is open before the clock starts.
	src.tr.Send([]pb.Message{app(1, 2, 0)})
	waitFor(b, "warm-up", func() bool { return dst.raft.steps.Load() == 1 })
	dst.raft.set(func(f *fakeRaft) { f.discard = true })

	base := dst.raft.steps.Load()
	batch := make([]pb.Message, 0, 64)
	b.ResetTimer()
	for i := 0; i < b.N; {
		for int64(i)-(dst.raft.steps.Load()-base) > window {
			time.Sleep(50 * time.Microsecond)
		}
		batch = batch[:0]
		for j := 0; j < cap(batch) && i < b.N; j++ {
			i++
			batch = append(batch, app(1, 2, uint64(i)))
		}
		src.tr.Send(batch)
	}
	for dst.raft.steps.Load()-base < int64(b.N) {
		if src.raft.unreachable(2) > 0 {
			b.Fatal("messages dropped")
		}
		time.Sleep(50 * time.Microsecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
