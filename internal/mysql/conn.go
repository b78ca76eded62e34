package mysql

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	rtrace "runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Options of COM_SET_OPTION.
const (
	optionMultiStatementsOn  = 0
	optionMultiStatementsOff = 1
)

// maxStmtParams is the protocol's bound: COM_STMT_PREPARE_OK carries the count in 2 bytes.
const maxStmtParams = 1<<16 - 1

// conn is one client connection. Everything in it is owned by the connection's goroutine, except
// nc, which Server.Close may close from another goroutine to unblock it.
type conn struct {
	srv    *Server
	nc     net.Conn
	pio    *packetIO
	id     uint32
	host   string
	caps   uint32 // negotiated: the client's capabilities that we advertised
	sess   proto.Session
	ctx    context.Context
	cancel context.CancelFunc

	// cmdCtx is the context of the session calls of commands: a child of ctx that is also
	// cancelled when the client goes away during a command (watch.go).
	cmdCtx context.Context
	watch  peerWatch

	stmts         map[uint32]*stmtState
	longDataBytes int // long data buffered over all statements

	rw          resultWriter
	infile      *infileReader // the LOAD DATA LOCAL transfer under way, if any
	deadlineSet bool
	slice       timeSlice
	// readyFd is the socket's fd in the server's readiness poller, -1 when not registered.
	// parkState and kickMu belong to waitCommand and kick (ready.go's protocol).
	readyFd   int32
	parkState atomic.Int32
	kickMu    sync.Mutex
	// netErr is the first error writing to the client; once set, the connection is done.
	netErr error

	// tlsConn is the TLS connection over nc once the client asked for TLS (tls.go); packets then go
	// through it, while nc stays the socket that Close, KILL and the peer watch use.
	tlsConn *tls.Conn
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:  s,
		nc:   nc,
		id:   s.nextConnID(),
		host: hostOf(nc.RemoteAddr()),
	}
	c.pio = newPacketIO(nc, nc, maxHandshakeBytes)
	c.pio.acct = s.cfg.Memory
	c.ctx, c.cancel = context.WithCancel(s.baseCtx)
	c.initWatch(s.cfg.peerWatchDelay)
	c.slice.limit = s.cfg.TimeSlice
	c.readyFd = -1
	c.rw.c = c
	return c
}

// hostOf is the client's address as accounts see it: the IP without port, or "localhost" for a
// Unix socket.
func hostOf(a net.Addr) string {
	if a == nil {
		return "localhost"
	}
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.String()
	case *net.UnixAddr:
		return "localhost"
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

func (c *conn) serve() {
	defer c.srv.removeConn(c)
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("mysql: panic serving connection", "conn", c.id, "panic", r,
				"stack", string(debug.Stack()))
		}
		c.close()
	}()

	if err := c.nc.SetDeadline(time.Now().Add(c.srv.cfg.ConnectTimeout)); err != nil {
		return
	}
	if err := c.handshake(); err != nil {
		c.srv.log.Debug("mysql: handshake failed", "conn", c.id, "host", c.host, "err", err)
		return
	}
	if err := c.nc.SetDeadline(time.Time{}); err != nil {
		return
	}
	c.pio.maxPayloadBytes = c.srv.cfg.MaxAllowedPacket
	c.registerReady()
	for c.serveCommand() {
	}
}

func (c *conn) close() {
	c.cancel()
	c.slice.ready.remove(c)
	if c.tlsConn != nil {
		// Sends close_notify (bounded by a write deadline of its own), then closes nc.
		c.tlsConn.Close()
	}
	c.nc.Close()
	if c.sess != nil {
		sess := c.sess
		c.sess = nil
		_ = c.guard("Close", func() error { sess.Close(); return nil })
	}
	for _, st := range c.stmts {
		c.clearLongData(st)
	}
	c.stmts = nil
	c.pio.rbuf = nil
	c.pio.releaseBuffers()
}

