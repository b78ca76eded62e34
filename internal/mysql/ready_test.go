package mysql

import (
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// readyPair returns a server-side conn registered in srv's readiness poller and its peer.
func readyPair(t *testing.T, srv *Server) (*conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(srv, nc)
	c.registerReady()
	t.Cleanup(c.close)
	if c.readyFd < 0 {
		t.Fatal("connection not registered")
	}
	return c, peer
}

func TestKickWakesParkedConnection(t *testing.T) {
	if !readySupported {
		t.Skip("no readiness poller on this platform")
	}
	srv := NewServer(Config{RSAKey: testRSAKey(t)}, newFakeHandler(), testLogger(t))
	t.Cleanup(srv.Close)
	c, peer := readyPair(t, srv)
	p := srv.ready

	// Nothing sent: nothing to kick.
	done := make(chan error, 1)
	go func() { done <- c.waitCommand(time.Time{}) }()
	for c.parkState.Load() != parkWaiting {
		time.Sleep(time.Millisecond)
	}
	if n := p.kickReady(time.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("kicked %d connections with nothing to read", n)
	}
	p.last.Store(0)

	// A command arrives while the connection is parked and every processor is busy (one
	// processor, this goroutine, which does not yield): Go's poller cannot run it, the kick wakes it.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	kicked := 0
	for attempt := 0; attempt < 20 && kicked == 0; attempt++ {
		for c.parkState.Load() != parkWaiting {
			time.Sleep(time.Millisecond)
		}
		if _, err := peer.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		kicked = p.kickReady(time.Now().Add(time.Hour))
		p.last.Store(0)
		if err := waitDone(t, done); err != nil {
			t.Fatalf("wait returned %v", err)
		}
		if got := c.pio.br.Buffered(); got != 3 {
			t.Fatalf("%d bytes buffered, want 3", got)
		}
		if _, err := c.pio.br.Discard(3); err != nil {
			t.Fatal(err)
		}
		go func() { done <- c.waitCommand(time.Time{}) }()
	}
	if kicked != 1 {
		t.Fatalf("no kick in 20 attempts (last %d)", kicked)
	}

	// The kick's deadline is gone: the next wait blocks until the next command.
	select {
	case err := <-done:
		t.Fatalf("wait after a kick returned %v without data", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := peer.Write([]byte("d")); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("wait returned %v", err)
	}
}

// waitDone returns what the waitCommand goroutine returned; a wait that does not end is a failure.
func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("waitCommand did not return")
		return nil
	}
}

// A kick wakes the parked goroutine (a read deadline in the past); with nothing to read it parks
// again with its own deadline back.
func TestKickEndsWait(t *testing.T) {
	if !readySupported {
		t.Skip("no readiness poller on this platform")
	}
	srv := NewServer(Config{RSAKey: testRSAKey(t)}, newFakeHandler(), testLogger(t))
	t.Cleanup(srv.Close)
	c, peer := readyPair(t, srv)
	done := make(chan error, 1)
	go func() { done <- c.waitCommand(time.Time{}) }()
	for c.parkState.Load() != parkWaiting {
		time.Sleep(time.Millisecond)
	}
	if !c.kick() {
		t.Fatal("parked connection not kicked")
	}
	for deadline := time.Now().Add(5 * time.Second); c.parkState.Load() != parkWaiting; {
		if time.Now().After(deadline) {
			t.Fatalf("kicked goroutine did not wake (state %d)", c.parkState.Load())
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("wait returned %v with nothing to read", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := peer.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("wait returned %v", err)
	}
}

func TestKickKeepsIdleDeadline(t *testing.T) {
	if !readySupported {
		t.Skip("no readiness poller on this platform")
	}
	srv := NewServer(Config{RSAKey: testRSAKey(t)}, newFakeHandler(), testLogger(t))
	t.Cleanup(srv.Close)
	c, peer := readyPair(t, srv)

	// A connection that is running (not in waitCommand) is never kicked: its events are dropped
	// and it reads its bytes itself.
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if n := srv.ready.kickReady(time.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("kicked a running connection (%d)", n)
	}
	if err := c.waitCommand(time.Time{}); err != nil || c.pio.br.Buffered() != 1 {
		t.Fatalf("wait: %v, %d buffered", err, c.pio.br.Buffered())
	}
	if _, err := c.pio.br.Discard(1); err != nil {
		t.Fatal(err)
	}

	// The idle timeout still ends a wait, kick or not.
	deadline := time.Now().Add(100 * time.Millisecond)
	if err := c.nc.SetReadDeadline(deadline); err != nil {
		t.Fatal(err)
	}
	if err := c.waitCommand(deadline); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle wait returned %v, want a deadline error", err)
	}
}

func TestReadyRemovedOnClose(t *testing.T) {
	if !readySupported {
		t.Skip("no readiness poller on this platform")
	}
	srv := NewServer(Config{RSAKey: testRSAKey(t)}, newFakeHandler(), testLogger(t))
	t.Cleanup(srv.Close)
	c, _ := readyPair(t, srv)
	fd := c.readyFd
	c.close()
	srv.ready.mu.Lock()
	_, still := srv.ready.conns[fd]
	srv.ready.mu.Unlock()
	if still || c.readyFd != -1 {
		t.Fatal("closed connection still registered")
	}
}

func TestNoReadyPollerWithoutSlices(t *testing.T) {
	srv := NewServer(Config{RSAKey: testRSAKey(t), TimeSlice: -1}, newFakeHandler(), testLogger(t))
	t.Cleanup(srv.Close)
	if srv.readyPollerFor() != nil {
		t.Fatal("poller made with time slices off")
	}
}
