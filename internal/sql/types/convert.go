package types

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// ConvertCtx tells Convert how to report problems: Strict (STRICT_TRANS_TABLES) turns warnings
// into the returned error, Column and Row (1-based; 0 is shown as 1) go into the messages.
type ConvertCtx struct {
	Strict bool
	Column string
	Row    int
	// NoZeroDate and NoZeroInDate are the sql_mode flags: without them '0000-00-00' and dates with
	// a zero month or day ('2020-00-15') are stored as given.
	NoZeroDate, NoZeroInDate bool
}

type convState struct {
	cc    ConvertCtx
	warns []sqlerr.Warning
}

func (st *convState) row() int {
	if st.cc.Row <= 0 {
		return 1
	}
	return st.cc.Row
}

// fail reports a condition that is an error in strict mode and a warning otherwise.
func (st *convState) fail(e *sqlerr.Error) error {
	if st.cc.Strict {
		return e
	}
	st.warns = append(st.warns, sqlerr.Warning{Level: "Warning", Code: e.Code, Message: e.Message})
	return nil
}

// failAs is fail with a different error in strict mode (MySQL reports bad temporal values as
// 1292 errors but 1265/1264 warnings).
func (st *convState) failAs(strictErr, warn *sqlerr.Error) error {
	if st.cc.Strict {
		return strictErr
	}
	st.warns = append(st.warns, sqlerr.Warning{Level: "Warning", Code: warn.Code, Message: warn.Message})
	return nil
}

// note reports a condition MySQL reports as a Note even in strict mode.
func (st *convState) note(e *sqlerr.Error) {
	st.warns = append(st.warns, sqlerr.Warning{Level: "Note", Code: e.Code, Message: e.Message})
}

func (st *convState) outOfRange() *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrWarnDataOutOfRange, "Out of range value for column '%s' at row %d", st.cc.Column, st.row())
}

func (st *convState) truncated() *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrWarnDataTruncated, "Data truncated for column '%s' at row %d", st.cc.Column, st.row())
}

func (st *convState) incorrect(typ, val string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrTruncatedWrongValueForField, "Incorrect %s value: '%s' for column '%s' at row %d", typ, val, st.cc.Column, st.row())
}

func (st *convState) tooLong() *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrDataTooLong, "Data too long for column '%s' at row %d", st.cc.Column, st.row())
}

func (st *convState) badTime(typ, val string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrTruncatedWrongValue, "Incorrect %s value: '%s' for column '%s' at row %d", typ, val, st.cc.Column, st.row())
}

// Convert converts v for storage in a column of type t with MySQL's store-assignment rules:
// integers are range-checked (1264), strings are parsed by their numeric prefix (garbage after a
// number: 1265; no number: 1366), doubles round half to even and decimals half away from zero
// into integers, DECIMAL(M,D) rounds to D (a Note 1265) and range-checks M, strings are checked
// against the charset (1366) and the length (1406; trailing spaces beyond the length are cut with
// a Note for VARCHAR/TEXT and silently for CHAR), CHAR drops trailing spaces, BINARY(n) pads with
// 0x00, temporal values parse strings and numbers (1292 in strict mode, 1265/1264 warnings
// otherwise). In strict mode the first warning-level condition is returned as the error; Notes are
// never errors. NULL converts to NULL: NOT NULL is the caller's check.
func Convert(v Value, t *ColType, cc ConvertCtx) (Value, []sqlerr.Warning, error) {
	if v.K == KindNull {
		return Null, nil, nil
	}
	st := convState{cc: cc}
	var out Value
	var err error
	switch t.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong:
		out, err = st.toIntCol(v, t)
	case mysql.TypeYear:
		out, err = st.toYear(v)
	case mysql.TypeFloat, mysql.TypeDouble:
		out, err = st.toFloatCol(v, t)
	case mysql.TypeNewDecimal:
		out, err = st.toDecimalCol(v, t)
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString,
		mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		out, err = st.toStringCol(v, t)
	case mysql.TypeDate, mysql.TypeNewDate:
		out, err = st.toDatetimeCol(v, t, true)
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		out, err = st.toDatetimeCol(v, t, false)
	case mysql.TypeDuration:
		out, err = st.toDurationCol(v, t)
	case mysql.TypeBit:
		out, err = st.toBitCol(v, t)
	case mysql.TypeEnum:
		out, err = st.toEnumCol(v, t)
	case mysql.TypeSet:
		out, err = st.toSetCol(v, t)
	case mysql.TypeJSON:
		out, err = st.toJSONCol(v)
	default:
		return Null, nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of Kiln doesn't yet support '%s'", t.SQL())
	}
	if err != nil {
		return Null, nil, err
	}
	return out, st.warns, nil
}

