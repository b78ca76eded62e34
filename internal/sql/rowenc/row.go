package rowenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"unsafe"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// Row format, version 1:
//
//	version byte (1) | uvarint column count | per column: uvarint column id, tag byte, payload
//
// The tag's low nibble is the Kind; for DATETIME and TIME the high nibble is the fsp. Payloads:
// NULL none; INT zigzag varint; UINT uvarint; FLOAT int8 frac + 8 bytes little-endian IEEE;
// DECIMAL int8 frac, zigzag varint exponent, then 0 + zigzag varint coefficient, or 1/2
// (positive/negative) + uvarint length + big-endian magnitude; STRING/BYTES uvarint length +
// bytes; DATE uvarint packed; DATETIME uvarint packed; TIME zigzag varint microseconds.
// Columns are self-describing, so rows written before ADD/DROP COLUMN stay readable.
const rowVersion = 1

const maxDecimalBytes = 64 // coefficient magnitude bytes a row may hold (≈154 digits)

var errCorruptRow = errors.New("rowenc: corrupt row")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errCorruptRow}, args...)...)
}

// AppendRow appends the encoding of vals (column ids colIDs, same length) to buf.
func AppendRow(buf []byte, colIDs []uint32, vals []types.Value) []byte {
	if len(colIDs) != len(vals) {
		panic("rowenc.AppendRow: colIDs and vals differ in length")
	}
	buf = AppendRowHeader(buf, len(vals))
	for i := range vals {
		buf = AppendRowValue(buf, colIDs[i], &vals[i])
	}
	return buf
}

// AppendRowHeader starts a row of n values; n AppendRowValue calls follow. Together they encode
// what AppendRow does, for a caller whose values are not in one slice (an index entry's columns).
func AppendRowHeader(buf []byte, n int) []byte {
	buf = append(buf, rowVersion)
	return binary.AppendUvarint(buf, uint64(n))
}

// AppendRowValue appends one value of a row, as column id.
func AppendRowValue(buf []byte, id uint32, v *types.Value) []byte {
	buf = binary.AppendUvarint(buf, uint64(id))
	switch v.K {
	case types.KindInt:
		buf = binary.AppendVarint(append(buf, byte(types.KindInt)), v.I)
	case types.KindUint:
		buf = binary.AppendUvarint(append(buf, byte(types.KindUint)), uint64(v.I))
	case types.KindFloat:
		buf = append(buf, byte(types.KindFloat), byte(v.Frac))
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.F))
	case types.KindDecimal:
		buf = appendRowDecimal(append(buf, byte(types.KindDecimal), byte(v.Frac)), v.D)
	case types.KindString, types.KindBytes:
		buf = binary.AppendUvarint(append(buf, byte(v.K)), uint64(len(v.S)))
		buf = append(buf, v.S...)
	case types.KindDate:
		buf = binary.AppendUvarint(append(buf, byte(types.KindDate)), uint64(v.I))
	case types.KindDatetime:
		buf = binary.AppendUvarint(append(buf, byte(types.KindDatetime)|byte(types.ClampFsp(int(v.Frac)))<<4), uint64(v.I))
	case types.KindDuration:
		buf = binary.AppendVarint(append(buf, byte(types.KindDuration)|byte(types.ClampFsp(int(v.Frac)))<<4), v.I)
	default:
		buf = append(buf, byte(types.KindNull))
	}
	return buf
}

// RowHeaderSize bounds AppendRowHeader's length.
const RowHeaderSize = 1 + binary.MaxVarintLen32

// RowValueSize bounds AppendRowValue's length for v (a decimal's estimated), so that a row's
// buffer is allocated once at its size (a bulk INSERT encodes a row and its index entries per row).
func RowValueSize(v *types.Value) int {
	const idTag = binary.MaxVarintLen32 + 2 // column id, kind (and fsp) byte
	switch v.K {
	case types.KindString, types.KindBytes:
		return idTag + binary.MaxVarintLen32 + len(v.S)
	case types.KindDecimal:
		return idTag + 32
	}
	return idTag + binary.MaxVarintLen64
}

