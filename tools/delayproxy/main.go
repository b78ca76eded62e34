// Command delayproxy is a TCP proxy that adds a fixed one-way delay, for benchmarks that need a
// "network" between processes on one machine (bench/cluster-compare.sh).
//
// Usage:
//
//	delayproxy --listen 127.0.0.1:PORT --target 127.0.0.1:PORT --delay 2ms
//
// Every accepted connection gets its own connection to --target. In each direction one goroutine
// reads whatever arrives and queues it with the time it is due (arrival + --delay); another writes
// the queued chunks in order, each no earlier than its due time. Reading never waits on the delay,
// so a stream's throughput is kept and only its latency grows: a round trip through the proxy costs
// 2 x --delay more. A half close (EOF) is passed on after the data before it; an error on either
// side closes both. The proxy prints "listening on ADDR" to stderr once it accepts connections and
// runs until killed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept connections on (HOST:PORT)")
	target := flag.String("target", "", "address to forward every connection to (HOST:PORT)")
	delay := flag.Duration("delay", 2*time.Millisecond, "time added to every byte, in each direction")
	verbose := flag.Bool("v", false, "log every connection and its end")
	flag.Parse()
	if *target == "" || flag.NArg() != 0 || *delay < 0 {
		fmt.Fprintln(os.Stderr, "usage: delayproxy --listen HOST:PORT --target HOST:PORT [--delay 2ms] [-v]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("delayproxy: %v", err)
	}
	p := &proxy{target: *target, delay: *delay}
	if *verbose {
		p.logf = log.Printf
	}
	log.Printf("delayproxy: listening on %s, forwarding to %s, delay %v each way", ln.Addr(), *target, *delay)
	if err := p.serve(ln); err != nil {
		log.Fatalf("delayproxy: %v", err)
	}
}

type proxy struct {
	target string
	delay  time.Duration
	logf   func(format string, args ...any) // nil: quiet
}

// serve accepts connections on ln until it is closed.
func (p *proxy) serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		go p.handle(c)
	}
}

func (p *proxy) handle(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		if p.logf != nil {
			p.logf("delayproxy: %s: dial %s: %v", client.RemoteAddr(), p.target, err)
		}
		client.Close()
		return
	}
	if p.logf != nil {
		p.logf("delayproxy: %s -> %s: open", client.RemoteAddr(), p.target)
	}
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			client.Close()
			server.Close()
		})
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(server, client, closeBoth) }()
	go func() { defer wg.Done(); p.pipe(client, server, closeBoth) }()
	wg.Wait()
	closeBoth()
	if p.logf != nil {
		p.logf("delayproxy: %s -> %s: closed", client.RemoteAddr(), p.target)
	}
}

// chunk is what one read returned, due for writing at due; a nil data with eof set ends the stream.
type chunk struct {
	due  time.Time
	data []byte
	eof  bool
}

// queueChunks bounds what one direction holds in flight (chunks of up to 64 KiB): far more than a
// few milliseconds of loopback traffic for the workloads this is for; when full, reading waits.
const queueChunks = 4096

// pipe copies src to dst, every chunk delayed by p.delay, in order. On EOF from src it half-closes
// dst after the data; on any error it calls closeBoth, which unblocks the other direction too.
func (p *proxy) pipe(dst, src net.Conn, closeBoth func()) {
	q := make(chan chunk, queueChunks)
	done := make(chan struct{})
	go func() {
		defer close(done)
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		for c := range q {
			if d := time.Until(c.due); d > 0 {
				timer.Reset(d)
				<-timer.C
			}
			if c.eof {
				if tc, ok := dst.(*net.TCPConn); ok {
					if tc.CloseWrite() == nil {
						continue
					}
				}
				closeBoth()
				continue
			}
			if _, err := dst.Write(c.data); err != nil {
				closeBoth()
				// Keep draining so the reader never blocks on a full queue.
				for range q {
				}
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{due: time.Now().Add(p.delay), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				q <- chunk{due: time.Now().Add(p.delay), eof: true}
			} else {
				// A reset or a close by the other direction: nothing more will come; end both.
				closeBoth()
			}
			break
		}
	}
	close(q)
	<-done
}
