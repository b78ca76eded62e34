//go:build !linux

package mysql

// tlsPeerGone: without POLLRDHUP, bytes on a TLS socket are left to the command loop as without
// TLS (a client closing gracefully mid-command is then not noticed; see tls_watch_linux.go).
func tlsPeerGone(fd uintptr) (done bool, gone error) { return true, nil }
