package mysql

import (
	"errors"
	"io"
	"os"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// LOAD DATA LOCAL INFILE: the server asks the client for a file in the middle of a COM_QUERY.
//
//	server: 0xFB, file name                  (the LOCAL INFILE request)
//	client: packets of the file's bytes, then an empty packet
//	server: OK or ERR                        (the statement's result)
//
// The packets carry the exchange's next sequence ids. The session asks through the
// resultWriter's OpenLocalFile (the SQL layer's LocalFileOpener, asserted on the ResultWriter it
// gets) and reads the file as a stream; its Close reads and drops what is left up to the empty
// packet, so a statement that fails early still leaves the connection in sync. If the session
// forgets to close it, the connection does before the statement's reply (endInfile). Each packet read waits at most Config.NetReadTimeout (net_read_timeout);
// one larger than max_allowed_packet, out of sequence, or a read error ends the connection (with
// ERR 1153 or 1156 when the client can still read it), as for any other packet.
//
// The peer watch (watch.go) is paused during the transfer: the client's bytes would look like a
// pipelined command, and this goroutine reads the socket itself.

// hdrLocalInfile starts a LOCAL INFILE request.
const hdrLocalInfile = 0xfb

var (
	errInfileClosed = errors.New("mysql: read from a closed LOCAL INFILE stream")
	errInfileBusy   = errors.New("mysql: LOCAL INFILE requested while another is open")
	errInfileState  = errors.New("mysql: LOCAL INFILE requested in the middle of a result set")
)

// localFilesDisabled is MySQL 8's answer to LOAD DATA LOCAL from a client that did not set
// CLIENT_LOCAL_FILES (the same as the SQL layer's for local_infile=OFF).
func localFilesDisabled() *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrClientLocalFilesDisabled, "Loading local data is disabled; this must be enabled on both the client and server sides")
}

// LocalFilesEnabled reports whether the client set CLIENT_LOCAL_FILES (internal/sql's
// LocalFileOpener).
func (w *resultWriter) LocalFilesEnabled() bool { return w.c.caps&pmysql.ClientLocalFiles != 0 }

// OpenLocalFile sends the LOCAL INFILE request for name and returns the client's file as a
// stream (internal/sql's LocalFileOpener).
func (w *resultWriter) OpenLocalFile(name string) (io.ReadCloser, error) {
	c := w.c
	switch {
	case c.caps&pmysql.ClientLocalFiles == 0:
		return nil, localFilesDisabled()
	case w.binary:
		// COM_STMT_EXECUTE: MySQL does not prepare LOAD DATA; the SQL layer refuses it at prepare.
		return nil, sqlerr.New(sqlerr.ErrUnsupportedPS, "This command is not supported in the prepared statement protocol yet")
	case w.state != rwIdle:
		return nil, errInfileState
	case c.infile != nil:
		return nil, errInfileBusy
	case c.netErr != nil:
		return nil, c.netErr
	}
	c.endCommand() // pause the peer watch; resumed when the transfer ends
	b := append(c.pio.startPacket(), hdrLocalInfile)
	if err := c.writeAndFlush(append(b, name...)); err != nil {
		return nil, err
	}
	r := &infileReader{c: c}
	c.infile = r
	return r, nil
}

// infileReader reads the file a client sends after a LOCAL INFILE request.
type infileReader struct {
	c      *conn
	buf    []byte // unread bytes of the last packet (the packet buffer: valid until the next read)
	done   bool   // the empty packet arrived, or reading failed
	err    error  // what Read returns once done: io.EOF, or the failure
	closed bool
}

func (r *infileReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, errInfileClosed
	}
	for len(r.buf) == 0 {
		if r.done {
			return 0, r.err
		}
		r.next()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// next reads the next packet of the file.
func (r *infileReader) next() {
	c := r.c
	if err := c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.NetReadTimeout)); err != nil {
		r.fail(err)
		return
	}
	c.deadlineSet = true
	data, err := c.pio.readPacket()
	if err != nil {
		r.fail(err)
		return
	}
	if len(data) == 0 {
		r.done, r.err = true, io.EOF
		return
	}
	r.buf = data
}

// fail ends the transfer and the connection: the client's stream can no longer be followed.
func (r *infileReader) fail(err error) {
	c := r.c
	c.srv.log.Debug("mysql: reading a LOCAL INFILE failed", "conn", c.id, "err", err)
	_ = c.readFailed(err) // ERR 1153 / 1156 where the client can still read it
	if c.netErr == nil {
		c.netErr = err
	}
	r.done, r.buf = true, nil
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.err = sqlerr.New(sqlerr.ErrNetReadInterrupted, "Got timeout reading communication packets")
	} else {
		r.err = sqlerr.New(sqlerr.ErrNetReadError, "Got an error reading communication packets")
	}
}

// endInfile finishes a transfer the session left open before the statement's reply goes out: the
// client is still sending, and its next packets would be taken for the reply's successors or for
// commands.
func (c *conn) endInfile() {
	if c.infile != nil {
		c.srv.log.Warn("mysql: session left a LOCAL INFILE transfer open", "conn", c.id)
		_ = c.infile.Close()
	}
}

// Close reads what is left of the file, up to the empty packet, and resumes the command's watch.
func (r *infileReader) Close() error {
	if r.closed {
		return nil
	}
	for !r.done {
		r.buf = nil
		r.next()
	}
	r.buf = nil
	r.closed = true
	c := r.c
	c.infile = nil
	if c.netErr == nil {
		c.beginCommand()
	}
	return nil
}
