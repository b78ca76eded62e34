//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mysql

import (
	"io"

	"golang.org/x/sys/unix"
)

const peekSupported = true

// peekPeer looks at the socket fd without consuming anything or blocking. done is false when
// there is nothing to see yet (wait for readability and call again); otherwise gone is nil if the
// client sent bytes (its next command), or why it is gone: io.EOF when it closed the connection, or
// the socket's error (ECONNRESET...).
func peekPeer(fd uintptr) (done bool, gone error) {
	var b [1]byte
	for {
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case n > 0:
			// Checked first: err may be about the peer's address (Unix sockets return one).
			return true, nil
		case err == unix.EINTR:
			// Retry now: the poller is edge-triggered, waiting could miss bytes already there.
		case err == unix.EAGAIN || err == unix.EWOULDBLOCK:
			return false, nil
		case err != nil:
			return true, err
		default:
			return true, io.EOF
		}
	}
}
