package exec

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// TestSortByCollationKeys: sorting by precomputed collation keys (more than 8 rows, several keys,
// DESC, NULLs and non-string values in a string-collated column) gives exactly the stable order of
// comparing the values themselves.
func TestSortByCollationKeys(t *testing.T) {
	ci, _ := types.LookupCollation("utf8mb4_0900_ai_ci")
	pad, _ := types.LookupCollation("utf8mb4_general_ci")
	words := []string{"a", "A", "b", "B ", "résumé", "RESUME", "straße", "STRASSE", "", "  ", "z", "Zz", "中", "a\x01"}
	r := rand.New(rand.NewSource(3))
	for n := 0; n < 120; n += 7 {
		// Odd rounds mix numbers into the string columns (the stable merge sort's case); even
		// rounds hold strings and NULLs only (sorted by pdqsort with the input position last).
		mixed := n%2 == 1
		rows := make([][]types.Value, n)
		for i := range rows {
			pick := func() types.Value {
				switch r.Intn(8) {
				case 0:
					return types.Null
				case 1:
					if !mixed {
						return types.Null
					}
					return types.NewInt(int64(r.Intn(3)))
				default:
					return types.NewString(words[r.Intn(len(words))])
				}
			}
			rows[i] = []types.Value{pick(), pick(), types.NewInt(int64(i))}
		}
		for _, keys := range [][]SortKey{{{Idx: 0}}, {{Idx: 0, Desc: true}, {Idx: 1}}, {{Idx: 1}, {Idx: 0, Desc: true}, {Idx: 2, Desc: true}}} {
			checkStableSort(t, fmt.Sprintf("n=%d", n), rows, keys, []*types.Collation{ci, pad, nil})
		}
	}
}

// TestDistinctByCollation: DISTINCT keeps the first of values equal under the column's collation.
func TestDistinctByCollation(t *testing.T) {
	ci, _ := types.LookupCollation("utf8mb4_0900_ai_ci")
	pad, _ := types.LookupCollation("utf8mb4_general_ci")
	vals := []string{"a", "A", "b", "résumé", "RESUME", "a ", "B", "x"}
	var rows [][]types.Value
	for _, v := range vals {
		rows = append(rows, []types.Value{types.NewString(v), types.NewString(v)})
	}
	for _, c := range []struct {
		colls []*types.Collation
		n     int
		want  []string
	}{
		{[]*types.Collation{ci, ci}, 1, []string{"a", "b", "résumé", "a ", "x"}},
		{[]*types.Collation{pad, pad}, 1, []string{"a", "b", "résumé", "x"}},
		{[]*types.Collation{nil, nil}, 1, vals},
		{[]*types.Collation{ci, nil}, 2, vals},
	} {
		env := &expr.Env{Sess: noSession{}, Ctx: context.Background()}
		d := &distinctIter{src: &sliceIter{rows: rows}, env: env, n: c.n, seen: map[string]struct{}{}, colls: c.colls}
		var got []string
		for {
			r, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if r == nil {
				break
			}
			got = append(got, r[0].S)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("colls %v n=%d: got %q, want %q", c.colls, c.n, got, c.want)
		}
	}
}

// TestRowSlab: slab rows are zeroed, distinct and capped, so appending to one never writes into
// its neighbour; chunks grow so that many rows take few allocations.
func TestRowSlab(t *testing.T) {
	var s rowSlab
	var rows [][]types.Value
	for i := 0; i < 200; i++ {
		r := s.get(3)
		if len(r) != 3 || cap(r) != 3 {
			t.Fatalf("row %d: len %d cap %d", i, len(r), cap(r))
		}
		for j := range r {
			if r[j] != (types.Value{}) {
				t.Fatalf("row %d not zeroed", i)
			}
			r[j] = types.NewInt(int64(i*10 + j))
		}
		rows = append(rows, r)
	}
	_ = append(rows[0], types.NewInt(-1))
	for i, r := range rows {
		for j := range r {
			if r[j].I != int64(i*10+j) {
				t.Fatalf("row %d col %d = %d", i, j, r[j].I)
			}
		}
	}
	var fresh rowSlab
	if n := testing.AllocsPerRun(1, func() {
		fresh = rowSlab{}
		for i := 0; i < 1000; i++ {
			fresh.get(4)
		}
	}); n > 25 {
		t.Errorf("1000 rows took %.0f allocations", n)
	}
}

