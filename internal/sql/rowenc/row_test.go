package rowenc

import (
	"math/rand"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
)

func randRow(t testing.TB, r *rand.Rand) ([]uint32, []types.Value) {
	n := r.Intn(len(keyTypes))
	ids := make([]uint32, n)
	vals := make([]types.Value, n)
	for i := range vals {
		ids[i] = uint32(i*3 + r.Intn(3))
		ct := keyTypes[r.Intn(len(keyTypes))]
		vals[i] = randValue(t, r, ct)
	}
	if n > 0 && r.Intn(4) == 0 {
		vals[0] = decV("123456789012345678901234567890.123456789", 9) // big coefficient
	}
	return ids, vals
}

func TestRowRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for iter := 0; iter < 2000; iter++ {
		ids, vals := randRow(t, r)
		prefix := []byte("prefix")
		b := AppendRow(prefix, ids, vals)
		b = b[len(prefix):]
		colPos := make([]int, 200)
		for i := range colPos {
			colPos[i] = -1
		}
		for i, id := range ids {
			colPos[id] = i
		}
		out := make([]types.Value, len(vals))
		if err := DecodeRow(b, colPos, out); err != nil {
			t.Fatalf("DecodeRow: %v", err)
		}
		for i := range vals {
			if !sameValue(out[i], vals[i]) {
				t.Fatalf("column %d: got %#v want %#v", ids[i], out[i], vals[i])
			}
		}
		// The decoded strings must not alias the input buffer.
		for i := range b {
			b[i] = 0xEE
		}
		for i := range vals {
			if !sameValue(out[i], vals[i]) {
				t.Fatalf("column %d aliases the row buffer", ids[i])
			}
		}
	}
}

func TestRowProjectionAndDefaults(t *testing.T) {
	ids := []uint32{1, 2, 5, 9}
	vals := []types.Value{types.NewInt(-7), types.NewString("héllo"), types.Null, types.NewBytes("\x00bin")}
	b := AppendRow(nil, ids, vals)
	// Only columns 2 and 9 wanted; column 7 (added later) keeps its default; 5 is NULL.
	colPos := []int{-1, -1, 0, -1, -1, 2, -1, 1, -1, 3}
	out := []types.Value{types.Null, types.NewInt(42), types.NewInt(1), types.Null}
	if err := DecodeRow(b, colPos, out); err != nil {
		t.Fatal(err)
	}
	want := []types.Value{types.NewString("héllo"), types.NewInt(42), types.Null, types.NewBytes("\x00bin")}
	for i := range want {
		if !sameValue(out[i], want[i]) {
			t.Errorf("out[%d] = %#v, want %#v", i, out[i], want[i])
		}
	}
	// Unknown (dropped) ids beyond colPos are skipped.
	if err := DecodeRow(b, []int{-1, 0}, out[:1]); err != nil || out[0].I != -7 {
		t.Errorf("short colPos: %v %#v", err, out[0])
	}
	// A position beyond out is an error, not a panic.
	if err := DecodeRow(b, []int{-1, 5}, out[:1]); err == nil {
		t.Error("position out of range accepted")
	}
}

func TestRowCorrupt(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	colPos := make([]int, 64)
	for i := range colPos {
		colPos[i] = i % 8
	}
	out := make([]types.Value, 8)
	ids, vals := []uint32{0, 1, 2, 3, 4, 5}, []types.Value{types.NewInt(1), types.NewString("abc"), decV("1.25", 2), types.NewFloat(2.5), dt("2024-01-02 03:04:05.123456"), durV("-1:00:00")}
	good := AppendRow(nil, ids, vals)
	for i := 0; i < len(good); i++ {
		if err := DecodeRow(good[:i], colPos, out); err == nil {
			t.Errorf("truncated row of %d bytes accepted", i)
		}
	}
	if err := DecodeRow(append(append([]byte{}, good...), 0), colPos, out); err == nil {
		t.Error("trailing byte accepted")
	}
	for iter := 0; iter < 100000; iter++ {
		b := append([]byte{}, good...)
		switch r.Intn(3) {
		case 0:
			b[r.Intn(len(b))] = byte(r.Intn(256))
		case 1:
			b = make([]byte, r.Intn(40))
			r.Read(b)
			if len(b) > 0 {
				b[0] = rowVersion
			}
		default:
			for k := 0; k < 3; k++ {
				b[r.Intn(len(b))] ^= byte(1 << uint(r.Intn(8)))
			}
		}
		_ = DecodeRow(b, colPos, out) // must not panic
	}
}

