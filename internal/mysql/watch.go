package mysql

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// Watching for a client that goes away during a command.
//
// Session calls made for a command get conn.cmdCtx, a child of the connection's context. While a
// command runs, a watch waits for the socket to become readable and peeks at it without consuming
// anything (peekPeer): end of stream or an error means the client is gone (it closed the
// connection, or its driver gave up on a timeout), and cmdCtx is cancelled with cause
// errClientGone, so that a long statement stops instead of holding its locks for minutes. MySQL
// itself only notices when it next writes to the client. Bytes to read mean the client pipelined
// its next command: the watch ends without cancelling, leaving them to the command loop. (A client
// that pipelines a command and then closes is thus not noticed; nor can a peek tell a client that
// only shut down its sending side from one that is gone, but MySQL clients do not do that.)
//
// A watch costs a goroutine, a system call and a read-deadline dance, a few microseconds of CPU,
// comparable to a whole point select, so it starts only once the command has run for
// peerWatchDelay: fast statements pay for a timer reset and stop, about 0.1us and no allocation.
// For the same reason cmdCtx lives as long as the connection rather than one command: it is
// replaced only after it has been cancelled. Only TCP and Unix sockets are watched, on platforms
// where peekSupported; others (net.Pipe in tests) are not.
//
// The watch goroutine reads through the socket's syscall.RawConn; to end it, endCommand sets a read
// deadline in the past and waits for it to return. The command loop sets the read deadline it
// wants (the idle timeout, or none) before each read, so the watch clears the deadline when it
// starts: the idle timeout must not end it during a long command.

// defaultPeerWatchDelay is how long a command runs before its client is watched.
const defaultPeerWatchDelay = 25 * time.Millisecond

// errClientGone is the cause (context.Cause) of a command context cancelled because the client
// went away.
var errClientGone = errors.New("mysql: client closed the connection")

// aLongTimeAgo is a read deadline that has passed, to wake a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// peerWatch is a connection's watch state. Fields without a comment belong to the connection's
// goroutine.
type peerWatch struct {
	rc    syscall.RawConn // nil: the connection cannot be watched
	delay time.Duration   // < 0: watch as soon as a command starts, without a timer
	timer *time.Timer     // starts watchPeer after delay; nil until first needed
	armed bool            // the current command has a watch pending or started
	done  chan struct{}   // a started watchPeer sends here when it returns

	mu       sync.Mutex // guards the fields below, shared with watchPeer
	cancel   context.CancelCauseFunc
	stopping bool // the command has ended: watchPeer must not (or no longer) watch
}

// initWatch prepares c's watch; a net.Conn that is not a socket is never watched. Session calls
// get cmdCtx, a child of ctx that the watch cancels, or ctx itself when there is no watch.
func (c *conn) initWatch(delay time.Duration) {
	c.cmdCtx = c.ctx
	c.watch.delay = delay
	if !peekSupported {
		return
	}
	var sc syscall.Conn
	switch nc := c.nc.(type) {
	case *net.TCPConn:
		sc = nc
	case *net.UnixConn:
		sc = nc
	default:
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	c.watch.rc = rc
	c.watch.done = make(chan struct{}, 1)
	c.cmdCtx, c.watch.cancel = context.WithCancelCause(c.ctx)
}

// beginCommand arms the watch for the command about to run. It costs a timer reset: a context per
// command would cost more than the rest, and is not needed, as a cancelled cmdCtx is replaced
// (endCommand).
func (c *conn) beginCommand() {
	w := &c.watch
	// Bytes already buffered are the client's next command: it is still there, and the watch
	// would only see what follows them.
	if w.rc == nil || c.pio.br.Buffered() > 0 {
		return
	}
	w.armed = true
	switch {
	case w.delay < 0:
		go c.watchPeer()
	case w.timer == nil:
		w.timer = time.AfterFunc(w.delay, c.watchPeer)
	default:
		w.timer.Reset(w.delay)
	}
}

// endCommand stops the watch, waiting for its goroutine if it started.
func (c *conn) endCommand() {
	w := &c.watch
	if !w.armed {
		return
	}
	w.armed = false
	if w.delay >= 0 && w.timer.Stop() {
		return // the watch never started
	}
	// watchPeer has started, or is about to: stop it and wait.
	w.mu.Lock()
	w.stopping = true
	w.mu.Unlock()
	_ = c.nc.SetReadDeadline(aLongTimeAgo)
	<-w.done
	c.deadlineSet = true // serveCommand must set the deadline it wants again
	w.mu.Lock()
	w.stopping = false
	if c.cmdCtx.Err() != nil {
		// Cancelled: whatever follows (the connection is probably ending) needs a fresh context.
		c.cmdCtx, w.cancel = context.WithCancelCause(c.ctx)
	}
	w.mu.Unlock()
}

// watchPeer runs on its own goroutine: it waits until the socket is readable and cancels the
// command if the client is gone. It returns when endCommand sets a past read deadline, or when the
// connection is closed.
func (c *conn) watchPeer() {
	w := &c.watch
	defer func() { w.done <- struct{}{} }()
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		return
	}
	// Under the lock, so that endCommand's past deadline comes after this.
	err := c.nc.SetReadDeadline(time.Time{})
	cancel := w.cancel
	w.mu.Unlock()
	if err != nil {
		return
	}
	var gone error
	if err := w.rc.Read(func(fd uintptr) bool {
		var done bool
		done, gone = peekPeer(fd)
		if done && gone == nil && c.tlsConn != nil {
			done, gone = tlsPeerGone(fd) // bytes under TLS may be a close_notify (tls_watch_linux.go)
		}
		return done
	}); err != nil || gone == nil {
		return // stopped, closed, or the client sent its next command
	}
	c.srv.log.Debug("mysql: client went away during a command; cancelling it",
		"conn", c.id, "err", gone)
	cancel(errClientGone)
}