// ConvertExactInt is Convert's fast path for an integer value into an integer column whose range
// holds it: the value Convert returns, which raises no warning; ok is false for anything else,
// which the caller gives to Convert. A bulk INSERT converts every value of every row, most of them
// such integers, and Convert's context costs more than the conversion.
func ConvertExactInt(v Value, t *ColType) (Value, bool) {
	switch t.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong:
	default:
		return Value{}, false
	}
	lo, hi := intRange(t)
	switch v.K {
	case KindInt:
		if v.I < lo || v.I >= 0 && uint64(v.I) > hi {
			return Value{}, false
		}
		if t.Unsigned {
			return NewUint(uint64(v.I)), true // lo is 0: v.I is not negative
		}
		return NewInt(v.I), true
	case KindUint:
		u := uint64(v.I)
		if u > hi {
			return Value{}, false
		}
		if t.Unsigned {
			return NewUint(u), true
		}
		return NewInt(int64(u)), true
	}
	return Value{}, false
}

// intRange returns the bounds of an integer column type.
func intRange(t *ColType) (lo int64, hi uint64) {
	var bits uint
	switch t.Tp {
	case mysql.TypeTiny:
		bits = 8
	case mysql.TypeShort:
		bits = 16
	case mysql.TypeInt24:
		bits = 24
	case mysql.TypeLong:
		bits = 32
	default:
		bits = 64
	}
	if t.Unsigned {
		if bits == 64 {
			return 0, math.MaxUint64
		}
		return 0, 1<<bits - 1
	}
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

// wideInt is a sign and magnitude: enough for every int64 and uint64.
type wideInt struct {
	neg bool
	mag uint64
}

func wideFromInt(i int64) wideInt {
	if i < 0 {
		return wideInt{true, uint64(-i)}
	}
	return wideInt{false, uint64(i)}
}

// fit clips w into [lo, hi]; ok is false when it had to.
func (w wideInt) fit(lo int64, hi uint64) (wideInt, bool) {
	if w.neg && w.mag != 0 {
		if lo >= 0 {
			return wideInt{false, 0}, false
		}
		if w.mag > uint64(-(lo+1))+1 {
			return wideFromInt(lo), false
		}
		return w, true
	}
	if w.mag > hi {
		return wideInt{false, hi}, false
	}
	return w, true
}

func (w wideInt) value(unsigned bool) Value {
	if unsigned {
		return NewUint(w.mag)
	}
	if w.neg {
		return NewInt(-int64(w.mag))
	}
	return NewInt(int64(w.mag))
}

// floatToWide rounds f half to even (MySQL's rint) and clips it to the wideInt range.
func floatToWide(f float64) (wideInt, bool) {
	f = math.RoundToEven(f)
	switch {
	case math.IsNaN(f):
		return wideInt{}, true
	case f >= 18446744073709551616.0:
		return wideInt{false, math.MaxUint64}, false
	case f <= -18446744073709551616.0:
		return wideInt{true, math.MaxUint64}, false
	case f < 0:
		return wideInt{true, uint64(-f)}, true
	}
	return wideInt{false, uint64(f)}, true
}

func decimalToWide(d decimal.Decimal) (wideInt, bool) {
	r := d.Round(0)
	b := r.BigInt()
	neg := b.Sign() < 0
	b.Abs(b)
	if !b.IsUint64() {
		return wideInt{neg, math.MaxUint64}, false
	}
	return wideInt{neg, b.Uint64()}, true
}

func (st *convState) toIntCol(v Value, t *ColType) (Value, error) {
	lo, hi := intRange(t)
	var w wideInt
	ok := true
	switch v.K {
	case KindInt:
		w = wideFromInt(v.I)
	case KindUint:
		w = wideInt{false, uint64(v.I)}
	case KindFloat:
		w, ok = floatToWide(v.F)
	case KindDecimal:
		w, ok = decimalToWide(v.D)
	case KindString, KindBytes:
		var status numStatus
		w, status = stringToWide(v.S)
		switch status {
		case numBad:
			if err := st.fail(st.incorrect("integer", v.S)); err != nil {
				return Null, err
			}
		case numOverflow:
			ok = false
		case numTrunc:
			w2, inRange := w.fit(lo, hi)
			if !inRange {
				if err := st.fail(st.outOfRange()); err != nil {
					return Null, err
				}
				return w2.value(t.Unsigned), nil
			}
			if err := st.fail(st.truncated()); err != nil {
				return Null, err
			}
			return w.value(t.Unsigned), nil
		}
	default:
		return st.toIntCol(NumericValue(v), t)
	}
	w2, inRange := w.fit(lo, hi)
	if !ok || !inRange {
		if err := st.fail(st.outOfRange()); err != nil {
			return Null, err
		}
	}
	return w2.value(t.Unsigned), nil
}

// stringToWide parses a string for an integer column: MySQL rounds the full numeric prefix
// (fraction and exponent included) half away from zero.
func stringToWide(s string) (wideInt, numStatus) {
	nt, ok := scanNumber(s)
	if !ok {
		return wideInt{}, numBad
	}
	st := numOK
	if nt.trailing {
		st = numTrunc
	}
	if nt.fracDigits == "" && nt.exp == 0 && len(nt.intDigits) <= 19 {
		u, err := strconv.ParseUint(nt.intDigits, 10, 64)
		if err == nil {
			return wideInt{nt.neg && u != 0, u}, st
		}
	}
	d, over := nt.decimal()
	if over {
		return wideInt{nt.neg, math.MaxUint64}, numOverflow
	}
	w, ok2 := decimalToWide(d)
	if !ok2 {
		return w, numOverflow
	}
	return w, st
}

func (st *convState) toYear(v Value) (Value, error) {
	var n int64
	switch v.K {
	case KindString, KindBytes:
		s := TrimSpaces(v.S)
		w, status := stringToWide(s)
		switch status {
		case numBad:
			if err := st.fail(st.incorrect("integer", v.S)); err != nil {
				return Null, err
			}
			return NewInt(0), nil
		case numTrunc:
			if err := st.fail(st.truncated()); err != nil {
				return Null, err
			}
		case numOverflow:
			return st.yearRange()
		}
		if w.neg && w.mag != 0 || w.mag > 10000 {
			return st.yearRange()
		}
		// Only '0000' is year zero: '0' and '00' mean 2000, as MySQL's Field_year does.
		n = int64(w.mag)
		switch {
		case n == 0 && len(s) == 4:
			return NewInt(0), nil
		case n < 70:
			return NewInt(2000 + n), nil
		case n < 100:
			return NewInt(1900 + n), nil
		}
	case KindDate, KindDatetime:
		y, _, _, _, _, _, _ := UnpackTime(v.I)
		return NewInt(int64(y)), nil
	default:
		var w wideInt
		ok := true
		switch nv := NumericValue(v); nv.K {
		case KindInt:
			w = wideFromInt(nv.I)
		case KindUint:
			w = wideInt{false, uint64(nv.I)}
		case KindFloat:
			w, ok = floatToWide(nv.F)
		case KindDecimal:
			w, ok = decimalToWide(nv.D)
		}
		if !ok || w.mag > 10000 {
			return st.yearRange()
		}
		n = int64(w.mag)
		if w.neg {
			n = -n
		}
	}
	switch {
	case n == 0:
		return NewInt(0), nil
	case n > 0 && n < 70:
		return NewInt(2000 + n), nil
	case n >= 70 && n < 100:
		return NewInt(1900 + n), nil
	case n >= 1901 && n <= 2155:
		return NewInt(n), nil
	}
	return st.yearRange()
}

func (st *convState) yearRange() (Value, error) {
	if err := st.fail(st.outOfRange()); err != nil {
		return Null, err
	}
	return NewInt(0), nil
}

func (st *convState) toFloatCol(v Value, t *ColType) (Value, error) {
	var f float64
	switch v.K {
	case KindInt:
		f = float64(v.I)
	case KindUint:
		f = float64(uint64(v.I))
	case KindFloat:
		f = v.F
	case KindDecimal:
		f = v.D.InexactFloat64()
	case KindString, KindBytes:
		var status numStatus
		f, status = parseFloatPrefix(v.S)
		switch status {
		case numBad, numTrunc:
			if err := st.fail(st.truncated()); err != nil {
				return Null, err
			}
		case numOverflow:
			if err := st.fail(st.outOfRange()); err != nil {
				return Null, err
			}
		}
	default:
		return st.toFloatCol(NumericValue(v), t)
	}
	limit := math.MaxFloat64
	if t.Tp == mysql.TypeFloat {
		limit = math.MaxFloat32
	}
	frac := t.DefaultFrac()
	if frac > 0 {
		f = RoundFloat(f, frac)
		if m := t.Len; m > 0 && m-frac < 309 {
			limit = math.Min(limit, math.Pow(10, float64(m-frac))-math.Pow(10, -float64(frac)))
		}
	}
	bad := false
	switch {
	case math.IsNaN(f):
		f, bad = 0, true
	case f > limit:
		f, bad = limit, true
	case f < -limit:
		f, bad = -limit, true
	}
	if t.Unsigned && f < 0 {
		f, bad = 0, true
	}
	if bad {
		if err := st.fail(st.outOfRange()); err != nil {
			return Null, err
		}
	}
	if t.Tp == mysql.TypeFloat {
		f = float64(float32(f))
	}
	if f == 0 {
		f = 0 // no negative zero in storage
	}
	return Value{K: KindFloat, F: f, Frac: int8(frac)}, nil
}

// RoundFloat is MySQL's my_double_round: rint(f * 10^d) / 10^d (negative d rounds to tens...).
func RoundFloat(f float64, d int) float64 {
	if d >= 0 {
		p := math.Pow(10, float64(d))
		m := f * p
		if math.IsInf(m, 0) {
			return f
		}
		return math.RoundToEven(m) / p
	}
	p := math.Pow(10, float64(-d))
	if math.IsInf(p, 0) {
		return 0
	}
	return math.RoundToEven(f/p) * p
}

// TruncFloat is my_double_round with truncation.
func TruncFloat(f float64, d int) float64 {
	if d >= 0 {
		p := math.Pow(10, float64(d))
		m := f * p
		if math.IsInf(m, 0) {
			return f
		}
		return math.Trunc(m) / p
	}
	p := math.Pow(10, float64(-d))
	if math.IsInf(p, 0) {
		return 0
	}
	return math.Trunc(f/p) * p
}

// decimalMax returns 10^(m-d) - 10^-d, the largest DECIMAL(m,d).
func decimalMax(m, d int) decimal.Decimal {
	return decimal.New(1, int32(m-d)).Sub(decimal.New(1, int32(-d)))
}

func (st *convState) toDecimalCol(v Value, t *ColType) (Value, error) {
	m, frac := t.decimalPrec()
	var d decimal.Decimal
	over := false
	switch v.K {
	case KindInt:
		d = decimal.NewFromInt(v.I)
	case KindUint:
		d = decimal.NewFromUint64(uint64(v.I))
	case KindFloat:
		if math.IsInf(v.F, 0) || math.IsNaN(v.F) || math.Abs(v.F) >= 1e65 {
			over = true
			d = decimal.NewFromInt(int64(math.Copysign(1, v.F)))
		} else {
			d = decimal.NewFromFloat(v.F)
		}
	case KindDecimal:
		d = v.D
	case KindString, KindBytes:
		var status numStatus
		d, status = parseDecimalPrefix(v.S)
		switch status {
		case numBad:
			if err := st.fail(st.incorrect("decimal", v.S)); err != nil {
				return Null, err
			}
			d = decimal.Decimal{}
		case numTrunc:
			if err := st.fail(st.truncated()); err != nil {
				return Null, err
			}
		case numOverflow:
			over = true
			nt, _ := scanNumber(v.S)
			d = decimal.NewFromInt(1)
			if nt.neg {
				d = d.Neg()
			}
		}
	default:
		return st.toDecimalCol(NumericValue(v), t)
	}
	r := d.Round(int32(frac))
	rounded := !r.Equal(d)
	mx := decimalMax(m, frac)
	switch {
	case over && d.Sign() < 0, r.LessThan(mx.Neg()):
		over, r = true, mx.Neg()
	case over, r.GreaterThan(mx):
		over, r = true, mx
	}
	if t.Unsigned && r.Sign() < 0 {
		over, r = true, decimal.New(0, int32(-frac))
	}
	if over {
		if err := st.fail(st.outOfRange()); err != nil {
			return Null, err
		}
	} else if rounded {
		st.note(st.truncated())
	}
	return NewDecimal(r, frac), nil
}

// textLimit is the byte capacity of the TEXT/BLOB types.
// TextLimit is the byte capacity of a TEXT/BLOB type.
func TextLimit(tp byte) int { return textLimit(tp) }

func textLimit(tp byte) int {
	switch tp {
	case mysql.TypeTinyBlob:
		return 255
	case mysql.TypeBlob:
		return 65535
	case mysql.TypeMediumBlob:
		return 16777215
	}
	return math.MaxUint32
}

// maxRune is the largest character a charset stores.
func maxRune(charset string) rune {
	switch charset {
	case "latin1":
		return 0xFF // and the Windows-1252 characters of 0x80-0x9F: Latin1Has
	case "ascii":
		return 0x7F
	case "utf8mb3", "utf8":
		return 0xFFFF
	}
	return utf8.MaxRune
}

// badString is MySQL's 1366 for a string value: the offending bytes from the first bad character on
// are shown as Field_longstr::check_string_copy_error shows them (convert_to_printable with at most
// 6 bytes: printable ASCII as itself, other bytes as \xHH, "..." when more bytes follow).
func (st *convState) badString(bad string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrTruncatedWrongValueForField, "Incorrect string value: '%s' for column '%s' at row %d", printableBytes(bad, 6), st.cc.Column, st.row())
}