// TestSortDistinct: a DISTINCT done by the sort after it (sortIter.distinct, for ORDER BY over the
// selected string columns) returns exactly the rows, in exactly the order, of distinctIter
// followed by the sort: the first of values equal under each column's collation, stably sorted.
// Rows of 1 to 2 columns, ASC and DESC keys, NULLs, values equal under a _ci collation but
// different in bytes, short inputs (compared row by row) and long ones (by collation keys).
func TestSortDistinct(t *testing.T) {
	ci, _ := types.LookupCollation("utf8mb4_0900_ai_ci")
	pad, _ := types.LookupCollation("utf8mb4_general_ci")
	words := []string{"a", "A", "á", "b", "B ", "b", "résumé", "RESUME", "straße", "STRASSE", "", " ", "z", "Zz"}
	r := rand.New(rand.NewSource(5))
	for n := 0; n < 90; n += 3 {
		rows := make([][]types.Value, n)
		for i := range rows {
			pick := func() types.Value {
				if r.Intn(9) == 0 {
					return types.Null
				}
				return types.NewString(words[r.Intn(len(words))])
			}
			rows[i] = []types.Value{pick(), pick(), types.NewInt(int64(i))} // column 2: the input position
		}
		for _, c := range []struct {
			n     int
			keys  []SortKey
			colls []*types.Collation
		}{
			{1, []SortKey{{Idx: 0}}, []*types.Collation{ci, pad, nil}},
			{1, []SortKey{{Idx: 0, Desc: true}}, []*types.Collation{pad, ci, nil}},
			{1, []SortKey{{Idx: 0}}, []*types.Collation{nil, nil, nil}},
			{2, []SortKey{{Idx: 1}, {Idx: 0, Desc: true}}, []*types.Collation{ci, pad, nil}},
			{2, []SortKey{{Idx: 0}, {Idx: 1}}, []*types.Collation{ci, nil, nil}},
		} {
			env := &expr.Env{Sess: noSession{}, Ctx: context.Background()}
			want := drain(t, &sortIter{env: env, keys: c.keys, colls: c.colls, limit: -1,
				src: &distinctIter{src: &sliceIter{rows: rows}, env: env, n: c.n, seen: map[string]struct{}{}, colls: c.colls}})
			got := drain(t, &sortIter{env: env, keys: c.keys, colls: c.colls, limit: -1, distinct: c.n,
				src: &sliceIter{rows: slices.Clone(rows)}})
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d distinct=%d keys=%v: sort-distinct returned rows %v, distinct+sort %v", n, c.n, c.keys, got, want)
			}
		}
	}
}

// drain returns the input positions (column 2) of the rows it yields.
func drain(t *testing.T, it RowIter) []int64 {
	t.Helper()
	var out []int64
	for {
		r, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			return out
		}
		out = append(out, r[2].I)
	}
}

// TestSortByteOrdered: when every value of a _ci sort column is byte-ordered under its collation
// (sysbench's digits and dashes), the sort compares bytes instead of computing collation keys
// (sortIter.byteOrderColls); the order, and the ties a sort-DISTINCT drops, are exactly those of
// the collation keys. One value outside the byte-ordered set ('A', 'é') sends the whole sort back
// to the keys.
func TestSortByteOrdered(t *testing.T) {
	ci, _ := types.LookupCollation("utf8mb4_0900_ai_ci")
	pad, _ := types.LookupCollation("utf8mb4_general_ci")
	r := rand.New(rand.NewSource(11))
	word := func(alpha string) types.Value {
		if r.Intn(10) == 0 {
			return types.Null
		}
		return randString(r, alpha, 3)
	}
	for round := 0; round < 60; round++ {
		n := 8 + r.Intn(60)
		alpha := "0129-az "
		rows := make([][]types.Value, n)
		for i := range rows {
			rows[i] = []types.Value{word(alpha), word(alpha), types.NewInt(int64(i))}
		}
		if round%3 == 2 {
			rows[r.Intn(n)][0] = types.NewString([]string{"A", "é", "a ", "Z9"}[r.Intn(4)])
		}
		for _, c := range []struct {
			distinct int
			keys     []SortKey
			colls    []*types.Collation
		}{
			{1, []SortKey{{Idx: 0}}, []*types.Collation{ci, pad, nil}},
			{1, []SortKey{{Idx: 0, Desc: true}}, []*types.Collation{pad, ci, nil}},
			{0, []SortKey{{Idx: 1}, {Idx: 0, Desc: true}}, []*types.Collation{ci, pad, nil}},
			{2, []SortKey{{Idx: 0}, {Idx: 1}}, []*types.Collation{ci, ci, nil}},
		} {
			// The reference: a stable sort by collation keys, then the first of each run of
			// rows equal on the first `distinct` columns.
			key := func(row []types.Value, k SortKey) []byte {
				v := row[k.Idx]
				if v.IsNull() {
					return nil
				}
				return c.colls[k.Idx].Key([]byte{1}, v.S)
			}
			cmp := func(a, b []types.Value) int {
				for _, k := range c.keys {
					x := bytes.Compare(key(a, k), key(b, k))
					if k.Desc {
						x = -x
					}
					if x != 0 {
						return x
					}
				}
				return 0
			}
			want := slices.Clone(rows)
			slices.SortStableFunc(want, cmp)
			if c.distinct > 0 {
				var kept [][]types.Value
				for i, row := range want {
					if i > 0 && cmp(want[i-1], row) == 0 {
						continue
					}
					kept = append(kept, row)
				}
				want = kept
			}
			env := &expr.Env{Sess: noSession{}, Ctx: context.Background()}
			got := drain(t, &sortIter{env: env, keys: c.keys, colls: c.colls, limit: -1, distinct: c.distinct,
				src: &sliceIter{rows: slices.Clone(rows)}})
			var wantPos []int64
			for _, row := range want {
				wantPos = append(wantPos, row[2].I)
			}
			if !slices.Equal(got, wantPos) {
				t.Fatalf("round %d keys=%v distinct=%d: got rows %v, want %v", round, c.keys, c.distinct, got, wantPos)
			}
		}
	}
}

