package mysql

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

func TestBadHandshake(t *testing.T) {
	good := buildHandshakeResponse(rawClientCaps, "root", nil, "", CachingSHA2Password, nil)
	tests := []struct {
		name    string
		payload []byte
		code    uint16
	}{
		{"empty", nil, 1043},
		{"short", []byte{1, 2, 3}, 1043},
		{"pre-4.1", append(appendUint32(nil, pmysql.ClientLongPassword), good[4:]...), 1043},
		{"no filler", good[:20], 1043},
		{"SSL request", append(appendUint32(nil, rawClientCaps|pmysql.ClientSSL), good[4:32]...), 1043},
		{"auth length beyond the packet", append(good[:32:32], "root\x00\x30abc"...), 1043},
		{"lenenc auth length overflow", append(good[:32:32], "root\x00\xfe\xff\xff\xff\xff\xff\xff\xff\xff"...), 1043},
		{"attrs beyond the packet", badAttrs(), 1043},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, addr := startServer(t, Config{}, newFakeHandler())
			c := dialRaw(t, addr)
			c.write(tt.payload)
			msg := c.expectErr(tt.code)
			if !strings.Contains(msg, "Bad handshake") {
				t.Fatal(msg)
			}
			c.expectClosed()
		})
	}
}

// badAttrs is a handshake response whose attributes block claims more bytes than follow.
func badAttrs() []byte {
	b := buildHandshakeResponse(rawClientCaps|pmysql.ClientConnectAtts, "root", nil, "", CachingSHA2Password,
		map[string]string{"a": "b"})
	// The attributes block is 0x04 0x01 'a' 0x01 'b'.
	return append(b[:len(b)-5:len(b)-5], 0x20, 1, 'a')
}

func TestHandshakeTooLarge(t *testing.T) {
	_, addr := startServer(t, Config{}, newFakeHandler())
	c := dialRaw(t, addr)
	c.write(make([]byte, maxHandshakeBytes+1))
	c.expectErr(1153)
	c.expectClosed()
}

func TestHandshakeAttrsAndDB(t *testing.T) {
	h := newFakeHandler()
	srv, addr := startServer(t, Config{}, h)
	warmSHA2(srv, h, "alice")
	c := dialRaw(t, addr)
	caps := rawClientCaps | pmysql.ClientConnectAtts | pmysql.ClientConnectWithDB | pmysql.ClientSSL | pmysql.ClientCompress
	c.write(buildHandshakeResponse(caps, "alice", scrambleSHA2(c.scramble, "secret"), "shop", CachingSHA2Password,
		map[string]string{"_os": "linux", "program_name": "test"}))
	if b := c.mustRead(); !bytes.Equal(b, []byte{hdrAuthMore, sha2FastAuthOK}) {
		t.Fatalf("got %q, want fast auth success", b)
	}
	c.expectOK()
	info := h.lastInfo()
	if info.DB != "shop" || info.Attrs["program_name"] != "test" || info.Attrs["_os"] != "linux" ||
		info.Collation != 45 || info.ConnID != c.connID {
		t.Fatalf("%+v", info)
	}
	if info.Capabilities&(pmysql.ClientSSL|pmysql.ClientCompress) != 0 || info.Capabilities&pmysql.ClientConnectWithDB == 0 {
		t.Fatalf("capabilities %#x: not negotiated", info.Capabilities)
	}
}

func TestAuthSwitch(t *testing.T) {
	// A client sending a plugin we do not speak is switched to the account's plugin.
	for _, plugin := range []string{CachingSHA2Password, NativePassword} {
		t.Run(plugin, func(t *testing.T) {
			h := newFakeHandler()
			h.defaultPlugin = plugin
			srv, addr := startServer(t, Config{AuthPlugin: plugin}, h)
			warmSHA2(srv, h, "alice")
			c := dialRaw(t, addr)
			c.write(buildHandshakeResponse(rawClientCaps, "alice", []byte("secret\x00"), "", "mysql_clear_password", nil))
			sw := c.mustRead()
			want := append(append([]byte{hdrEOF}, plugin+"\x00"...), c.scramble...)
			if !bytes.Equal(sw, append(want, 0)) {
				t.Fatalf("AuthSwitchRequest %q, want %q", sw, want)
			}
			if plugin == NativePassword {
				c.write(scrambleNative(c.scramble, "secret"))
			} else {
				c.write(scrambleSHA2(c.scramble, "secret"))
				if b := c.mustRead(); !bytes.Equal(b, []byte{hdrAuthMore, sha2FastAuthOK}) {
					t.Fatalf("got %q", b)
				}
			}
			c.expectOK()
			c.command(pmysql.ComPing)
			c.expectOK()
		})
	}
}

