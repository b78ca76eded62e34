// Package catalog owns Kiln's schema definitions and their storage: databases, tables with their
// columns, indexes, foreign keys and CHECK constraints, views, and the accounts with their
// privileges (accounts.go). It does three things:
//  1. Define them as stored: each definition is JSON under its own catalog key (internal/sql/rowenc
//     lists the keys); the JSON field names are the on-disk format and never change.
//  2. Derive the lookups the executor reads on every row (column offsets by name and by id, key
//     column offsets, the AUTO_INCREMENT column, client-visible key flags) in Table.Init, which runs
//     on every Table after it is decoded, built by DDL or cloned; these fields are not stored.
//  3. Hold a Catalog: an immutable view of all schemas. A published Catalog is never changed: DDL
//     takes a Copy (one version on), changes it through PutTable, PutDB, PutView and their
//     removals, writes the changed definitions through a Writer (SaveTable, SaveDB, SaveView,
//     SaveNextTableID) in its transaction, and the facade swaps the copy in once that commits.
//
// It must not import internal/sql (the facade) or anything above it, and it compiles, checks and
// executes nothing: what is derived from a definition by the SQL layer (compiled CHECK expressions,
// CheckCache) is carried in fields the facade fills, and the privilege checks and account
// statements (internal/sql/acl_check.go, acl_stmt.go) only read and change the Accounts defined here.
package catalog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Database is a schema.
type Database struct {
	Name      string `json:"name"`
	Charset   string `json:"charset"`
	Collation string `json:"collation"`
}

// Column is a table column.
type Column struct {
	ID          uint32        `json:"id"`
	Name        string        `json:"name"`
	Type        types.ColType `json:"type"`
	NotNull     bool          `json:"not_null,omitempty"`
	HasDefault  bool          `json:"has_default,omitempty"`
	Default     types.Value   `json:"default"`                 // the literal default, converted
	DefaultNow  bool          `json:"default_now,omitempty"`   // DEFAULT CURRENT_TIMESTAMP
	OnUpdateNow bool          `json:"on_update_now,omitempty"` // ON UPDATE CURRENT_TIMESTAMP
	AutoInc     bool          `json:"auto_inc,omitempty"`
	Hidden      bool          `json:"hidden,omitempty"` // the row id of a table without primary key
	Comment     string        `json:"comment,omitempty"`
	// GenExpr is a generated column's expression (the parser's restored text, as CHECK stores
	// its expression); "" for a base column. Kiln stores the value of VIRTUAL columns in the row
	// too (computed on every write, like STORED), so reads never evaluate it: GenStored only says
	// what the column was declared as.
	GenExpr   string `json:"gen_expr,omitempty"`
	GenStored bool   `json:"gen_stored,omitempty"`
	// DefaultExpr is an expression default's text (DEFAULT (expr), MySQL 8.0.13+), evaluated for
	// each row that takes the default; HasDefault is set with it and Default is unused.
	DefaultExpr string `json:"default_expr,omitempty"`
	// Absent is the value of rows written before the column was added (ADD COLUMN rewrites no row).
	Absent types.Value `json:"absent"`
	// Offset is the column's position in Table.Columns, derived by Table.Init (not stored).
	Offset int `json:"-"`
	// KeyFlags are the column-definition flags clients see (PRI_KEY, UNIQUE_KEY, MULTIPLE_KEY,
	// AUTO_INCREMENT), derived from the indexes by Table.Init (not stored).
	KeyFlags uint16 `json:"-"`
}

// IndexColumn is one key part.
type IndexColumn struct {
	Col    uint32 `json:"col"`
	Prefix int    `json:"prefix,omitempty"` // prefix length in characters, 0 = whole value
	Desc   bool   `json:"desc,omitempty"`
}

