package exec

import (
	"bytes"
	"slices"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// linkTable is LinkBench's linktable, latin1, with a unique key added over a nullable decimal.
func linkTable() *catalog.Table {
	u := types.ColType{Tp: mysql.TypeLonglong, Unsigned: true}
	tbl := &catalog.Table{ID: 70, Name: "linktable", Columns: []*catalog.Column{
		{ID: 1, Name: "id1", Type: u, NotNull: true},
		{ID: 2, Name: "id2", Type: u, NotNull: true},
		{ID: 3, Name: "link_type", Type: u, NotNull: true},
		{ID: 4, Name: "visibility", Type: types.ColType{Tp: mysql.TypeTiny}, NotNull: true},
		{ID: 5, Name: "data", Type: types.ColType{Tp: mysql.TypeVarchar, Len: 255, Charset: "latin1", Collation: "latin1_swedish_ci"}, NotNull: true},
		{ID: 6, Name: "time", Type: u, NotNull: true},
		{ID: 7, Name: "amount", Type: types.ColType{Tp: mysql.TypeNewDecimal, Len: 20, Frac: 4}},
	}, Indexes: []*catalog.Index{
		{ID: 1, Name: "PRIMARY", Primary: true, Unique: true, Columns: []catalog.IndexColumn{{Col: 3}, {Col: 1}, {Col: 2}}},
		{ID: 2, Name: "id1_type", Columns: []catalog.IndexColumn{{Col: 1}, {Col: 3}, {Col: 4}, {Col: 6}, {Col: 2}, {Col: 5}}},
		{ID: 3, Name: "u_amount", Unique: true, Columns: []catalog.IndexColumn{{Col: 7}, {Col: 5, Prefix: 3}}},
	}}
	tbl.Init()
	return tbl
}

func linkRows() [][]types.Value {
	d := decimal.RequireFromString("12345678901234.5678")
	return [][]types.Value{
		{types.NewUint(1), types.NewUint(2), types.NewUint(123456789), types.NewInt(1), types.NewString("abc"), types.NewUint(1700000000000), types.Null},
		{types.NewUint(1 << 40), types.NewUint(7), types.NewUint(1), types.NewInt(0), types.NewString("é€ \u0081 trailing  "), types.NewUint(0), types.NewDecimal(d, 4)},
		{types.NewUint(0), types.NewUint(0), types.NewUint(0), types.NewInt(-1), types.NewString(""), types.NewUint(5), types.NewDecimal(decimal.New(-15, -1), 1)},
	}
}

// TestRowKeysEncoding: the keys and values the row writes build (sized up front) are byte for byte
// what building them from empty buffers, value by value, gives.
func TestRowKeysEncoding(t *testing.T) {
	tbl := linkTable()
	pk := tbl.Indexes[0]
	for ri, row := range linkRows() {
		want := rowenc.IndexPrefix(nil, tbl.ID, pk.ID)
		for i, ci := range pk.Offsets {
			want, _ = keyPart(want, row[ci], tbl, pk, i)
		}
		if got := PrimaryKey(nil, tbl, row); !bytes.Equal(got, want) {
			t.Errorf("row %d: PrimaryKey = %x, want %x", ri, got, want)
		}
		if got, want := EncodeRow(nil, tbl, row), rowenc.AppendRow(nil, tbl.ColIDs, row); !bytes.Equal(got, want) {
			t.Errorf("row %d: EncodeRow = %x, want %x", ri, got, want)
		}
		for _, ix := range tbl.Indexes[1:] {
			wantKey := rowenc.IndexPrefix(nil, tbl.ID, ix.ID)
			hasNull := false
			for i, ci := range ix.Offsets {
				hasNull = hasNull || row[ci].IsNull()
				wantKey, _ = keyPart(wantKey, row[ci], tbl, ix, i)
			}
			wantUnique := ix.Unique && !hasNull
			if !wantUnique {
				for i, ci := range pk.Offsets {
					wantKey, _ = keyPart(wantKey, row[ci], tbl, pk, i)
				}
			}
			// The value holds the index's columns, then the primary key's not among them.
			var ids []uint32
			var vals []types.Value
			for _, ci := range append(append([]int(nil), ix.Offsets...), pk.Offsets...) {
				if slices.Contains(ids, tbl.Columns[ci].ID) {
					continue
				}
				ids = append(ids, tbl.Columns[ci].ID)
				vals = append(vals, row[ci])
			}
			wantVal := rowenc.AppendRow(nil, ids, vals)
			key, val, unique := SecondaryKey(tbl, ix, row)
			if !bytes.Equal(key, wantKey) || !bytes.Equal(val, wantVal) || unique != wantUnique {
				t.Errorf("row %d, %s: SecondaryKey = %x, %x, %v; want %x, %x, %v", ri, ix.Name, key, val, unique, wantKey, wantVal, wantUnique)
			}
			// Entries written before (the primary key's columns repeated in full) decode to
			// the same values: readers take a value's columns by id.
			var oldIDs []uint32
			var oldVals []types.Value
			for _, ci := range append(append([]int(nil), ix.Offsets...), pk.Offsets...) {
				oldIDs = append(oldIDs, tbl.Columns[ci].ID)
				oldVals = append(oldVals, row[ci])
			}
			oldVal := rowenc.AppendRow(nil, oldIDs, oldVals)
			if ix.Name == "id1_type" && len(val) >= len(oldVal) {
				t.Errorf("row %d, %s: value %d bytes, %d with the primary key repeated", ri, ix.Name, len(val), len(oldVal))
			}
			got, err := DecodeRow(tbl, val)
			if err != nil {
				t.Fatal(err)
			}
			was, err := DecodeRow(tbl, oldVal)
			if err != nil {
				t.Fatal(err)
			}
			for _, ci := range append(append([]int(nil), ix.Offsets...), pk.Offsets...) {
				same := func(a, b types.Value) bool {
					if a.IsNull() || b.IsNull() {
						return a.IsNull() == b.IsNull()
					}
					return types.Compare(a, b, nil) == 0
				}
				if !same(got[ci], row[ci]) || !same(was[ci], row[ci]) {
					t.Errorf("row %d, %s: column %s decodes as %v (old form %v), want %v", ri, ix.Name, tbl.Columns[ci].Name, got[ci], was[ci], row[ci])
				}
			}
		}
	}
}

// TestRowKeysAllocations: a row's key and encoding are one allocation each, an index entry two (its
// key and its value), whatever the strings' lengths (a bulk INSERT builds them for every row).
func TestRowKeysAllocations(t *testing.T) {
	tbl := linkTable()
	for ri, row := range linkRows() {
		for _, c := range []struct {
			name string
			want float64
			fn   func()
		}{
			{"PrimaryKey", 1, func() { PrimaryKey(nil, tbl, row) }},
			{"EncodeRow", 1, func() { EncodeRow(nil, tbl, row) }},
			{"SecondaryKey", 2, func() { SecondaryKey(tbl, tbl.Indexes[1], row) }},
		} {
			if got := testing.AllocsPerRun(50, c.fn); got > c.want {
				t.Errorf("row %d: %s makes %v allocations, want %v", ri, c.name, got, c.want)
			}
		}
	}
}