// guard runs a Handler or Session call, turning a panic into an error (logged with its stack) so
// that one bad statement answers ERR 1105 instead of killing the server.
func (c *conn) guard(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("mysql: panic in session call", "call", what, "conn", c.id, "panic", r,
				"stack", string(debug.Stack()))
			err = sqlerr.New(sqlerr.ErrUnknownError, "internal error: %v", r)
		}
	}()
	return f()
}

// status is the session's status flags for OK and EOF packets.
func (c *conn) status() uint16 {
	var st uint16
	if c.sess == nil {
		return pmysql.ServerStatusAutocommit
	}
	_ = c.guard("Status", func() error { st = c.sess.Status(); return nil })
	return st
}

// writePacket frames a payload built on pio.startPacket. Errors are kept in netErr: the command
// finishes without further output and the connection then closes.
func (c *conn) writePacket(b []byte) error {
	if c.netErr != nil {
		return c.netErr
	}
	if err := c.pio.writePacket(b); err != nil {
		c.netErr = err
	}
	return c.netErr
}

func (c *conn) flush() error {
	if c.netErr != nil {
		return c.netErr
	}
	if err := c.pio.flush(); err != nil {
		c.netErr = err
	}
	return c.netErr
}

func (c *conn) writeAndFlush(b []byte) error {
	if err := c.writePacket(b); err != nil {
		return err
	}
	return c.flush()
}

func (c *conn) sendErr(e *sqlerr.Error) {
	_ = c.writeAndFlush(appendErr(c.pio.startPacket(), e))
}

func (c *conn) sendOK(ok *proto.OK) {
	_ = c.writePacket(appendOK(c.pio.startPacket(), c.caps, hdrOK, ok, c.status()))
}

// sendEOF ends a result (or a COM_FIELD_LIST / COM_SET_OPTION reply): an EOF packet, or under
// CLIENT_DEPRECATE_EOF an OK packet with the EOF header.
func (c *conn) sendEOF(warnings, status uint16) {
	b := c.pio.startPacket()
	if c.caps&pmysql.ClientDeprecateEOF != 0 {
		b = appendOK(b, c.caps, hdrEOF, &proto.OK{Warnings: warnings}, status)
	} else {
		b = appendEOF(b, warnings, status)
	}
	_ = c.writePacket(b)
}

// readFailed handles an error from readPacket, answering the client when it can still listen. It
// returns err: the connection must close.
func (c *conn) readFailed(err error) error {
	switch {
	case errors.Is(err, errPacketTooLarge):
		// Read the rest of the packet, so the client, still writing, gets to read the error.
		_ = c.nc.SetReadDeadline(time.Now().Add(oversizeDiscardTime))
		_ = c.pio.discardOversized(oversizeDiscardBytes)
		c.sendErr(sqlerr.New(sqlerr.ErrNetPacketTooLarge, "Got a packet bigger than 'max_allowed_packet' bytes"))
	case errors.Is(err, errPacketMemory):
		_ = c.nc.SetReadDeadline(time.Now().Add(oversizeDiscardTime))
		_ = c.pio.discardOversized(oversizeDiscardBytes)
		if e, ok := c.srv.cfg.Memory.CapacityError().(*sqlerr.Error); ok {
			c.sendErr(e)
		}
	case errors.Is(err, errPacketSequence):
		c.sendErr(sqlerr.New(sqlerr.ErrNetPacketsOutOfOrder, "Got packets out of order"))
	}
	return err
}

// serveCommand reads one command and answers it. It returns false when the connection must end.
func (c *conn) serveCommand() bool {
	var idle time.Duration
	var deadline time.Time
	_ = c.guard("IdleTimeout", func() error { idle = c.sess.IdleTimeout(); return nil })
	if idle > 0 {
		deadline = time.Now().Add(idle)
		if c.nc.SetReadDeadline(deadline) != nil {
			return false
		}
		c.deadlineSet = true
	} else if c.deadlineSet {
		if c.nc.SetReadDeadline(time.Time{}) != nil {
			return false
		}
		c.deadlineSet = false
	}

	c.pio.resetSeq()
	began := time.Now()
	err := c.waitCommand(deadline)
	var data []byte
	if err == nil {
		data, err = c.pio.readPacket()
	}
	c.slice.readDone(began)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.srv.log.Debug("mysql: idle timeout", "conn", c.id, "timeout", idle)
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.srv.log.Debug("mysql: read failed", "conn", c.id, "err", err)
		}
		_ = c.readFailed(err)
		return false
	}
	if r := c.srv.cfg.Running; r != nil {
		r.Add(1)
		defer r.Add(-1)
	}
	traced := rtrace.IsEnabled()
	var tag string
	if traced {
		tag = c.traceTag(data)
		rtrace.Log(context.Background(), "cmd", "s:"+tag)
	}
	keep := c.dispatch(data)
	if c.flush() != nil {
		return false
	}
	if traced {
		rtrace.Log(context.Background(), "cmd", "e:"+tag)
	}
	c.slice.commandDone()
	c.pio.releaseBuffers()
	return keep && c.netErr == nil
}