func FuzzDecodeRow(f *testing.F) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 20; i++ {
		ids, vals := randRow(f, r)
		f.Add(AppendRow(nil, ids, vals))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 1, 0, 5, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		colPos := make([]int, 128)
		for i := range colPos {
			colPos[i] = i%17 - 1
		}
		out := make([]types.Value, 16)
		if err := DecodeRow(b, colPos, out); err != nil {
			return
		}
		for i := range out {
			_ = types.AppendText(nil, out[i]) // decoded values are usable
		}
	})
}

func benchRow() ([]uint32, []types.Value) {
	return []uint32{1, 2, 3, 4, 5, 6}, []types.Value{
		types.NewInt(123456), types.NewString("alice@example.com"), types.NewInt(-5), types.NewString("some longer description text"),
		types.NewDatetime(types.PackTime(2024, 5, 6, 7, 8, 9, 0), 0), types.NewFloat(3.25),
	}
}

func BenchmarkAppendRow(b *testing.B) {
	ids, vals := benchRow()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendRow(buf[:0], ids, vals)
	}
}

func BenchmarkDecodeRow(b *testing.B) {
	ids, vals := benchRow()
	row := AppendRow(nil, ids, vals)
	colPos := []int{-1, 0, 1, 2, 3, 4, 5}
	out := make([]types.Value, 6)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := DecodeRow(row, colPos, out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRowInts(b *testing.B) {
	ids, vals := benchRow()
	row := AppendRow(nil, ids, vals)
	colPos := []int{-1, 0, -1, 1, -1, 2, 3}
	out := make([]types.Value, 4)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := DecodeRow(row, colPos, out); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeRowArena: rows decoded one after another into one Arena (the input buffer reused, as
// the engine reuses its buffers) keep their own values, equal to DecodeRow's, and a scan allocates
// string storage per chunk, not per row.
func TestDecodeRowArena(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	colPos := make([]int, 200)
	var ar Arena
	type decoded struct {
		ids  []uint32
		vals []types.Value
		out  []types.Value
	}
	var all []decoded
	buf := make([]byte, 0, 1<<16)
	for iter := 0; iter < 500; iter++ {
		ids, vals := randRow(t, r)
		buf = AppendRow(buf[:0], ids, vals)
		for i := range colPos {
			colPos[i] = -1
		}
		for i, id := range ids {
			colPos[id] = i
		}
		out := make([]types.Value, len(vals))
		if err := DecodeRowArena(buf, colPos, out, &ar); err != nil {
			t.Fatalf("DecodeRowArena: %v", err)
		}
		all = append(all, decoded{ids, vals, out})
	}
	for n, d := range all {
		for i := range d.vals {
			if !sameValue(d.out[i], d.vals[i]) {
				t.Fatalf("row %d column %d: got %#v want %#v", n, d.ids[i], d.out[i], d.vals[i])
			}
		}
	}

	row := AppendRow(nil, []uint32{0, 1, 2}, []types.Value{types.NewInt(1), types.NewString("a string of some length"), types.NewString("pad")})
	out := make([]types.Value, 3)
	var scan Arena
	allocs := testing.AllocsPerRun(10, func() {
		for i := 0; i < 100; i++ {
			if err := DecodeRowArena(row, []int{0, 1, 2}, out, &scan); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs > 10 {
		t.Errorf("100 rows took %.0f allocations, want at most 10 (one per chunk)", allocs)
	}
	if scan.last > maxArenaChunk {
		t.Errorf("chunk of %d bytes, want at most %d", scan.last, maxArenaChunk)
	}
}