// A password-less account still switches a client that named a plugin we do not speak: libmariadb
// sends dummy_fallback_auth (an empty token) from a thread that raced another loading the real
// plugin, and then answers the switch; an OK instead made it send its reply as the first command
// (1156 packets out of order: sysbench's threads failed to connect now and then).
func TestAuthSwitchEmptyPasswordUnknownPlugin(t *testing.T) {
	h := newFakeHandler()
	h.users["nopw"] = ""
	_, addr := startServer(t, Config{}, h)
	c := dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "nopw", nil, "", "dummy_fallback_auth", nil))
	sw := c.mustRead()
	if want := append(append([]byte{hdrEOF}, CachingSHA2Password+"\x00"...), append(c.scramble, 0)...); !bytes.Equal(sw, want) {
		t.Fatalf("got %q, want an AuthSwitchRequest to caching_sha2_password", sw)
	}
	c.write(nil)
	c.expectOK()
	c.command(pmysql.ComPing)
	c.expectOK()

	// A plugin we speak with an empty token: OK at once, no switch.
	c = dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "nopw", nil, "", NativePassword, nil))
	c.expectOK()
}

// The account's plugin decides: a client using it needs no switch (whatever the server's
// default), a client using the other one of ours is switched to it, as MySQL does.
func TestAuthPerAccountPlugin(t *testing.T) {
	h := newFakeHandler()
	h.plugins = map[string]string{"alice": NativePassword}
	srv, addr := startServer(t, Config{}, h) // default caching_sha2_password
	c := dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleNative(c.scramble, "secret"), "", NativePassword, nil))
	c.expectOK()

	// Without CLIENT_PLUGIN_AUTH the token is the native one.
	c = dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps&^(pmysql.ClientPluginAuth|pmysql.ClientPluginAuthLenencClientData),
		"alice", scrambleNative(c.scramble, "secret"), "", "", nil))
	c.expectOK()

	// A caching_sha2_password token for a native account: switched to native.
	c = dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleSHA2(c.scramble, "secret"), "", CachingSHA2Password, nil))
	sw := c.mustRead()
	if want := append(append([]byte{hdrEOF}, NativePassword+"\x00"...), append(c.scramble, 0)...); !bytes.Equal(sw, want) {
		t.Fatalf("AuthSwitchRequest %q, want %q", sw, want)
	}
	c.write(scrambleNative(c.scramble, "secret"))
	c.expectOK()

	// A native token for a caching_sha2_password account: switched to caching_sha2_password.
	warmSHA2(srv, h, "bob")
	c = dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "bob", scrambleNative(c.scramble, h.users["bob"]), "", NativePassword, nil))
	sw = c.mustRead()
	if want := append(append([]byte{hdrEOF}, CachingSHA2Password+"\x00"...), append(c.scramble, 0)...); !bytes.Equal(sw, want) {
		t.Fatalf("AuthSwitchRequest %q, want %q", sw, want)
	}
	c.write(scrambleSHA2(c.scramble, h.users["bob"]))
	if b := c.mustRead(); !bytes.Equal(b, []byte{hdrAuthMore, sha2FastAuthOK}) {
		t.Fatalf("got %q", b)
	}
	c.expectOK()

	// A client that cannot switch cannot log in to a caching_sha2_password account with a password.
	c = dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps&^(pmysql.ClientPluginAuth|pmysql.ClientPluginAuthLenencClientData),
		"bob", scrambleNative(c.scramble, h.users["bob"]), "", "", nil))
	c.expectErr(1045)
}

