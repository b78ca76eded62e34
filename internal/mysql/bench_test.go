package mysql

import (
	"net"
	"testing"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
)

var benchCols = []proto.Column{
	{Name: "id", Type: pmysql.TypeLonglong}, {Name: "k", Type: pmysql.TypeLong},
	{Name: "c", Type: pmysql.TypeString}, {Name: "pad", Type: pmysql.TypeString},
}

var benchRow = []types.Value{types.NewInt(42), types.NewInt(4711),
	types.NewString("68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441"),
	types.NewString("22195207048-70116052123-74140395089-76317954521-98694025897")}

func BenchmarkTextRow(b *testing.B) {
	w := resultWriter{cols: benchCols}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = w.appendTextRow(buf[:0], benchRow)
	}
}

func BenchmarkBinaryRow(b *testing.B) {
	w := resultWriter{cols: benchCols}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = w.appendBinaryRow(buf[:0], benchRow)
	}
}

// BenchmarkPointSelect is one COM_QUERY returning one row over loopback TCP, client included: the
// protocol's share of a point select.
func BenchmarkPointSelect(b *testing.B) { benchPointSelect(b, Config{}) }

// BenchmarkPointSelectWatchNow is BenchmarkPointSelect with the client watched from the start of
// every command: what the watch would cost without its delay.
func BenchmarkPointSelectWatchNow(b *testing.B) { benchPointSelect(b, Config{peerWatchDelay: -1}) }

func benchPointSelect(b *testing.B, cfg Config) {
	h := newFakeHandler()
	h.stmts["SELECT point"] = rowsOf(benchCols, benchRow)
	_, addr := startServer(b, cfg, h)
	c := dialRaw(b, addr)
	c.mustLogin("root", "", rawClientCaps|pmysql.ClientDeprecateEOF)
	q := append([]byte{pmysql.ComQuery}, "SELECT point"...)
	b.ReportAllocs()
	for b.Loop() {
		c.command(q...)
		for range 1 + len(benchCols) + 2 { // count, columns, row, final OK
			if _, err := c.p.readPacket(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCommandWatch is the connection goroutine's cost of beginCommand and endCommand alone,
// on a TCP connection: a command context plus a watch delayed (as configured), started at once
// (now), or impossible (pipe: the context only).
func BenchmarkCommandWatch(b *testing.B) {
	for _, bc := range []struct {
		name  string
		delay time.Duration
		pipe  bool
	}{{"delayed", 0, false}, {"now", -1, false}, {"pipe", 0, true}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := NewServer(Config{peerWatchDelay: bc.delay}, newFakeHandler(), testLogger(b))
			var nc net.Conn
			if bc.pipe {
				var peer net.Conn
				nc, peer = net.Pipe()
				defer peer.Close()
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				peer, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer peer.Close()
				if nc, err = ln.Accept(); err != nil {
					b.Fatal(err)
				}
			}
			defer nc.Close()
			c := newConn(srv, nc)
			b.ReportAllocs()
			for b.Loop() {
				c.beginCommand()
				c.endCommand()
			}
		})
	}
}
