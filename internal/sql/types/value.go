// Package types owns Kiln's SQL values and column types: the Value every layer passes around, MySQL's
// conversion, comparison and arithmetic rules, time, JSON and collations. The builtin function
// library built on them is internal/sql/builtins; the storage encodings are internal/sql/rowenc.
// This package imports no other part of internal/sql.
//
// Invariants (the tests check each of them):
//   - Collation.Key(a) == Collation.Key(b) iff Collation.Compare(a, b) == 0, and Key order is
//     Compare order.
//
// Value conventions:
//   - KindDecimal and the time kinds carry their display scale / fsp in Frac.
//   - KindFloat uses Frac to remember how MySQL would print it: 0 prints the shortest round-trip
//     form (DOUBLE), FracFloat32 prints 6 significant digits (FLOAT columns), n > 0 prints exactly n
//     decimals (DOUBLE(M,D), FLOAT(M,D), PI()).
//   - Strings are UTF-8 whatever the column's charset: latin1 and ascii columns only restrict which
//     characters Convert accepts.
//
// Conversion choices:
//   - Convert(v, t, ConvertCtx{Strict, Column, Row}) returns the converted value, the warnings as
//     []sqlerr.Warning (each with its level: MySQL reports some truncations as Notes even in strict
//     mode) and, in strict mode, the *sqlerr.Error that aborts the statement. Row is 1-based as in
//     MySQL messages. Codes follow MySQL's Field::store: a number followed by garbage is 1265 (also
//     in strict mode), no number at all 1366, out of range 1264, too long 1406 (1265 when not
//     strict), bad temporal values 1292 in strict mode and 1265/1264 warnings otherwise.
//   - DOUBLE→integer conversions round half to even (MySQL calls rint()), as does ROUND() of a
//     DOUBLE; DECIMAL and string→integer conversions round half away from zero, as MySQL does.
//   - ToInt follows val_int(): strings contribute their leading integer only (CAST('1.9' AS
//     SIGNED) = 1 with a 1292 warning), while arithmetic uses a string's full numeric prefix as a
//     DOUBLE.
//   - Errors that reach clients are *sqlerr.Error: 1690 for arithmetic overflow (the expression in
//     the message is rebuilt from the operand values, not the SQL text).
//
// Approximations (to be made exact later):
//   - The _ci collations are weight approximations, not MySQL's tables: simple upper-casing plus
//     accent stripping (the base letter of the NFD decomposition; NFKD for the UCA-based ones, so
//     'ﬁ' = 'fi' and full-width letters equal ASCII). utf8mb4_0900_ai_ci and utf8mb4_unicode_ci
//     order ASCII as the UCA does (controls ignorable, whitespace < punctuation < digits < letters)
//     and every other character after all of ASCII by its folded code point; their only
//     expansions are ß → ss, æ → ae, œ → oe and the NFKD ones. utf8mb4_general_ci compares
//     upper-cased code points (so '_' > 'A', as in MySQL) and maps supplementary characters to
//     U+FFFD. latin1_swedish_ci puts Å, Ä/Æ, Ö/Ø after Z and treats Ü as Y. PAD SPACE vs NO PAD
//     is exact: PAD SPACE compares as if the shorter string were padded with spaces ('a\t' < 'a').
//   - Comparing a TIME with a DATE/DATETIME, or converting a TIME to a DATETIME, uses the local
//     current date.
//   - Functions that compare strings (INSTR, LOCATE, POSITION, STRCMP, GREATEST, LEAST) use
//     utf8mb4_0900_ai_ci unless LookupFuncCollation supplies the resolved collation; case-insensitive
//     LOCATE compares candidate substrings of the needle's character length.
//   - Datetime literals with time zone offsets and MySQL's more exotic relaxed formats (a time part
//     glued to an 8-digit date, trailing garbage accepted with a warning) are rejected.
//   - TIMESTAMP range checks take the value as UTC: the session time zone is the executor's.
package types

import (
	"github.com/shopspring/decimal"
)

// Kind says which field of a Value holds it.
type Kind uint8

const (
	KindNull     Kind = iota
	KindInt           // I: int64
	KindUint          // I: uint64 bits (use U())
	KindFloat         // F: float64 (FLOAT columns keep float32 precision in F)
	KindDecimal       // D: exact decimal; Frac: the scale to display
	KindString        // S: character string (the column's collation compares it)
	KindBytes         // S: binary string (compares bytewise)
	KindDate          // I: packed date (see PackTime), time part zero
	KindDatetime      // I: packed datetime; Frac: fsp (0-6). Also TIMESTAMP.
	KindDuration      // I: TIME as signed microseconds; Frac: fsp
)

// FracFloat32 in a KindFloat's Frac marks a FLOAT (single precision) value, which MySQL prints with
// 6 significant digits.
const FracFloat32 = -1

// Value is one SQL value. The zero Value is NULL.
type Value struct {
	K    Kind
	Frac int8 // display scale for KindDecimal, fractional seconds precision for time kinds
	I    int64
	F    float64
	S    string
	D    decimal.Decimal
}

// Null is the SQL NULL.
var Null = Value{}

func NewInt(i int64) Value     { return Value{K: KindInt, I: i} }
func NewUint(u uint64) Value   { return Value{K: KindUint, I: int64(u)} }
func NewFloat(f float64) Value { return Value{K: KindFloat, F: f} }
func NewString(s string) Value { return Value{K: KindString, S: s} }
func NewBytes(s string) Value  { return Value{K: KindBytes, S: s} }
func NewDecimal(d decimal.Decimal, frac int) Value {
	return Value{K: KindDecimal, D: d, Frac: int8(frac)}
}

// NewFloat32 returns a FLOAT (single precision) value.
func NewFloat32(f float32) Value { return Value{K: KindFloat, F: float64(f), Frac: FracFloat32} }

// NewDate returns a DATE from a packed value (see PackTime); any time part is dropped.
func NewDate(p int64) Value { return Value{K: KindDate, I: p &^ (1<<41 - 1)} }

// NewDatetime returns a DATETIME/TIMESTAMP from a packed value with fsp fractional digits.
func NewDatetime(p int64, fsp int) Value {
	return Value{K: KindDatetime, I: p, Frac: int8(ClampFsp(fsp))}
}

// NewDuration returns a TIME of micros microseconds with fsp fractional digits.
func NewDuration(micros int64, fsp int) Value {
	return Value{K: KindDuration, I: micros, Frac: int8(ClampFsp(fsp))}
}

// IsNull reports whether v is SQL NULL.
func (v Value) IsNull() bool { return v.K == KindNull }

// U returns the unsigned value of a KindUint.
func (v Value) U() uint64 { return uint64(v.I) }

// String renders v as the text protocol would, NULL as "NULL".
func (v Value) String() string {
	if v.K == KindNull {
		return "NULL"
	}
	if v.K == KindString || v.K == KindBytes {
		return v.S
	}
	var buf [64]byte
	return string(AppendText(buf[:0], v))
}

// ClampFsp limits a fractional-seconds precision to 0..6.
func ClampFsp(fsp int) int {
	if fsp < 0 {
		return 0
	}
	if fsp > 6 {
		return 6
	}
	return fsp
}