// caching_sha2_password's server-side cache: the first login of an account does a full
// authentication (RSA here, no TLS), which fills the cache; the next one is a fast auth; a flush
// (FLUSH PRIVILEGES, ALTER/DROP USER) or a changed stored hash sends it back to full auth.
func TestAuthSHA2Cache(t *testing.T) {
	h := newFakeHandler()
	srv, addr := startServer(t, Config{}, h)
	fullLogin := func(password string) *rawClient {
		c := dialRaw(t, addr)
		c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleSHA2(c.scramble, password), "", CachingSHA2Password, nil))
		if b := c.mustRead(); !bytes.Equal(b, []byte{hdrAuthMore, sha2PerformFullAuth}) {
			t.Fatalf("got %q, want perform-full-auth", b)
		}
		plain := append([]byte(password), 0)
		for i := range plain {
			plain[i] ^= c.scramble[i%len(c.scramble)]
		}
		enc, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, &testRSAKey(t).PublicKey, plain, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.write(enc)
		return c
	}
	fastLogin := func(password string) *rawClient {
		c := dialRaw(t, addr)
		c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleSHA2(c.scramble, password), "", CachingSHA2Password, nil))
		if b := c.mustRead(); !bytes.Equal(b, []byte{hdrAuthMore, sha2FastAuthOK}) {
			t.Fatalf("got %q, want fast-auth success", b)
		}
		return c
	}
	fullLogin("wrong").expectErr(1045)
	fullLogin("secret").expectOK()
	fastLogin("secret").expectOK()
	// A wrong token with a warm cache: full authentication, which fails.
	fullLogin("nope").expectErr(1045)
	fastLogin("secret").expectOK()

	srv.FlushAuthCache("alice", "%")
	fullLogin("secret").expectOK()
	fastLogin("secret").expectOK()
	srv.FlushAuthCache("", "")
	fullLogin("secret").expectOK()

	// The password changed (e.g. on the primary, the new hash arrived through the log): the cached
	// digest of the old hash is not used.
	h.locked(func() { h.users["alice"] = "new" })
	fullLogin("secret").expectErr(1045)
	fullLogin("new").expectOK()
	fastLogin("new").expectOK()
}

func TestAuthLockedAndRequireSSL(t *testing.T) {
	h := newFakeHandler()
	h.plugins = map[string]string{"alice": NativePassword}
	h.lockedAcct = map[string]bool{"alice": true}
	h.requireSSL = map[string]bool{"root": true}
	_, addr := startServer(t, Config{}, h)
	c := dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleNative(c.scramble, "wrong"), "", NativePassword, nil))
	c.expectErr(1045) // a wrong password says nothing about the lock
	c = dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleNative(c.scramble, "secret"), "", NativePassword, nil))
	c.expectErr(3118)
	c = dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "root", nil, "", CachingSHA2Password, nil))
	c.expectErr(1045) // REQUIRE SSL without TLS
}

func TestAuthFullRSA(t *testing.T) {
	_, addr := startServer(t, Config{CachingSHA2FullAuth: true}, newFakeHandler())
	login := func(password string, requestKey bool, cleartext bool) *rawClient {
		c := dialRaw(t, addr)
		c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleSHA2(c.scramble, password), "", CachingSHA2Password, nil))
		if b := c.mustRead(); !bytes.Equal(b, []byte{hdrAuthMore, sha2PerformFullAuth}) {
			t.Fatalf("got %q, want perform-full-auth", b)
		}
		if cleartext {
			c.write(append([]byte(password), 0))
			return c
		}
		var pub *rsa.PublicKey
		if requestKey {
			c.write([]byte{sha2RequestPublicKey})
			b := c.mustRead()
			block, _ := pem.Decode(b[1:])
			if b[0] != hdrAuthMore || block == nil {
				t.Fatalf("public key reply %q", b)
			}
			k, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			pub = k.(*rsa.PublicKey)
		} else {
			pub = &testRSAKey(t).PublicKey // known to the client beforehand
		}
		plain := append([]byte(password), 0)
		for i := range plain {
			plain[i] ^= c.scramble[i%len(c.scramble)]
		}
		enc, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, plain, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.write(enc)
		return c
	}
	login("secret", true, false).expectOK()
	login("secret", false, false).expectOK()
	login("wrong", true, false).expectErr(1045)
	// Not without TLS.
	login("secret", false, true).expectErr(1045)
	// Garbage of the right size.
	c := dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "alice", scrambleSHA2(c.scramble, "x"), "", CachingSHA2Password, nil))
	c.mustRead()
	c.write(make([]byte, 256))
	c.expectErr(1045)
	c.expectClosed()
}