// TestSortByPrefix: a first key of byte-compared strings sorts by its eight-byte prefixes, then by
// the rows (sortByPrefix); the order is exactly the stable order of comparing the rows. Strings of
// 0-12 bytes over an alphabet with NUL and a high byte share long prefixes, so both the prefix
// and the fallback decide.
func TestSortByPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	const alpha = "\x00ab\xff"
	str := func() types.Value { return randString(r, alpha, 12) }
	for round := 0; round < 200; round++ {
		n := 8 + r.Intn(60)
		rows := make([][]types.Value, n)
		for i := range rows {
			rows[i] = []types.Value{str(), str(), types.NewInt(int64(i))}
		}
		keys := [][]SortKey{{{Idx: 0}}, {{Idx: 0, Desc: true}}, {{Idx: 0}, {Idx: 1, Desc: true}}, {{Idx: 0, Desc: true}, {Idx: 1}}}[round%4]
		checkStableSort(t, fmt.Sprintf("round %d", round), rows, keys, []*types.Collation{nil, nil, nil})
	}
}

// checkStableSort sorts rows (whose column 2 numbers them) with sortIter.sortRows and fails unless
// the order is exactly the stable order of compareRows.
func checkStableSort(t *testing.T, label string, rows [][]types.Value, keys []SortKey, colls []*types.Collation) {
	t.Helper()
	want := slices.Clone(rows)
	slices.SortStableFunc(want, func(a, b []types.Value) int { return compareRows(a, b, keys, colls) })
	env := &expr.Env{Sess: noSession{}, Ctx: context.Background()}
	si := &sortIter{env: env, keys: keys, colls: colls, rows: slices.Clone(rows)}
	if err := si.sortRows(); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if types.ToString(si.rows[i][2]) != types.ToString(want[i][2]) {
			t.Fatalf("%s keys=%v: row %d is #%s (%q), want #%s (%q)", label, keys, i,
				types.ToString(si.rows[i][2]), si.rows[i][0].S, types.ToString(want[i][2]), want[i][0].S)
		}
	}
}

// randString is a string of 0-maxLen bytes drawn from alpha.
func randString(r *rand.Rand, alpha string, maxLen int) types.Value {
	b := make([]byte, r.Intn(maxLen+1))
	for i := range b {
		b[i] = alpha[r.Intn(len(alpha))]
	}
	return types.NewString(string(b))
}

// A sort's buffers are recycled at Close (sortSlices, prefixSlices): the rows a closed sort
// returned stay as they were while later sorts reuse its buffers, and a recycled buffer holds no
// row.
func TestSortBuffersRecycled(t *testing.T) {
	env := &expr.Env{Sess: noSession{}, Ctx: context.Background()}
	run := func(vals []string) [][]types.Value {
		t.Helper()
		var rows [][]types.Value
		for _, v := range vals {
			rows = append(rows, []types.Value{types.NewString(v)})
		}
		si := &sortIter{src: &sliceIter{rows: rows}, env: env, keys: []SortKey{{Idx: 0}}, colls: []*types.Collation{nil}, limit: -1}
		var out [][]types.Value
		for {
			r, err := si.Next()
			if err != nil {
				t.Fatal(err)
			}
			if r == nil {
				break
			}
			out = append(out, r)
		}
		si.Close()
		return out
	}
	var first []string
	for i := 0; i < 50; i++ {
		first = append(first, fmt.Sprintf("a%03d", 49-i))
	}
	got := run(first)
	for round := 0; round < 20; round++ {
		var vals []string
		for i := 0; i < 40+round; i++ {
			vals = append(vals, fmt.Sprintf("z%03d", (i*37+round)%97))
		}
		_ = run(vals)
	}
	for i, r := range got {
		if want := fmt.Sprintf("a%03d", i); r[0].S != want {
			t.Fatalf("row %d of the first sort is %q after later sorts, want %q", i, r[0].S, want)
		}
	}
	if p, ok := sortSlices.Get().(*[][]types.Value); ok {
		for i, r := range (*p)[:cap(*p)] {
			if r != nil {
				t.Fatalf("a recycled row buffer still points to a row at %d", i)
			}
		}
	}
}