// traceTag names a command in an execution trace (`kiln serve --pprof`, /debug/pprof/trace), where
// serveCommand logs each command's start and the flush of its reply: bench/tracesum -tx follows
// transactions by these. A statement is named by its first bytes (stmtTag).
func (c *conn) traceTag(data []byte) string {
	switch {
	case len(data) > 1 && data[0] == pmysql.ComQuery:
		return stmtTag(string(data[1:min(len(data), 1+stmtTagBytes)]))
	case len(data) >= 5 && data[0] == pmysql.ComStmtExecute:
		if st := c.stmts[binary.LittleEndian.Uint32(data[1:5])]; st != nil {
			return st.traceTag
		}
	}
	if len(data) == 0 {
		return "empty"
	}
	return fmt.Sprintf("command %d", data[0])
}

// stmtTagBytes is how much of a statement names it in a trace (stmtTag).
const stmtTagBytes = 24

// stmtTag is a statement's first stmtTagBytes bytes, cut before its first quote: enough to tell
// statements apart in a trace, without a string literal's content (a password in CREATE USER ...
// IDENTIFIED BY).
func stmtTag(text string) string {
	text = text[:min(len(text), stmtTagBytes)]
	if i := strings.IndexAny(text, `'"`); i >= 0 {
		text = text[:i]
	}
	return text
}

func (c *conn) dispatch(data []byte) bool {
	if len(data) == 0 {
		c.sendErr(sqlerr.New(sqlerr.ErrUnknownCom, "Unknown command"))
		return true
	}
	cmd, body := data[0], data[1:]
	switch cmd {
	case pmysql.ComQuery, pmysql.ComInitDB, pmysql.ComProcessKill, pmysql.ComStmtPrepare,
		pmysql.ComStmtExecute, pmysql.ComResetConnection:
		// The commands that call the session with a context.
		c.beginCommand()
		defer c.endCommand()
	}
	switch cmd {
	case pmysql.ComQuit:
		return false
	case pmysql.ComQuery:
		c.srv.questions.Add(1)
		c.runStatement("Query", false, func(w proto.ResultWriter) error {
			return c.sess.Query(c.cmdCtx, string(body), w)
		})
	case pmysql.ComInitDB:
		db := string(body)
		if err := c.guard("UseDB", func() error { return c.sess.UseDB(c.cmdCtx, db) }); err != nil {
			c.sendErr(sqlerr.As(err))
		} else {
			c.sendOK(&proto.OK{})
		}
	case pmysql.ComPing, pmysql.ComDebug:
		c.sendOK(&proto.OK{})
	case pmysql.ComFieldList:
		// Deprecated since 5.7 and unused by current clients: an empty column list.
		c.sendEOF(0, c.status())
	case pmysql.ComStatistics:
		c.writeStatistics()
	case pmysql.ComProcessKill:
		if len(body) < 4 {
			c.sendErr(sqlerr.New(sqlerr.ErrMalformedPacket, "Malformed communication packet."))
			break
		}
		q := "KILL " + strconv.FormatUint(uint64(binary.LittleEndian.Uint32(body)), 10)
		c.runStatement("Query", false, func(w proto.ResultWriter) error { return c.sess.Query(c.cmdCtx, q, w) })
	case pmysql.ComStmtPrepare:
		c.srv.questions.Add(1)
		c.stmtPrepare(string(body))
	case pmysql.ComStmtExecute:
		c.srv.questions.Add(1)
		c.stmtExecute(body)
	case pmysql.ComStmtSendLongData:
		c.stmtSendLongData(body) // never answered
	case pmysql.ComStmtClose:
		c.stmtClose(body) // never answered
	case pmysql.ComStmtReset:
		c.stmtReset(body)
	case pmysql.ComStmtFetch:
		// We never open cursors (SERVER_STATUS_CURSOR_EXISTS is never set), so there is nothing
		// to fetch from.
		var id uint32
		if len(body) >= 4 {
			id = binary.LittleEndian.Uint32(body)
		}
		c.sendErr(sqlerr.New(sqlerr.ErrStmtHasNoOpenCursor, "The statement (%d) has no open cursor.", id))
	case pmysql.ComSetOption:
		c.setOption(body)
	case pmysql.ComResetConnection:
		c.resetConnection()
	default:
		c.sendErr(sqlerr.New(sqlerr.ErrUnknownCom, "Unknown command"))
	}
	return true
}

