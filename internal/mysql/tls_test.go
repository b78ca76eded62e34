package mysql

// TLS with the real go-sql-driver/mysql client, and the upgrade byte by byte.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/tlsconf"
)

var (
	tlsOnce    sync.Once
	tlsSet     *tlsconf.Set // the server's generated CA and certificate
	tlsErr     error
	tlsOtherCA *x509.CertPool // a CA that signed nothing of the server's
)

// testTLS generates, once per test binary, a server certificate as a data directory gets it, a
// second unrelated CA, and registers the driver's TLS configurations: "kiln-ca" verifies the server
// against its CA (VERIFY_CA, and the host too: the certificate names 127.0.0.1), "other-ca" against
// the unrelated one. tls=skip-verify is the driver's REQUIRED.
func testTLS(t testing.TB) *tlsconf.Set {
	t.Helper()
	tlsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kiln-mysql-tls")
		if err != nil {
			tlsErr = err
			return
		}
		defer os.RemoveAll(dir)
		other, err := os.MkdirTemp("", "kiln-mysql-tls-other")
		if err != nil {
			tlsErr = err
			return
		}
		defer os.RemoveAll(other)
		files, _, err := tlsconf.EnsureAuto(dir)
		if err != nil {
			tlsErr = err
			return
		}
		if tlsSet, err = tlsconf.Load(files); err != nil {
			tlsErr = err
			return
		}
		ofiles, _, err := tlsconf.EnsureAuto(other)
		if err != nil {
			tlsErr = err
			return
		}
		oset, err := tlsconf.Load(ofiles)
		if err != nil {
			tlsErr = err
			return
		}
		tlsOtherCA = oset.Pool
		tlsErr = gomysql.RegisterTLSConfig("kiln-ca", &tls.Config{RootCAs: tlsSet.Pool})
		if tlsErr == nil {
			tlsErr = gomysql.RegisterTLSConfig("other-ca", &tls.Config{RootCAs: tlsOtherCA})
		}
	})
	if tlsErr != nil {
		t.Fatal(tlsErr)
	}
	return tlsSet
}