// printableBytes renders the first n bytes of s as MySQL's convert_to_printable does.
func printableBytes(s string, n int) string {
	var b strings.Builder
	k := min(len(s), n)
	for i := 0; i < k; i++ {
		c := s[i]
		if c >= 0x20 && c <= 0x7F {
			b.WriteByte(c)
			continue
		}
		b.WriteString(`\x`)
		b.WriteByte("0123456789ABCDEF"[c>>4])
		b.WriteByte("0123456789ABCDEF"[c&15])
	}
	if len(s) > k {
		b.WriteString("...")
	}
	return b.String()
}

// colCharset returns the character set of a string column.
func colCharset(t *ColType) string {
	if t.Charset != "" {
		return t.Charset
	}
	if c, ok := LookupCollation(t.Collation); ok {
		return c.Charset
	}
	return ""
}

// checkCharset checks s against the column's charset as MySQL's Field_string/Field_varstring::store
// does (well_formed_copy_nchars): the value is cut before the first byte sequence that is not
// valid UTF-8 (a malformed source string is not converted further), and characters the charset
// cannot hold become '?'. Either is reported once per value (1366: an error in strict mode).
func (st *convState) checkCharset(s string, t *ColType) (string, error) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s, nil
	}
	cs := colCharset(t)
	lim := maxRune(cs)
	var out []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			if out == nil {
				if err := st.fail(st.badString(s[i:])); err != nil {
					return "", err
				}
				return s[:i], nil
			}
			return string(out), nil
		}
		if r > lim && !(cs == "latin1" && Latin1Has(r)) {
			if out == nil {
				if err := st.fail(st.badString(s[i:])); err != nil {
					return "", err
				}
				out = append(make([]byte, 0, len(s)), s[:i]...)
			}
			out = append(out, '?')
			i += size
			continue
		}
		if out != nil {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return s, nil
	}
	return string(out), nil
}