// Index is the primary key or a secondary index.
type Index struct {
	ID      uint32        `json:"id"`
	Name    string        `json:"name"`
	Columns []IndexColumn `json:"columns"`
	Unique  bool          `json:"unique,omitempty"`
	Primary bool          `json:"primary,omitempty"`
	// KeyVersion is the types.CollationKeyVersion the entries were written with (0: version 1).
	KeyVersion int `json:"key_version,omitempty"`
	// Offsets are the offsets of the key columns in Table.Columns, derived by Table.Init (not stored).
	Offsets []int `json:"-"`
	// ValueOffsets are the columns a secondary entry's value holds (derived by Table.Init): the
	// index's, then the primary key's that the index does not already hold. Values are read by
	// column id, so entries written when the value repeated those columns read the same.
	ValueOffsets []int `json:"-"`
}

// Table is a table definition. Indexes[0] is always the primary (clustered) index: the declared
// primary key, or the hidden row id.
type Table struct {
	ID          uint64    `json:"id"`
	DB          string    `json:"db"`
	Name        string    `json:"name"`
	Columns     []*Column `json:"columns"`
	Indexes     []*Index  `json:"indexes"`
	NextColID   uint32    `json:"next_col_id"`
	NextIndexID uint32    `json:"next_index_id"`
	AutoIncBase uint64    `json:"auto_inc_base,omitempty"` // ALTER TABLE ... AUTO_INCREMENT = n
	Charset     string    `json:"charset"`
	Collation   string    `json:"collation"`
	Engine      string    `json:"engine,omitempty"`
	Comment     string    `json:"comment,omitempty"`
	Version     uint64    `json:"version"`
	// ForeignKeys are the constraints this table holds as the child (defined by internal/sql/ddl,
	// enforced by internal/sql/exec).
	ForeignKeys []*ForeignKey `json:"foreign_keys,omitempty"`
	// Checks are the CHECK constraints (defined by internal/sql/ddl, enforced by internal/sql/exec).
	Checks []*CheckConstraint `json:"checks,omitempty"`
	// CheckCache holds the compiled Checks, filled by the facade on first use.
	CheckCache *CheckCache `json:"-"`
	// GenCache holds the compiled generated-column and default expressions (Exprs: one per
	// column offset, nil for a column without), compiled by the executor on first use like
	// CheckCache.
	GenCache *CheckCache `json:"-"`
	// GenCols are the offsets of the generated columns, in column order (the order they are
	// computed in: one may read an earlier one); nil for a table without.
	GenCols []int `json:"-"`
	// HasExprDefault: some column has an expression default (DefaultExpr).
	HasExprDefault bool `json:"-"`

	colByName map[string]int
	// The derived lookups below are built by Init from the stored fields and are not stored.

	// ColPos is, by column id, the offset in Columns, or -1.
	ColPos []int `json:"-"`
	// ColIDs are the column ids in Columns order.
	ColIDs []uint32 `json:"-"`
	// AutoIncCol is the offset of the AUTO_INCREMENT column, -1 if none.
	AutoIncCol int `json:"-"`
	// HiddenPK: the primary key is the hidden row id (the table declared none).
	HiddenPK bool `json:"-"`
}

