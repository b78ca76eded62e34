package cluster

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// rawConn is a minimal MySQL protocol client (text protocol, password-less login) that returns the
// session state of OK packets, which go-sql-driver reads past without exposing: the test reads the
// GTID of its commits from SESSION_TRACK_GTIDS as MySQL 8 connectors and proxies do.
type rawConn struct {
	nc  net.Conn
	br  *bufio.Reader
	seq byte
}

// The capability bits the client asks for.
const (
	capLongPassword     = 1 << 0
	capProtocol41       = 1 << 9
	capTransactions     = 1 << 13
	capSecureConnection = 1 << 15
	capPluginAuth       = 1 << 19
	capSessionTrack     = 1 << 23
	statusStateChanged  = 0x4000
)

// okResult is what an OK packet said.
type okResult struct {
	affected uint64
	// gtids is the SESSION_TRACK_GTIDS entry's GTID set ("" when the packet had none).
	gtids string
}

// mysqlErr is an ERR packet.
type mysqlErr struct {
	code uint16
	msg  string
}

func (e *mysqlErr) Error() string { return fmt.Sprintf("Error %d: %s", e.code, e.msg) }

func dialRaw(addr, user string) (*rawConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &rawConn{nc: nc, br: bufio.NewReader(nc)}
	if err := c.login(user); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *rawConn) Close() error { return c.nc.Close() }

func (c *rawConn) readPacket() ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c.br, hdr[:]); err != nil {
		return nil, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	c.seq = hdr[3] + 1
	b := make([]byte, n)
	if _, err := io.ReadFull(c.br, b); err != nil {
		return nil, err
	}
	return b, nil
}

func (c *rawConn) writePacket(b []byte) error {
	hdr := []byte{byte(len(b)), byte(len(b) >> 8), byte(len(b) >> 16), c.seq}
	c.seq++
	_, err := c.nc.Write(append(hdr, b...))
	return err
}

func (c *rawConn) login(user string) error {
	g, err := c.readPacket()
	if err != nil {
		return err
	}
	if len(g) == 0 || g[0] != 10 {
		return fmt.Errorf("greeting: protocol %v", g[:min(1, len(g))])
	}
	// The greeting's plugin name is its last NUL-terminated string.
	plugin := "mysql_native_password"
	if i := len(g) - 1; i > 0 && g[i] == 0 {
		j := i - 1
		for j >= 0 && g[j] != 0 {
			j--
		}
		plugin = string(g[j+1 : i])
	}
	caps := uint32(capLongPassword | capProtocol41 | capTransactions | capSecureConnection | capPluginAuth | capSessionTrack)
	b := binary.LittleEndian.AppendUint32(nil, caps)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 255)
	b = append(b, make([]byte, 23)...)
	b = append(b, user...)
	b = append(b, 0)
	b = append(b, 0) // an empty auth response: the account has no password
	b = append(b, plugin...)
	b = append(b, 0)
	if err := c.writePacket(b); err != nil {
		return err
	}
	for {
		p, err := c.readPacket()
		if err != nil {
			return err
		}
		switch p[0] {
		case 0x00:
			return nil
		case 0xff:
			return parseErr(p)
		case 0xfe, 0x01: // a plugin switch or more data: answer with an empty token again
			if err := c.writePacket(nil); err != nil {
				return err
			}
		default:
			return fmt.Errorf("login: unexpected packet %x", p[0])
		}
	}
}

func parseErr(p []byte) error {
	e := &mysqlErr{code: binary.LittleEndian.Uint16(p[1:3])}
	rest := p[3:]
	if len(rest) > 0 && rest[0] == '#' {
		rest = rest[6:]
	}
	e.msg = string(rest)
	return e
}

func lenencInt(b []byte) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, nil, errors.New("short packet")
	}
	switch b[0] {
	case 0xfc:
		return uint64(binary.LittleEndian.Uint16(b[1:3])), b[3:], nil
	case 0xfd:
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, b[4:], nil
	case 0xfe:
		return binary.LittleEndian.Uint64(b[1:9]), b[9:], nil
	}
	return uint64(b[0]), b[1:], nil
}

func lenencBytes(b []byte) ([]byte, []byte, error) {
	n, rest, err := lenencInt(b)
	if err != nil || uint64(len(rest)) < n {
		return nil, nil, errors.New("short packet")
	}
	return rest[:n], rest[n:], nil
}

// parseOK reads an OK packet, with its session state as CLIENT_SESSION_TRACK lays it out.
func parseOK(p []byte) (okResult, error) {
	var r okResult
	var err error
	b := p[1:]
	if r.affected, b, err = lenencInt(b); err != nil {
		return r, err
	}
	if _, b, err = lenencInt(b); err != nil { // last insert id
		return r, err
	}
	if len(b) < 4 {
		return r, errors.New("OK: short status")
	}
	status := binary.LittleEndian.Uint16(b)
	b = b[4:]
	if len(b) == 0 {
		return r, nil
	}
	if _, b, err = lenencBytes(b); err != nil { // info
		return r, err
	}
	if status&statusStateChanged == 0 {
		return r, nil
	}
	state, _, err := lenencBytes(b)
	if err != nil {
		return r, err
	}
	for len(state) > 0 {
		typ := state[0]
		var data []byte
		if data, state, err = lenencBytes(state[1:]); err != nil {
			return r, err
		}
		if typ == 3 { // SESSION_TRACK_GTIDS: encoding specification 0, then the set
			if len(data) == 0 || data[0] != 0 {
				return r, fmt.Errorf("GTID state: encoding %v", data)
			}
			set, _, err := lenencBytes(data[1:])
			if err != nil {
				return r, err
			}
			r.gtids = string(set)
		}
	}
	return r, nil
}

// exec runs a statement that returns no rows and returns its OK packet.
func (c *rawConn) exec(q string) (okResult, error) {
	c.seq = 0
	if err := c.writePacket(append([]byte{0x03}, q...)); err != nil {
		return okResult{}, err
	}
	p, err := c.readPacket()
	if err != nil {
		return okResult{}, err
	}
	switch p[0] {
	case 0x00:
		return parseOK(p)
	case 0xff:
		return okResult{}, parseErr(p)
	}
	return okResult{}, fmt.Errorf("%s: a result set, want OK", q)
}
