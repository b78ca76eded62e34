package rowenc

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// ErrKeyNotReversible is returned by DecodeKey for strings whose key is a collation weight string
// (the _ci collations, and PAD SPACE collations on VARCHAR/TEXT where trailing spaces are lost):
// the value must be read from the row. DecodeKey still returns the rest of the key after it.
var ErrKeyNotReversible = errors.New("rowenc: key of this column cannot be decoded")

// binaryColl keys byte strings: a nil Collation is the binary one.
var binaryColl *types.Collation

var errCorruptKey = errors.New("rowenc: corrupt key")

const (
	keyNull    = 0x00
	keyNotNull = 0x01
	// decimal markers (in place of keyNotNull)
	keyDecNeg  = 0x01
	keyDecZero = 0x02
	keyDecPos  = 0x03
)

// KeyReversible reports whether DecodeKey can rebuild values of t from their key.
func KeyReversible(t *types.ColType) bool {
	if t.Tp == mysql.TypeJSON || t.Tp == mysql.TypeEnum || t.Tp == mysql.TypeSet {
		return false // ENUM/SET keys are member numbers: read the value from the row
	}
	if !t.IsString() && t.Tp != mysql.TypeEnum && t.Tp != mysql.TypeSet {
		return keyKind(t) != types.KindNull
	}
	c := t.KeyColl()
	switch {
	case c.IsBinary():
		return true
	case c.Reversible(): // bytewise PAD SPACE
		return t.Tp == mysql.TypeString // CHAR values are stored without trailing spaces
	}
	return false
}

// keyKind is the Kind that values of t have after Convert.
func keyKind(t *types.ColType) types.Kind {
	switch t.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong:
		if t.Unsigned {
			return types.KindUint
		}
		return types.KindInt
	case mysql.TypeYear:
		return types.KindInt
	case mysql.TypeBit:
		return types.KindUint
	case mysql.TypeFloat, mysql.TypeDouble:
		return types.KindFloat
	case mysql.TypeNewDecimal:
		return types.KindDecimal
	case mysql.TypeDate, mysql.TypeNewDate:
		return types.KindDate
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		return types.KindDatetime
	case mysql.TypeDuration:
		return types.KindDuration
	case mysql.TypeEnum, mysql.TypeSet, mysql.TypeJSON:
		return types.KindString
	}
	if t.IsString() {
		if t.IsBinaryString() {
			return types.KindBytes
		}
		return types.KindString
	}
	return types.KindNull
}

func appendUint64(buf []byte, u uint64) []byte {
	return binary.BigEndian.AppendUint64(buf, u)
}

// AppendKey appends v's memcomparable encoding as a key column of type t: 0x00 for NULL, else
// 0x01 and 8 big-endian bytes for integers (sign bit flipped for signed ones), floats (IEEE bits,
// negatives inverted, -0 = 0) and temporal values (packed, sign flipped); decimals a sign marker,
// a 2-byte exponent and base-100 digit pairs (trailing zeros dropped, so 1.50 = 1.5); strings 0x01
// and their Collation.Key. v should already be Convert()ed to t; other kinds are converted here.
func AppendKey(buf []byte, v types.Value, t *types.ColType) []byte {
	if v.K == types.KindNull {
		return append(buf, keyNull)
	}
	want := keyKind(t)
	if want != types.KindNull && v.K != want && !(want == types.KindString && v.K == types.KindBytes) && !(want == types.KindBytes && v.K == types.KindString) {
		if cv, _, err := types.Convert(v, t, types.ConvertCtx{}); err == nil && cv.K != types.KindNull {
			v = cv
		}
	}
	switch t.Tp {
	case mysql.TypeEnum, mysql.TypeSet:
		// Ordered as MySQL orders them: by member index / bitmask. A string that is no member
		// gets a number no row has.
		var n uint64
		if v.K == types.KindString || v.K == types.KindBytes {
			if t.Tp == mysql.TypeEnum {
				n = uint64(types.EnumIndex(t, v.S))
				if n == 0 && v.S != "" {
					n = 1 << 32
				}
			} else {
				n = types.SetMask(t, v.S)
			}
		} else {
			n, _ = types.ToUint(v)
		}
		return appendUint64(append(buf, keyNotNull), n)
	}
	switch v.K {
	case types.KindInt:
		return appendUint64(append(buf, keyNotNull), uint64(v.I)^(1<<63))
	case types.KindUint:
		return appendUint64(append(buf, keyNotNull), uint64(v.I))
	case types.KindFloat:
		return appendFloatKey(append(buf, keyNotNull), v.F)
	case types.KindDecimal:
		return appendDecimalKey(buf, v.D)
	case types.KindString, types.KindBytes:
		buf = append(buf, keyNotNull)
		if v.K == types.KindBytes && want != types.KindString {
			return binaryColl.Key(buf, v.S)
		}
		return t.KeyColl().Key(buf, v.S)
	case types.KindDate, types.KindDatetime, types.KindDuration:
		return appendUint64(append(buf, keyNotNull), uint64(v.I)^(1<<63))
	}
	return append(buf, keyNull)
}

func appendFloatKey(buf []byte, f float64) []byte {
	if f == 0 {
		f = 0 // -0 sorts with 0
	}
	u := math.Float64bits(f)
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	return appendUint64(buf, u)
}

func decodeFloatKey(u uint64) float64 {
	if u&(1<<63) != 0 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	return math.Float64frombits(u)
}

