package mysql

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"
)

var (
	rsaKeyOnce sync.Once
	rsaKeyVal  *rsa.PrivateKey
)

// testRSAKey is one key for the whole test binary: generating a 2048-bit key per server would
// dominate the tests' run time.
func testRSAKey(t testing.TB) *rsa.PrivateKey {
	rsaKeyOnce.Do(func() {
		var err error
		rsaKeyVal, err = rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
	})
	return rsaKeyVal
}

// rawClient speaks the protocol byte by byte, for what a real driver will not send.
type rawClient struct {
	t        testing.TB
	nc       net.Conn
	p        *packetIO
	connID   uint32
	scramble []byte
	caps     uint32 // server's
	plugin   string // advertised
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return newRawClientOn(t, nc)
}

// newRawClientOn reads the server's greeting on nc, a connection to it.
func newRawClientOn(t testing.TB, nc net.Conn) *rawClient {
	t.Helper()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	c := &rawClient{t: t, nc: nc, p: newPacketIO(nc, nc, 1<<30)}
	g := c.mustRead()
	r := reader{b: g}
	if r.u8() != 10 {
		t.Fatalf("protocol version %d", g[0])
	}
	r.nulString()
	c.connID = r.u32()
	c.scramble = append([]byte(nil), r.take(8)...)
	r.u8()
	c.caps = uint32(r.u16())
	if cs := r.u8(); cs != 255 {
		t.Errorf("server collation %d, want 255", cs)
	}
	r.u16()
	c.caps |= uint32(r.u16()) << 16
	if n := r.u8(); n != 21 {
		t.Errorf("auth data length %d, want 21", n)
	}
	r.take(10)
	c.scramble = append(c.scramble, r.take(12)...)
	r.u8()
	c.plugin = string(r.nulString())
	if r.bad {
		t.Fatalf("short greeting %x", g)
	}
	return c
}

const rawClientCaps = pmysql.ClientLongPassword | pmysql.ClientProtocol41 | pmysql.ClientSecureConnection |
	pmysql.ClientPluginAuth | pmysql.ClientPluginAuthLenencClientData | pmysql.ClientTransactions |
	pmysql.ClientMultiResults | pmysql.ClientMultiStatements | pmysql.ClientPSMultiResults

func buildHandshakeResponse(caps uint32, user string, auth []byte, db, plugin string, attrs map[string]string) []byte {
	b := appendUint32(nil, caps)
	b = appendUint32(b, 1<<24)
	b = append(b, 45)
	b = append(b, make([]byte, 23)...)
	b = append(b, user...)
	b = append(b, 0)
	switch {
	case caps&pmysql.ClientPluginAuthLenencClientData != 0:
		b = appendLenencBytes(b, auth)
	case caps&pmysql.ClientSecureConnection != 0:
		b = append(b, byte(len(auth)))
		b = append(b, auth...)
	default:
		b = append(b, auth...)
		b = append(b, 0)
	}
	if caps&pmysql.ClientConnectWithDB != 0 {
		b = append(b, db...)
		b = append(b, 0)
	}
	if caps&pmysql.ClientPluginAuth != 0 {
		b = append(b, plugin...)
		b = append(b, 0)
	}
	if caps&pmysql.ClientConnectAtts != 0 {
		var a []byte
		for k, v := range attrs {
			a = appendLenencString(a, k)
			a = appendLenencString(a, v)
		}
		b = appendLenencBytes(b, a)
	}
	return b
}

// login authenticates with the advertised plugin and returns the server's final reply.
func (c *rawClient) login(user, password string, caps uint32) []byte {
	c.t.Helper()
	var auth []byte
	if c.plugin == NativePassword {
		auth = scrambleNative(c.scramble, password)
	} else {
		auth = scrambleSHA2(c.scramble, password)
	}
	c.write(buildHandshakeResponse(caps, user, auth, "", c.plugin, nil))
	reply := c.mustRead()
	if len(reply) == 2 && reply[0] == hdrAuthMore && reply[1] == sha2PerformFullAuth {
		// Full authentication: the password RSA-encrypted with the (known) server key.
		plain := append([]byte(password), 0)
		for i := range plain {
			plain[i] ^= c.scramble[i%len(c.scramble)]
		}
		enc, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, &testRSAKey(c.t).PublicKey, plain, nil)
		if err != nil {
			c.t.Fatal(err)
		}
		c.write(enc)
		reply = c.mustRead()
	}
	if len(reply) == 2 && reply[0] == hdrAuthMore && reply[1] == sha2FastAuthOK {
		reply = c.mustRead()
	}
	return reply
}

func (c *rawClient) mustLogin(user, password string, caps uint32) {
	c.t.Helper()
	if reply := c.login(user, password, caps); reply[0] != hdrOK {
		c.t.Fatalf("login: %q", reply)
	}
}

func (c *rawClient) write(payload []byte) {
	c.t.Helper()
	b := append(c.p.startPacket(), payload...)
	if err := c.p.writePacket(b); err != nil {
		c.t.Fatal(err)
	}
	if err := c.p.flush(); err != nil {
		c.t.Fatal(err)
	}
}

// command starts a new exchange.
func (c *rawClient) command(payload ...byte) {
	c.t.Helper()
	c.p.resetSeq()
	c.write(payload)
}

func (c *rawClient) read() ([]byte, error) {
	b, err := c.p.readPacket()
	return bytes.Clone(b), err
}

func (c *rawClient) mustRead() []byte {
	c.t.Helper()
	b, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return b
}

func (c *rawClient) expectOK() []byte {
	c.t.Helper()
	b := c.mustRead()
	if len(b) < 7 || b[0] != hdrOK {
		c.t.Fatalf("want OK, got %q", b)
	}
	return b
}

func (c *rawClient) expectErr(code uint16) string {
	c.t.Helper()
	b := c.mustRead()
	if len(b) < 9 || b[0] != hdrErr {
		c.t.Fatalf("want ERR %d, got %q", code, b)
	}
	if got := binary.LittleEndian.Uint16(b[1:]); got != code {
		c.t.Fatalf("want ERR %d, got %d: %s", code, got, b[9:])
	}
	return string(b[3:])
}

// expectClosed checks that the server closed the connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := c.read(); err == nil {
		c.t.Fatalf("connection still open; read %q", b)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatal("connection still open (read timed out)")
	}
}
