package mysql

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// blockingStmt blocks until its context is done (or 10s), reporting when it starts and the cause
// of its context's end (nil after 10s).
func blockingStmt(started chan<- struct{}, ended chan<- error) stmtFunc {
	return func(ctx context.Context, _ []types.Value, w proto.ResultWriter) error {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
			return ctx.Err()
		case <-time.After(10 * time.Second):
			ended <- nil
			return w.OK(proto.OK{}, false)
		}
	}
}

// sleepStmt sleeps for d unless its context ends first, then answers one row.
func sleepStmt(d time.Duration) stmtFunc {
	return func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		select {
		case <-ctx.Done():
			return fmt.Errorf("cancelled: %w", context.Cause(ctx))
		case <-time.After(d):
		}
		return rowsOf(benchCols, benchRow)(ctx, args, w)
	}
}

func waitStarted(t *testing.T, started <-chan struct{}) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("statement did not start")
	}
}

// expectCancelled checks that the session saw its context cancelled because the client went away,
// within a second of since.
func expectCancelled(t *testing.T, ended <-chan error, since time.Time) {
	t.Helper()
	select {
	case cause := <-ended:
		if !errors.Is(cause, errClientGone) {
			t.Fatalf("statement ended with cause %v, want errClientGone", cause)
		}
		if d := time.Since(since); d > time.Second {
			t.Fatalf("cancelled %v after the client left", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("statement still running 2s after its client left")
	}
}

// Watch delays the tests run with: the default (the watch starts after 25ms) and immediate.
var watchDelays = []time.Duration{0, -1}

func TestClientGoneCancelsQuery(t *testing.T) {
	for _, delay := range watchDelays {
		for _, how := range []string{"close", "reset", "close-after-idle-timeout"} {
			t.Run(fmt.Sprintf("delay=%v/%s", delay, how), func(t *testing.T) {
				h := newFakeHandler()
				started, ended := make(chan struct{}, 1), make(chan error, 1)
				h.stmts["BLOCK"] = blockingStmt(started, ended)
				if how == "close-after-idle-timeout" {
					// The idle timeout's read deadline must not end the watch.
					h.idle = 50 * time.Millisecond
				}
				_, addr := startServer(t, Config{peerWatchDelay: delay}, h)
				c := dialRaw(t, addr)
				c.mustLogin("root", "", rawClientCaps)
				c.command(append([]byte{pmysql.ComQuery}, "BLOCK"...)...)
				waitStarted(t, started)
				switch how {
				case "reset":
					// SO_LINGER 0: the close sends RST, which the server sees as ECONNRESET.
					if err := c.nc.(*net.TCPConn).SetLinger(0); err != nil {
						t.Fatal(err)
					}
				case "close-after-idle-timeout":
					time.Sleep(200 * time.Millisecond)
				default:
					time.Sleep(50 * time.Millisecond) // let the delayed watch start, or not
				}
				left := time.Now()
				c.nc.Close()
				expectCancelled(t, ended, left)
			})
		}
	}
}

func TestClientGoneCancelsExecute(t *testing.T) {
	h := newFakeHandler()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	h.stmts["SELECT ?"] = blockingStmt(started, ended)
	_, addr := startServer(t, Config{}, h)
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps|pmysql.ClientDeprecateEOF)
	c.command(append([]byte{pmysql.ComStmtPrepare}, "SELECT ?"...)...)
	ok := c.mustRead()
	if ok[0] != hdrOK {
		t.Fatalf("prepare: %q", ok)
	}
	for range 2 { // the parameter's and the column's definitions
		c.mustRead()
	}
	id := binary.LittleEndian.Uint32(ok[1:])
	body := execBody(id, []byte{0}, []byte{byte(pmysql.TypeLonglong), 0}, le64(7))
	c.command(append([]byte{pmysql.ComStmtExecute}, body...)...)
	waitStarted(t, started)
	left := time.Now()
	c.nc.Close()
	expectCancelled(t, ended, left)
}

// TestDriverTimeoutCancelsQuery is the case that matters in practice: go-sql-driver/mysql gives up
// on a context deadline by closing the socket, and the statement must stop.
func TestDriverTimeoutCancelsQuery(t *testing.T) {
	h := newFakeHandler()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	h.stmts["BLOCK"] = blockingStmt(started, ended)
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "root", "", "")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := db.ExecContext(ctx, "BLOCK")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ExecContext: %v, want context.DeadlineExceeded", err)
	}
	<-started
	expectCancelled(t, ended, time.Now())
}

// TestPipelinedCommandNotLost sends the next command while the previous one runs, both while the
// watch is running and before it starts: the watch must leave it to the command loop, and not take
// it for a client gone.
func TestPipelinedCommandNotLost(t *testing.T) {
	for _, delay := range watchDelays {
		for _, when := range []time.Duration{0, 5 * time.Millisecond, 60 * time.Millisecond} {
			t.Run(fmt.Sprintf("delay=%v/after=%v", delay, when), func(t *testing.T) {
				h := newFakeHandler()
				h.stmts["SLOW"] = sleepStmt(150 * time.Millisecond)
				h.stmts["FAST"] = rowsOf(benchCols, benchRow)
				h.idle = 10 * time.Second // the deadline dance must leave it working
				_, addr := startServer(t, Config{peerWatchDelay: delay}, h)
				c := dialRaw(t, addr)
				c.mustLogin("root", "", rawClientCaps)
				c.command(append([]byte{pmysql.ComQuery}, "SLOW"...)...)
				time.Sleep(when)
				c.command(append([]byte{pmysql.ComQuery}, "FAST"...)...)
				for _, q := range []string{"SLOW", "FAST"} {
					c.p.seq = 1 // both commands were sent before reading: each response starts at 1
					if ncols, rows, _ := readResultSet(t, c, false); ncols != len(benchCols) || len(rows) != 1 {
						t.Fatalf("%s: %d columns, %d rows", q, ncols, len(rows))
					}
				}
				c.command(pmysql.ComPing)
				c.expectOK()
			})
		}
	}
}

