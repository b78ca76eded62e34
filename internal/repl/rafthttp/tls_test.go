package rafthttp

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/tlsconf"
)

// testPeerTLS returns n node certificates signed by one CA.
func testPeerTLS(t testing.TB, n int) []*tlsconf.Set {
	t.Helper()
	ca, err := tlsconf.NewCA(t.Name() + " CA")
	if err != nil {
		t.Fatal(err)
	}
	var out []*tlsconf.Set
	for i := 1; i <= n; i++ {
		cert, key, err := ca.Issue(fmt.Sprintf("node%d", i))
		if err != nil {
			t.Fatal(err)
		}
		s, err := tlsconf.FromPEM(cert, key, ca.CertPEM())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func withTLS(s *tlsconf.Set) func(*Config) {
	return func(c *Config) { c.ServerTLS, c.ClientTLS = s.PeerServer(true), s.PeerClient() }
}

// Peers of one CA exchange messages over TLS (HTTP/2 by ALPN), in order, both ways. A peer whose
// certificate comes from another CA is refused both ways: nothing it sends is stepped, it cannot be
// sent to, and both sides report the other unreachable. A plaintext peer cannot talk to a TLS one.
func TestTLSPeers(t *testing.T) {
	sets := testPeerTLS(t, 2)
	stranger := testPeerTLS(t, 1)[0] // same names, another CA
	a := startNode(t, 1, "c1", "127.0.0.1:0", withTLS(sets[0]))
	b := startNode(t, 2, "c1", "127.0.0.1:0", withTLS(sets[1]))
	x := startNode(t, 3, "c1", "127.0.0.1:0", withTLS(stranger))
	p := startNode(t, 4, "c1", "127.0.0.1:0", nil) // plaintext
	for _, n := range []*node{a, b, x, p} {
		for _, m := range []*node{a, b, x, p} {
			if n != m {
				n.tr.AddPeer(m.id, m.addr)
			}
		}
	}
	const msgs = 500
	for i := 1; i <= msgs; i++ {
		a.tr.Send([]pb.Message{app(1, 2, uint64(i)), app(1, 3, uint64(i)), app(1, 4, uint64(i))})
		b.tr.Send([]pb.Message{app(2, 1, uint64(i))})
		x.tr.Send([]pb.Message{app(3, 1, uint64(i)), app(3, 2, uint64(i))})
		p.tr.Send([]pb.Message{app(4, 1, uint64(i))})
	}
	waitFor(t, "TLS peers to exchange", func() bool { return a.raft.steps.Load() >= msgs && b.raft.steps.Load() >= msgs })
	checkOrder(t, 1, 2, b.raft.from(1), msgs)
	checkOrder(t, 2, 1, a.raft.from(2), msgs)
	waitFor(t, "the refused links to be reported", func() bool {
		return a.raft.unreachable(3) > 0 && a.raft.unreachable(4) > 0 && x.raft.unreachable(1) > 0 &&
			x.raft.unreachable(2) > 0 && p.raft.unreachable(1) > 0
	})
	time.Sleep(100 * time.Millisecond) // anything wrongly accepted would be stepped by now
	if got := len(a.raft.from(3)) + len(b.raft.from(3)); got != 0 {
		t.Errorf("a peer of another CA had %d messages stepped", got)
	}
	if got := len(a.raft.from(4)); got != 0 {
		t.Errorf("a plaintext peer had %d messages stepped", got)
	}
	if got := x.raft.steps.Load() + p.raft.steps.Load(); got != 0 {
		t.Errorf("the refused peers stepped %d messages", got)
	}
	if got := a.tr.PeerMeta(3); got != nil {
		t.Errorf("meta recorded from a peer of another CA: %v", got)
	}
	if got := b.tr.PeerMeta(1); got == nil {
		t.Error("no meta from a TLS peer")
	}

	// Without any certificate (a plain TLS client, as curl would be), the raft port refuses the
	// handshake.
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: sets[0].Pool, ServerName: "localhost"}}}
	if resp, err := c.Post("https://"+a.addr+pathStream, "application/octet-stream", nil); err == nil {
		resp.Body.Close()
		t.Fatalf("a client without a certificate got %s", resp.Status)
	}
}

// The sender speaks HTTP/2 over TLS.
func TestTLSStreamIsHTTP2(t *testing.T) {
	sets := testPeerTLS(t, 2)
	seen := make(chan string, 16)
	b := startNode(t, 2, "c1", "127.0.0.1:0", withTLS(sets[1]))
	a := startNode(t, 1, "c1", "127.0.0.1:0", withTLS(sets[0]))
	// Wrap b's handler to record the protocol of what arrives.
	srv := b.tr.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.Proto:
		default:
		}
		srv.ServeHTTP(w, r)
	})
	hs := httptest.NewUnstartedServer(h)
	hs.TLS = sets[1].PeerServer(true)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(func() {
		a.close() // ends the stream, which the test server's Close waits for
		b.close() // ends the handler
		hs.Close()
	})
	a.tr.AddPeer(2, hs.Listener.Addr().String())
	a.tr.Send([]pb.Message{app(1, 2, 1)})
	waitFor(t, "a message over TLS", func() bool { return b.raft.steps.Load() == 1 })
	if p := <-seen; p != "HTTP/2.0" {
		t.Fatalf("stream protocol %s, want HTTP/2.0", p)
	}
}
