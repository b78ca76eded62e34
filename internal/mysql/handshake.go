package mysql

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/auth"
	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Authentication plugins we speak.
const (
	NativePassword      = "mysql_native_password"
	CachingSHA2Password = "caching_sha2_password"
)

const (
	scrambleBytes = 20
	// maxHandshakeBytes bounds what an unauthenticated client can make us buffer: a handshake
	// response with user, database, plugin name and connection attributes (MySQL caps the
	// attributes at 64 KiB).
	maxHandshakeBytes = 80 << 10
	// maxConnAttrs bounds the attribute map an unauthenticated client can make us build.
	maxConnAttrs = 256

	collationUTF8MB4General = 255 // utf8mb4_0900_ai_ci, the 8.0 default

	// caching_sha2_password AuthMoreData codes.
	sha2FastAuthOK       = 0x03
	sha2PerformFullAuth  = 0x04
	sha2RequestPublicKey = 0x02
)

// serverCapabilities is what we advertise, with CLIENT_SSL when the server has a certificate
// (Server.capabilities, tls.go). Not CLIENT_COMPRESS, not
// CLIENT_QUERY_ATTRIBUTES, not CLIENT_OPTIONAL_RESULTSET_METADATA. CLIENT_LOCAL_FILES, as mysqld:
// LOAD DATA LOCAL works if the client sets it too (localinfile.go).
const serverCapabilities = pmysql.ClientLongPassword |
	pmysql.ClientFoundRows |
	pmysql.ClientLongFlag |
	pmysql.ClientConnectWithDB |
	pmysql.ClientLocalFiles |
	pmysql.ClientProtocol41 |
	pmysql.ClientInteractive |
	pmysql.ClientTransactions |
	pmysql.ClientSecureConnection |
	pmysql.ClientMultiStatements |
	pmysql.ClientMultiResults |
	pmysql.ClientPSMultiResults |
	pmysql.ClientPluginAuth |
	pmysql.ClientConnectAtts |
	pmysql.ClientPluginAuthLenencClientData |
	pmysql.ClientSessionTrack |
	pmysql.ClientDeprecateEOF

var errBadHandshake = errors.New("mysql: malformed handshake response")

// newScramble returns a nonce as mysqld makes them: no NUL (clients read it as a C string) and no
// '$' (reserved by the sha2 hash format).
func newScramble() ([scrambleBytes]byte, error) {
	var s [scrambleBytes]byte
	if _, err := rand.Read(s[:]); err != nil {
		return s, err
	}
	for i := range s {
		s[i] &= 0x7f
		if s[i] == 0 || s[i] == '$' {
			s[i]++
		}
	}
	return s, nil
}

// appendGreeting builds the Initial Handshake Packet (protocol v10).
func appendGreeting(b []byte, caps uint32, version string, connID uint32, scramble []byte, plugin string, status uint16) []byte {
	b = append(b, 10)
	b = append(b, version...)
	b = append(b, 0)
	b = appendUint32(b, connID)
	b = append(b, scramble[:8]...)
	b = append(b, 0)
	b = appendUint16(b, uint16(caps&0xffff))
	b = append(b, collationUTF8MB4General)
	b = appendUint16(b, status)
	b = appendUint16(b, uint16(caps>>16))
	b = append(b, scrambleBytes+1)
	b = append(b, make([]byte, 10)...)
	b = append(b, scramble[8:]...)
	b = append(b, 0)
	b = append(b, plugin...)
	return append(b, 0)
}

type handshakeResponse struct {
	caps       uint32 // as the client sent them
	maxPacket  uint32
	collation  byte
	user       string
	authResp   []byte
	db         string
	plugin     string
	attrs      map[string]string
	sslRequest bool // a 32-byte SSLRequest: the client wants TLS before it goes on
}