func appendRowDecimal(buf []byte, d decimal.Decimal) []byte {
	buf = binary.AppendVarint(buf, int64(d.Exponent()))
	if d.NumDigits() <= 18 {
		return binary.AppendVarint(append(buf, 0), d.CoefficientInt64())
	}
	c := d.Coefficient()
	sub := byte(1)
	if c.Sign() < 0 {
		sub = 2
		c.Neg(c)
	}
	mag := c.Bytes()
	buf = binary.AppendUvarint(append(buf, sub), uint64(len(mag)))
	return append(buf, mag...)
}

// rowReader walks an encoded row.
type rowReader struct {
	b   []byte
	pos int
}

func (r *rowReader) uvarint() (uint64, error) {
	u, k := binary.Uvarint(r.b[r.pos:])
	if k <= 0 {
		return 0, corrupt("bad uvarint at %d", r.pos)
	}
	r.pos += k
	return u, nil
}

func (r *rowReader) varint() (int64, error) {
	i, k := binary.Varint(r.b[r.pos:])
	if k <= 0 {
		return 0, corrupt("bad varint at %d", r.pos)
	}
	r.pos += k
	return i, nil
}

func (r *rowReader) byte1() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, corrupt("truncated at %d", r.pos)
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// field reads one column's payload. Strings are returned as the offset and length of their bytes;
// decimals are only materialized when want is set (they allocate).
func (r *rowReader) field(tag byte, want bool) (v types.Value, strOff, strLen int, err error) {
	kind := types.Kind(tag & 0x0F)
	hi := tag >> 4
	if hi != 0 && kind != types.KindDatetime && kind != types.KindDuration || hi > 6 {
		return types.Null, 0, 0, corrupt("bad tag %#x", tag)
	}
	switch kind {
	case types.KindNull:
		return types.Null, 0, 0, nil
	case types.KindInt:
		i, err := r.varint()
		return types.NewInt(i), 0, 0, err
	case types.KindUint:
		u, err := r.uvarint()
		return types.NewUint(u), 0, 0, err
	case types.KindFloat:
		if r.pos+9 > len(r.b) {
			return types.Null, 0, 0, corrupt("truncated float")
		}
		frac := int8(r.b[r.pos])
		f := math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.pos+1:]))
		r.pos += 9
		return types.Value{K: types.KindFloat, F: f, Frac: frac}, 0, 0, nil
	case types.KindDecimal:
		fb, err := r.byte1()
		if err != nil {
			return types.Null, 0, 0, err
		}
		exp, err := r.varint()
		if err != nil {
			return types.Null, 0, 0, err
		}
		if exp < math.MinInt32 || exp > math.MaxInt32 {
			return types.Null, 0, 0, corrupt("decimal exponent %d", exp)
		}
		sub, err := r.byte1()
		if err != nil {
			return types.Null, 0, 0, err
		}
		switch sub {
		case 0:
			c, err := r.varint()
			if err != nil || !want {
				return types.Null, 0, 0, err
			}
			return types.NewDecimal(decimal.New(c, int32(exp)), int(int8(fb))), 0, 0, nil
		case 1, 2:
			n, err := r.uvarint()
			if err != nil {
				return types.Null, 0, 0, err
			}
			if n > maxDecimalBytes || uint64(len(r.b)-r.pos) < n {
				return types.Null, 0, 0, corrupt("decimal length %d", n)
			}
			mag := r.b[r.pos : r.pos+int(n)]
			r.pos += int(n)
			if !want {
				return types.Null, 0, 0, nil
			}
			c := new(big.Int).SetBytes(mag)
			if sub == 2 {
				c.Neg(c)
			}
			return types.NewDecimal(decimal.NewFromBigInt(c, int32(exp)), int(int8(fb))), 0, 0, nil
		}
		return types.Null, 0, 0, corrupt("decimal form %d", sub)
	case types.KindString, types.KindBytes:
		n, err := r.uvarint()
		if err != nil {
			return types.Null, 0, 0, err
		}
		if uint64(len(r.b)-r.pos) < n {
			return types.Null, 0, 0, corrupt("string length %d", n)
		}
		off := r.pos
		r.pos += int(n)
		return types.Value{K: kind}, off, int(n), nil
	case types.KindDate:
		u, err := r.uvarint()
		return types.Value{K: types.KindDate, I: int64(u)}, 0, 0, err
	case types.KindDatetime:
		u, err := r.uvarint()
		return types.Value{K: types.KindDatetime, I: int64(u), Frac: int8(hi)}, 0, 0, err
	case types.KindDuration:
		i, err := r.varint()
		return types.Value{K: types.KindDuration, I: i, Frac: int8(hi)}, 0, 0, err
	}
	return types.Null, 0, 0, corrupt("unknown kind %d", kind)
}

