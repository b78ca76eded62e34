package mysql

import (
	"errors"
	"os"
	"time"
)

// Waking a parked connection whose command has arrived (the poller is ready_linux.go).
//
// Between commands a connection waits for the first byte of its next command in waitCommand, with
// nothing of it consumed: a wait that a read deadline interrupts can simply be resumed. kick sets
// a deadline in the past to end such a wait early; the connection then restores the deadline it
// had (its idle timeout, or none) and waits again, finding the bytes there. parkState says which
// phase the connection is in, so that a kick never lands on a read that is consuming a packet, and
// kickMu orders a kick's deadline before the restore.

// Park states (conn.parkState).
const (
	parkNone    int32 = iota // running, or reading a command whose first bytes are buffered
	parkWaiting              // in waitCommand, nothing buffered
	parkKicked               // kick is setting, or has set, a past read deadline
)

// registerReady puts c's socket in the server's readiness poller. TLS connections are left out: a
// deadline in the middle of a TLS record is not worth the risk for what it gains.
func (c *conn) registerReady() {
	p := c.srv.readyPollerFor()
	if p == nil || c.tlsConn != nil || c.watch.rc == nil {
		return
	}
	c.slice.ready = p
	_ = c.watch.rc.Control(func(fd uintptr) { p.add(c, int(fd)) })
}

// waitCommand returns once the next command's first bytes are buffered, or with the read's error.
// deadline is the read deadline serveCommand set (zero: none), restored after a kick.
func (c *conn) waitCommand(deadline time.Time) error {
	if c.readyFd < 0 || c.pio.br.Buffered() > 0 {
		return nil
	}
	for {
		c.parkState.Store(parkWaiting)
		_, err := c.pio.br.Peek(1)
		if c.parkState.CompareAndSwap(parkWaiting, parkNone) {
			return err
		}
		// Kicked: once kick has set its deadline (it holds kickMu while it does), put ours back.
		c.kickMu.Lock()
		c.parkState.Store(parkNone)
		c.kickMu.Unlock()
		if derr := c.nc.SetReadDeadline(deadline); derr != nil {
			return derr
		}
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		// The kick's deadline ended the wait; the bytes are there (or the real deadline passed,
		// which the next wait reports).
	}
}

// kick wakes c if it is waiting in waitCommand, and reports whether it did.
func (c *conn) kick() bool {
	c.kickMu.Lock()
	defer c.kickMu.Unlock()
	if !c.parkState.CompareAndSwap(parkWaiting, parkKicked) {
		return false
	}
	_ = c.nc.SetReadDeadline(aLongTimeAgo)
	return true
}