func TestUnknownAndSimpleCommands(t *testing.T) {
	h := newFakeHandler()
	_, addr := startServer(t, Config{}, h)
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps)

	c.command(0x55)
	c.expectErr(1047)
	c.command() // an empty packet
	c.expectErr(1047)
	c.command(pmysql.ComChangeUser, 'x', 0)
	c.expectErr(1047)
	c.command(pmysql.ComPing)
	c.expectOK()
	c.command(pmysql.ComDebug)
	c.expectOK()

	c.command(pmysql.ComStatistics)
	if b := c.mustRead(); !strings.HasPrefix(string(b), "Uptime: ") || !strings.Contains(string(b), "Threads: 1") {
		t.Fatalf("statistics %q", b)
	}

	c.command(append([]byte{pmysql.ComInitDB}, "shop"...)...)
	c.expectOK()
	c.command(append([]byte{pmysql.ComInitDB}, "nope"...)...)
	c.expectErr(1049)

	c.command(pmysql.ComFieldList, 't', 0)
	if b := c.mustRead(); b[0] != hdrEOF || len(b) != 5 {
		t.Fatalf("field list reply %q, want EOF", b)
	}

	c.command(append([]byte{pmysql.ComProcessKill}, le32(77)...)...)
	c.expectOK()
	if !h.sawQuery("KILL 77") {
		t.Fatal("COM_PROCESS_KILL did not become KILL 77")
	}
	c.command(pmysql.ComProcessKill, 1)
	c.expectErr(sqlerr.ErrMalformedPacket)

	c.command(append([]byte{pmysql.ComSetOption}, le16(optionMultiStatementsOff)...)...)
	if b := c.mustRead(); b[0] != hdrEOF {
		t.Fatalf("set option reply %q", b)
	}
	c.command(append([]byte{pmysql.ComSetOption}, le16(optionMultiStatementsOn)...)...)
	c.mustRead()
	c.command(append([]byte{pmysql.ComSetOption}, le16(9)...)...)
	c.expectErr(1047)
	h.locked(func() {
		if !slices.Equal(h.multiOn, []bool{false, true}) {
			t.Errorf("SetMultiStatements calls %v", h.multiOn)
		}
	})

	c.command(append([]byte{pmysql.ComStmtFetch}, le32(1)...)...)
	c.expectErr(sqlerr.ErrStmtHasNoOpenCursor)

	c.command(pmysql.ComQuit)
	c.expectClosed()
}

func TestSequenceError(t *testing.T) {
	_, addr := startServer(t, Config{}, newFakeHandler())
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps)
	c.p.seq = 3
	c.write([]byte{pmysql.ComPing})
	c.p.seq = 0 // the server answers from where it stands
	c.expectErr(sqlerr.ErrNetPacketsOutOfOrder)
	c.expectClosed()
}

func TestOversizedMultiChunk(t *testing.T) {
	_, addr := startServer(t, Config{MaxAllowedPacket: 1 << 10}, newFakeHandler())
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps)
	c.p.resetSeq()
	big := append(c.p.startPacket(), pmysql.ComQuery)
	big = append(big, bytes.Repeat([]byte{'x'}, maxChunkBytes+10)...)
	if err := c.p.writePacket(big); err != nil {
		t.Fatal(err)
	}
	if err := c.p.flush(); err != nil {
		t.Fatal(err)
	}
	// Two chunks went out: the ERR carries sequence id 2.
	c.expectErr(1153)
	c.expectClosed()
}

func TestIdleTimeout(t *testing.T) {
	h := newFakeHandler()
	h.idle = 100 * time.Millisecond
	_, addr := startServer(t, Config{}, h)
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps)
	c.command(pmysql.ComPing)
	c.expectOK()
	start := time.Now()
	c.expectClosed()
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("closed after %v", d)
	}
}

func TestSessionTrackAndStatus(t *testing.T) {
	h := newFakeHandler()
	state := AppendSessionStateEntry(nil, SessionTrackGTIDs, []byte("\x00\x0342a"))
	h.stmts["COMMIT tracked"] = okOf(proto.OK{AffectedRows: 300, LastInsertID: 1 << 20, Warnings: 2, Info: "hi", SessionState: state})
	h.stmts["plain"] = okOf(proto.OK{AffectedRows: 1})
	_, addr := startServer(t, Config{}, h)

	parseOK := func(b []byte, track bool) (affected, lastID uint64, status, warnings uint16, info string, st []byte) {
		r := reader{b: b[1:]}
		affected, _ = r.lenencInt()
		lastID, _ = r.lenencInt()
		status, warnings = r.u16(), r.u16()
		// The info is length-encoded in both modes, as mysqld sends it.
		if r.remaining() > 0 {
			info = string(r.lenencBytes())
		}
		if track && status&serverSessionStateChanged != 0 {
			st = r.lenencBytes()
		}
		if r.bad || r.remaining() != 0 {
			t.Fatalf("malformed OK %q", b)
		}
		return
	}

	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps|pmysql.ClientSessionTrack)
	c.command(append([]byte{pmysql.ComQuery}, "COMMIT tracked"...)...)
	aff, id, status, warn, info, st := parseOK(c.expectOK(), true)
	if aff != 300 || id != 1<<20 || warn != 2 || info != "hi" || !bytes.Equal(st, state) ||
		status != pmysql.ServerStatusAutocommit|serverSessionStateChanged {
		t.Fatalf("OK: %d %d %#x %d %q %q", aff, id, status, warn, info, st)
	}
	c.command(append([]byte{pmysql.ComQuery}, "plain"...)...)
	if b := c.expectOK(); len(b) != 7 {
		t.Fatalf("an OK without info or state should stop after the warnings: %q", b)
	}
	c.command(append([]byte{pmysql.ComQuery}, "BEGIN"...)...)
	if _, _, status, _, _, _ := parseOK(c.expectOK(), true); status != pmysql.ServerStatusAutocommit|pmysql.ServerStatusInTrans {
		t.Fatalf("status %#x", status)
	}

	// Without CLIENT_SESSION_TRACK the state is not sent.
	c = dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps)
	c.command(append([]byte{pmysql.ComQuery}, "COMMIT tracked"...)...)
	_, _, status, _, info, _ = parseOK(c.expectOK(), false)
	if status&serverSessionStateChanged != 0 || info != "hi" {
		t.Fatalf("status %#x info %q", status, info)
	}
}