// Init builds the derived lookup structures. Every Table is Init-ed before it is used: after it
// is decoded from storage, built by DDL or cloned.
func (t *Table) Init() {
	t.CheckCache = &CheckCache{}
	t.GenCache = &CheckCache{}
	t.GenCols = nil
	t.HasExprDefault = false
	t.colByName = make(map[string]int, len(t.Columns))
	maxID := uint32(0)
	t.AutoIncCol = -1
	t.ColIDs = t.ColIDs[:0]
	for i, c := range t.Columns {
		c.Offset = i
		t.colByName[strings.ToLower(c.Name)] = i
		if c.ID > maxID {
			maxID = c.ID
		}
		if c.AutoInc && !c.Hidden {
			t.AutoIncCol = i
		}
		if c.GenExpr != "" {
			t.GenCols = append(t.GenCols, i)
		}
		if c.DefaultExpr != "" {
			t.HasExprDefault = true
		}
		t.ColIDs = append(t.ColIDs, c.ID)
	}
	t.ColPos = make([]int, maxID+1)
	for i := range t.ColPos {
		t.ColPos[i] = -1
	}
	for i, c := range t.Columns {
		t.ColPos[c.ID] = i
	}
	for _, ix := range t.Indexes {
		ix.Offsets = ix.Offsets[:0]
		for _, ic := range ix.Columns {
			ix.Offsets = append(ix.Offsets, t.ColPos[ic.Col])
		}
	}
	for _, ix := range t.Indexes {
		ix.ValueOffsets = append(ix.ValueOffsets[:0], ix.Offsets...)
		if ix.Primary {
			continue
		}
		for _, ci := range t.Indexes[0].Offsets {
			if !slices.Contains(ix.Offsets, ci) {
				ix.ValueOffsets = append(ix.ValueOffsets, ci)
			}
		}
	}
	t.HiddenPK = len(t.Indexes) > 0 && t.Columns[t.Indexes[0].Offsets[0]].Hidden
	for _, c := range t.Columns {
		c.KeyFlags = 0
		if c.AutoInc {
			c.KeyFlags |= uint16(mysql.AutoIncrementFlag)
		}
	}
	for _, ix := range t.Indexes {
		for i, ci := range ix.Offsets {
			if ci < 0 {
				continue
			}
			c := t.Columns[ci]
			switch {
			case ix.Primary:
				c.KeyFlags |= uint16(mysql.PriKeyFlag)
			case ix.Unique && len(ix.Offsets) == 1:
				c.KeyFlags |= uint16(mysql.UniqueKeyFlag)
			case i == 0:
				c.KeyFlags |= uint16(mysql.MultipleKeyFlag)
			}
		}
	}
}

// CheckCache holds what the facade compiles from a table's CHECK constraints: this package cannot
// compile expressions. A published Table never changes, so it is filled once (Once), on first use.
type CheckCache struct {
	Once  sync.Once
	Exprs any // the facade's compiled expressions, one per Table.Checks entry
	Err   error
}

// IsGenerated reports whether c is a generated column.
func (c *Column) IsGenerated() bool { return c.GenExpr != "" }