// TestWatchThenIdleTimeout checks that the read deadline set to stop a watch does not outlive the
// command: the connection keeps serving, and its idle timeout still applies.
func TestWatchThenIdleTimeout(t *testing.T) {
	for _, idle := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(fmt.Sprint("idle=", idle), func(t *testing.T) {
			h := newFakeHandler()
			h.stmts["SLOW"] = sleepStmt(60 * time.Millisecond)
			h.idle = idle
			_, addr := startServer(t, Config{}, h)
			c := dialRaw(t, addr)
			c.mustLogin("root", "", rawClientCaps)
			c.command(append([]byte{pmysql.ComQuery}, "SLOW"...)...)
			readResultSet(t, c, false)
			time.Sleep(100 * time.Millisecond) // an idle connection, after a past deadline
			c.command(pmysql.ComPing)
			c.expectOK()
			if idle == 0 {
				return
			}
			start := time.Now()
			c.expectClosed()
			if d := time.Since(start); d < idle/2 {
				t.Fatalf("closed after %v, idle timeout %v", d, idle)
			}
		})
	}
}

// TestWatchStartStopRace runs statements whose duration is around the watch delay, so that the
// watch is stopped before, while and after it starts.
func TestWatchStartStopRace(t *testing.T) {
	for _, delay := range []time.Duration{-1, time.Millisecond} {
		t.Run(fmt.Sprint("delay=", delay), func(t *testing.T) {
			h := newFakeHandler()
			h.stmts["FAST"] = rowsOf(benchCols, benchRow)
			h.stmts["JITTER"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
				return rowsOf(benchCols, benchRow)(ctx, args, w)
			}
			h.idle = time.Minute
			_, addr := startServer(t, Config{peerWatchDelay: delay}, h)
			c := dialRaw(t, addr)
			c.mustLogin("root", "", rawClientCaps)
			for i := range 300 {
				q := "JITTER"
				if i%3 == 0 {
					q = "FAST"
				}
				c.command(append([]byte{pmysql.ComQuery}, q...)...)
				if ncols, rows, _ := readResultSet(t, c, false); ncols != len(benchCols) || len(rows) != 1 {
					t.Fatalf("%d %s: %d columns, %d rows", i, q, ncols, len(rows))
				}
			}
		})
	}
}

// TestServerCloseDuringWatch checks that Close ends a command whose client is being watched.
func TestServerCloseDuringWatch(t *testing.T) {
	h := newFakeHandler()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	h.stmts["BLOCK"] = blockingStmt(started, ended)
	srv, addr := startServer(t, Config{peerWatchDelay: -1}, h)
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps)
	c.command(append([]byte{pmysql.ComQuery}, "BLOCK"...)...)
	waitStarted(t, started)
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	if cause := <-ended; !errors.Is(cause, context.Canceled) {
		t.Fatalf("cause %v, want context.Canceled", cause)
	}
}

// TestNetPipeNotWatched checks that a connection that is not a socket is served without a watch.
func TestNetPipeNotWatched(t *testing.T) {
	h := newFakeHandler()
	h.stmts["SLOW"] = sleepStmt(30 * time.Millisecond)
	srv := NewServer(Config{RSAKey: testRSAKey(t), peerWatchDelay: -1}, h, testLogger(t))
	cn, sn := net.Pipe()
	sc := newConn(srv, sn)
	if sc.watch.rc != nil {
		t.Fatal("net.Pipe conn is watched")
	}
	srv.mu.Lock()
	srv.conns[sc] = struct{}{}
	srv.wg.Add(1)
	srv.mu.Unlock()
	go sc.serve()
	t.Cleanup(srv.Close)
	c := newRawClientOn(t, cn)
	c.mustLogin("root", "", rawClientCaps)
	c.command(append([]byte{pmysql.ComQuery}, "SLOW"...)...)
	if ncols, rows, _ := readResultSet(t, c, false); ncols != len(benchCols) || len(rows) != 1 {
		t.Fatalf("%d columns, %d rows", ncols, len(rows))
	}
}

// TestWatchReplacesCancelledContext checks that once the watch has cancelled the command context,
// the next command gets a fresh one.
func TestWatchReplacesCancelledContext(t *testing.T) {
	srv := NewServer(Config{RSAKey: testRSAKey(t), peerWatchDelay: -1}, newFakeHandler(), testLogger(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := newConn(srv, nc)
	first := c.cmdCtx
	c.beginCommand()
	peer.Close()
	select {
	case <-first.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("command context not cancelled")
	}
	c.endCommand()
	if c.cmdCtx == first || c.cmdCtx.Err() != nil {
		t.Fatal("cancelled command context kept")
	}
	if c.ctx.Err() != nil {
		t.Fatal("connection context cancelled")
	}
}