// readResultSet reads a text or binary result set and returns its packets' first bytes and the
// final status, checking the framing for the negotiated EOF style.
func readResultSet(t *testing.T, c *rawClient, deprecateEOF bool) (ncols int, rows [][]byte, status uint16) {
	t.Helper()
	b := c.mustRead()
	r := reader{b: b}
	n, _ := r.lenencInt()
	ncols = int(n)
	for range ncols {
		if def := c.mustRead(); !bytes.HasPrefix(def, []byte("\x03def")) {
			t.Fatalf("column definition %q", def)
		}
	}
	if !deprecateEOF {
		if eof := c.mustRead(); eof[0] != hdrEOF || len(eof) != 5 {
			t.Fatalf("want EOF after columns, got %q", eof)
		}
	}
	for {
		b := c.mustRead()
		if b[0] == hdrEOF && len(b) < 9 {
			if deprecateEOF {
				r := reader{b: b[1:]}
				r.lenencInt()
				r.lenencInt()
				return ncols, rows, r.u16()
			}
			return ncols, rows, binary.LittleEndian.Uint16(b[3:])
		}
		if b[0] == hdrErr {
			t.Fatalf("ERR in rows: %q", b)
		}
		rows = append(rows, b)
	}
}

func TestResultFraming(t *testing.T) {
	h := newFakeHandler()
	cols := []proto.Column{{Name: "a", Type: pmysql.TypeLonglong}, {Name: "b", Type: pmysql.TypeVarString}}
	h.stmts["rows"] = rowsOf(cols, []types.Value{types.NewInt(1), types.NewString("x")}, []types.Value{types.Null, types.NewString("")})
	h.stmts["SELECT p ? ?"] = h.stmts["rows"]
	_, addr := startServer(t, Config{}, h)
	for _, deprecate := range []bool{false, true} {
		caps := rawClientCaps
		if deprecate {
			caps |= pmysql.ClientDeprecateEOF
		}
		c := dialRaw(t, addr)
		c.mustLogin("root", "", caps)

		c.command(append([]byte{pmysql.ComQuery}, "rows"...)...)
		n, rows, status := readResultSet(t, c, deprecate)
		if n != 2 || len(rows) != 2 || !bytes.Equal(rows[0], []byte("\x011\x01x")) ||
			!bytes.Equal(rows[1], []byte{0xfb, 0}) || status != pmysql.ServerStatusAutocommit {
			t.Fatalf("deprecate=%v: %d %q %#x", deprecate, n, rows, status)
		}

		// Multi-results: the first result announces the second.
		c.command(append([]byte{pmysql.ComQuery}, "rows;rows"...)...)
		if _, _, status := readResultSet(t, c, deprecate); status&pmysql.ServerMoreResultsExists == 0 {
			t.Fatalf("status %#x lacks MORE_RESULTS", status)
		}
		if _, _, status := readResultSet(t, c, deprecate); status&pmysql.ServerMoreResultsExists != 0 {
			t.Fatalf("status %#x", status)
		}

		// Prepare: parameter and column definitions.
		c.command(append([]byte{pmysql.ComStmtPrepare}, "SELECT p ? ?"...)...)
		ok := c.mustRead()
		if ok[0] != hdrOK || len(ok) != 12 {
			t.Fatalf("prepare OK %q", ok)
		}
		id := binary.LittleEndian.Uint32(ok[1:])
		if nc, np := binary.LittleEndian.Uint16(ok[5:]), binary.LittleEndian.Uint16(ok[7:]); nc != 1 || np != 2 {
			t.Fatalf("prepare OK: %d columns, %d params", nc, np)
		}
		for range 2 {
			if def := c.mustRead(); !bytes.HasPrefix(def, []byte("\x03def")) {
				t.Fatalf("param definition %q", def)
			}
		}
		if !deprecate {
			if b := c.mustRead(); b[0] != hdrEOF {
				t.Fatalf("want EOF, got %q", b)
			}
		}
		c.mustRead() // the column
		if !deprecate {
			if b := c.mustRead(); b[0] != hdrEOF {
				t.Fatalf("want EOF, got %q", b)
			}
		}
		c.command(append([]byte{pmysql.ComStmtExecute}, execBody(id, []byte{3}, []byte{8, 0, 8, 0})...)...)
		n, rows, _ = readResultSet(t, c, deprecate)
		if n != 2 || len(rows) != 2 || !bytes.Equal(rows[0], append(append([]byte{0, 0}, le64(1)...), 1, 'x')) ||
			!bytes.Equal(rows[1], []byte{0, 4, 0}) {
			t.Fatalf("binary rows %q", rows)
		}
		// A cursor request gets the whole result, without SERVER_STATUS_CURSOR_EXISTS.
		body := execBody(id, []byte{3}, nil)
		body[4] = pmysql.CursorTypeReadOnly
		c.command(append([]byte{pmysql.ComStmtExecute}, body...)...)
		if _, rows, status := readResultSet(t, c, deprecate); len(rows) != 2 || status&pmysql.ServerStatusCursorExists != 0 {
			t.Fatalf("cursor execution: %d rows, status %#x", len(rows), status)
		}
	}
}

