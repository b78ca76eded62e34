package mysql

import (
	"errors"
	"math"
	"strconv"
	"strings"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
)

type rwState uint8

const (
	rwIdle rwState = iota // expecting Columns or OK: before the first result or after one with more
	rwRows                // after Columns: expecting Row or EndRows
	rwDone                // the final result has been sent
)

var (
	errRWOrder     = errors.New("mysql: ResultWriter calls out of order")
	errRWNoColumns = errors.New("mysql: ResultWriter.Columns with no columns")
	errRWRowWidth  = errors.New("mysql: ResultWriter.Row with a value count different from the columns'")
)

// resultWriter is the connection's ResultWriter, reused for every statement. It writes the text
// protocol for COM_QUERY and the binary protocol for COM_STMT_EXECUTE, and refuses calls that would
// produce a stream the client cannot parse.
type resultWriter struct {
	c       *conn
	binary  bool
	state   rwState
	results int            // results completed in this statement
	cols    []proto.Column // the current result set's columns (copied: the session may reuse its slice)
	scratch []byte         // one value's text, before its length prefix is known
}

func (w *resultWriter) reset(binary bool) {
	w.binary = binary
	w.state = rwIdle
	w.results = 0
	w.cols = w.cols[:0]
}

func (w *resultWriter) Columns(cols []proto.Column) error {
	if w.state != rwIdle {
		return errRWOrder
	}
	w.c.endInfile()
	if len(cols) == 0 {
		return errRWNoColumns
	}
	c := w.c
	if c.netErr != nil {
		return c.netErr
	}
	w.cols = append(w.cols[:0], cols...)
	w.state = rwRows
	_ = c.writePacket(appendLenencInt(c.pio.startPacket(), uint64(len(cols))))
	for i := range cols {
		_ = c.writePacket(appendColumnDef(c.pio.startPacket(), &cols[i]))
	}
	if c.caps&pmysql.ClientDeprecateEOF == 0 {
		_ = c.writePacket(appendEOF(c.pio.startPacket(), 0, c.status()))
	}
	return c.netErr
}

func (w *resultWriter) Row(vals []types.Value) error {
	if w.state != rwRows {
		return errRWOrder
	}
	if len(vals) != len(w.cols) {
		return errRWRowWidth
	}
	c := w.c
	if c.netErr != nil {
		return c.netErr
	}
	b := c.pio.startPacket()
	if w.binary {
		b = w.appendBinaryRow(b, vals)
	} else {
		b = w.appendTextRow(b, vals)
	}
	return c.writePacket(b)
}

func (w *resultWriter) EndRows(warnings uint16, more bool) error {
	if w.state != rwRows {
		return errRWOrder
	}
	c := w.c
	w.finish(more)
	status := c.status()
	if more {
		status |= pmysql.ServerMoreResultsExists
	}
	c.sendEOF(warnings, status)
	return c.netErr
}

func (w *resultWriter) OK(ok proto.OK, more bool) error {
	if w.state != rwIdle {
		return errRWOrder
	}
	w.c.endInfile()
	c := w.c
	w.finish(more)
	status := c.status()
	if more {
		status |= pmysql.ServerMoreResultsExists
	}
	_ = c.writePacket(appendOK(c.pio.startPacket(), c.caps, hdrOK, &ok, status))
	return c.netErr
}

func (w *resultWriter) finish(more bool) {
	w.results++
	if more {
		w.state = rwIdle
	} else {
		w.state = rwDone
	}
}

func (w *resultWriter) appendTextRow(b []byte, vals []types.Value) []byte {
	for i := range vals {
		v := &vals[i]
		switch v.K {
		case types.KindNull:
			b = append(b, lenencNull)
		case types.KindString, types.KindBytes:
			b = appendLenencString(b, v.S)
		default:
			w.scratch = proto.AppendColumnText(w.scratch[:0], v, &w.cols[i])
			b = appendLenencBytes(b, w.scratch)
		}
	}
	return b
}