func (st *convState) toStringCol(v Value, t *ColType) (Value, error) {
	var s string
	switch v.K {
	case KindString, KindBytes:
		s = v.S
	default:
		s = ToString(v)
	}
	if t.IsBinaryString() {
		limit := t.Len
		switch {
		case t.IsBlob():
			limit = textLimit(t.Tp)
		case t.Tp == mysql.TypeString && limit < 0:
			limit = 1
		case limit < 0:
			limit = math.MaxUint32
		}
		if len(s) > limit {
			if err := st.failAs(st.tooLong(), st.truncated()); err != nil {
				return Null, err
			}
			s = s[:limit]
		}
		if t.Tp == mysql.TypeString && len(s) < limit {
			s += strings.Repeat("\x00", limit-len(s))
		}
		return NewBytes(s), nil
	}
	if v.K == KindBytes && colCharset(t) == "latin1" {
		// A binary string (a BLOB-typed parameter, X'..', _binary '..', a BINARY/BLOB value) is
		// not converted into a latin1 column: each byte is one latin1 character, so any bytes are
		// stored unchanged, as MySQL and MariaDB do (String::needs_conversion is false from
		// binary). Kiln holds latin1 text as UTF-8, so the bytes are decoded here, into
		// characters latin1 holds by construction (no charset check).
		s = Latin1Decode(s)
	} else {
		var err error
		if s, err = st.checkCharset(s, t); err != nil {
			return Null, err
		}
	}
	isChar := t.Tp == mysql.TypeString
	if isChar {
		s = strings.TrimRight(s, " ")
	}
	var cut int // byte offset where the value must be cut, or -1
	if t.IsBlob() {
		cut = -1
		if lim := textLimit(t.Tp); len(s) > lim {
			cut = lim
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
	} else {
		n := t.Len
		if n < 0 {
			n = 1
			if !isChar {
				n = math.MaxInt32
			}
		}
		cut = CharOffset(s, n)
	}
	if cut >= 0 {
		if strings.TrimRight(s[cut:], " ") == "" {
			if !isChar {
				st.note(st.truncated())
			}
		} else if err := st.failAs(st.tooLong(), st.truncated()); err != nil {
			return Null, err
		}
		s = s[:cut]
		if isChar {
			s = strings.TrimRight(s, " ")
		}
	}
	return NewString(s), nil
}

// CharOffset returns the byte offset of the n-th character of s, or -1 if s has at most n.
func CharOffset(s string, n int) int {
	if len(s) <= n {
		return -1
	}
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(s) {
			return -1
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
	}
	if i >= len(s) {
		return -1
	}
	return i
}

// timestampMin/Max bound TIMESTAMP ('1970-01-01 00:00:01' .. '2038-01-19 03:14:07.999999' UTC).
var (
	timestampMin = PackTime(1970, 1, 1, 0, 0, 1, 0)
	timestampMax = PackTime(2038, 1, 19, 3, 14, 7, 999999)
)

func (st *convState) toDatetimeCol(v Value, t *ColType, dateOnly bool) (Value, error) {
	fsp := 0
	typ := "date"
	if !dateOnly {
		fsp = ClampFsp(t.Frac)
		typ = "datetime"
	}
	var p int64
	var err error
	hasTime := false
	switch v.K {
	case KindString, KindBytes:
		p, hasTime, err = ParseDatetimeMode(v.S, pick6(dateOnly, fsp), true)
	case KindInt:
		p, hasTime, err = numberToDatetime(v.I, 0, pick6(dateOnly, fsp))
	case KindUint:
		if uint64(v.I) > math.MaxInt64 {
			err = errBadTime
		} else {
			p, hasTime, err = numberToDatetime(v.I, 0, pick6(dateOnly, fsp))
		}
	case KindFloat, KindDecimal:
		d := ToDecimal(v)
		if d.Sign() < 0 || d.GreaterThan(DecMaxInt64) {
			err = errBadTime
		} else {
			ip := d.Truncate(0)
			us := d.Sub(ip).Shift(6).Round(0).IntPart()
			if us >= MicrosPerSec {
				us = MicrosPerSec - 1
			}
			p, hasTime, err = numberToDatetime(ip.IntPart(), int(us), pick6(dateOnly, fsp))
		}
	case KindDate:
		p = v.I
	case KindDatetime:
		p, hasTime = v.I, v.I&(1<<41-1) != 0
		if !dateOnly {
			p, err = roundDatetime(p, fsp)
		}
	case KindDuration:
		now := time.Now()
		base := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).Add(time.Duration(v.I) * time.Microsecond)
		p = PackTime(base.Year(), int(base.Month()), base.Day(), base.Hour(), base.Minute(), base.Second(), base.Nanosecond()/1000)
		hasTime = true
		if !dateOnly {
			p, err = roundDatetime(p, fsp)
		}
	default:
		err = errBadTime
	}
	if err == nil && t.Tp == mysql.TypeTimestamp && p != 0 && (p < timestampMin || p > timestampMax) {
		if e := st.failAs(st.badTime(typ, ToString(v)), st.outOfRange()); e != nil {
			return Null, e
		}
		return NewDatetime(0, fsp), nil
	}
	if err != nil {
		if e := st.failAs(st.badTime(typ, ToString(v)), st.truncated()); e != nil {
			return Null, e
		}
		p = 0
	} else if y, mo, d, _, _, _, _ := UnpackTime(p); y == 0 && mo == 0 && d == 0 {
		if st.cc.NoZeroDate && (v.K == KindString || v.K == KindBytes || v.K == KindInt || v.K == KindUint) {
			// NO_ZERO_DATE: an error in strict mode, else stored with a warning.
			if e := st.failAs(st.badTime(typ, ToString(v)), st.outOfRange()); e != nil {
				return Null, e
			}
		}
	} else if mo == 0 || d == 0 {
		if st.cc.NoZeroInDate {
			// NO_ZERO_IN_DATE: an error in strict mode, else the zero date with a warning.
			if e := st.failAs(st.badTime(typ, ToString(v)), st.outOfRange()); e != nil {
				return Null, e
			}
			p = 0
		}
	}
	if dateOnly {
		if hasTime && p&(1<<41-1) != 0 {
			st.note(st.truncated())
		}
		return NewDate(p), nil
	}
	return NewDatetime(p, fsp), nil
}