func TestStmtCommands(t *testing.T) {
	h := newFakeHandler()
	_, addr := startServer(t, Config{MaxAllowedPacket: 1 << 18}, h)
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps|pmysql.ClientDeprecateEOF)

	prepare := func(q string) uint32 {
		c.command(append([]byte{pmysql.ComStmtPrepare}, q...)...)
		ok := c.mustRead()
		if ok[0] != hdrOK {
			t.Fatalf("prepare: %q", ok)
		}
		for range int(binary.LittleEndian.Uint16(ok[7:])) + int(binary.LittleEndian.Uint16(ok[5:])) {
			c.mustRead()
		}
		return binary.LittleEndian.Uint32(ok[1:])
	}
	execute := func(body []byte) { c.command(append([]byte{pmysql.ComStmtExecute}, body...)...) }
	longData := func(id uint32, param uint16, data string) {
		c.command(append(append(append([]byte{pmysql.ComStmtSendLongData}, le32(id)...), le16(param)...), data...)...)
	}
	strs := []byte{pmysql.TypeVarString, 0, pmysql.TypeBlob, 0}

	id := prepare("INSERT ? ?")
	// Malformed executions keep the connection.
	for _, body := range [][]byte{
		le32(id)[:3],
		execBody(id, nil, nil),
		execBody(id, []byte{0}, nil),
		execBody(id, []byte{0}, strs, []byte("\x05ab")),
		execBody(id, []byte{0}, []byte{0x99, 0, 0x99, 0}, []byte{1, 1}),
	} {
		execute(body)
		c.expectErr(1210)
	}
	execute(execBody(id+100, []byte{0}, strs))
	c.expectErr(1243)

	// Long data in pieces, merged; the packet carries only the other parameter.
	longData(id, 1, "hello, ")
	longData(id, 1, "world")
	execute(execBody(id, []byte{0}, strs, []byte("\x01a")))
	c.expectOK()
	if got := h.lastExecArgs(); got[0].S != "a" || got[1].S != "hello, world" || got[1].K != types.KindBytes {
		t.Fatalf("args %+v", got)
	}
	// Long data is gone after the execution.
	execute(execBody(id, []byte{0}, nil, []byte("\x01a"), []byte("\x01b")))
	c.expectOK()
	if got := h.lastExecArgs(); got[1].S != "b" {
		t.Fatalf("args %+v", got)
	}
	// COM_STMT_RESET clears it too.
	longData(id, 0, "stale")
	c.command(append([]byte{pmysql.ComStmtReset}, le32(id)...)...)
	c.expectOK()
	execute(execBody(id, []byte{0}, nil, []byte("\x01a"), []byte("\x01b")))
	c.expectOK()
	if got := h.lastExecArgs(); got[0].S != "a" {
		t.Fatalf("args %+v", got)
	}
	// Problems with long data are reported by the next execution, which then works again.
	longData(id, 2, "no such parameter")
	execute(execBody(id, []byte{0}, nil, []byte("\x01a"), []byte("\x01b")))
	c.expectErr(1210)
	for range 3 { // past MaxAllowedPacket
		longData(id, 0, strings.Repeat("x", 1<<17))
	}
	execute(execBody(id, []byte{0}, nil, []byte("\x01b")))
	c.expectErr(1153)
	execute(execBody(id, []byte{0}, nil, []byte("\x01a"), []byte("\x01b")))
	c.expectOK()
	longData(id+100, 0, "unknown statement: ignored")
	c.command(append([]byte{pmysql.ComStmtReset}, le32(id+100)...)...)
	c.expectErr(1243)

	// COM_STMT_CLOSE has no reply: the next packet answers the ping.
	c.command(append([]byte{pmysql.ComStmtClose}, le32(id)...)...)
	c.command(pmysql.ComPing)
	c.expectOK()
	execute(execBody(id, []byte{0}, strs, []byte("\x01a"), []byte("\x01b")))
	c.expectErr(1243)

	// COM_RESET_CONNECTION closes the remaining statements.
	id2 := prepare("INSERT ?")
	c.command(pmysql.ComResetConnection)
	c.expectOK()
	h.locked(func() {
		if h.resets != 1 || !slices.Contains(h.closedSt, id2) {
			t.Errorf("resets %d, closed %v", h.resets, h.closedSt)
		}
	})
	execute(execBody(id2, []byte{0}, []byte{8, 0}, le64(1)))
	c.expectErr(1243)

	// Too many placeholders.
	c.command(append([]byte{pmysql.ComStmtPrepare}, "INSERT"+strings.Repeat(" ?", maxStmtParams+1)...)...)
	c.expectErr(1390)
}

