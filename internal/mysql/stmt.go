package mysql

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// stmtState is the protocol's memory of one prepared statement: what the session told us at
// prepare time, the parameter types the client bound last (clients send them only when they
// change), and long data accumulated for the next execution.
type stmtState struct {
	params int
	// traceTag is the statement's first bytes, naming it in execution traces (conn.traceTag); a copy,
	// so that it does not keep a long statement's text alive.
	traceTag string
	// paramTypes holds 2 bytes per parameter (type code, then 0x80 for unsigned); nil until the
	// client first binds.
	paramTypes []byte
	// longData[i] is non-nil once COM_STMT_SEND_LONG_DATA has been received for parameter i.
	longData  [][]byte
	longBytes int
	// longErr is a failure of COM_STMT_SEND_LONG_DATA, which has no reply: MySQL reports it at the
	// next execution.
	longErr *sqlerr.Error
}

func (c *conn) clearLongData(st *stmtState) {
	if c.srv.cfg.Memory != nil {
		c.srv.cfg.Memory.Release(int64(st.longBytes))
	}
	c.longDataBytes -= st.longBytes
	st.longBytes = 0
	st.longData = nil
	st.longErr = nil
}

func (c *conn) stmtPrepare(text string) {
	var info proto.StmtInfo
	err := c.guard("Prepare", func() error {
		var err error
		info, err = c.sess.Prepare(c.cmdCtx, text)
		return err
	})
	if err != nil {
		c.sendErr(sqlerr.As(err))
		return
	}
	switch {
	case info.Params > maxStmtParams:
		err = sqlerr.New(sqlerr.ErrPsManyParam, "Prepared statement contains too many placeholders")
	case info.Params < 0:
		err = sqlerr.New(sqlerr.ErrUnknownError, "prepared statement with %d parameters", info.Params)
	case len(info.Columns) > maxStmtParams:
		err = sqlerr.New(sqlerr.ErrTooManyFields, "Too many columns")
	}
	if err != nil {
		_ = c.guard("CloseStmt", func() error { c.sess.CloseStmt(info.ID); return nil })
		c.sendErr(sqlerr.As(err))
		return
	}
	if c.stmts == nil {
		c.stmts = make(map[uint32]*stmtState)
	}
	if old := c.stmts[info.ID]; old != nil {
		// The session reused an id it had not been told to close; forget the old state.
		c.clearLongData(old)
	}
	c.stmts[info.ID] = &stmtState{params: info.Params, traceTag: strings.Clone(stmtTag(text))}

	b := append(c.pio.startPacket(), hdrOK)
	b = appendUint32(b, info.ID)
	b = appendUint16(b, uint16(len(info.Columns)))
	b = appendUint16(b, uint16(info.Params))
	b = append(b, 0)
	b = appendUint16(b, 0) // warnings
	_ = c.writePacket(b)
	eof := c.caps&pmysql.ClientDeprecateEOF == 0
	if info.Params > 0 {
		param := proto.Column{Name: "?", Type: pmysql.TypeVarString, Charset: 63, Flags: uint16(pmysql.BinaryFlag)}
		for range info.Params {
			if c.writePacket(appendColumnDef(c.pio.startPacket(), &param)) != nil {
				return
			}
		}
		if eof {
			_ = c.writePacket(appendEOF(c.pio.startPacket(), 0, c.status()))
		}
	}
	if len(info.Columns) > 0 {
		for i := range info.Columns {
			_ = c.writePacket(appendColumnDef(c.pio.startPacket(), &info.Columns[i]))
		}
		if eof {
			_ = c.writePacket(appendEOF(c.pio.startPacket(), 0, c.status()))
		}
	}
}

func errStmtUnknown(id uint32, where string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrUnknownStmtHandler,
		"Unknown prepared statement handler (%d) given to %s", id, where)
}

func errStmtArgs(where string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to %s", where)
}

func (c *conn) stmtExecute(body []byte) {
	if len(body) < 4 {
		c.sendErr(errStmtArgs("mysqld_stmt_execute"))
		return
	}
	id := binary.LittleEndian.Uint32(body)
	st := c.stmts[id]
	if st == nil {
		c.sendErr(errStmtUnknown(id, "mysqld_stmt_execute"))
		return
	}
	longErr := st.longErr
	ex, err := parseStmtExecute(body, st.params, st.paramTypes, st.longData)
	// Long data serves one execution, whatever its outcome (clients send it again each time).
	c.clearLongData(st)
	switch {
	case longErr != nil:
		c.sendErr(longErr)
		return
	case err != nil:
		c.sendErr(errStmtArgs("mysqld_stmt_execute"))
		return
	}
	if ex.newTypes != nil {
		st.paramTypes = ex.newTypes
	}
	// A cursor request (ex.flags&CursorTypeReadOnly) gets the whole result set instead, without
	// SERVER_STATUS_CURSOR_EXISTS, which clients accept: it is what mysqld does for statements it
	// cannot open a cursor for.
	c.runStatement("Execute", true, func(w proto.ResultWriter) error {
		return c.sess.Execute(c.cmdCtx, id, ex.args, w)
	})
}