func (c *conn) writeStatistics() {
	up := time.Since(c.srv.started)
	q := c.srv.questions.Load()
	qps := 0.0
	if s := up.Seconds(); s > 0 {
		qps = float64(q) / s
	}
	msg := fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: 0  Opens: 0  "+
		"Flush tables: 0  Open tables: 0  Queries per second avg: %.3f",
		int64(up.Seconds()), c.srv.connCount(), q, qps)
	_ = c.writePacket(append(c.pio.startPacket(), msg...))
}

func (c *conn) setOption(body []byte) {
	if len(body) < 2 {
		c.sendErr(sqlerr.New(sqlerr.ErrMalformedPacket, "Malformed communication packet."))
		return
	}
	var on bool
	switch binary.LittleEndian.Uint16(body) {
	case optionMultiStatementsOn:
		on = true
		c.caps |= pmysql.ClientMultiStatements
	case optionMultiStatementsOff:
		c.caps &^= pmysql.ClientMultiStatements
	default:
		c.sendErr(sqlerr.New(sqlerr.ErrUnknownCom, "Unknown command"))
		return
	}
	if ms, ok := c.sess.(proto.MultiStatementsSetter); ok {
		_ = c.guard("SetMultiStatements", func() error { ms.SetMultiStatements(on); return nil })
	}
	c.sendEOF(0, c.status())
}

func (c *conn) resetConnection() {
	// Prepared statements do not survive a reset; close ours and tell the session about each.
	for id := range c.stmts {
		c.closeStmt(id)
	}
	if err := c.guard("ResetConnection", func() error { return c.sess.ResetConnection(c.cmdCtx) }); err != nil {
		c.sendErr(sqlerr.As(err))
		return
	}
	c.sendOK(&proto.OK{})
}

// runStatement runs a Query or Execute and makes sure the client receives a complete response
// whatever the session did: an error becomes an ERR packet where the protocol allows one (before
// any result, after a result that announced more, or in the middle of rows), and a response the
// session left unfinished is finished.
func (c *conn) runStatement(what string, binary bool, f func(proto.ResultWriter) error) {
	w := &c.rw
	w.reset(binary)
	err := c.guard(what, func() error { return f(w) })
	c.endInfile()
	if c.netErr != nil {
		return
	}
	switch {
	case err != nil && w.state == rwDone:
		// The client has its whole response; an ERR now would be read as the next command's.
		c.srv.log.Warn("mysql: session error after the final result", "call", what, "conn", c.id, "err", err)
	case err != nil:
		c.sendErr(sqlerr.As(err))
	case w.state == rwRows:
		c.srv.log.Warn("mysql: session left a result set open", "call", what, "conn", c.id)
		_ = w.EndRows(0, false)
	case w.state == rwIdle:
		if w.results > 0 {
			c.srv.log.Warn("mysql: session announced more results and sent none", "call", what, "conn", c.id)
		}
		_ = w.OK(proto.OK{}, false)
	}
	w.cols = w.cols[:0]
}