func TestPanicsAndMisuse(t *testing.T) {
	h := newFakeHandler()
	cols := []proto.Column{{Name: "a", Type: pmysql.TypeLonglong}}
	h.stmts["panic first"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		panic("boom")
	}
	h.stmts["panic in rows"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		w.Columns(cols)
		w.Row([]types.Value{types.NewInt(1)})
		panic(errors.New("boom in rows"))
	}
	h.stmts["panic after"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		w.OK(proto.OK{}, false)
		panic("too late")
	}
	h.stmts["row first"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		return w.Row([]types.Value{types.NewInt(1)})
	}
	h.stmts["wrong width"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		w.Columns(cols)
		return w.Row([]types.Value{types.NewInt(1), types.NewInt(2)})
	}
	h.stmts["nothing"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error { return nil }
	h.stmts["open rows"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		w.Columns(cols)
		return w.Row([]types.Value{types.NewInt(1)})
	}
	h.stmts["more then nothing"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		return w.OK(proto.OK{}, true)
	}
	_, addr := startServer(t, Config{}, h)
	c := dialRaw(t, addr)
	c.mustLogin("root", "", rawClientCaps|pmysql.ClientDeprecateEOF)
	query := func(q string) { c.command(append([]byte{pmysql.ComQuery}, q...)...) }
	ping := func() {
		t.Helper()
		c.command(pmysql.ComPing)
		c.expectOK()
	}

	query("panic first")
	if msg := c.expectErr(1105); !strings.Contains(msg, "boom") {
		t.Fatal(msg)
	}
	ping()

	query("panic in rows")
	c.mustRead() // column count
	c.mustRead() // column
	c.mustRead() // row
	c.expectErr(1105)
	ping()

	query("panic after")
	c.expectOK()
	ping() // nothing else was sent

	query("row first")
	c.expectErr(1105)
	query("wrong width")
	c.mustRead()
	c.mustRead()
	c.expectErr(1105)
	ping()

	query("nothing")
	c.expectOK()
	query("open rows")
	if _, rows, _ := readResultSet(t, c, true); len(rows) != 1 {
		t.Fatal(rows)
	}
	query("more then nothing")
	c.expectOK()
	c.expectOK()
	ping()

	c.command(append([]byte{pmysql.ComStmtPrepare}, "PANIC ?"...)...)
	c.expectErr(1105)
	ping()
}

func TestServerCloseAndConnIDs(t *testing.T) {
	h := newFakeHandler()
	block := make(chan struct{})
	var started sync.WaitGroup
	started.Add(1)
	h.stmts["block"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		started.Done()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-block:
			return nil
		}
	}
	srv, addr := startServer(t, Config{}, h)
	var clients []*rawClient
	for i := 1; i <= 3; i++ {
		c := dialRaw(t, addr)
		if c.connID != uint32(i) {
			t.Fatalf("connection id %d, want %d", c.connID, i)
		}
		c.mustLogin("root", "", rawClientCaps)
		clients = append(clients, c)
	}
	clients[0].command(append([]byte{pmysql.ComQuery}, "block"...)...)
	started.Wait()

	srv.Close() // cancels the blocked query's context
	for _, c := range clients {
		c.expectClosed()
	}
	if h.closed != 3 {
		t.Fatalf("Session.Close called %d times, want 3", h.closed)
	}
	close(block)
}

