package mysql

import (
	"bytes"
	"testing"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
)

// The OK packet's info ("Records: 2  Duplicates: 0  Warnings: 0" after a multi-row INSERT) is
// length-encoded whether or not the client has CLIENT_SESSION_TRACK, as mysqld writes it.
// Connector/J, which does not ask for session tracking, reads it as a length-encoded string; the
// bare string<EOF> of the protocol documentation made it fail with "Buffer length is less than
// expected payload length" on every multi-row INSERT.
func TestOKInfoLengthEncoded(t *testing.T) {
	const info = "Records: 2  Duplicates: 0  Warnings: 0"
	ok := &proto.OK{AffectedRows: 2, LastInsertID: 5, Info: info}
	want := append([]byte{hdrOK, 2, 5, 0x02, 0x00, 0, 0, byte(len(info))}, info...)
	for _, caps := range []uint32{rawClientCaps, rawClientCaps | pmysql.ClientSessionTrack} {
		got := appendOK(nil, caps, hdrOK, ok, pmysql.ServerStatusAutocommit)
		if !bytes.Equal(got, want) {
			t.Errorf("caps %#x: OK\n got %q\nwant %q", caps, got, want)
		}
	}
	// No info: nothing after the warnings, in both modes.
	for _, caps := range []uint32{rawClientCaps, rawClientCaps | pmysql.ClientSessionTrack} {
		got := appendOK(nil, caps, hdrOK, &proto.OK{AffectedRows: 1}, pmysql.ServerStatusAutocommit)
		if want := []byte{hdrOK, 1, 0, 0x02, 0x00, 0, 0}; !bytes.Equal(got, want) {
			t.Errorf("caps %#x: OK without info %q, want %q", caps, got, want)
		}
	}
}
