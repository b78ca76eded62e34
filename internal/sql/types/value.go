// Package types owns Kiln's SQL values and column types: the Value every layer passes around, MySQL's
// conversion, comparison and arithmetic rules, collations, and the two storage encodings (the
// order-preserving key encoding and the row encoding).
//
// Invariants:
//   - EncodeKey is order-preserving: bytes.Compare of two encodings equals Compare of the values under
//     the column's collation, with NULL first.
//   - DecodeRow(EncodeRow(v)) == v for every value Convert can produce for the column's type.
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

// IsNull reports whether v is SQL NULL.
func (v Value) IsNull() bool { return v.K == KindNull }

// U returns the unsigned value of a KindUint.
func (v Value) U() uint64 { return uint64(v.I) }
