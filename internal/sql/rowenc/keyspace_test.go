package rowenc

import (
	"bytes"
	"testing"

	"github.com/kiln-db/kiln/internal/engine"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// TestKeySpaceOrder checks the table in the package comment: one key of each kind, in the order
// the table lists them, must sort in that order, and the layers below keep to 0x00.
func TestKeySpaceOrder(t *testing.T) {
	row := AppendKey(IndexPrefix(nil, 7, PrimaryIndexID), types.NewInt(1), tBig)
	keys := []struct {
		name string
		key  []byte
	}{
		{"engine applied", engine.AppliedKey()},
		{"repl conf", []byte{0x00, 'c', 'o', 'n', 'f'}},
		{"repl member", []byte{0x00, 'm', 'e', 'm', 'b', 0, 0, 0, 0, 0, 0, 0, 1}},
		{"repl snapshot marker", []byte{0x00, 's', 'n', 'a', 'p'}},
		{"accounts initialised", ACLInitKey()},
		{"account", AccountKey("root", "LocalHost")},
		{"database", DBDefKey("shop")},
		{"next table id", NextTableIDKey()},
		{"table definition", TableDefKey(7)},
		{"format version", FormatVersionKey()},
		{"view", ViewDefKey("Shop", "V")},
		{"auto-increment counter", AutoIncKey(7, 3)},
		{"row", row},
		{"secondary entry", IndexPrefix(nil, 7, PrimaryIndexID+1)},
		{"next table's row", IndexPrefix(nil, 8, PrimaryIndexID)},
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1].key, keys[i].key) >= 0 {
			t.Errorf("%s (%x) does not sort before %s (%x)", keys[i-1].name, keys[i-1].key, keys[i].name, keys[i].key)
		}
	}
	for _, k := range keys[:4] {
		if k.key[0] != 0x00 {
			t.Errorf("%s: %x is not under 0x00", k.name, k.key)
		}
	}
	for _, k := range keys[4:11] {
		if k.key[0] != SysPrefix {
			t.Errorf("%s: %x is not under SysPrefix", k.name, k.key)
		}
	}
}

// TestKeySpans checks that every key falls in the span that range deletions and catalog loads use,
// and in no other.
func TestKeySpans(t *testing.T) {
	in := func(k, lo, hi []byte) bool { return bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0 }
	spans := map[string]func() ([]byte, []byte){
		"accounts":  AccountSpan,
		"databases": DBDefSpan,
		"tables":    TableDefSpan,
		"views":     ViewDefSpan,
		"table 7":   func() ([]byte, []byte) { return TableSpan(7) },
		"primary 7": func() ([]byte, []byte) { return IndexSpan(7, PrimaryIndexID) },
		"index 7/2": func() ([]byte, []byte) { return IndexSpan(7, 2) },
	}
	for _, tc := range []struct {
		key  []byte
		want []string // the spans that hold key
		row  bool
	}{
		{AccountKey("a", "%"), []string{"accounts"}, false},
		{AccountKey("\xff", "\xff"), []string{"accounts"}, false},
		{ACLInitKey(), nil, false},
		{DBDefKey("db"), []string{"databases"}, false},
		{TableDefKey(0), []string{"tables"}, false},
		{TableDefKey(^uint64(0)), []string{"tables"}, false},
		{ViewDefKey("d", "v"), []string{"views"}, false},
		{NextTableIDKey(), nil, false},
		{FormatVersionKey(), nil, false},
		{AutoIncKey(7, 1), []string{"table 7"}, false},
		{IndexPrefix(nil, 7, PrimaryIndexID), []string{"table 7", "primary 7"}, false}, // no key columns
		{append(IndexPrefix(nil, 7, PrimaryIndexID), 1, 0xff), []string{"table 7", "primary 7"}, true},
		{append(IndexPrefix(nil, 7, 2), 1), []string{"table 7", "index 7/2"}, false},
		{append(IndexPrefix(nil, 8, PrimaryIndexID), 1), nil, true},
		{append(IndexPrefix(nil, 6, 0xffffffff), 0xff), nil, false},
	} {
		for name, span := range spans {
			lo, hi := span()
			want := false
			for _, w := range tc.want {
				want = want || w == name
			}
			if got := in(tc.key, lo, hi); got != want {
				t.Errorf("key %x in span %s: %v, want %v", tc.key, name, got, want)
			}
		}
		if got := IsRowKey(tc.key); got != tc.row {
			t.Errorf("IsRowKey(%x) = %v, want %v", tc.key, got, tc.row)
		}
	}
	// Lower-casing: hosts and view names are case-insensitive, user names are not.
	if !bytes.Equal(AccountKey("u", "LOCALHOST"), AccountKey("u", "localhost")) || bytes.Equal(AccountKey("U", "h"), AccountKey("u", "h")) {
		t.Error("account key case")
	}
	if !bytes.Equal(ViewDefKey("DB", "View"), ViewDefKey("db", "view")) {
		t.Error("view key case")
	}
}