// stmtSendLongData appends a chunk to a parameter. The command has no reply, so problems are kept
// for the next COM_STMT_EXECUTE to report.
func (c *conn) stmtSendLongData(body []byte) {
	if len(body) < 6 {
		return
	}
	st := c.stmts[binary.LittleEndian.Uint32(body)]
	if st == nil || st.longErr != nil {
		return // an unknown statement is reported when it is executed
	}
	param := int(binary.LittleEndian.Uint16(body[4:]))
	data := body[6:]
	if param >= st.params {
		c.clearLongData(st)
		st.longErr = errStmtArgs("mysqld_stmt_send_long_data")
		return
	}
	if st.longData == nil {
		st.longData = make([][]byte, st.params)
	}
	cur := st.longData[param]
	// Bounds: each parameter as mysqld (max_allowed_packet), and the connection as a whole so
	// that many parameters or statements cannot add up to unbounded memory.
	if len(cur)+len(data) > c.srv.cfg.MaxAllowedPacket ||
		c.longDataBytes+len(data) > 2*c.srv.cfg.MaxAllowedPacket {
		c.clearLongData(st)
		st.longErr = sqlerr.New(sqlerr.ErrNetPacketTooLarge,
			"Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes")
		return
	}
	// The server-wide account: long data of all connections together stays within the limit.
	if m := c.srv.cfg.Memory; m != nil && !m.Reserve(int64(len(data))) {
		c.clearLongData(st)
		if e, ok := m.CapacityError().(*sqlerr.Error); ok {
			st.longErr = e
		}
		return
	}
	if cur == nil {
		cur = make([]byte, 0, len(data))
	}
	st.longData[param] = append(cur, data...)
	st.longBytes += len(data)
	c.longDataBytes += len(data)
}

func (c *conn) stmtReset(body []byte) {
	if len(body) < 4 {
		c.sendErr(errStmtArgs("mysqld_stmt_reset"))
		return
	}
	id := binary.LittleEndian.Uint32(body)
	st := c.stmts[id]
	if st == nil {
		c.sendErr(errStmtUnknown(id, "mysqld_stmt_reset"))
		return
	}
	c.clearLongData(st)
	c.sendOK(&proto.OK{})
}

func (c *conn) stmtClose(body []byte) {
	if len(body) < 4 {
		return
	}
	id := binary.LittleEndian.Uint32(body)
	if c.stmts[id] != nil {
		c.closeStmt(id)
	}
}

func (c *conn) closeStmt(id uint32) {
	if st := c.stmts[id]; st != nil {
		c.clearLongData(st)
		delete(c.stmts, id)
	}
	_ = c.guard("CloseStmt", func() error { c.sess.CloseStmt(id); return nil })
}

// stmtExec is a parsed COM_STMT_EXECUTE.
type stmtExec struct {
	flags    byte
	args     []types.Value
	newTypes []byte // the types bound by this execution, nil if it reused the previous ones
}

var errStmtMalformed = errors.New("mysql: malformed COM_STMT_EXECUTE")

// parseStmtExecute decodes a COM_STMT_EXECUTE body (after the command byte) for a statement with
// nparams parameters. prevTypes are the types bound by an earlier execution; longData, when not
// nil, holds the parameters sent with COM_STMT_SEND_LONG_DATA, which are absent from the packet.
// Every read is bounds-checked: bad input returns errStmtMalformed, never panics.
func parseStmtExecute(body []byte, nparams int, prevTypes []byte, longData [][]byte) (stmtExec, error) {
	r := reader{b: body}
	var ex stmtExec
	r.u32() // statement id, already looked up
	ex.flags = r.u8()
	r.u32() // iteration count: always 1
	if r.bad {
		return ex, errStmtMalformed
	}
	if nparams == 0 {
		return ex, nil
	}
	nullMap := r.take((nparams + 7) / 8)
	bound := r.u8()
	if r.bad {
		return ex, errStmtMalformed
	}
	ptypes := prevTypes
	if bound != 0 {
		ex.newTypes = append([]byte(nil), r.take(2*nparams)...)
		if r.bad {
			return ex, errStmtMalformed
		}
		ptypes = ex.newTypes
	}
	if len(ptypes) != 2*nparams {
		return ex, errStmtMalformed // no types ever bound
	}
	ex.args = make([]types.Value, nparams)
	for i := range ex.args {
		tp, flags := ptypes[2*i], ptypes[2*i+1]
		if longData != nil && longData[i] != nil {
			// Long data takes precedence over the NULL bit, as in mysqld.
			ex.args[i] = longDataValue(tp, longData[i])
			continue
		}
		if nullMap[i/8]&(1<<(i%8)) != 0 {
			continue // the zero Value is NULL
		}
		v, ok := readParam(&r, tp, flags&0x80 != 0)
		if !ok || r.bad {
			return ex, errStmtMalformed
		}
		ex.args[i] = v
	}
	return ex, nil
}

