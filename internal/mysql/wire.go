package mysql

import (
	"encoding/binary"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Status and capability bits the parser package does not name.
const (
	serverSessionStateChanged uint16 = 0x4000
)

// Packet header bytes.
const (
	hdrOK       = 0x00
	hdrAuthMore = 0x01
	hdrEOF      = 0xfe // also AuthSwitchRequest during the handshake
	hdrErr      = 0xff
	lenencNull  = 0xfb
)

// Session-state-change types (CLIENT_SESSION_TRACK), for building OK.SessionState with
// AppendSessionStateEntry.
const (
	SessionTrackSystemVariables            byte = 0
	SessionTrackSchema                     byte = 1
	SessionTrackStateChange                byte = 2
	SessionTrackGTIDs                      byte = 3
	SessionTrackTransactionCharacteristics byte = 4
	SessionTrackTransactionState           byte = 5
)

// AppendSessionStateEntry appends one session-state-change entry (type, then its data as a
// length-encoded string) to buf. OK.SessionState is a concatenation of such entries. For
// SessionTrackGTIDs the data is itself an encoding-specification byte (0) followed by a
// length-encoded string, as MySQL sends it.
func AppendSessionStateEntry(buf []byte, typ byte, data []byte) []byte {
	buf = append(buf, typ)
	buf = appendLenencInt(buf, uint64(len(data)))
	return append(buf, data...)
}

func appendLenencInt(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	default:
		return append(b, 0xfe, byte(n), byte(n>>8), byte(n>>16), byte(n>>24),
			byte(n>>32), byte(n>>40), byte(n>>48), byte(n>>56))
	}
}

func appendLenencString(b []byte, s string) []byte {
	b = appendLenencInt(b, uint64(len(s)))
	return append(b, s...)
}

func appendLenencBytes(b []byte, s []byte) []byte {
	b = appendLenencInt(b, uint64(len(s)))
	return append(b, s...)
}

func appendUint16(b []byte, n uint16) []byte { return binary.LittleEndian.AppendUint16(b, n) }
func appendUint32(b []byte, n uint32) []byte { return binary.LittleEndian.AppendUint32(b, n) }

// appendOK builds an OK packet payload. header is hdrOK, or hdrEOF for the OK that ends a result
// set under CLIENT_DEPRECATE_EOF.
func appendOK(b []byte, caps uint32, header byte, ok *proto.OK, status uint16) []byte {
	track := caps&pmysql.ClientSessionTrack != 0 && len(ok.SessionState) > 0
	if track {
		status |= serverSessionStateChanged
	}
	b = append(b, header)
	b = appendLenencInt(b, ok.AffectedRows)
	b = appendLenencInt(b, ok.LastInsertID)
	b = appendUint16(b, status)
	b = appendUint16(b, ok.Warnings)
	// As MySQL: the info string is omitted when empty unless state follows it. It is
	// length-encoded with or without CLIENT_SESSION_TRACK: the protocol documentation says
	// string<EOF> without it, but mysqld and MariaDB write it with net_store_data, and clients read
	// it so (Connector/J always reads a length-encoded string and fails on anything else,
	// libmysqlclient and libmariadb read a length first).
	if track || ok.Info != "" {
		b = appendLenencString(b, ok.Info)
	}
	if track {
		b = appendLenencBytes(b, ok.SessionState)
	}
	return b
}

func appendEOF(b []byte, warnings, status uint16) []byte {
	b = append(b, hdrEOF)
	b = appendUint16(b, warnings)
	return appendUint16(b, status)
}

// maxErrMessageBytes bounds an error message as MySQL does (MYSQL_ERRMSG_SIZE).
const maxErrMessageBytes = 512

func appendErr(b []byte, e *sqlerr.Error) []byte {
	b = append(b, hdrErr)
	b = appendUint16(b, e.Code)
	state := e.State
	if len(state) != 5 {
		state = "HY000"
	}
	b = append(b, '#')
	b = append(b, state...)
	msg := e.Message
	if len(msg) > maxErrMessageBytes {
		msg = msg[:maxErrMessageBytes]
	}
	return append(b, msg...)
}

func appendColumnDef(b []byte, c *proto.Column) []byte {
	b = appendLenencString(b, "def")
	b = appendLenencString(b, c.Schema)
	b = appendLenencString(b, c.Table)
	b = appendLenencString(b, c.OrgTable)
	b = appendLenencString(b, c.Name)
	b = appendLenencString(b, c.OrgName)
	b = append(b, 0x0c)
	b = appendUint16(b, c.Charset)
	b = appendUint32(b, c.Length)
	b = append(b, c.Type)
	b = appendUint16(b, c.Flags)
	b = append(b, c.Decimals, 0, 0)
	return b
}

// reader is a bounds-checked cursor over a client payload. The first read past the end sets bad
// and every later read returns zero values, so a parser checks once at the end (or before acting
// on a value) instead of after each field.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) remaining() int { return len(r.b) }

func (r *reader) take(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad = true
		r.b = nil
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() byte {
	v := r.take(1)
	if v == nil {
		return 0
	}
	return v[0]
}

func (r *reader) u16() uint16 {
	v := r.take(2)
	if v == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(v)
}

func (r *reader) u32() uint32 {
	v := r.take(4)
	if v == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(v)
}

func (r *reader) u64() uint64 {
	v := r.take(8)
	if v == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(v)
}

// lenencInt reads a length-encoded integer; null reports the 0xfb NULL marker.
func (r *reader) lenencInt() (n uint64, null bool) {
	switch c := r.u8(); c {
	case 0xfb:
		return 0, true
	case 0xfc:
		return uint64(r.u16()), false
	case 0xfd:
		v := r.take(3)
		if v == nil {
			return 0, false
		}
		return uint64(v[0]) | uint64(v[1])<<8 | uint64(v[2])<<16, false
	case 0xfe:
		return r.u64(), false
	case 0xff:
		r.bad = true
		return 0, false
	default:
		return uint64(c), false
	}
}

// lenencBytes reads a length-encoded string. The result aliases the payload.
func (r *reader) lenencBytes() []byte {
	n, null := r.lenencInt()
	if null || n > uint64(len(r.b)) {
		r.bad = true
		r.b = nil
		return nil
	}
	return r.take(int(n))
}

// nulString reads a NUL-terminated string; at the end of the payload the terminator may be missing
// (some clients omit the last one).
func (r *reader) nulString() []byte {
	for i, c := range r.b {
		if c == 0 {
			v := r.b[:i:i]
			r.b = r.b[i+1:]
			return v
		}
	}
	v := r.b
	r.b = nil
	return v
}