// parseHandshakeResponse parses a HandshakeResponse41 payload. It never reads out of bounds; any
// inconsistency is errBadHandshake.
func parseHandshakeResponse(data []byte) (*handshakeResponse, error) {
	r := reader{b: data}
	h := &handshakeResponse{}
	h.caps = r.u32()
	if r.bad || h.caps&pmysql.ClientProtocol41 == 0 {
		// Pre-4.1 clients (HandshakeResponse320) are not supported.
		return nil, errBadHandshake
	}
	h.maxPacket = r.u32()
	h.collation = r.u8()
	r.take(23)
	if r.bad {
		return nil, errBadHandshake
	}
	if r.remaining() == 0 && h.caps&pmysql.ClientSSL != 0 {
		h.sslRequest = true
		return h, nil
	}
	h.user = string(r.nulString())
	switch {
	case h.caps&pmysql.ClientPluginAuthLenencClientData != 0:
		h.authResp = r.lenencBytes()
	case h.caps&pmysql.ClientSecureConnection != 0:
		h.authResp = r.take(int(r.u8()))
	default:
		h.authResp = r.nulString()
	}
	if r.bad {
		return nil, errBadHandshake
	}
	h.authResp = bytes.Clone(h.authResp)
	if h.caps&pmysql.ClientConnectWithDB != 0 && r.remaining() > 0 {
		h.db = string(r.nulString())
	}
	if h.caps&pmysql.ClientPluginAuth != 0 && r.remaining() > 0 {
		h.plugin = string(r.nulString())
	}
	if h.caps&pmysql.ClientConnectAtts != 0 && r.remaining() > 0 {
		n, null := r.lenencInt()
		if null || r.bad || n > uint64(r.remaining()) {
			return nil, errBadHandshake
		}
		ar := reader{b: r.take(int(n))}
		for ar.remaining() > 0 {
			k := ar.lenencBytes()
			v := ar.lenencBytes()
			if ar.bad {
				return nil, errBadHandshake
			}
			if h.attrs == nil {
				h.attrs = make(map[string]string)
			}
			if len(h.attrs) < maxConnAttrs {
				h.attrs[string(k)] = string(v)
			}
		}
	}
	// Anything after (the zstd compression level) is ignored: we did not offer compression.
	return h, nil
}

// decryptRSAPassword recovers the password a caching_sha2_password client sent in full
// authentication: RSA-OAEP(SHA1) of (password NUL) XOR the scramble, repeated.
func decryptRSAPassword(key *rsa.PrivateKey, scramble, ciphertext []byte) (string, error) {
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, key, ciphertext, nil)
	if err != nil {
		return "", err
	}
	for i := range plain {
		plain[i] ^= scramble[i%len(scramble)]
	}
	if n := len(plain); n > 0 && plain[n-1] == 0 {
		plain = plain[:n-1]
	}
	return string(plain), nil
}

