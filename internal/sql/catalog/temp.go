package catalog

import (
	"sort"
	"strings"
)

// Temporary tables (CREATE TEMPORARY TABLE) belong to one session and live only in its memory:
// their definitions are never saved (no catalog key, no log record) and their rows are in the
// session's private store (txn.Local). The session plans against WithTemp's catalog, in which a
// temporary table shadows a base table of the same name for Table (so every statement, SHOW
// CREATE TABLE and DESCRIBE included, finds it first), while the listings (Tables: SHOW TABLES,
// information_schema) still show only base tables, as MySQL's do.
//
// Their ids are TempIDBase and above, a range no base table reaches, so that their keys
// ('t' <id> ...) form one span the session's transactions route to its store, and so that an id
// alone says a table is temporary (PutTable and RemoveTable keep such tables apart).

// TempIDBase is the first temporary table id.
const TempIDBase uint64 = 1 << 63

// IsTempID reports whether a table id is a temporary table's.
func IsTempID(id uint64) bool { return id >= TempIDBase }

// WithTemp returns a catalog that is c with the temporary tables tabs, under version (which must
// differ from every base catalog's version and every other WithTemp's: prepared plans check it).
// It shares c's maps (a published catalog never changes), so it costs one map of tabs.
func (c *Catalog) WithTemp(tabs []*Table, version uint64) *Catalog {
	n := &Catalog{Version: version, dbs: c.dbs, tables: c.tables, byID: c.byID, views: c.views,
		nextTable: c.nextTable, Accounts: c.Accounts, temp: map[string]map[string]*Table{}}
	for _, t := range tabs {
		n.putTemp(t)
	}
	return n
}

// BaseTable returns the base table db.name, even where a temporary table shadows it (a foreign
// key's parent is always a base table).
func (c *Catalog) BaseTable(db, name string) (*Table, bool) {
	t, ok := c.tables[strings.ToLower(db)][strings.ToLower(name)]
	return t, ok
}

// TempTable returns the temporary table db.name.
func (c *Catalog) TempTable(db, name string) (*Table, bool) {
	t, ok := c.temp[strings.ToLower(db)][strings.ToLower(name)]
	return t, ok
}

// TempTables returns the temporary tables, by id.
func (c *Catalog) TempTables() []*Table {
	var out []*Table
	for _, m := range c.temp {
		for _, t := range m {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (c *Catalog) tempByID(id uint64) (*Table, bool) {
	for _, m := range c.temp {
		for _, t := range m {
			if t.ID == id {
				return t, true
			}
		}
	}
	return nil, false
}

func (c *Catalog) putTemp(t *Table) {
	if c.temp == nil {
		c.temp = map[string]map[string]*Table{}
	}
	db := strings.ToLower(t.DB)
	if c.temp[db] == nil {
		c.temp[db] = map[string]*Table{}
	}
	c.temp[db][strings.ToLower(t.Name)] = t
}

func (c *Catalog) removeTemp(t *Table) {
	m := c.temp[strings.ToLower(t.DB)]
	if cur, ok := m[strings.ToLower(t.Name)]; ok && cur.ID == t.ID {
		delete(m, strings.ToLower(t.Name))
	}
}

func copyTemp(src map[string]map[string]*Table) map[string]map[string]*Table {
	if src == nil {
		return nil
	}
	out := make(map[string]map[string]*Table, len(src))
	for k, m := range src {
		nm := make(map[string]*Table, len(m))
		for tk, tv := range m {
			nm[tk] = tv
		}
		out[k] = nm
	}
	return out
}