// Col returns the offset of a column by name (case-insensitive), or -1.
func (t *Table) Col(name string) int {
	if i, ok := t.colByName[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

// Primary returns the clustered index.
func (t *Table) Primary() *Index { return t.Indexes[0] }

// IndexByName finds an index by name (case-insensitive).
func (t *Table) IndexByName(name string) *Index {
	for _, ix := range t.Indexes {
		if strings.EqualFold(ix.Name, name) {
			return ix
		}
	}
	return nil
}

// VisibleColumns returns the columns a SELECT * sees.
func (t *Table) VisibleColumns() []*Column {
	out := make([]*Column, 0, len(t.Columns))
	for _, c := range t.Columns {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

// Clone returns a deep copy (through its stored form) for DDL to change.
func (t *Table) Clone() *Table {
	b, err := json.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("catalog: clone table %s: %v", t.Name, err))
	}
	var n Table
	if err := json.Unmarshal(b, &n); err != nil {
		panic(fmt.Sprintf("catalog: clone table %s: %v", t.Name, err))
	}
	n.Init()
	return &n
}

// Catalog is an immutable view of all schemas. DDL builds a new one and swaps it in.
type Catalog struct {
	Version   uint64
	dbs       map[string]*Database         // lower-case name
	tables    map[string]map[string]*Table // db (lower) -> table (lower)
	byID      map[uint64]*Table
	views     map[string]map[string]*View // db (lower) -> view (lower)
	nextTable uint64
	fks       atomic.Pointer[fkIndex] // parent -> referencing constraints, built on first use; reset by every change
	// Accounts are the accounts and their privileges (accounts.go), kept with the catalog so that
	// one swap publishes both; shared by copies, replaced (by a changed Copy) by account statements.
	Accounts *Accounts
	// temp are a session's temporary tables (temp.go), db (lower) -> table (lower): nil except in
	// the catalog a session with temporary tables plans against (WithTemp).
	temp map[string]map[string]*Table
}

// New returns an empty catalog.
func New() *Catalog {
	return &Catalog{dbs: map[string]*Database{}, tables: map[string]map[string]*Table{}, byID: map[uint64]*Table{}, views: map[string]map[string]*View{}, nextTable: 100, Accounts: NewAccounts()}
}

// Copy returns a shallow copy, one version on, whose maps may be modified: what DDL changes.
func (c *Catalog) Copy() *Catalog {
	n := &Catalog{Version: c.Version + 1, dbs: make(map[string]*Database, len(c.dbs)), tables: make(map[string]map[string]*Table, len(c.tables)), byID: make(map[uint64]*Table, len(c.byID)), nextTable: c.nextTable, Accounts: c.Accounts}
	for k, v := range c.dbs {
		n.dbs[k] = v
	}
	for k, m := range c.tables {
		nm := make(map[string]*Table, len(m))
		for tk, tv := range m {
			nm[tk] = tv
		}
		n.tables[k] = nm
	}
	for k, v := range c.byID {
		n.byID[k] = v
	}
	n.views = make(map[string]map[string]*View, len(c.views))
	for k, m := range c.views {
		nm := make(map[string]*View, len(m))
		for vk, vv := range m {
			nm[vk] = vv
		}
		n.views[k] = nm
	}
	n.temp = copyTemp(c.temp)
	return n
}

// DB returns a database by name.
func (c *Catalog) DB(name string) (*Database, bool) {
	d, ok := c.dbs[strings.ToLower(name)]
	return d, ok
}

// Table returns a table.
func (c *Catalog) Table(db, name string) (*Table, bool) {
	if c.temp != nil {
		if t, ok := c.TempTable(db, name); ok {
			return t, true // a temporary table shadows a base table of its name
		}
	}
	m, ok := c.tables[strings.ToLower(db)]
	if !ok {
		return nil, false
	}
	t, ok := m[strings.ToLower(name)]
	return t, ok
}

// TableByID returns a table by id.
func (c *Catalog) TableByID(id uint64) (*Table, bool) {
	if IsTempID(id) {
		return c.tempByID(id)
	}
	t, ok := c.byID[id]
	return t, ok
}

// DBNames returns the database names, sorted.
func (c *Catalog) DBNames() []string {
	out := make([]string, 0, len(c.dbs))
	for _, d := range c.dbs {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// Tables returns a database's tables sorted by name.
func (c *Catalog) Tables(db string) []*Table {
	m := c.tables[strings.ToLower(db)]
	out := make([]*Table, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PutDB adds or replaces a database.
func (c *Catalog) PutDB(d *Database) { c.dbs[strings.ToLower(d.Name)] = d }

// RemoveDB removes a database and its table names (DROP DATABASE removes its tables first).
func (c *Catalog) RemoveDB(name string) {
	delete(c.dbs, strings.ToLower(name))
	delete(c.tables, strings.ToLower(name))
}

// NextTableID is the id the next CREATE TABLE takes.
func (c *Catalog) NextTableID() uint64 { return c.nextTable }

// SetNextTableID sets it, as loaded from storage.
func (c *Catalog) SetNextTableID(n uint64) { c.nextTable = n }

// AllocTableID returns the next table id and moves past it.
func (c *Catalog) AllocTableID() uint64 {
	id := c.nextTable
	c.nextTable++
	return id
}

// PutTable adds or replaces a table.
func (c *Catalog) PutTable(t *Table) {
	if IsTempID(t.ID) {
		c.putTemp(t)
		return
	}
	db := strings.ToLower(t.DB)
	if c.tables[db] == nil {
		c.tables[db] = map[string]*Table{}
	}
	c.tables[db][strings.ToLower(t.Name)] = t
	c.byID[t.ID] = t
	c.fks.Store(nil)
}

// RemoveTable removes a table.
func (c *Catalog) RemoveTable(t *Table) {
	if IsTempID(t.ID) {
		c.removeTemp(t)
		return
	}
	delete(c.tables[strings.ToLower(t.DB)], strings.ToLower(t.Name))
	delete(c.byID, t.ID)
	c.fks.Store(nil)
}

// Writer is what catalog changes are written through: a transaction's write set.
type Writer interface {
	Set(key, val []byte)
	Delete(key []byte)
	DeleteRange(lo, hi []byte)
}

// SaveTable writes a table definition.
func SaveTable(w Writer, t *Table) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("catalog: encode table %s: %w", t.Name, err)
	}
	w.Set(rowenc.TableDefKey(t.ID), b)
	return nil
}

// SaveDB writes a database definition.
func SaveDB(w Writer, d *Database) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("catalog: encode database %s: %w", d.Name, err)
	}
	w.Set(rowenc.DBDefKey(strings.ToLower(d.Name)), b)
	return nil
}

// SaveNextTableID writes the next table id.
func SaveNextTableID(w Writer, n uint64) {
	w.Set(rowenc.NextTableIDKey(), binary.BigEndian.AppendUint64(nil, n))
}

// Load reads the stored catalog: get reads one key, scan calls fn for each key in [lo, hi) in
// order (both read the engine's committed state). Every table is Init-ed and its index key versions
// checked. The accounts are loaded too (LoadAccounts).
func Load(get func(key []byte) ([]byte, bool, error), scan func(lo, hi []byte, fn func(k, v []byte) error) error) (*Catalog, error) {
	cat := New()
	lo, hi := rowenc.DBDefSpan()
	if err := scan(lo, hi, func(k, v []byte) error {
		var d Database
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("catalog: database %q: %w", k, err)
		}
		cat.PutDB(&d)
		return nil
	}); err != nil {
		return nil, err
	}
	lo, hi = rowenc.TableDefSpan()
	if err := scan(lo, hi, func(k, v []byte) error {
		var t Table
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("catalog: table %x: %w", k, err)
		}
		t.Init()
		if err := CheckKeyVersions(&t); err != nil {
			return err
		}
		cat.PutTable(&t)
		return nil
	}); err != nil {
		return nil, err
	}
	lo, hi = rowenc.ViewDefSpan()
	if err := scan(lo, hi, func(k, v []byte) error {
		var w View
		if err := json.Unmarshal(v, &w); err != nil {
			return fmt.Errorf("catalog: view %q: %w", k, err)
		}
		cat.PutView(&w)
		return nil
	}); err != nil {
		return nil, err
	}
	v, ok, err := get(rowenc.NextTableIDKey())
	if err != nil {
		return nil, err
	}
	if ok && len(v) == 8 {
		cat.SetNextTableID(binary.BigEndian.Uint64(v))
	}
	if cat.Accounts, err = LoadAccounts(get, scan); err != nil {
		return nil, err
	}
	return cat, nil
}