// appendDecimalKey writes sign marker, exponent E (value = 0.d1d2... × 10^E) as a biased uint16,
// the digits as base-100 pairs plus one, and a 0x00 terminator; negative values invert all but the
// marker so that larger magnitudes sort first.
func appendDecimalKey(buf []byte, d decimal.Decimal) []byte {
	sign := d.Sign()
	if sign == 0 {
		return append(buf, keyDecZero)
	}
	var tmp [96]byte
	digits := types.DecimalDigits(tmp[:0], d)
	exp := int(d.Exponent())
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	e := len(digits) + exp
	if e > math.MaxInt16 {
		e = math.MaxInt16
	} else if e < math.MinInt16 {
		e = math.MinInt16
	}
	eb := uint16(e + 1<<15)
	var inv byte
	if sign < 0 {
		buf = append(buf, keyDecNeg)
		inv = 0xFF
		eb = ^eb
	} else {
		buf = append(buf, keyDecPos)
	}
	buf = append(buf, byte(eb>>8), byte(eb))
	for i := 0; i < len(digits); i += 2 {
		p := (digits[i] - '0') * 10
		if i+1 < len(digits) {
			p += digits[i+1] - '0'
		}
		buf = append(buf, (p+1)^inv)
	}
	return append(buf, inv)
}

func decodeDecimalKey(b []byte) (decimal.Decimal, []byte, error) {
	if len(b) == 0 {
		return decimal.Decimal{}, nil, errCorruptKey
	}
	switch b[0] {
	case keyDecZero:
		return decimal.Decimal{}, b[1:], nil
	case keyDecNeg, keyDecPos:
	default:
		return decimal.Decimal{}, nil, errCorruptKey
	}
	neg := b[0] == keyDecNeg
	var inv byte
	if neg {
		inv = 0xFF
	}
	if len(b) < 3 {
		return decimal.Decimal{}, nil, errCorruptKey
	}
	eb := uint16(b[1])<<8 | uint16(b[2])
	if neg {
		eb = ^eb
	}
	e := int(eb) - 1<<15
	b = b[3:]
	var tmp [96]byte
	digits := tmp[:0]
	for i := 0; ; i++ {
		if i >= len(b) {
			return decimal.Decimal{}, nil, errCorruptKey
		}
		p := b[i] ^ inv
		if p == 0 {
			b = b[i+1:]
			break
		}
		p--
		if p > 99 {
			return decimal.Decimal{}, nil, errCorruptKey
		}
		digits = append(digits, '0'+p/10, '0'+p%10)
	}
	if len(digits) == 0 {
		return decimal.Decimal{}, nil, errCorruptKey
	}
	exp := e - len(digits)
	var d decimal.Decimal
	if len(digits) <= 18 {
		var n int64
		for _, c := range digits {
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		d = decimal.New(n, int32(exp))
	} else {
		bi, _ := new(big.Int).SetString(string(digits), 10)
		if neg {
			bi.Neg(bi)
		}
		d = decimal.NewFromBigInt(bi, int32(exp))
	}
	return d, b, nil
}

// DecodeKey decodes one key column of type t from b and returns the rest. For strings that
// KeyReversible rejects it returns ErrKeyNotReversible (with rest positioned after the column).
func DecodeKey(b []byte, t *types.ColType) (v types.Value, rest []byte, err error) {
	if len(b) == 0 {
		return types.Null, nil, errCorruptKey
	}
	if b[0] == keyNull {
		return types.Null, b[1:], nil
	}
	kind := keyKind(t)
	if kind == types.KindDecimal {
		d, rest, err := decodeDecimalKey(b)
		if err != nil {
			return types.Null, nil, err
		}
		frac := t.DefaultFrac()
		return types.NewDecimal(d.Round(int32(frac)), frac), rest, nil
	}
	if b[0] != keyNotNull {
		return types.Null, nil, errCorruptKey
	}
	b = b[1:]
	switch kind {
	case types.KindInt, types.KindUint, types.KindFloat, types.KindDate, types.KindDatetime, types.KindDuration:
		if len(b) < 8 {
			return types.Null, nil, errCorruptKey
		}
		u := binary.BigEndian.Uint64(b)
		rest = b[8:]
		switch kind {
		case types.KindInt:
			return types.NewInt(int64(u ^ 1<<63)), rest, nil
		case types.KindUint:
			return types.NewUint(u), rest, nil
		case types.KindFloat:
			return types.Value{K: types.KindFloat, F: decodeFloatKey(u), Frac: int8(t.DefaultFrac())}, rest, nil
		case types.KindDate:
			return types.NewDate(int64(u ^ 1<<63)), rest, nil
		case types.KindDatetime:
			return types.NewDatetime(int64(u^1<<63), t.DefaultFrac()), rest, nil
		default:
			return types.NewDuration(int64(u^1<<63), t.DefaultFrac()), rest, nil
		}
	case types.KindString, types.KindBytes:
		s, rest, ok := t.KeyColl().SplitKey(b)
		if !ok {
			return types.Null, nil, errCorruptKey
		}
		if !KeyReversible(t) {
			return types.Null, rest, ErrKeyNotReversible
		}
		if kind == types.KindBytes {
			return types.NewBytes(string(s)), rest, nil
		}
		return types.NewString(string(s)), rest, nil
	}
	return types.Null, nil, errCorruptKey
}