// appendBinaryRow builds a binary protocol row: a 0x00 header, a NULL bitmap whose first two bits
// are reserved, then each non-NULL value encoded for its column's type.
func (w *resultWriter) appendBinaryRow(b []byte, vals []types.Value) []byte {
	b = append(b, 0x00)
	mapAt := len(b)
	for range (len(vals) + 7 + 2) / 8 {
		b = append(b, 0)
	}
	for i := range vals {
		v := &vals[i]
		if v.K == types.KindNull {
			bit := i + 2
			b[mapAt+bit/8] |= 1 << (bit % 8)
			continue
		}
		b = w.appendBinaryValue(b, v, &w.cols[i])
	}
	return b
}

func (w *resultWriter) appendBinaryValue(b []byte, v *types.Value, col *proto.Column) []byte {
	unsigned := col.Flags&uint16(pmysql.UnsignedFlag) != 0
	switch col.Type {
	case pmysql.TypeTiny:
		return append(b, byte(valueInt(v, unsigned)))
	case pmysql.TypeShort, pmysql.TypeYear:
		return appendUint16(b, uint16(valueInt(v, unsigned)))
	case pmysql.TypeLong, pmysql.TypeInt24:
		return appendUint32(b, uint32(valueInt(v, unsigned)))
	case pmysql.TypeLonglong:
		u := uint64(valueInt(v, unsigned))
		return appendUint32(appendUint32(b, uint32(u)), uint32(u>>32))
	case pmysql.TypeFloat:
		return appendUint32(b, math.Float32bits(float32(valueFloat(v))))
	case pmysql.TypeDouble:
		u := math.Float64bits(valueFloat(v))
		return appendUint32(appendUint32(b, uint32(u)), uint32(u>>32))
	case pmysql.TypeDate, pmysql.TypeNewDate, pmysql.TypeDatetime, pmysql.TypeTimestamp:
		return appendBinaryDatetime(b, v, col.Type == pmysql.TypeDate || col.Type == pmysql.TypeNewDate)
	case pmysql.TypeDuration:
		return appendBinaryTime(b, valueMicros(v))
	}
	if v.K == types.KindString || v.K == types.KindBytes {
		return appendLenencString(b, v.S)
	}
	w.scratch = proto.AppendColumnText(w.scratch[:0], v, col)
	return appendLenencBytes(b, w.scratch)
}

// appendBinaryDatetime encodes a DATE/DATETIME/TIMESTAMP in its shortest form: 0 bytes for the
// zero value, 4 for a date, 7 with a time of day, 11 with microseconds.
func appendBinaryDatetime(b []byte, v *types.Value, dateOnly bool) []byte {
	t, ok := valueDatetime(v)
	if !ok {
		return append(b, 0)
	}
	if dateOnly {
		t.hour, t.minute, t.second, t.micro = 0, 0, 0, 0
	}
	switch {
	case t.micro != 0:
		b = append(b, 11, byte(t.year), byte(t.year>>8), byte(t.month), byte(t.day),
			byte(t.hour), byte(t.minute), byte(t.second))
		return appendUint32(b, uint32(t.micro))
	case t.hour != 0 || t.minute != 0 || t.second != 0:
		return append(b, 7, byte(t.year), byte(t.year>>8), byte(t.month), byte(t.day),
			byte(t.hour), byte(t.minute), byte(t.second))
	case t.year != 0 || t.month != 0 || t.day != 0:
		return append(b, 4, byte(t.year), byte(t.year>>8), byte(t.month), byte(t.day))
	default:
		return append(b, 0)
	}
}

// appendBinaryTime encodes a TIME given in signed microseconds: 0 bytes for zero, 8 without
// microseconds, 12 with them.
func appendBinaryTime(b []byte, micros int64) []byte {
	var neg byte
	mag := uint64(micros)
	if micros < 0 {
		neg, mag = 1, -mag
	}
	us := mag % 1e6
	secs := mag / 1e6
	days := secs / 86400
	secs %= 86400
	h, m, s := secs/3600, secs/60%60, secs%60
	switch {
	case us != 0:
		b = append(b, 12, neg)
		b = appendUint32(b, uint32(days))
		b = append(b, byte(h), byte(m), byte(s))
		return appendUint32(b, uint32(us))
	case mag != 0:
		b = append(b, 8, neg)
		b = appendUint32(b, uint32(days))
		return append(b, byte(h), byte(m), byte(s))
	default:
		return append(b, 0)
	}
}