// DecodeRow decodes a row written by AppendRow into out: the column with id c goes to
// out[colPos[c]]; ids beyond colPos or mapped to -1 (dropped or unwanted columns) are skipped, and
// columns missing from the row leave out untouched (their defaults, for columns added later).
// Strings are copied — the engine reuses its buffers — into one allocation per row. Decimals
// allocate (shopspring/decimal holds a *big.Int). Corrupt input returns an error, never a panic.
func DecodeRow(b []byte, colPos []int, out []types.Value) error {
	return decodeRow(b, colPos, out, nil)
}

// DecodeRowArena is DecodeRow with the strings copied into ar, which rows decoded one after another
// share: a scan then allocates string storage once per chunk instead of once per row. A nil ar is
// DecodeRow.
func DecodeRowArena(b []byte, colPos []int, out []types.Value, ar *Arena) error {
	return decodeRow(b, colPos, out, ar)
}

// Arena is string storage for DecodeRowArena. Its chunks start at the first row's size and double
// up to maxArenaChunk, so a point read allocates what it did without an arena. A decoded string
// keeps its whole chunk alive, which bounds what one retained value can hold to a chunk. The zero
// value is ready to use; an Arena is not safe for concurrent use.
type Arena struct {
	buf  []byte
	last int // size of the last chunk
}

const maxArenaChunk = 16 << 10

// Reset makes the arena's current chunk free for new strings: those decoded before are
// overwritten. For a reader whose consumer keeps no decoded value (exec's streaming reads).
func (a *Arena) Reset() { a.buf = a.buf[:0] }

// take returns an empty slice with capacity exactly n, carved from the current chunk or a new one.
func (a *Arena) take(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		size := max(n, min(2*a.last, maxArenaChunk))
		a.last = size
		a.buf = make([]byte, 0, size)
	}
	p := len(a.buf)
	a.buf = a.buf[:p+n]
	return a.buf[p : p : p+n]
}