// pick6 parses DATE values with full precision so that their time part is truncated, not rounded.
func pick6(dateOnly bool, fsp int) int {
	if dateOnly {
		return 6
	}
	return fsp
}

func (st *convState) toDurationCol(v Value, t *ColType) (Value, error) {
	fsp := ClampFsp(t.Frac)
	var us int64
	var err error
	switch v.K {
	case KindString, KindBytes:
		us, err = parseDuration(v.S, fsp)
	case KindInt:
		w := wideFromInt(v.I)
		if w.mag > math.MaxInt64/2 {
			us, err = ClipDuration(int64(math.Copysign(float64(MaxDurationMicros+1), float64(v.I))))
		} else {
			us, err = numberToDuration(int64(w.mag), 0, w.neg, fsp)
		}
	case KindUint:
		if uint64(v.I) > math.MaxInt64/2 {
			us, err = ClipDuration(MaxDurationMicros + 1)
		} else {
			us, err = numberToDuration(v.I, 0, false, fsp)
		}
	case KindFloat, KindDecimal:
		d := ToDecimal(v)
		neg := d.Sign() < 0
		d = d.Abs()
		if d.GreaterThan(DecMaxInt64) {
			us, err = ClipDuration(MaxDurationMicros + 1)
			if neg {
				us, err = ClipDuration(-MaxDurationMicros - 1)
			}
		} else {
			ip := d.Truncate(0)
			frac := d.Sub(ip).Shift(6).Round(0).IntPart()
			if frac >= MicrosPerSec {
				frac = MicrosPerSec - 1
			}
			us, err = numberToDuration(ip.IntPart(), int(frac), neg, fsp)
		}
	case KindDuration:
		us = RoundDuration(v.I, fsp)
		us, err = ClipDuration(us)
	case KindDatetime, KindDate:
		_, _, _, h, mi, s, micro := UnpackTime(v.I)
		us = (int64(h)*3600+int64(mi)*60+int64(s))*MicrosPerSec + int64(micro)
		us = RoundDuration(us, fsp)
		if us >= 24*3600*MicrosPerSec {
			us -= 24 * 3600 * MicrosPerSec
		}
	default:
		err = errBadTime
	}
	if err == ErrDurationRange {
		if e := st.failAs(st.badTime("time", ToString(v)), st.outOfRange()); e != nil {
			return Null, e
		}
	} else if err != nil {
		if e := st.failAs(st.badTime("time", ToString(v)), st.truncated()); e != nil {
			return Null, e
		}
		us = 0
	}
	return NewDuration(us, fsp), nil
}