func TestAccessDeniedHost(t *testing.T) {
	_, addr := startServer(t, Config{}, newFakeHandler())
	c := dialRaw(t, addr)
	if b := c.login("alice", "bad", rawClientCaps); b[0] != hdrErr ||
		!strings.Contains(string(b), "#28000Access denied for user 'alice'@'127.0.0.1' (using password: YES)") {
		t.Fatalf("%q", b)
	}
	c.expectClosed()
}

// An unknown user gets the same exchange as a known account with a cold cache (perform full
// authentication, then 1045), so the protocol does not reveal which accounts exist.
func TestAuthUnknownUserLooksLikeKnown(t *testing.T) {
	_, addr := startServer(t, Config{}, newFakeHandler())
	for _, user := range []string{"alice", "mallory"} {
		c := dialRaw(t, addr)
		if b := c.login(user, "wrong", rawClientCaps); b[0] != hdrErr || !strings.Contains(string(b), "Access denied for user '"+user+"'") {
			t.Fatalf("%s: %q", user, b)
		}
	}
	c := dialRaw(t, addr)
	c.write(buildHandshakeResponse(rawClientCaps, "mallory", scrambleSHA2(c.scramble, "x"), "", CachingSHA2Password, nil))
	if b := c.mustRead(); !bytes.Equal(b, []byte{hdrAuthMore, sha2PerformFullAuth}) {
		t.Fatalf("unknown user: got %q, want perform-full-auth like a known account", b)
	}
}

// Config.Running counts the commands being served: one while a query runs, none once it is
// answered (Threads_running; the commit loop's hint that other commits may come).
func TestRunningCounter(t *testing.T) {
	h := newFakeHandler()
	inside, release := make(chan struct{}), make(chan struct{})
	h.stmts["SLOW"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		close(inside)
		<-release
		return w.OK(proto.OK{}, false)
	}
	var running atomic.Int64
	_, addr := startServer(t, Config{Running: &running}, h)
	db := openDB(t, addr, "root", "", "")
	db.SetMaxOpenConns(2)
	// The counter drops after an answer is flushed, which the client may see first.
	settled := func() int64 {
		deadline := time.Now().Add(5 * time.Second)
		for running.Load() != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		return running.Load()
	}
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	if got := settled(); got != 0 {
		t.Fatalf("Running = %d with no command in progress, want 0", got)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.Exec("SLOW")
		done <- err
	}()
	<-inside
	if got := running.Load(); got != 1 {
		t.Fatalf("Running = %d while one query runs, want 1", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := settled(); got != 0 {
		t.Fatalf("Running = %d after the query was answered, want 0", got)
	}
}

func TestTraceTag(t *testing.T) {
	c := &conn{stmts: map[uint32]*stmtState{7: {traceTag: "SELECT c FROM sbtest1 WH"}}}
	exec := func(id uint32) []byte { return binary.LittleEndian.AppendUint32([]byte{pmysql.ComStmtExecute}, id) }
	cases := []struct {
		data []byte
		want string
	}{
		{append([]byte{pmysql.ComQuery}, "BEGIN"...), "BEGIN"},
		{append([]byte{pmysql.ComQuery}, "SELECT c FROM sbtest1 WHERE id = 5"...), "SELECT c FROM sbtest1 WH"},
		{append([]byte{pmysql.ComQuery}, "SET PASSWORD = 'secret'"...), "SET PASSWORD = "},
		{append([]byte{pmysql.ComQuery}, `SELECT "x"`...), "SELECT "},
		{exec(7), "SELECT c FROM sbtest1 WH"},
		{exec(8), "command 23"},
		{[]byte{pmysql.ComPing}, "command 14"},
		{nil, "empty"},
	}
	for _, tc := range cases {
		if got := c.traceTag(tc.data); got != tc.want {
			t.Errorf("traceTag(%q) = %q, want %q", tc.data, got, tc.want)
		}
	}
}