func TestDriverTLS(t *testing.T) {
	set := testTLS(t)
	tests := []struct {
		name      string
		noTLS     bool // the server has no certificate
		require   bool // require_secure_transport
		reqSSL    bool // the account has REQUIRE SSL
		fullAuth  bool
		plugin    string
		user, pw  string
		params    string
		wantTLS   bool
		wantErr   string // substring; "" = success
		wantInErr string // a second substring
	}{
		{name: "REQUIRED (skip-verify)", params: "tls=skip-verify", user: "alice", pw: "secret", wantTLS: true},
		{name: "VERIFY_CA", params: "tls=kiln-ca", user: "alice", pw: "secret", wantTLS: true},
		{name: "VERIFY_CA native", plugin: NativePassword, params: "tls=kiln-ca", user: "alice", pw: "secret", wantTLS: true},
		// caching_sha2_password's full authentication over TLS: the password in cleartext, no RSA.
		{name: "sha2 full auth over TLS", fullAuth: true, params: "tls=kiln-ca", user: "bob", pw: "pässwörd with spaces and a long tail 0123456789", wantTLS: true},
		{name: "sha2 full auth over TLS wrong", fullAuth: true, params: "tls=kiln-ca", user: "alice", pw: "secret!", wantErr: "Error 1045"},
		{name: "sha2 full auth over TLS empty", fullAuth: true, params: "tls=kiln-ca", user: "root", wantTLS: true},
		{name: "wrong CA", params: "tls=other-ca", user: "alice", pw: "secret", wantErr: "certificate signed by unknown authority"},
		{name: "preferred", params: "tls=preferred", user: "alice", pw: "secret", wantTLS: true},
		{name: "plain", params: "tls=false", user: "alice", pw: "secret"},
		{name: "require_secure_transport plain", require: true, params: "tls=false", user: "alice", pw: "secret",
			wantErr: "Error 3159 (HY000): Connections using insecure transport are prohibited while --require_secure_transport=ON."},
		{name: "require_secure_transport plain wrong password", require: true, params: "tls=false", user: "alice", pw: "nope", wantErr: "Error 3159"},
		{name: "require_secure_transport TLS", require: true, params: "tls=skip-verify", user: "alice", pw: "secret", wantTLS: true},
		{name: "REQUIRE SSL over TLS", reqSSL: true, params: "tls=kiln-ca", user: "alice", pw: "secret", wantTLS: true},
		{name: "REQUIRE SSL plain", reqSSL: true, params: "tls=false", user: "alice", pw: "secret", wantErr: "Error 1045"},
		{name: "no TLS offered, preferred", noTLS: true, params: "tls=preferred", user: "alice", pw: "secret"},
		{name: "no TLS offered, required", noTLS: true, params: "tls=skip-verify", user: "alice", pw: "secret", wantErr: "TLS requested but server does not support TLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHandler()
			h.defaultPlugin = tt.plugin
			h.requireSSL = map[string]bool{tt.user: tt.reqSSL}
			cfg := Config{AuthPlugin: tt.plugin, CachingSHA2FullAuth: tt.fullAuth}
			if !tt.noTLS {
				cfg.TLS = set.MySQL()
			}
			var asked atomic.Int32
			cfg.RequireSecureTransport = func() bool { asked.Add(1); return tt.require }
			_, addr := startServer(t, cfg, h)
			db := openDB(t, addr, tt.user, tt.pw, tt.params)
			err := db.Ping()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			info := h.lastInfo()
			if info.TLS != tt.wantTLS {
				t.Fatalf("ConnInfo.TLS = %v, want %v", info.TLS, tt.wantTLS)
			}
			switch {
			case tt.wantTLS && (info.TLSVersion != "TLSv1.3" || info.TLSCipher == "" || info.Capabilities&pmysql.ClientSSL == 0):
				t.Fatalf("TLS ConnInfo %+v", info)
			case !tt.wantTLS && (info.TLSVersion != "" || info.TLSCipher != ""):
				t.Fatalf("plain ConnInfo %+v", info)
			}
			// Secure connections need not ask; plain ones must.
			if !tt.wantTLS && asked.Load() == 0 {
				t.Fatal("require_secure_transport was never asked of a plain connection")
			}
			// The connection works after the upgrade: a query and its result.
			h.stmts["SELECT 1"] = rowsOf(typedColumns[:1], typedRows[0][:1])
			if _, err := db.Exec("SELECT 1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTLSVersions: TLS 1.2 works too (the cipher reported by its OpenSSL name), and TLS 1.1 is
// refused, as MySQL 8's tls_version.
func TestTLSVersions(t *testing.T) {
	set := testTLS(t)
	h := newFakeHandler()
	_, addr := startServer(t, Config{TLS: set.MySQL()}, h)
	if err := gomysql.RegisterTLSConfig("kiln-tls12", &tls.Config{RootCAs: set.Pool, MaxVersion: tls.VersionTLS12}); err != nil {
		t.Fatal(err)
	}
	if err := gomysql.RegisterTLSConfig("kiln-tls11", &tls.Config{RootCAs: set.Pool, MaxVersion: tls.VersionTLS11}); err != nil {
		t.Fatal(err)
	}
	if err := openDB(t, addr, "alice", "secret", "tls=kiln-tls12").Ping(); err != nil {
		t.Fatal(err)
	}
	if info := h.lastInfo(); info.TLSVersion != "TLSv1.2" || info.TLSCipher != "ECDHE-ECDSA-AES128-GCM-SHA256" {
		t.Fatalf("TLS 1.2 ConnInfo %+v", info)
	}
	if err := openDB(t, addr, "alice", "secret", "tls=kiln-tls11").Ping(); err == nil {
		t.Fatal("a TLS 1.1 client connected")
	}
}

// coalescingConn holds back its first write (the SSLRequest) and sends it together with the
// second (the ClientHello), so the server reads both at once.
type coalescingConn struct {
	net.Conn
	held []byte
	n    int
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	c.n++
	if c.n == 1 {
		c.held = append([]byte(nil), p...)
		return len(p), nil
	}
	if c.held != nil {
		b := append(c.held, p...)
		c.held = nil
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// TestTLSUpgradeRaw: the SSLRequest and the ClientHello arriving in one read (the server's packet
// reader has buffered the start of TLS), the handshake response over TLS with sequence id 2, then
// a command; and a second SSLRequest over TLS is a bad handshake.
func TestTLSUpgradeRaw(t *testing.T) {
	set := testTLS(t)
	h := newFakeHandler()
	h.defaultPlugin = NativePassword
	_, addr := startServer(t, Config{TLS: set.MySQL(), AuthPlugin: NativePassword}, h)
	for _, again := range []bool{false, true} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		cc := &coalescingConn{Conn: nc}
		c := newRawClientOn(t, cc)
		if c.caps&pmysql.ClientSSL == 0 {
			t.Fatal("greeting without CLIENT_SSL")
		}
		caps := rawClientCaps | pmysql.ClientSSL
		c.write(buildHandshakeResponse(caps, "", nil, "", "", nil)[:32]) // the SSLRequest, held back
		tc := tls.Client(cc, &tls.Config{RootCAs: set.Pool, ServerName: "localhost"})
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		seq := c.p.seq
		if seq != 2 {
			t.Fatalf("sequence after the SSLRequest %d, want 2", seq)
		}
		c.p = newPacketIO(tc, tc, 1<<30)
		c.p.seq = seq
		if again {
			c.write(buildHandshakeResponse(caps, "", nil, "", "", nil)[:32])
			if reply := c.mustRead(); reply[0] != hdrErr || !strings.Contains(string(reply), "Bad handshake") {
				t.Fatalf("second SSLRequest: %q", reply)
			}
			tc.Close()
			continue
		}
		c.write(buildHandshakeResponse(caps, "alice", scrambleNative(c.scramble, "secret"), "", NativePassword, nil))
		if reply := c.mustRead(); reply[0] != hdrOK {
			t.Fatalf("login over TLS: %q", reply)
		}
		if info := h.lastInfo(); !info.TLS {
			t.Fatalf("ConnInfo %+v", info)
		}
		tc.Close()
	}
}

// A client that asks for TLS and then does not speak it (plaintext, or nothing at all until the
// connect timeout) loses its connection; the server goes on serving others.
func TestTLSUpgradeGarbage(t *testing.T) {
	set := testTLS(t)
	h := newFakeHandler()
	_, addr := startServer(t, Config{TLS: set.MySQL(), ConnectTimeout: 500 * time.Millisecond}, h)
	for _, after := range [][]byte{[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), nil} {
		c := dialRaw(t, addr)
		c.write(buildHandshakeResponse(rawClientCaps|pmysql.ClientSSL, "", nil, "", "", nil)[:32])
		if after != nil {
			if _, err := c.nc.Write(after); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		// EOF, or a reset when the server closed with our bytes unread: either way, closed.
		if _, err := io.ReadAll(c.nc); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("after %q: the server did not close the connection: %v", after, err)
		}
		t.Logf("after %q: closed in %v", after, time.Since(start).Round(time.Millisecond))
	}
	if err := openDB(t, addr, "alice", "secret", "tls=kiln-ca").Ping(); err != nil {
		t.Fatal(err)
	}
}

// dialTLSRaw logs in as root over TLS with a raw client; the returned tls.Conn is the client's.
func dialTLSRaw(t *testing.T, addr string, set *tlsconf.Set) (*rawClient, *tls.Conn) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := newRawClientOn(t, nc)
	caps := rawClientCaps | pmysql.ClientSSL
	c.write(buildHandshakeResponse(caps, "", nil, "", "", nil)[:32])
	tc := tls.Client(nc, &tls.Config{RootCAs: set.Pool, ServerName: "localhost"})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	seq := c.p.seq
	c.p = newPacketIO(tc, tc, 1<<30)
	c.p.seq = seq
	c.write(buildHandshakeResponse(caps, "root", nil, "", c.plugin, nil))
	reply := c.mustRead()
	if len(reply) == 2 && reply[0] == hdrAuthMore && reply[1] == sha2FastAuthOK {
		reply = c.mustRead()
	}
	if reply[0] != hdrOK {
		t.Fatalf("login over TLS: %q", reply)
	}
	return c, tc
}

// The client-gone watch over TLS: a client that closes gracefully during a command (close_notify,
// then FIN: bytes on the socket, unlike a plain close) gets its statement cancelled; a command
// pipelined behind a running one is not taken for that and is answered.
func TestTLSClientGone(t *testing.T) {
	set := testTLS(t)
	for _, delay := range watchDelays {
		t.Run(fmt.Sprintf("close/delay=%v", delay), func(t *testing.T) {
			h := newFakeHandler()
			started, ended := make(chan struct{}, 1), make(chan error, 1)
			h.stmts["BLOCK"] = blockingStmt(started, ended)
			_, addr := startServer(t, Config{TLS: set.MySQL(), peerWatchDelay: delay}, h)
			c, tc := dialTLSRaw(t, addr, set)
			c.command(append([]byte{pmysql.ComQuery}, "BLOCK"...)...)
			waitStarted(t, started)
			time.Sleep(50 * time.Millisecond) // the watch is on
			since := time.Now()
			tc.Close() // close_notify, then FIN
			expectCancelled(t, ended, since)
		})
		t.Run(fmt.Sprintf("pipelined/delay=%v", delay), func(t *testing.T) {
			h := newFakeHandler()
			h.stmts["SLOW"] = sleepStmt(150 * time.Millisecond)
			h.stmts["FAST"] = rowsOf(benchCols, benchRow)
			_, addr := startServer(t, Config{TLS: set.MySQL(), peerWatchDelay: delay}, h)
			c, _ := dialTLSRaw(t, addr, set)
			c.command(append([]byte{pmysql.ComQuery}, "SLOW"...)...)
			time.Sleep(60 * time.Millisecond)
			c.command(append([]byte{pmysql.ComQuery}, "FAST"...)...)
			for _, q := range []string{"SLOW", "FAST"} {
				c.p.seq = 1
				if ncols, rows, _ := readResultSet(t, c, false); ncols != len(benchCols) || len(rows) != 1 {
					t.Fatalf("%s: %d columns, %d rows", q, ncols, len(rows))
				}
			}
			c.command(pmysql.ComPing)
			c.expectOK()
		})
	}
}