// CheckKeyVersions refuses a table whose indexes hold collation keys of another weights version:
// this Kiln would look them up with different keys and miss rows.
func CheckKeyVersions(t *Table) error {
	for _, ix := range t.Indexes {
		v := ix.KeyVersion
		if v == 0 {
			v = 1
		}
		if v == types.CollationKeyVersion {
			continue
		}
		for i, ci := range ix.Offsets {
			if ix.Columns[i].Prefix > 0 {
				return fmt.Errorf("catalog: prefix index %s of %s.%s was written with whole values (key version %d), this Kiln keys prefixes: dump the table with an older Kiln and reload it", ix.Name, t.DB, t.Name, v)
			}
			ct := &t.Columns[ci].Type
			if (ct.IsString() || ct.Tp == mysql.TypeEnum || ct.Tp == mysql.TypeSet) && !rowenc.KeyReversible(ct) && !ct.Coll().Reversible() {
				return fmt.Errorf("catalog: index %s of %s.%s holds collation keys of version %d, this Kiln writes version %d: dump the table with an older Kiln and reload it", ix.Name, t.DB, t.Name, v, types.CollationKeyVersion)
			}
		}
	}
	return nil
}

// CheckConstraint is stored with its table.
type CheckConstraint struct {
	Name     string `json:"name"`
	Expr     string `json:"expr"` // the expression as the parser restores it
	Enforced bool   `json:"enforced"`
}

