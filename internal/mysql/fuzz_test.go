package mysql

import (
	"bytes"
	"errors"
	"io"
	"testing"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
)

func FuzzReadPacket(f *testing.F) {
	f.Add(cat(hdr(3, 0), []byte("abc")))
	f.Add(cat(hdr(1, 0), []byte("a"), hdr(1, 1), []byte("b")))
	f.Add(cat(hdr(0, 0), hdr(2, 1), []byte("xy")))
	f.Add(cat(hdr(testChunkBytes, 0), []byte("0123456789"), hdr(1, 1), []byte("x")))
	f.Add(cat(hdr(testChunkBytes, 0), []byte("0123456789"), hdr(0, 1)))
	f.Add(cat(hdr(maxChunkBytes, 0), []byte("x")))
	f.Add(hdr(5000, 0))
	f.Add([]byte{1, 0})
	const maxBytes = 64
	f.Fuzz(func(t *testing.T, stream []byte) {
		// Small chunks and limit, so that short inputs reach reassembly and the limit checks.
		p := newTestPacketIO(bytes.NewReader(stream), io.Discard, maxBytes)
		for {
			b, err := p.readPacket()
			if errors.Is(err, errPacketTooLarge) {
				_ = p.discardOversized(1 << 20)
				return
			}
			if err != nil {
				return
			}
			if len(b) > maxBytes {
				t.Fatalf("payload of %d bytes past the %d limit", len(b), maxBytes)
			}
		}
	})
}

func FuzzHandshakeResponse(f *testing.F) {
	f.Add(buildHandshakeResponse(rawClientCaps, "root", nil, "", CachingSHA2Password, nil))
	f.Add(buildHandshakeResponse(rawClientCaps|pmysql.ClientConnectWithDB|pmysql.ClientConnectAtts, "alice",
		bytes.Repeat([]byte{7}, 32), "db", NativePassword, map[string]string{"_os": "linux", "k": "v"}))
	f.Add(buildHandshakeResponse(pmysql.ClientProtocol41|pmysql.ClientSecureConnection, "u", []byte("0123456789abcdefghij"), "", "", nil))
	f.Add(buildHandshakeResponse(pmysql.ClientProtocol41, "u", []byte("tok"), "", "", nil))
	f.Add(append(appendUint32(nil, rawClientCaps|pmysql.ClientSSL), make([]byte, 28)...))
	f.Add(badAttrs())
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := parseHandshakeResponse(data)
		if err != nil {
			return
		}
		if len(h.attrs) > maxConnAttrs {
			t.Fatalf("%d attributes", len(h.attrs))
		}
		if len(h.user)+len(h.authResp)+len(h.db)+len(h.plugin) > len(data) {
			t.Fatal("fields longer than the packet")
		}
	})
}

func FuzzStmtExecute(f *testing.F) {
	two := []byte{pmysql.TypeLonglong, 0, pmysql.TypeVarString, 0}
	f.Add(execBody(1, []byte{0}, two, le64(7), []byte("\x01x")), uint16(2), []byte(nil), byte(0))
	f.Add(execBody(1, []byte{1}, nil, []byte("\x01x")), uint16(2), two, byte(0))
	f.Add(execBody(1, []byte{0}, two, le64(7)), uint16(2), two, byte(2))
	f.Add(execBody(1, []byte{0, 0}, []byte{
		pmysql.TypeDate, 0, pmysql.TypeDatetime, 0, pmysql.TypeDuration, 0, pmysql.TypeNewDecimal, 0,
		pmysql.TypeBlob, 0, pmysql.TypeFloat, 0, pmysql.TypeTiny, 0x80, pmysql.TypeYear, 0, pmysql.TypeNull, 0},
		[]byte{4, 0xe8, 0x07, 2, 29}, append([]byte{11, 0xe8, 0x07, 2, 29, 1, 2, 3}, le32(5)...),
		append(append([]byte{12, 1}, append(le32(3), 4, 5, 6)...), le32(7)...), []byte("\x041.25"),
		[]byte("\x02\x00\x01"), le32(0x3f800000), []byte{200}, le16(1999)), uint16(9), []byte(nil), byte(0))
	f.Add(execBody(1, nil, nil), uint16(0), []byte(nil), byte(0))
	colTypes := []byte{pmysql.TypeTiny, pmysql.TypeShort, pmysql.TypeLong, pmysql.TypeLonglong, pmysql.TypeInt24,
		pmysql.TypeYear, pmysql.TypeFloat, pmysql.TypeDouble, pmysql.TypeNewDecimal, pmysql.TypeDate,
		pmysql.TypeDatetime, pmysql.TypeTimestamp, pmysql.TypeDuration, pmysql.TypeVarString, pmysql.TypeBlob,
		pmysql.TypeJSON}
	f.Fuzz(func(t *testing.T, body []byte, nparams uint16, prev []byte, longMask byte) {
		n := int(nparams % 512)
		var long [][]byte
		if longMask != 0 && n > 0 {
			long = make([][]byte, n)
			for i := 0; i < n && i < 8; i++ {
				if longMask&(1<<i) != 0 {
					long[i] = []byte("long data")
				}
			}
		}
		ex, err := parseStmtExecute(body, n, prev, long)
		if err != nil {
			return
		}
		if len(ex.args) != n {
			t.Fatalf("%d args for %d parameters", len(ex.args), n)
		}
		// What was decoded must encode, in any column type, in both protocols.
		cols := make([]proto.Column, n)
		for i := range cols {
			cols[i].Type = colTypes[(i+len(body))%len(colTypes)]
			if i%2 == 1 {
				cols[i].Flags = uint16(pmysql.UnsignedFlag)
			}
		}
		w := resultWriter{cols: cols}
		w.appendBinaryRow(nil, ex.args)
		w.appendTextRow(nil, ex.args)
	})
}
