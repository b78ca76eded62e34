package mysql

import (
	"io"

	"golang.org/x/sys/unix"
)

// tlsPeerGone is the peer watch's second look at a TLS connection whose socket has bytes to read
// (watch.go). Unlike plaintext, they cannot be taken for the client's next command: a client that
// closes gracefully first sends a close_notify record, then its FIN. So the watch goes on until the
// socket reports the peer's FIN (POLLRDHUP, which pending bytes do not hide) or the command ends:
// done=false waits for the next readiness edge, which the FIN brings.
func tlsPeerGone(fd uintptr) (done bool, gone error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	for {
		n, err := unix.Poll(fds, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return true, nil // cannot tell: leave it to the command loop, as without TLS
		case n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0:
			return true, io.EOF
		}
		return false, nil
	}
}