func (st *convState) toBitCol(v Value, t *ColType) (Value, error) {
	n := t.Len
	if n <= 0 {
		n = 1
	}
	if n > 64 {
		n = 64
	}
	var u uint64
	tooLong := false
	switch v.K {
	case KindString, KindBytes:
		s := v.S
		for len(s) > 0 && s[0] == 0 {
			s = s[1:]
		}
		if len(s) > 8 {
			tooLong = true
			u = math.MaxUint64
		}
		for i := 0; i < len(s) && !tooLong; i++ {
			u = u<<8 | uint64(s[i])
		}
	case KindInt:
		u = uint64(v.I)
	case KindUint:
		u = uint64(v.I)
	default:
		u, _ = ToUint(v)
	}
	if n < 64 && u >= 1<<uint(n) {
		tooLong = true
	}
	if tooLong {
		if err := st.fail(st.tooLong()); err != nil {
			return Null, err
		}
		if n < 64 {
			u = 1<<uint(n) - 1
		} else {
			u = math.MaxUint64
		}
	}
	return NewUint(u), nil
}

// ---- casts for expressions ----

// ToIntLenient converts to int64 the way a LIMIT or a CAST does: rounding, clamping, never failing.
func ToIntLenient(v Value) int64 {
	switch v.K {
	case KindInt:
		return v.I
	case KindUint:
		if v.U() > math.MaxInt64 {
			return math.MaxInt64
		}
		return v.I
	case KindNull:
		return 0
	}
	if i, err := ToInt(v); err == nil {
		return i
	}
	f := ToFloat(v)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(f))
}

