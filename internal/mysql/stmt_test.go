package mysql

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// execBody builds a COM_STMT_EXECUTE body (after the command byte).
func execBody(id uint32, nullMap []byte, ptypes []byte, values ...[]byte) []byte {
	b := appendUint32(nil, id)
	b = append(b, 0)
	b = appendUint32(b, 1)
	b = append(b, nullMap...)
	if ptypes != nil {
		b = append(b, 1)
		b = append(b, ptypes...)
	} else {
		b = append(b, 0)
	}
	for _, v := range values {
		b = append(b, v...)
	}
	return b
}

func le16(n uint16) []byte { return binary.LittleEndian.AppendUint16(nil, n) }
func le32(n uint32) []byte { return binary.LittleEndian.AppendUint32(nil, n) }
func le64(n uint64) []byte { return binary.LittleEndian.AppendUint64(nil, n) }

func TestParseStmtExecuteParam(t *testing.T) {
	dt := func(y, mo, d, h, mi, s, us int) int64 { return types.PackTime(y, mo, d, h, mi, s, us) }
	tests := []struct {
		tp       byte
		unsigned bool
		data     []byte
		want     types.Value // K == KindNull and bad: malformed
		bad      bool
	}{
		{tp: pmysql.TypeTiny, data: []byte{0xff}, want: types.NewInt(-1)},
		{tp: pmysql.TypeTiny, unsigned: true, data: []byte{0xff}, want: types.NewInt(255)},
		{tp: pmysql.TypeShort, data: le16(0x8000), want: types.NewInt(-32768)},
		{tp: pmysql.TypeYear, unsigned: true, data: le16(2024), want: types.NewInt(2024)},
		{tp: pmysql.TypeLong, data: le32(0xffffffff), want: types.NewInt(-1)},
		{tp: pmysql.TypeInt24, unsigned: true, data: le32(0xffffffff), want: types.NewInt(math.MaxUint32)},
		{tp: pmysql.TypeLonglong, data: le64(1 << 63), want: types.NewInt(math.MinInt64)},
		{tp: pmysql.TypeLonglong, unsigned: true, data: le64(math.MaxUint64), want: types.NewUint(math.MaxUint64)},
		{tp: pmysql.TypeFloat, data: le32(math.Float32bits(1.5)), want: types.NewFloat(1.5)},
		{tp: pmysql.TypeDouble, data: le64(math.Float64bits(-0.25)), want: types.NewFloat(-0.25)},
		{tp: pmysql.TypeNull, data: nil, want: types.Null},
		{tp: pmysql.TypeNewDecimal, data: []byte("\x05-1.50"), want: types.NewString("-1.50")},
		{tp: typeDecimal, data: []byte("\x011"), want: types.NewString("1")},
		{tp: pmysql.TypeVarString, data: []byte("\x03abc"), want: types.NewString("abc")},
		{tp: pmysql.TypeString, data: []byte("\x00"), want: types.NewString("")},
		{tp: pmysql.TypeJSON, data: []byte("\x02{}"), want: types.NewString("{}")},
		{tp: pmysql.TypeBlob, data: []byte("\x02\x00\xff"), want: types.NewBytes("\x00\xff")},
		{tp: pmysql.TypeLongBlob, data: []byte("\xfc\x01\x00z"), want: types.NewBytes("z")},
		{tp: pmysql.TypeDate, data: []byte{4, 0xe8, 0x07, 2, 29}, want: types.Value{K: types.KindDate, I: dt(2024, 2, 29, 0, 0, 0, 0)}},
		{tp: pmysql.TypeDate, data: []byte{7, 0xe8, 0x07, 2, 29, 1, 2, 3}, want: types.Value{K: types.KindDate, I: dt(2024, 2, 29, 0, 0, 0, 0)}},
		{tp: pmysql.TypeDate, data: []byte{0}, want: types.Value{K: types.KindDate}},
		{tp: pmysql.TypeDatetime, data: []byte{7, 0xe8, 0x07, 2, 29, 1, 2, 3}, want: types.Value{K: types.KindDatetime, I: dt(2024, 2, 29, 1, 2, 3, 0)}},
		{tp: pmysql.TypeTimestamp, data: append([]byte{11, 0xe8, 0x07, 2, 29, 1, 2, 3}, le32(999999)...),
			want: types.Value{K: types.KindDatetime, Frac: 6, I: dt(2024, 2, 29, 1, 2, 3, 999999)}},
		{tp: pmysql.TypeDatetime, data: []byte{0}, want: types.Value{K: types.KindDatetime}},
		{tp: pmysql.TypeDuration, data: []byte{0}, want: types.Value{K: types.KindDuration}},
		{tp: pmysql.TypeDuration, data: append([]byte{8, 1}, append(le32(1), 2, 3, 4)...),
			want: types.Value{K: types.KindDuration, I: -((((24+2)*60+3)*60 + 4) * 1e6)}},
		{tp: pmysql.TypeDuration, data: append(append([]byte{12, 0}, append(le32(0), 0, 0, 1)...), le32(5)...),
			want: types.Value{K: types.KindDuration, Frac: 6, I: 1e6 + 5}},
		// Malformed.
		{tp: pmysql.TypeLonglong, data: le32(1), bad: true},
		{tp: pmysql.TypeVarString, data: []byte("\x05ab"), bad: true},
		{tp: pmysql.TypeVarString, data: []byte{0xfb}, bad: true},
		{tp: pmysql.TypeDate, data: []byte{5, 1, 2, 3, 4, 5}, bad: true},
		{tp: pmysql.TypeDate, data: []byte{4, 0xe8, 0x07, 13, 1}, bad: true},
		{tp: pmysql.TypeDatetime, data: []byte{7, 0xe8, 0x07, 1, 1, 24, 0, 0}, bad: true},
		{tp: pmysql.TypeDatetime, data: append([]byte{11, 0xe8, 0x07, 1, 1, 0, 0, 0}, le32(1e6)...), bad: true},
		{tp: pmysql.TypeDuration, data: []byte{8, 0, 0, 0, 0, 0, 0, 0}, bad: true},
		{tp: pmysql.TypeDuration, data: append([]byte{8, 0}, append(le32(0xffffffff), 0, 0, 0)...), bad: true},
		{tp: pmysql.TypeDuration, data: append([]byte{8, 2}, append(le32(0), 0, 0, 0)...), bad: true},
		{tp: 0x42, data: []byte{1}, bad: true},
	}
	for i, tt := range tests {
		flags := byte(0)
		if tt.unsigned {
			flags = 0x80
		}
		ex, err := parseStmtExecute(execBody(1, []byte{0}, []byte{tt.tp, flags}, tt.data), 1, nil, nil)
		if tt.bad {
			if !errors.Is(err, errStmtMalformed) {
				t.Errorf("%d (type %d): got %v, want malformed", i, tt.tp, ex.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("%d (type %d): %v", i, tt.tp, err)
			continue
		}
		if got := ex.args[0]; got.K != tt.want.K || got.I != tt.want.I || got.F != tt.want.F ||
			got.S != tt.want.S || got.Frac != tt.want.Frac {
			t.Errorf("%d (type %d): got %+v, want %+v", i, tt.tp, got, tt.want)
		}
	}
}

func TestParseStmtExecuteFraming(t *testing.T) {
	strT := []byte{pmysql.TypeVarString, 0}
	long := []byte{pmysql.TypeLonglong, 0}
	two := append(append([]byte(nil), long...), strT...)
	tests := []struct {
		name   string
		body   []byte
		params int
		prev   []byte
		long   [][]byte
		want   string
		bad    bool
	}{
		{name: "no params", body: execBody(1, nil, nil), want: "[]"},
		{name: "no params, trailing bytes ignored", body: append(execBody(1, nil, nil), 1, 2, 3), want: "[]"},
		{name: "short header", body: []byte{1, 0, 0, 0, 0, 1, 0}, bad: true},
		{name: "two params", body: execBody(1, []byte{0}, two, le64(7), []byte("\x01x")), params: 2, want: "[7 x]"},
		{name: "null bit", body: execBody(1, []byte{1}, two, []byte("\x01x")), params: 2, want: "[NULL x]"},
		{name: "both null", body: execBody(1, []byte{3}, two), params: 2, want: "[NULL NULL]"},
		{name: "types remembered", body: execBody(1, []byte{0}, nil, le64(8), []byte("\x01y")), params: 2, prev: two, want: "[8 y]"},
		{name: "never bound", body: execBody(1, []byte{0}, nil, le64(8)), params: 1, bad: true},
		{name: "types cut short", body: execBody(1, []byte{0}, []byte{8}), params: 1, bad: true},
		{name: "missing null map", body: execBody(1, nil, nil), params: 9, bad: true},
		{name: "value missing", body: execBody(1, []byte{0}, two, le64(7)), params: 2, bad: true},
		{name: "long data replaces the packet value", body: execBody(1, []byte{0}, two, le64(7)), params: 2,
			long: [][]byte{nil, []byte("LONG")}, want: "[7 LONG]"},
		{name: "long data wins over the null bit", body: execBody(1, []byte{2}, two, le64(7)), params: 2,
			long: [][]byte{nil, []byte("L")}, want: "[7 L]"},
		{name: "empty long data", body: execBody(1, []byte{0}, two, le64(7)), params: 2,
			long: [][]byte{nil, {}}, want: "[7 ]"},
		{name: "nine params null map", body: execBody(1, []byte{0xff, 1}, bytes.Repeat(long, 9)), params: 9,
			want: "[NULL NULL NULL NULL NULL NULL NULL NULL NULL]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := parseStmtExecute(tt.body, tt.params, tt.prev, tt.long)
			if tt.bad {
				if err == nil {
					t.Fatalf("accepted: %v", ex.args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(ex.args); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAppendBinaryValue(t *testing.T) {
	col := func(tp byte, flags uint) *proto.Column { return &proto.Column{Type: tp, Flags: uint16(flags)} }
	dt := types.PackTime(2024, 2, 29, 13, 14, 15, 0)
	tests := []struct {
		col  *proto.Column
		v    types.Value
		want []byte
	}{
		{col(pmysql.TypeTiny, 0), types.NewInt(-1), []byte{0xff}},
		{col(pmysql.TypeShort, 0), types.NewInt(-2), le16(0xfffe)},
		{col(pmysql.TypeYear, 0), types.NewInt(2024), le16(2024)},
		{col(pmysql.TypeLong, 0), types.NewInt(-3), le32(0xfffffffd)},
		{col(pmysql.TypeInt24, 0), types.NewInt(5), le32(5)},
		{col(pmysql.TypeLonglong, pmysql.UnsignedFlag), types.NewUint(math.MaxUint64), le64(math.MaxUint64)},
		{col(pmysql.TypeLonglong, 0), types.NewString(" 123 "), le64(123)},
		{col(pmysql.TypeLonglong, 0), types.NewFloat(2.5), le64(2)},
		{col(pmysql.TypeLonglong, 0), types.NewFloat(1e300), le64(math.MaxInt64)},
		{col(pmysql.TypeLonglong, pmysql.UnsignedFlag), types.NewFloat(1e19), le64(1e19)},
		{col(pmysql.TypeLonglong, 0), types.NewDecimal(decimal.RequireFromString("-7.5"), 1), le64(uint64(1<<64 - 8))},
		{col(pmysql.TypeLonglong, 0), types.Value{K: types.KindDatetime, I: dt}, le64(20240229131415)},
		{col(pmysql.TypeFloat, 0), types.NewFloat(0.5), le32(math.Float32bits(0.5))},
		{col(pmysql.TypeDouble, 0), types.NewInt(7), le64(math.Float64bits(7))},
		{col(pmysql.TypeDouble, 0), types.NewString("2.5"), le64(math.Float64bits(2.5))},
		{col(pmysql.TypeDouble, 0), types.NewDecimal(decimal.RequireFromString("0.125"), 3), le64(math.Float64bits(0.125))},
		{col(pmysql.TypeDate, 0), types.Value{K: types.KindDatetime, I: dt}, []byte{4, 0xe8, 0x07, 2, 29}},
		{col(pmysql.TypeDatetime, 0), types.Value{K: types.KindDatetime, I: dt}, []byte{7, 0xe8, 0x07, 2, 29, 13, 14, 15}},
		{col(pmysql.TypeDatetime, 0), types.Value{K: types.KindDate, I: types.PackTime(2024, 2, 29, 0, 0, 0, 0)}, []byte{4, 0xe8, 0x07, 2, 29}},
		{col(pmysql.TypeTimestamp, 0), types.Value{K: types.KindDatetime, I: types.PackTime(1, 1, 1, 0, 0, 0, 1)},
			append([]byte{11, 1, 0, 1, 1, 0, 0, 0}, le32(1)...)},
		{col(pmysql.TypeDatetime, 0), types.Value{K: types.KindDatetime}, []byte{0}},
		{col(pmysql.TypeDatetime, 0), types.NewString("2024-02-29 13:14:15"), []byte{7, 0xe8, 0x07, 2, 29, 13, 14, 15}},
		{col(pmysql.TypeDatetime, 0), types.NewInt(20240229), []byte{4, 0xe8, 0x07, 2, 29}},
		{col(pmysql.TypeDatetime, 0), types.NewString("garbage"), []byte{0}},
		{col(pmysql.TypeDatetime, 0), types.NewFloat(1), []byte{0}},
		{col(pmysql.TypeDuration, 0), types.Value{K: types.KindDuration}, []byte{0}},
		{col(pmysql.TypeDuration, 0), types.Value{K: types.KindDuration, I: -(26*3600 + 1) * 1e6},
			append([]byte{8, 1}, append(le32(1), 2, 0, 1)...)},
		{col(pmysql.TypeDuration, 0), types.Value{K: types.KindDuration, I: 1},
			append(append([]byte{12, 0}, append(le32(0), 0, 0, 0)...), le32(1)...)},
		{col(pmysql.TypeDuration, 0), types.Value{K: types.KindDuration, I: math.MinInt64},
			append(append([]byte{12, 1}, append(le32(106751991), 4, 0, 54)...), le32(775808)...)},
		{col(pmysql.TypeDuration, 0), types.NewString("-01:02:03"), append([]byte{8, 1}, append(le32(0), 1, 2, 3)...)},
		{col(pmysql.TypeDuration, 0), types.NewInt(10203), append([]byte{8, 0}, append(le32(0), 1, 2, 3)...)},
		{col(pmysql.TypeDuration, 0), types.Value{K: types.KindDatetime, I: dt}, append([]byte{8, 0}, append(le32(0), 13, 14, 15)...)},
		{col(pmysql.TypeVarString, 0), types.NewString("abc"), []byte("\x03abc")},
		{col(pmysql.TypeBlob, 0), types.NewBytes(""), []byte{0}},
		{col(pmysql.TypeNewDecimal, 0), types.NewDecimal(decimal.RequireFromString("1.5"), 2), []byte("\x041.50")},
		{col(pmysql.TypeVarString, 0), types.NewInt(-12), []byte("\x03-12")},
		{col(pmysql.TypeFloat, 0), types.Value{K: types.KindDuration, I: 1e6}, le32(math.Float32bits(1))},
	}
	w := resultWriter{}
	for i, tt := range tests {
		got := w.appendBinaryValue(nil, &tt.v, tt.col)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%d: type %d value %+v: got %x, want %x", i, tt.col.Type, tt.v, got, tt.want)
		}
	}
}

func TestBinaryRowNullBitmap(t *testing.T) {
	cols := make([]proto.Column, 10)
	vals := make([]types.Value, 10)
	for i := range cols {
		cols[i].Type = pmysql.TypeTiny
		if i%3 != 0 {
			vals[i] = types.NewInt(int64(i))
		}
	}
	w := resultWriter{cols: cols}
	got := w.appendBinaryRow(nil, vals)
	// Header, 2 bitmap bytes ((10+7+2)/8), then the 6 non-NULL values. NULL columns 0, 3, 6, 9
	// are bits 2, 5, 8, 11.
	want := []byte{0x00, 0x24, 0x09, 1, 2, 4, 5, 7, 8}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
}