// The conversions below serve a value whose kind does not match its column's type in the binary
// protocol (the executor normally sends matching kinds). They follow MySQL's casts loosely: the
// aim is a sensible value of the column's wire type, never a malformed row.

// valueInt returns v as the bits of a 64-bit integer (two's complement, or unsigned when the column
// is unsigned).
func valueInt(v *types.Value, unsigned bool) int64 {
	switch v.K {
	case types.KindInt, types.KindUint:
		return v.I
	case types.KindFloat:
		return floatToInt(math.RoundToEven(v.F), unsigned) // MySQL's rint()
	case types.KindDecimal:
		r := v.D.Round(0) // half away from zero, as MySQL
		bi := r.BigInt()
		switch {
		case unsigned && bi.IsUint64():
			return int64(bi.Uint64())
		case bi.IsInt64():
			return bi.Int64()
		}
		return floatToInt(r.InexactFloat64(), unsigned)
	case types.KindString, types.KindBytes:
		s := strings.TrimSpace(v.S)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return int64(u)
		}
		f, _ := strconv.ParseFloat(s, 64)
		return floatToInt(math.Round(f), unsigned)
	case types.KindDate, types.KindDatetime:
		t := unpackTime(v.I)
		n := (int64(t.year)*100+int64(t.month))*100 + int64(t.day)
		if v.K == types.KindDatetime {
			n = ((n*100+int64(t.hour))*100+int64(t.minute))*100 + int64(t.second)
		}
		return n
	case types.KindDuration:
		neg := v.I < 0
		mag := uint64(v.I)
		if neg {
			mag = -mag
		}
		secs := int64(mag / 1e6)
		n := secs/3600*10000 + secs/60%60*100 + secs%60
		if neg {
			n = -n
		}
		return n
	}
	return 0
}

// floatToInt converts an integral f, clamping, since Go leaves out-of-range float conversions
// unspecified.
func floatToInt(f float64, unsigned bool) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case unsigned && f >= 1<<63:
		if f >= 1<<64 {
			return -1 // MaxUint64
		}
		return int64(uint64(f))
	case f >= 1<<63:
		return math.MaxInt64
	case f < -(1 << 63):
		return math.MinInt64
	}
	return int64(f)
}

func valueFloat(v *types.Value) float64 {
	switch v.K {
	case types.KindFloat:
		return v.F
	case types.KindInt:
		return float64(v.I)
	case types.KindUint:
		return float64(v.U())
	case types.KindDecimal:
		return v.D.InexactFloat64()
	case types.KindString, types.KindBytes:
		f, _ := strconv.ParseFloat(strings.TrimSpace(v.S), 64)
		return f
	}
	return float64(valueInt(v, false))
}

func valueDatetime(v *types.Value) (timeParts, bool) {
	switch v.K {
	case types.KindDate, types.KindDatetime:
		return unpackTime(v.I), true
	case types.KindString, types.KindBytes:
		p, err := types.ParseDatetime(v.S, 6)
		return unpackTime(p), err == nil
	case types.KindInt, types.KindUint:
		n := v.U()
		var t timeParts
		if n > 99991231 {
			t.second, t.minute, t.hour = int(n%100), int(n/100%100), int(n/10000%100)
			n /= 1000000
		}
		t.day, t.month, t.year = int(n%100), int(n/100%100), int(n/10000)
		return t, t.valid()
	}
	return timeParts{}, false
}

func valueMicros(v *types.Value) int64 {
	switch v.K {
	case types.KindDuration:
		return v.I
	case types.KindDatetime:
		t := unpackTime(v.I)
		return ((int64(t.hour)*60+int64(t.minute))*60+int64(t.second))*1e6 + int64(t.micro)
	case types.KindString, types.KindBytes:
		us, _ := types.ParseDuration(v.S, 6) // out of range: the clipped value
		return us
	case types.KindDate:
		return 0
	}
	n := valueInt(v, false)
	neg := n < 0
	if neg {
		n = -n
	}
	us := ((n/10000*60+n/100%100)*60 + n%100) * 1e6
	if neg {
		us = -us
	}
	return us
}