func decodeRow(b []byte, colPos []int, out []types.Value, ar *Arena) error {
	if len(b) == 0 {
		return corrupt("empty row")
	}
	if b[0] != rowVersion {
		return corrupt("unknown row version %d", b[0])
	}
	r := rowReader{b: b, pos: 1}
	n, err := r.uvarint()
	if err != nil {
		return err
	}
	if n > uint64(len(b)) {
		return corrupt("column count %d", n)
	}
	var arena []byte // wanted strings, allocated at the first one
	for i := uint64(0); i < n; i++ {
		// Column id and tag: ids below 128 are one byte, the common case.
		var id uint64
		if r.pos < len(b) && b[r.pos] < 0x80 {
			id = uint64(b[r.pos])
			r.pos++
		} else if id, err = r.uvarint(); err != nil {
			return err
		}
		if r.pos >= len(b) {
			return corrupt("truncated at %d", r.pos)
		}
		tag := b[r.pos]
		r.pos++
		idx := -1
		if id < uint64(len(colPos)) {
			idx = colPos[id]
			if idx >= len(out) {
				return fmt.Errorf("rowenc.DecodeRow: column %d maps to position %d of %d", id, idx, len(out))
			}
		}
		// Fast paths for the common kinds write straight into out.
		switch types.Kind(tag) {
		case types.KindInt:
			x, k := binary.Varint(b[r.pos:])
			if k <= 0 {
				return corrupt("bad varint at %d", r.pos)
			}
			r.pos += k
			if idx >= 0 {
				out[idx] = types.Value{K: types.KindInt, I: x}
			}
			continue
		case types.KindNull:
			if idx >= 0 {
				out[idx] = types.Value{}
			}
			continue
		case types.KindString, types.KindBytes:
			l, k := binary.Uvarint(b[r.pos:])
			if k <= 0 || uint64(len(b)-r.pos-k) < l {
				return corrupt("bad string at %d", r.pos)
			}
			start := r.pos
			r.pos += k
			off := r.pos
			r.pos += int(l)
			if idx < 0 {
				continue
			}
			sl := int(l)
			var str string
			if sl > 0 {
				if arena == nil {
					total, err := wantedStringBytes(b, start, i, n, colPos)
					if err != nil {
						return err
					}
					if ar != nil {
						arena = ar.take(total)
					} else {
						arena = make([]byte, 0, total)
					}
				}
				if cap(arena)-len(arena) < sl {
					return corrupt("string sizes changed")
				}
				p := len(arena)
				arena = append(arena, b[off:off+sl]...)
				str = unsafe.String(&arena[p], sl)
			}
			out[idx] = types.Value{K: types.Kind(tag), S: str}
			continue
		}
		v, _, _, err := r.field(tag, idx >= 0)
		if err != nil {
			return err
		}
		if idx >= 0 {
			out[idx] = v
		}
	}
	if r.pos != len(b) {
		return corrupt("%d trailing bytes", len(b)-r.pos)
	}
	return nil
}

// skip steps over one column's payload without building a Value; strLen is the length of a
// string payload.
func (r *rowReader) skip(tag byte) (strLen int, err error) {
	kind := types.Kind(tag & 0x0F)
	switch kind {
	case types.KindNull:
		if tag != byte(types.KindNull) {
			return 0, corrupt("bad tag %#x", tag)
		}
		return 0, nil
	case types.KindInt, types.KindUint, types.KindDate, types.KindDatetime, types.KindDuration:
		if tag>>4 != 0 && (kind != types.KindDatetime && kind != types.KindDuration || tag>>4 > 6) {
			return 0, corrupt("bad tag %#x", tag)
		}
		// Varints and uvarints have the same length.
		_, err := r.uvarint()
		return 0, err
	case types.KindString, types.KindBytes:
		if tag>>4 != 0 {
			return 0, corrupt("bad tag %#x", tag)
		}
		l, err := r.uvarint()
		if err != nil {
			return 0, err
		}
		if uint64(len(r.b)-r.pos) < l {
			return 0, corrupt("string length %d", l)
		}
		r.pos += int(l)
		return int(l), nil
	}
	_, _, _, err = r.field(tag, false)
	return 0, err
}

// wantedStringBytes sums the lengths of the wanted strings from column i (whose payload starts at
// start) to the end of the row, so that DecodeRow allocates them at once.
func wantedStringBytes(b []byte, start int, i, n uint64, colPos []int) (int, error) {
	r := rowReader{b: b, pos: start}
	total := 0
	tag := b[start-1] // column i's tag, already read by DecodeRow
	for {
		sl, err := r.skip(tag)
		if err != nil {
			return 0, err
		}
		total += sl
		i++
		for {
			if i >= n {
				return total, nil
			}
			id, err := r.uvarint()
			if err != nil {
				return 0, err
			}
			if tag, err = r.byte1(); err != nil {
				return 0, err
			}
			if id < uint64(len(colPos)) && colPos[id] >= 0 {
				break
			}
			if _, err := r.skip(tag); err != nil {
				return 0, err
			}
			i++
		}
	}
}
