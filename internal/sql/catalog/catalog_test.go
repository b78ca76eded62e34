package catalog

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
)

var intType = types.ColType{Tp: mysql.TypeLong, Len: -1, Collation: "binary"}

// table builds t(a, b, c) with column ids 1, 3, 4 (2 was dropped), primary key (b) unless
// hidden, a unique index on (c) and a non-unique one on (a, c).
func table(hidden bool) *Table {
	t := &Table{ID: 101, DB: "d", Name: "t", NextColID: 5, NextIndexID: 4, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci", Version: 1}
	t.Columns = []*Column{
		{ID: 1, Name: "a", Type: intType, AutoInc: true},
		{ID: 3, Name: "B", Type: intType, NotNull: true},
		{ID: 4, Name: "c", Type: intType},
	}
	pk := &Index{ID: 1, Name: "PRIMARY", Primary: true, Unique: true, Columns: []IndexColumn{{Col: 3}}}
	if hidden {
		t.Columns = append(t.Columns, &Column{ID: 5, Name: "_rowid", Type: intType, Hidden: true, NotNull: true})
		t.NextColID = 6
		pk.Columns = []IndexColumn{{Col: 5}}
	}
	t.Indexes = []*Index{pk,
		{ID: 2, Name: "uc", Unique: true, Columns: []IndexColumn{{Col: 4}}},
		{ID: 3, Name: "ac", Columns: []IndexColumn{{Col: 1}, {Col: 4}}},
	}
	t.Init()
	return t
}

func TestTableInit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hidden   bool
		pkOff    []int
		colPos   []int
		colIDs   []uint32
		keyFlags []uint16 // by column offset
	}{
		{name: "declared primary key", pkOff: []int{1}, colPos: []int{-1, 0, -1, 1, 2}, colIDs: []uint32{1, 3, 4},
			keyFlags: []uint16{uint16(mysql.AutoIncrementFlag | mysql.MultipleKeyFlag), uint16(mysql.PriKeyFlag), uint16(mysql.UniqueKeyFlag)}},
		{name: "hidden row id", hidden: true, pkOff: []int{3}, colPos: []int{-1, 0, -1, 1, 2, 3}, colIDs: []uint32{1, 3, 4, 5},
			keyFlags: []uint16{uint16(mysql.AutoIncrementFlag | mysql.MultipleKeyFlag), 0, uint16(mysql.UniqueKeyFlag), uint16(mysql.PriKeyFlag)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := table(tc.hidden)
			if tb.HiddenPK != tc.hidden {
				t.Errorf("HiddenPK = %v, want %v", tb.HiddenPK, tc.hidden)
			}
			if !slices.Equal(tb.Primary().Offsets, tc.pkOff) {
				t.Errorf("primary Offsets = %v, want %v", tb.Primary().Offsets, tc.pkOff)
			}
			if got := tb.Indexes[2].Offsets; !slices.Equal(got, []int{0, 2}) {
				t.Errorf("index ac Offsets = %v, want [0 2]", got)
			}
			if !slices.Equal(tb.ColPos, tc.colPos) {
				t.Errorf("ColPos = %v, want %v", tb.ColPos, tc.colPos)
			}
			if !slices.Equal(tb.ColIDs, tc.colIDs) {
				t.Errorf("ColIDs = %v, want %v", tb.ColIDs, tc.colIDs)
			}
			if tb.AutoIncCol != 0 {
				t.Errorf("AutoIncCol = %d, want 0", tb.AutoIncCol)
			}
			for i, c := range tb.Columns {
				if c.Offset != i {
					t.Errorf("column %s Offset = %d, want %d", c.Name, c.Offset, i)
				}
				if c.KeyFlags != tc.keyFlags[i] {
					t.Errorf("column %s KeyFlags = %#x, want %#x", c.Name, c.KeyFlags, tc.keyFlags[i])
				}
			}
			if tb.Col("b") != 1 || tb.Col("C") != 2 || tb.Col("x") != -1 {
				t.Errorf("Col: b=%d C=%d x=%d, want 1 2 -1", tb.Col("b"), tb.Col("C"), tb.Col("x"))
			}
			if tb.CheckCache == nil {
				t.Error("Init left CheckCache nil")
			}
		})
	}
}

// TestStoredForm: the derived fields are not stored, so the JSON (the on-disk format) is exactly
// the stored fields, and a Clone (through that form) derives the same lookups.
func TestStoredForm(t *testing.T) {
	tb := table(true)
	b, err := json.Marshal(tb)
	if err != nil {
		t.Fatal(err)
	}
	for _, derived := range []string{"Offset", "KeyFlags", "Offsets", "ColPos", "ColIDs", "AutoIncCol", "HiddenPK", "CheckCache", "GenCache", "GenCols", "HasExprDefault"} {
		if bytes.Contains(b, []byte(`"`+derived+`"`)) {
			t.Errorf("stored form holds derived field %s: %s", derived, b)
		}
	}
	// The stored form as the code before the move to this package wrote it (checked byte for byte
	// against that code): moving the definitions must not change a byte on disk.
	if !bytes.Equal(b, []byte(storedTable)) {
		t.Errorf("stored form changed:\n got %s\nwant %s", b, storedTable)
	}
	c := tb.Clone()
	if c == tb || c.Columns[0] == tb.Columns[0] {
		t.Fatal("Clone shares memory with the original")
	}
	if !slices.Equal(c.ColPos, tb.ColPos) || !slices.Equal(c.Indexes[2].Offsets, tb.Indexes[2].Offsets) || c.Columns[1].KeyFlags != tb.Columns[1].KeyFlags {
		t.Error("Clone derived different lookups")
	}
}