// ForeignKey is a constraint stored with its child table.
type ForeignKey struct {
	Name     string   `json:"name"`
	Cols     []uint32 `json:"cols"` // child column ids
	RefDB    string   `json:"ref_db"`
	RefTable string   `json:"ref_table"`
	RefCols  []string `json:"ref_cols"` // parent column names (the parent may not exist yet)
	OnDelete string   `json:"on_delete,omitempty"`
	OnUpdate string   `json:"on_update,omitempty"`
}

// View is a view definition.
type View struct {
	DB          string   `json:"db"`
	Name        string   `json:"name"`
	Select      string   `json:"select"`
	Columns     []string `json:"columns,omitempty"` // CREATE VIEW v (a, b): names for the select list
	Definer     string   `json:"definer"`
	Security    string   `json:"security"`     // DEFINER or INVOKER
	Algorithm   string   `json:"algorithm"`    // UNDEFINED, MERGE, TEMPTABLE
	CheckOption string   `json:"check_option"` // NONE, CASCADED, LOCAL
	Charset     string   `json:"charset"`      // character_set_client at creation
	Collation   string   `json:"collation"`    // collation_connection at creation
}

// View returns a view.
func (c *Catalog) View(db, name string) (*View, bool) {
	v, ok := c.views[strings.ToLower(db)][strings.ToLower(name)]
	return v, ok
}

// Views returns a database's views sorted by name.
func (c *Catalog) Views(db string) []*View {
	m := c.views[strings.ToLower(db)]
	out := make([]*View, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NameTaken reports whether a table or a view (they share a namespace) has the name.
func (c *Catalog) NameTaken(db, name string) bool {
	if _, ok := c.Table(db, name); ok {
		return true
	}
	_, ok := c.View(db, name)
	return ok
}

// PutView adds or replaces a view.
func (c *Catalog) PutView(v *View) {
	db := strings.ToLower(v.DB)
	if c.views[db] == nil {
		c.views[db] = map[string]*View{}
	}
	c.views[db][strings.ToLower(v.Name)] = v
}

// RemoveView removes a view.
func (c *Catalog) RemoveView(v *View) {
	delete(c.views[strings.ToLower(v.DB)], strings.ToLower(v.Name))
}

// SaveView writes a view definition.
func SaveView(w Writer, v *View) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("catalog: encode view %s: %w", v.Name, err)
	}
	w.Set(rowenc.ViewDefKey(v.DB, v.Name), b)
	return nil
}

// FKRef is a constraint seen from its parent.
type FKRef struct {
	Child *Table
	FK    *ForeignKey
}

// fkIndex is the catalog's reverse map, parent "db\x00table" (lower) -> referencing constraints,
// built on first use (a catalog is never modified once published).
type fkIndex struct {
	once sync.Once
	refs map[string][]FKRef
}

func parentKey(db, table string) string { return strings.ToLower(db) + "\x00" + strings.ToLower(table) }

// Referencing returns the constraints that name (db, table) as their parent.
func (c *Catalog) Referencing(db, table string) []FKRef {
	if c.temp != nil {
		if _, ok := c.TempTable(db, table); ok {
			return nil // a temporary table is nobody's parent, whatever base table it shadows
		}
	}
	idx := c.fks.Load()
	if idx == nil {
		c.fks.CompareAndSwap(nil, &fkIndex{})
		idx = c.fks.Load()
	}
	idx.once.Do(func() {
		idx.refs = map[string][]FKRef{}
		for _, m := range c.tables {
			for _, t := range m {
				for _, fk := range t.ForeignKeys {
					k := parentKey(fk.RefDB, fk.RefTable)
					idx.refs[k] = append(idx.refs[k], FKRef{Child: t, FK: fk})
				}
			}
		}
		// Deterministic order (tables by id, constraints as declared): errors name the same one.
		for _, rs := range idx.refs {
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].Child.ID < rs[j].Child.ID })
		}
	})
	if len(idx.refs) == 0 {
		return nil // no foreign keys at all: no key to build on every row change
	}
	return idx.refs[parentKey(db, table)]
}