// ToInt converts v to a signed integer as MySQL's val_int() does: doubles round half to even,
// decimals half away from zero, strings take their leading integer (truncating at '.', as
// CAST(str AS SIGNED) does), unsigned values wrap, and out-of-range values clip. warn, when not
// nil, is the 1292 "Truncated incorrect INTEGER value" warning MySQL attaches; it is never fatal.
func ToInt(v Value) (int64, *sqlerr.Error) {
	switch v.K {
	case KindNull:
		return 0, nil
	case KindInt, KindUint:
		return v.I, nil
	case KindFloat:
		w, _ := floatToWide(v.F)
		w, _ = w.fit(math.MinInt64, math.MaxInt64)
		return w.value(false).I, nil
	case KindDecimal:
		w, _ := decimalToWide(v.D)
		w, _ = w.fit(math.MinInt64, math.MaxInt64)
		return w.value(false).I, nil
	case KindString, KindBytes:
		i, st := parseIntPrefix(v.S)
		if st != numOK {
			return i, truncatedIncorrect("INTEGER", v.S)
		}
		return i, nil
	}
	return ToInt(NumericValue(v))
}

// ToUint is ToInt for CAST(... AS UNSIGNED): negative values wrap around.
func ToUint(v Value) (uint64, *sqlerr.Error) {
	switch v.K {
	case KindString, KindBytes:
		u, st := parseUintPrefix(v.S)
		if st != numOK {
			return u, truncatedIncorrect("INTEGER", v.S)
		}
		return u, nil
	case KindFloat:
		w, _ := floatToWide(v.F)
		if w.neg {
			w, _ = w.fit(math.MinInt64, 0)
			return uint64(-int64(w.mag)), nil
		}
		return w.mag, nil
	case KindDecimal:
		w, _ := decimalToWide(v.D)
		if w.neg {
			w, _ = w.fit(math.MinInt64, 0)
			return uint64(-int64(w.mag)), nil
		}
		return w.mag, nil
	}
	i, warn := ToInt(v)
	return uint64(i), warn
}

func truncatedIncorrect(typ, val string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrTruncatedWrongValue, "Truncated incorrect %s value: '%s'", typ, val)
}

// ToFloat converts v to a double: strings by their numeric prefix (0 if none), temporal values by
// their numeric form (20240102, 20240102030405.5, -123456).
func ToFloat(v Value) float64 {
	switch v.K {
	case KindInt:
		return float64(v.I)
	case KindUint:
		return float64(uint64(v.I))
	case KindFloat:
		return v.F
	case KindDecimal:
		return v.D.InexactFloat64()
	case KindString, KindBytes:
		f, _ := parseFloatPrefix(v.S)
		return f
	case KindDate:
		n, _ := datetimeNumber(v.I, true)
		return float64(n)
	case KindDatetime:
		n, us := datetimeNumber(v.I, false)
		return float64(n) + float64(us)/1e6
	case KindDuration:
		n, us, neg := durationNumber(v.I)
		f := float64(n) + float64(us)/1e6
		if neg {
			return -f
		}
		return f
	}
	return 0
}

// ToDecimal converts v to an exact decimal (doubles by their shortest representation).
func ToDecimal(v Value) decimal.Decimal {
	switch v.K {
	case KindInt:
		return decimal.NewFromInt(v.I)
	case KindUint:
		return decimal.NewFromUint64(uint64(v.I))
	case KindFloat:
		if math.IsInf(v.F, 0) || math.IsNaN(v.F) {
			return decimal.Decimal{}
		}
		return decimal.NewFromFloat(v.F)
	case KindDecimal:
		return v.D
	case KindString, KindBytes:
		d, st := parseDecimalPrefix(v.S)
		if st == numOverflow {
			return decimalMax(maxDecimalDigits, 0)
		}
		return d
	case KindNull:
		return decimal.Decimal{}
	}
	return ToDecimal(NumericValue(v))
}