const storedTable = `{"id":101,"db":"d","name":"t","columns":[{"id":1,"name":"a","type":{"tp":3,"len":-1,"collation":"binary"},"default":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"},"auto_inc":true,"absent":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"}},{"id":3,"name":"B","type":{"tp":3,"len":-1,"collation":"binary"},"not_null":true,"default":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"},"absent":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"}},{"id":4,"name":"c","type":{"tp":3,"len":-1,"collation":"binary"},"default":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"},"absent":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"}},{"id":5,"name":"_rowid","type":{"tp":3,"len":-1,"collation":"binary"},"not_null":true,"default":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"},"hidden":true,"absent":{"K":0,"Frac":0,"I":0,"F":0,"S":"","D":"0"}}],"indexes":[{"id":1,"name":"PRIMARY","columns":[{"col":5}],"unique":true,"primary":true},{"id":2,"name":"uc","columns":[{"col":4}],"unique":true},{"id":3,"name":"ac","columns":[{"col":1},{"col":4}]}],"next_col_id":6,"next_index_id":4,"charset":"utf8mb4","collation":"utf8mb4_0900_ai_ci","version":1}`

// memStore is a map standing in for the engine: Save* write to it, Load reads it.
type memStore map[string][]byte

func (m memStore) Set(k, v []byte)         { m[string(k)] = slices.Clone(v) }
func (m memStore) Delete(k []byte)         { delete(m, string(k)) }
func (m memStore) DeleteRange(_, _ []byte) {}
func (m memStore) get(k []byte) ([]byte, bool, error) {
	v, ok := m[string(k)]
	return v, ok, nil
}
func (m memStore) scan(lo, hi []byte, fn func(k, v []byte) error) error {
	var ks []string
	for k := range m {
		if k >= string(lo) && k < string(hi) {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	for _, k := range ks {
		if err := fn([]byte(k), m[k]); err != nil {
			return err
		}
	}
	return nil
}

func TestSaveLoad(t *testing.T) {
	st := memStore{}
	tb := table(true)
	if err := SaveDB(st, &Database{Name: "D", Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}); err != nil {
		t.Fatal(err)
	}
	if err := SaveTable(st, tb); err != nil {
		t.Fatal(err)
	}
	if err := SaveView(st, &View{DB: "d", Name: "v", Select: "SELECT 1"}); err != nil {
		t.Fatal(err)
	}
	SaveNextTableID(st, 102)
	cat, err := Load(st.get, st.scan)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.DB("d"); !ok {
		t.Error("database d not loaded")
	}
	got, ok := cat.TableByID(101)
	if !ok {
		t.Fatal("table 101 not loaded")
	}
	if !got.HiddenPK || !slices.Equal(got.ColPos, tb.ColPos) {
		t.Error("loaded table was not Init-ed")
	}
	if !cat.NameTaken("D", "V") || !cat.NameTaken("d", "T") || cat.NameTaken("d", "x") {
		t.Error("NameTaken wrong after load")
	}
	if id := cat.AllocTableID(); id != 102 || cat.NextTableID() != 103 {
		t.Errorf("AllocTableID = %d then next %d, want 102 then 103", id, cat.NextTableID())
	}
}

func TestCopyOnWrite(t *testing.T) {
	cat := New()
	cat.PutDB(&Database{Name: "d"})
	cat.PutTable(table(false))
	next := cat.Copy()
	if next.Version != cat.Version+1 {
		t.Errorf("Copy version %d, want %d", next.Version, cat.Version+1)
	}
	t2 := table(false)
	t2.ID, t2.Name = 102, "t2"
	t2.ForeignKeys = []*ForeignKey{{Name: "fk", Cols: []uint32{1}, RefDB: "d", RefTable: "t", RefCols: []string{"b"}}}
	next.PutTable(t2)
	next.RemoveDB("gone")
	if refs := cat.Referencing("d", "t"); len(refs) != 0 {
		t.Errorf("original catalog sees %d references", len(refs))
	}
	refs := next.Referencing("D", "T")
	if len(refs) != 1 || refs[0].Child != t2 || refs[0].FK.Name != "fk" {
		t.Errorf("Referencing = %+v, want t2's fk", refs)
	}
	if _, ok := cat.Table("d", "t2"); ok {
		t.Error("a change to the copy is visible in the original")
	}
	next.RemoveTable(t2)
	if refs := next.Referencing("d", "t"); len(refs) != 0 {
		t.Errorf("Referencing after RemoveTable = %+v, want none (the reverse map must be reset)", refs)
	}
}
