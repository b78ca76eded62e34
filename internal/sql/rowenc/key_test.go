package rowenc

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
)

var keyTypes = []*types.ColType{
	tTiny, tUTiny, tShort, tMedium, tInt, tUInt, tBig, tUBig, tYear, tBit8,
	tFloat, tDouble, tDouble72,
	tDec102, tDec52, tDec300, tDec6530,
	tVarchar64, tChar5, tCharBin5, tBinary4, tVarbin5, tBlob, tText,
	strCol(mysql.TypeVarchar, 64, "utf8mb4_bin"),
	strCol(mysql.TypeVarchar, 64, "utf8mb4_general_ci"),
	strCol(mysql.TypeVarchar, 64, "utf8mb4_unicode_ci"),
	strCol(mysql.TypeVarchar, 64, "utf8mb4_0900_bin"),
	strCol(mysql.TypeVarchar, 64, "latin1_swedish_ci"),
	strCol(mysql.TypeVarchar, 64, "latin1_bin"),
	strCol(mysql.TypeVarchar, 64, "utf8mb3_general_ci"),
	strCol(mysql.TypeVarchar, 64, "ascii_general_ci"),
	tDate, tDatetime, tDatetime3, tDatetime6, tTimestamp, tTime, tTime2,
}

func compareNullFirst(a, b types.Value, coll *types.Collation) int {
	switch {
	case a.K == types.KindNull && b.K == types.KindNull:
		return 0
	case a.K == types.KindNull:
		return -1
	case b.K == types.KindNull:
		return 1
	}
	return types.Compare(a, b, coll)
}

// TestKeyOrder is the core invariant: key byte order is value order under the column collation.
func TestKeyOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, ct := range keyTypes {
		t.Run(ct.SQL()+"/"+ct.Collation, func(t *testing.T) {
			vals := make([]types.Value, 150)
			keys := make([][]byte, len(vals))
			for i := range vals {
				vals[i] = randValue(t, r, ct)
				keys[i] = AppendKey(nil, vals[i], ct)
			}
			coll := ct.Coll()
			for i := range vals {
				for j := range vals {
					want := compareNullFirst(vals[i], vals[j], coll)
					got := sign(bytes.Compare(keys[i], keys[j]))
					if got != want {
						t.Fatalf("%q vs %q: key order %d, Compare %d\nkeys %x\n     %x", vals[i].String(), vals[j].String(), got, want, keys[i], keys[j])
					}
				}
			}
		})
	}
}

// TestKeyDecode checks DecodeKey round trips, including through composite keys.
func TestKeyDecode(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, ct := range keyTypes {
		for i := 0; i < 200; i++ {
			v := randValue(t, r, ct)
			tail := randValue(t, r, tBig)
			key := AppendKey(nil, v, ct)
			key = AppendKey(key, tail, tBig)
			got, rest, err := DecodeKey(key, ct)
			if !KeyReversible(ct) && v.K != types.KindNull {
				if !errors.Is(err, ErrKeyNotReversible) {
					t.Fatalf("%s: want ErrKeyNotReversible, got %v", ct.SQL(), err)
				}
			} else {
				if err != nil {
					t.Fatalf("%s: DecodeKey(%q): %v", ct.SQL(), v.String(), err)
				}
				if !sameValue(got, v) {
					t.Fatalf("%s: DecodeKey(%q) = %#v, want %#v", ct.SQL(), v.String(), got, v)
				}
			}
			// The rest is positioned after the column even when the string is not reversible.
			got2, rest2, err := DecodeKey(rest, tBig)
			if err != nil || !sameValue(got2, tail) || len(rest2) != 0 {
				t.Fatalf("%s: tail after %q: %v %v %x", ct.SQL(), v.String(), got2, err, rest2)
			}
		}
	}
}

func TestKeySpecifics(t *testing.T) {
	// 1.50 and 1.5 encode identically; -0 and 0 too.
	if !bytes.Equal(AppendKey(nil, decV("1.50", 2), tDec102), AppendKey(nil, decV("1.5", 1), tDec102)) {
		t.Error("1.50 and 1.5 differ")
	}
	if !bytes.Equal(AppendKey(nil, types.NewFloat(0), tDouble), AppendKey(nil, types.NewFloat(-1*0.0*-1), tDouble)) {
		t.Error("0 and -0 differ")
	}
	if got := AppendKey(nil, types.Null, tInt); !bytes.Equal(got, []byte{0}) {
		t.Errorf("NULL key %x", got)
	}
	// Values of other kinds are converted.
	if !bytes.Equal(AppendKey(nil, types.NewString("42"), tInt), AppendKey(nil, types.NewInt(42), tInt)) {
		t.Error("string '42' key differs from 42")
	}
	// PAD SPACE: trailing spaces ignored; a tab sorts before the padding.
	c := strCol(mysql.TypeVarchar, 10, "utf8mb4_bin")
	k := func(s string) []byte { return AppendKey(nil, types.NewString(s), c) }
	if !bytes.Equal(k("a"), k("a   ")) {
		t.Error("PAD SPACE trailing spaces")
	}
	if !(bytes.Compare(k("a\t"), k("a")) < 0 && bytes.Compare(k("a"), k("a!")) < 0 && bytes.Compare(k("a \t"), k("a")) < 0 && bytes.Compare(k("a b"), k("a")) > 0) {
		t.Error("PAD SPACE ordering")
	}
	// Binary strings with 0x00 and prefixes.
	kb := func(s string) []byte { return AppendKey(nil, types.NewBytes(s), tBlob) }
	if !(bytes.Compare(kb("a"), kb("a\x00")) < 0 && bytes.Compare(kb("a\x00"), kb("a\x00\x00")) < 0 && bytes.Compare(kb("a\x00\xff"), kb("a\x01")) < 0) {
		t.Error("binary escaping order")
	}
	// Case-insensitive keys are equal for 'abc' and 'ABC'.
	if !bytes.Equal(AppendKey(nil, types.NewString("abc"), tVarchar64), AppendKey(nil, types.NewString("ÀBC"), tVarchar64)) {
		t.Error("0900_ai_ci key case/accent")
	}
	// Corrupt keys error out.
	for _, b := range [][]byte{{}, {1}, {1, 2, 3}, {7}} {
		if _, _, err := DecodeKey(b, tBig); err == nil {
			t.Errorf("DecodeKey(%x) accepted", b)
		}
	}
	if _, _, err := DecodeKey([]byte{3, 0x80}, tDec102); err == nil {
		t.Error("truncated decimal key accepted")
	}
}

func BenchmarkAppendKeyInt(b *testing.B) {
	buf := make([]byte, 0, 64)
	v := types.NewInt(123456789)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendKey(buf[:0], v, tBig)
	}
}

func BenchmarkAppendKeyString0900(b *testing.B) {
	buf := make([]byte, 0, 128)
	v := types.NewString("The Quick Brown Fox jumps")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendKey(buf[:0], v, tVarchar64)
	}
}

func BenchmarkAppendKeyStringBin(b *testing.B) {
	buf := make([]byte, 0, 128)
	v := types.NewBytes("The Quick Brown Fox jumps")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendKey(buf[:0], v, tBlob)
	}
}

func BenchmarkAppendKeyDecimal(b *testing.B) {
	buf := make([]byte, 0, 64)
	v := decV("12345.67", 2)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendKey(buf[:0], v, tDec102)
	}
}