// ToString returns v's text form (AppendText); NULL gives "".
func ToString(v Value) string {
	switch v.K {
	case KindString, KindBytes:
		return v.S
	case KindNull:
		return ""
	}
	var buf [64]byte
	return string(AppendText(buf[:0], v))
}

// ToBool returns MySQL's truthiness of v: a nonzero number, a string whose numeric prefix is
// nonzero, a non-zero temporal value.
func ToBool(v Value) (b bool, isNull bool) {
	switch v.K {
	case KindNull:
		return false, true
	case KindInt, KindUint, KindDate, KindDatetime, KindDuration:
		return v.I != 0, false
	case KindFloat:
		return v.F != 0, false
	case KindDecimal:
		return !v.D.IsZero(), false
	case KindString, KindBytes:
		f, _ := parseFloatPrefix(v.S)
		return f != 0, false
	}
	return false, false
}

// enumIndex returns the 1-based position of s among t's members (compared with the column's
// collation, trailing spaces ignored), or 0.
func enumIndex(t *ColType, s string) int {
	c := t.Coll()
	s = strings.TrimRight(s, " ")
	for i, e := range t.Elems {
		if c.Compare(e, s) == 0 {
			return i + 1
		}
	}
	return 0
}

// toEnumCol stores a member by name or by 1-based index. Anything else is 1265 (strict) or the
// empty string ” with a warning, as MySQL stores the "error" value 0.
func (st *convState) toEnumCol(v Value, t *ColType) (Value, error) {
	var idx int
	switch v.K {
	case KindString, KindBytes:
		idx = enumIndex(t, v.S)
		if idx == 0 && v.S != "" {
			if n, err := strconv.ParseUint(strings.TrimSpace(v.S), 10, 64); err == nil && n >= 1 && n <= uint64(len(t.Elems)) {
				idx = int(n)
			}
		}
	default:
		n, _ := ToInt(v)
		if n >= 1 && n <= int64(len(t.Elems)) {
			idx = int(n)
		}
	}
	if idx == 0 {
		if err := st.fail(st.truncated()); err != nil {
			return Null, err
		}
		return NewString(""), nil
	}
	return NewString(t.Elems[idx-1]), nil
}

// toSetCol stores a comma-separated member list (any order, duplicates folded) in definition
// order, or a bitmask number.
func (st *convState) toSetCol(v Value, t *ColType) (Value, error) {
	var mask uint64
	bad := false
	switch v.K {
	case KindString, KindBytes:
		if v.S != "" {
			for _, part := range strings.Split(v.S, ",") {
				if i := enumIndex(t, part); i > 0 {
					mask |= 1 << uint(i-1)
				} else {
					bad = true
				}
			}
			if bad {
				if n, err := strconv.ParseUint(strings.TrimSpace(v.S), 10, 64); err == nil {
					mask, bad = n, false
				}
			}
		}
	default:
		n, _ := ToUint(v)
		mask = n
	}
	if n := len(t.Elems); n < 64 && mask >= 1<<uint(n) {
		bad = true
		mask &= 1<<uint(n) - 1
	}
	if bad {
		if err := st.fail(st.truncated()); err != nil {
			return Null, err
		}
	}
	var b strings.Builder
	for i, e := range t.Elems {
		if mask&(1<<uint(i)) != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(e)
		}
	}
	return NewString(b.String()), nil
}

// SetMask returns a SET column value's bitmask (what the value is in a numeric context).
func SetMask(t *ColType, s string) uint64 {
	var mask uint64
	if s == "" {
		return 0
	}
	for _, part := range strings.Split(s, ",") {
		if i := enumIndex(t, part); i > 0 {
			mask |= 1 << uint(i-1)
		}
	}
	return mask
}

// EnumIndex is an ENUM column value's position (its value in a numeric context), 0 for ”.
func EnumIndex(t *ColType, s string) int { return enumIndex(t, s) }

// toJSONCol validates and normalizes a JSON document. Invalid JSON is always an error (3140),
// whatever the sql_mode, as in MySQL.
func (st *convState) toJSONCol(v Value) (Value, error) {
	var s string
	switch v.K {
	case KindString, KindBytes:
		s = v.S
	case KindInt, KindUint, KindFloat, KindDecimal:
		s = ToString(v)
	default:
		s = JSONText(ToString(v))
	}
	if !utf8.ValidString(s) {
		return Null, sqlerr.New(sqlerr.ErrInvalidJSONCharset, "Cannot create a JSON value from a string with CHARACTER SET 'binary'.")
	}
	n, err := NormalizeJSON(s)
	if err != nil {
		var je *ErrInvalidJSON
		errors.As(err, &je)
		return Null, sqlerr.New(sqlerr.ErrInvalidJSONText, "Invalid JSON text: \"%s\" at position %d in value for column '%s'.", je.Msg, je.Pos, st.cc.Column)
	}
	return NewString(n), nil
}