func isBlobType(tp byte) bool {
	switch tp {
	case pmysql.TypeTinyBlob, pmysql.TypeBlob, pmysql.TypeMediumBlob, pmysql.TypeLongBlob,
		pmysql.TypeBit, pmysql.TypeGeometry:
		return true
	}
	return false
}

func longDataValue(tp byte, data []byte) types.Value {
	if isBlobType(tp) {
		return types.NewBytes(string(data))
	}
	return types.NewString(string(data))
}

// readParam decodes one binary-protocol parameter of type tp.
func readParam(r *reader, tp byte, unsigned bool) (types.Value, bool) {
	switch tp {
	case pmysql.TypeNull:
		return types.Null, true
	case pmysql.TypeTiny:
		if unsigned {
			return types.NewInt(int64(r.u8())), true
		}
		return types.NewInt(int64(int8(r.u8()))), true
	case pmysql.TypeShort, pmysql.TypeYear:
		if unsigned {
			return types.NewInt(int64(r.u16())), true
		}
		return types.NewInt(int64(int16(r.u16()))), true
	case pmysql.TypeLong, pmysql.TypeInt24:
		if unsigned {
			return types.NewInt(int64(r.u32())), true
		}
		return types.NewInt(int64(int32(r.u32()))), true
	case pmysql.TypeLonglong:
		if unsigned {
			return types.NewUint(r.u64()), true
		}
		return types.NewInt(int64(r.u64())), true
	case pmysql.TypeFloat:
		return types.NewFloat(float64(math.Float32frombits(r.u32()))), true
	case pmysql.TypeDouble:
		return types.NewFloat(math.Float64frombits(r.u64())), true
	case pmysql.TypeDate, pmysql.TypeNewDate, pmysql.TypeDatetime, pmysql.TypeTimestamp:
		return readDatetimeParam(r, tp == pmysql.TypeDate || tp == pmysql.TypeNewDate)
	case pmysql.TypeDuration:
		return readTimeParam(r)
	case typeDecimal, pmysql.TypeNewDecimal, pmysql.TypeVarchar, pmysql.TypeVarString,
		pmysql.TypeString, pmysql.TypeEnum, pmysql.TypeSet, pmysql.TypeJSON:
		s := r.lenencBytes()
		return types.NewString(string(s)), !r.bad
	case pmysql.TypeTinyBlob, pmysql.TypeBlob, pmysql.TypeMediumBlob, pmysql.TypeLongBlob,
		pmysql.TypeBit, pmysql.TypeGeometry:
		s := r.lenencBytes()
		return types.NewBytes(string(s)), !r.bad
	}
	return types.Null, false
}

func readDatetimeParam(r *reader, dateOnly bool) (types.Value, bool) {
	n := r.u8()
	var t timeParts
	switch n {
	case 0:
	case 4, 7, 11:
		t.year, t.month, t.day = int(r.u16()), int(r.u8()), int(r.u8())
		if n >= 7 {
			t.hour, t.minute, t.second = int(r.u8()), int(r.u8()), int(r.u8())
		}
		if n == 11 {
			t.micro = int(r.u32())
		}
	default:
		return types.Null, false
	}
	if r.bad || !t.valid() {
		return types.Null, false
	}
	if dateOnly {
		t.hour, t.minute, t.second, t.micro = 0, 0, 0, 0
		return types.Value{K: types.KindDate, I: packTime(t)}, true
	}
	v := types.Value{K: types.KindDatetime, I: packTime(t)}
	if t.micro != 0 {
		v.Frac = 6
	}
	return v, true
}

// maxTimeParamDays keeps a TIME parameter's microseconds within int64; real values are far smaller
// (TIME ends at 838:59:59), and range checks belong to the session.
const maxTimeParamDays = 1 << 20

func readTimeParam(r *reader) (types.Value, bool) {
	n := r.u8()
	if n == 0 {
		return types.Value{K: types.KindDuration}, true
	}
	if n != 8 && n != 12 {
		return types.Null, false
	}
	neg := r.u8()
	days := int64(r.u32())
	h, m, s := int64(r.u8()), int64(r.u8()), int64(r.u8())
	var us int64
	if n == 12 {
		us = int64(r.u32())
	}
	if r.bad || neg > 1 || days > maxTimeParamDays || h > 23 || m > 59 || s > 59 || us > 999999 {
		return types.Null, false
	}
	micros := (((days*24+h)*60+m)*60+s)*1e6 + us
	if neg == 1 {
		micros = -micros
	}
	v := types.Value{K: types.KindDuration, I: micros}
	if us != 0 {
		v.Frac = 6
	}
	return v, true
}

// typeDecimal is MYSQL_TYPE_DECIMAL, the pre-5.0 decimal some clients still bind parameters as.
const typeDecimal byte = 0
