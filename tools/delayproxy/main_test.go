package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"
)

// startEcho serves an echo server; it returns its address.
func startEcho(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &proxy{target: target, delay: delay}
	go func() { _ = p.serve(ln) }()
	return ln.Addr().String()
}

func TestRoundTripDelayed(t *testing.T) {
	const delay = 20 * time.Millisecond
	addr := startProxy(t, startEcho(t), delay)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4)
	for i := 0; i < 3; i++ {
		start := time.Now()
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		rtt := time.Since(start)
		if string(buf) != "ping" {
			t.Fatalf("echo returned %q", buf)
		}
		if rtt < 2*delay {
			t.Fatalf("round trip took %v, want at least %v", rtt, 2*delay)
		}
		if rtt > 2*delay+500*time.Millisecond {
			t.Fatalf("round trip took %v, far more than %v", rtt, 2*delay)
		}
	}
}

// A large transfer arrives whole and in order, and far faster than one delay per chunk would allow.
func TestOrderAndThroughput(t *testing.T) {
	const delay = 20 * time.Millisecond
	addr := startProxy(t, startEcho(t), delay)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 16<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		// Small writes: many chunks, each of which would cost a delay if the proxy serialised them.
		for off := 0; off < len(data); off += 4096 {
			if _, err := c.Write(data[off : off+4096]); err != nil {
				errc <- err
				return
			}
		}
		errc <- c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes back, not the %d sent in order", len(got), len(data))
	}
	// 4096 writes of 4 KiB: serialised delays would take > 80 s.
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("16 MiB took %v through the proxy", el)
	}
}

func TestTargetDownClosesClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	addr := startProxy(t, dead, time.Millisecond)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read from a proxy whose target is down succeeded")
	}
}