func publicKeyPEM(key *rsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

func accessDenied(user, host string, usedPassword bool) *sqlerr.Error {
	yn := "NO"
	if usedPassword {
		yn = "YES"
	}
	return sqlerr.New(sqlerr.ErrAccessDenied, "Access denied for user '%s'@'%s' (using password: %s)", user, host, yn)
}

func errHandshake() *sqlerr.Error { return sqlerr.New(sqlerr.ErrHandshake, "Bad handshake") }

// handshake runs the connection phase: greeting, response, authentication, Handler.OpenSession, and the
// final OK. On failure the client has been sent an ERR (when it can still read one) and the caller
// closes the connection.
func (c *conn) handshake() error {
	p := c.pio
	scramble, err := newScramble()
	if err != nil {
		return err
	}
	plugin := c.srv.cfg.AuthPlugin
	caps := c.srv.capabilities()
	b := appendGreeting(p.startPacket(), caps, c.srv.cfg.ServerVersion, c.id, scramble[:], plugin,
		pmysql.ServerStatusAutocommit)
	if err := c.writeAndFlush(b); err != nil {
		return err
	}

	h, err := c.readHandshakeResponse(caps)
	if err != nil {
		return err
	}
	c.caps = h.caps & caps
	if c.refuseInsecure() {
		return errors.New("mysql: insecure transport refused (require_secure_transport)")
	}
	host := c.host

	// The account decides the plugin: a client that sent another plugin's token (or one we do not
	// speak) is switched to the account's plugin with an AuthSwitchRequest, as MySQL does; an
	// unknown user goes through the server default's exchange and is then denied. An account
	// without a password accepts an empty token from either plugin without a switch.
	acct, known := c.srv.handler.LookupAccount(h.user, host)
	authResp := h.authResp
	clientPlugin := h.plugin
	switch {
	case c.caps&pmysql.ClientPluginAuth == 0:
		clientPlugin = NativePassword
	case clientPlugin == "":
		clientPlugin = plugin
	}
	want := plugin
	if known {
		want = acct.Plugin
	}
	// An empty token from a plugin we speak needs no switch; any other plugin is always switched,
	// since its client side may be waiting for the switch (libmariadb's dummy_fallback_auth, which
	// a client thread uses while another loads the real plugin, answers whatever comes next).
	emptyPassword := known && acct.AuthString == "" && emptyToken(authResp) &&
		(clientPlugin == NativePassword || clientPlugin == CachingSHA2Password)
	if clientPlugin != want && !emptyPassword {
		if c.caps&pmysql.ClientPluginAuth == 0 {
			// A client that cannot switch plugins cannot log in to this account.
			c.sendErr(accessDenied(h.user, host, len(authResp) > 0))
			return errors.New("mysql: access denied (client cannot switch plugins)")
		}
		b := append(p.startPacket(), hdrEOF)
		b = append(b, want...)
		b = append(b, 0)
		b = append(b, scramble[:]...)
		b = append(b, 0)
		if err := c.writeAndFlush(b); err != nil {
			return err
		}
		data, err := p.readPacket()
		if err != nil {
			return c.readFailed(err)
		}
		authResp = bytes.Clone(data)
		clientPlugin = want
	}

	var ok bool
	switch {
	case !known:
		if clientPlugin == CachingSHA2Password && !emptyToken(authResp) {
			// As MySQL: an unknown user goes through the same full authentication as a known
			// one with a cold cache, so the exchange does not tell which accounts exist.
			if _, err = c.authSHA2(proto.Account{User: "\x00unknown", AuthString: "!"}, authResp, scramble[:]); err != nil {
				return err
			}
		}
	case acct.AuthString == "":
		ok = emptyToken(authResp)
	case clientPlugin == NativePassword:
		ok = acct.Plugin == NativePassword && auth.CheckNativeToken(acct.AuthString, scramble[:], authResp)
	case clientPlugin == CachingSHA2Password:
		ok, err = c.authSHA2(acct, authResp, scramble[:])
		if err != nil {
			return err
		}
	}
	if ok && acct.RequireSSL && !c.secureTransport() {
		ok = false // REQUIRE SSL over a plain connection: 1045, as MySQL
	}
	if !ok {
		c.sendErr(accessDenied(h.user, host, len(authResp) > 0 && !emptyToken(authResp)))
		return errors.New("mysql: access denied")
	}
	if acct.Locked {
		c.sendErr(sqlerr.New(sqlerr.ErrAccountLocked, "Access denied for user '%s'@'%s'. Account is locked.", h.user, host))
		return errors.New("mysql: account locked")
	}

	info := proto.ConnInfo{
		ConnID:       c.id,
		User:         h.user,
		Host:         host,
		Account:      acct,
		DB:           h.db,
		Capabilities: c.caps,
		Collation:    uint16(h.collation),
		Attrs:        h.attrs,
		TLS:          c.tlsConn != nil,
	}
	info.TLSVersion, info.TLSCipher = c.tlsState()
	var sess proto.Session
	err = c.guard("Open", func() error {
		var err error
		sess, err = c.srv.handler.OpenSession(c.ctx, info)
		return err
	})
	if err == nil && sess == nil {
		err = fmt.Errorf("mysql: Handler.OpenSession returned no session")
	}
	if err != nil {
		c.sendErr(sqlerr.As(err))
		return err
	}
	c.sess = sess
	b = appendOK(p.startPacket(), c.caps, hdrOK, &proto.OK{}, c.status())
	return c.writeAndFlush(b)
}

// readHandshakeResponse reads the client's HandshakeResponse41, first upgrading to TLS if the
// client sends an SSLRequest (tls.go) and we offered it.
func (c *conn) readHandshakeResponse(caps uint32) (*handshakeResponse, error) {
	data, err := c.pio.readPacket()
	if err != nil {
		return nil, c.readFailed(err)
	}
	h, err := parseHandshakeResponse(data)
	if err != nil {
		c.sendErr(errHandshake())
		return nil, err
	}
	if !h.sslRequest {
		return h, nil
	}
	if caps&pmysql.ClientSSL == 0 {
		// We did not advertise CLIENT_SSL; a client that asks anyway cannot go on.
		c.sendErr(errHandshake())
		return nil, errBadHandshake
	}
	if err := c.upgradeTLS(); err != nil {
		return nil, err // no ERR packet: the client cannot read plaintext in the middle of TLS
	}
	if data, err = c.pio.readPacket(); err != nil {
		return nil, c.readFailed(err)
	}
	if h, err = parseHandshakeResponse(data); err != nil || h.sslRequest {
		c.sendErr(errHandshake())
		return nil, errors.Join(err, errBadHandshake)
	}
	return h, nil
}

// emptyToken reports a login token that says "no password" (some clients send one NUL byte).
func emptyToken(b []byte) bool { return len(b) == 0 || (len(b) == 1 && b[0] == 0) }

// authSHA2 checks a caching_sha2_password token for an account with a password, as MySQL's
// server side does. Fast path: the server-side cache holds SHA256(SHA256(password)) of the
// account from an earlier full authentication (since start, or since the last FLUSH PRIVILEGES /
// ALTER USER / DROP USER), and the token is checked against it. Otherwise (or when the token does
// not match) full authentication: the client sends the password itself, in cleartext over a secure
// transport or RSA-encrypted with our key, and it is checked against the stored SHA-256 crypt
// hash; a match fills the cache.
func (c *conn) authSHA2(acct proto.Account, authResp, scramble []byte) (bool, error) {
	p := c.pio
	if emptyToken(authResp) {
		return false, nil // the account has a password (the caller handles empty ones)
	}
	if !c.srv.cfg.CachingSHA2FullAuth {
		if d, ok := c.srv.cachedDigest(acct); ok && auth.CheckSHA2FastToken(d, scramble, authResp) {
			return true, c.writeAndFlush(append(p.startPacket(), hdrAuthMore, sha2FastAuthOK))
		}
	}

	if err := c.writeAndFlush(append(p.startPacket(), hdrAuthMore, sha2PerformFullAuth)); err != nil {
		return false, err
	}
	data, err := p.readPacket()
	if err != nil {
		return false, c.readFailed(err)
	}
	var password string
	if c.secureTransport() && !(len(data) == 1 && data[0] == sha2RequestPublicKey) {
		password = string(bytes.TrimSuffix(data, []byte{0}))
	} else {
		key, err := c.srv.rsaKey()
		if err != nil {
			return false, err
		}
		if len(data) == 1 && data[0] == sha2RequestPublicKey {
			pub, err := publicKeyPEM(key)
			if err != nil {
				return false, err
			}
			b := append(p.startPacket(), hdrAuthMore)
			if err := c.writeAndFlush(append(b, pub...)); err != nil {
				return false, err
			}
			if data, err = p.readPacket(); err != nil {
				return false, c.readFailed(err)
			}
		}
		if len(data) != key.Size() {
			// A cleartext password over an insecure connection is refused, as MySQL does.
			return false, nil
		}
		if password, err = decryptRSAPassword(key, scramble, data); err != nil {
			return false, nil
		}
	}
	if !auth.CheckCachingSHA2Password(acct.AuthString, password) {
		return false, nil
	}
	c.srv.cacheDigest(acct, auth.SHA2Digest(password))
	return true, nil
}
