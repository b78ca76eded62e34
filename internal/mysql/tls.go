package mysql

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/tlsconf"
)

// TLS, as MySQL does it: the greeting advertises CLIENT_SSL; a client that wants TLS answers with
// an SSLRequest (the first 32 bytes of a HandshakeResponse41, sequence id 1) instead of its
// response, both sides run a TLS handshake on the raw socket, and the client then sends its
// HandshakeResponse41 over TLS with the next sequence id (2): the exchange's sequence continues
// across the upgrade. Everything after, authentication included, is encrypted.
//
// c.nc stays the raw socket: Server.Close and KILL close it from other goroutines, the peer watch
// peeks at it, and deadlines set on it apply to the TLS connection reading from it. Reads and
// writes go through c.tlsConn once it is set.

// errSecureTransportRequired is require_secure_transport's refusal.
const errSecureTransportRequired = 3159

// capabilities is what this server advertises: CLIENT_SSL only when it has a certificate.
func (s *Server) capabilities() uint32 {
	if s.cfg.TLS != nil {
		return serverCapabilities | pmysql.ClientSSL
	}
	return serverCapabilities
}

// upgradeTLS runs the server side of the TLS handshake after an SSLRequest and makes the packet
// layer read and write through it. The caller then reads the handshake response over TLS. The
// handshake is bounded by the connect timeout already set on the socket.
func (c *conn) upgradeTLS() error {
	// The client may have sent its ClientHello right behind the SSLRequest, and the packet reader
	// may hold some of it already: TLS reads those bytes first.
	raw := &bufferedConn{Conn: c.nc, br: c.pio.br}
	tc := tls.Server(raw, c.srv.cfg.TLS)
	if err := tc.HandshakeContext(c.ctx); err != nil {
		return fmt.Errorf("mysql: TLS handshake: %w", err)
	}
	c.tlsConn = tc
	c.pio.br = bufio.NewReaderSize(tc, readBufferBytes)
	c.pio.bw.Reset(tc)
	return nil
}

// secureTransport reports whether the connection is secure in MySQL's sense: TLS, or a Unix socket
// (which never leaves the host). REQUIRE SSL, require_secure_transport and caching_sha2_password's
// cleartext full authentication ask this.
func (c *conn) secureTransport() bool {
	if c.tlsConn != nil {
		return true
	}
	_, unix := c.nc.(*net.UnixConn)
	return unix
}

// tlsState returns the negotiated version and cipher as MySQL names them (Ssl_version,
// Ssl_cipher); "" without TLS.
func (c *conn) tlsState() (version, cipher string) {
	if c.tlsConn == nil {
		return "", ""
	}
	st := c.tlsConn.ConnectionState()
	return tlsconf.VersionName(st.Version), tlsconf.CipherName(st.CipherSuite)
}

// refuseInsecure sends 3159 and returns true when require_secure_transport is on and the
// connection is not secure.
func (c *conn) refuseInsecure() bool {
	if c.secureTransport() || c.srv.cfg.RequireSecureTransport == nil || !c.srv.cfg.RequireSecureTransport() {
		return false
	}
	c.sendErr(sqlerr.New(errSecureTransportRequired,
		"Connections using insecure transport are prohibited while --require_secure_transport=ON."))
	return true
}

// bufferedConn reads what br already buffered before reading the connection itself.
type bufferedConn struct {
	net.Conn
	br *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) {
	if b.br != nil && b.br.Buffered() > 0 {
		return b.br.Read(p[:min(len(p), b.br.Buffered())])
	}
	return b.Conn.Read(p)
}
