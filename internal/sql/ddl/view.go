package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Views: CREATE [OR REPLACE] VIEW, DROP VIEW, SHOW CREATE VIEW, and reads through them. A view is
// stored as its SELECT's text (restored by the parser, so it parses back the same) plus its
// column names, under its own catalog key; a query that names it plans that SELECT as a derived
// table, with the view's database as the default database, as MySQL resolves a view's body in the
// database it was created in. Views are read-only here: INSERT/UPDATE/DELETE through a view are
// not supported.

// restoreSQL is the parser's restore of n, with JSON_TABLE written back as itself (plan.RestoreSQL).
func restoreSQL(n ast.Node) (string, error) { return plan.RestoreSQL(n) }

func (d *Stmt) createView(x *ast.CreateViewStmt) error {
	db, err := d.dbName(x.ViewName.Schema.O)
	if err != nil {
		return err
	}
	name := x.ViewName.Name.O
	if err := checkIdent(name, sqlerr.ErrWrongTableName, "table"); err != nil {
		return err
	}
	if _, ok := d.cat.Table(db, name); ok {
		return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", name)
	}
	if old, ok := d.cat.View(db, name); ok && !x.OrReplace {
		return sqlerr.New(sqlerr.ErrTableExists, "Table '%s' already exists", old.Name)
	}
	text, err := restoreSQL(x.Select)
	if err != nil {
		return fmt.Errorf("create view: restore select: %w", err)
	}
	user, host := d.s.Definer()
	v := &catalog.View{DB: db, Name: name, Select: text, Security: "DEFINER", Algorithm: "UNDEFINED", CheckOption: "NONE",
		Definer: catalog.QuoteAccount(user, host), Charset: "utf8mb4", Collation: d.pc.ConnCollation().Name}
	for _, c := range x.Cols {
		v.Columns = append(v.Columns, c.O)
	}
	if x.Security == ast.SecurityInvoker {
		v.Security = "INVOKER"
	}
	switch x.Algorithm {
	case ast.AlgorithmMerge:
		v.Algorithm = "MERGE"
	case ast.AlgorithmTemptable:
		v.Algorithm = "TEMPTABLE"
	}
	// The parser reports CASCADED when no WITH CHECK OPTION was written: look at the text after
	// the SELECT. (The option is recorded and shown; it is not enforced, views are read-only.)
	full, body := x.Text(), x.Select.Text()
	if i := strings.LastIndex(full, body); i >= 0 && body != "" && strings.Contains(strings.ToUpper(full[i+len(body):]), "CHECK OPTION") {
		v.CheckOption = "CASCADED"
		if x.CheckOption == ast.CheckOptionLocal {
			v.CheckOption = "LOCAL"
		}
	}
	if x.Definer != nil && x.Definer.Username != "" {
		if err := d.s.CheckDefiner(x.Definer.Username, x.Definer.Hostname); err != nil {
			return err // naming another account as definer needs SET_USER_ID, as in MySQL
		}
		v.Definer = fmt.Sprintf("`%s`@`%s`", x.Definer.Username, x.Definer.Hostname)
	}
	// The body must plan now: unknown tables or columns are errors at CREATE time, as in MySQL.
	// The DDL holds the exclusive metadata locks of its databases: the planner must not wait for
	// a shared one on them.
	release := d.s.HoldMetadataLocks(d.locked)
	defer release()
	if err := d.s.Resolve(func(p *plan.Planner) error {
		p.CreatingView = true
		_, err := p.PlanView(v, 0)
		return err
	}); err != nil {
		return err
	}
	d.cat.PutView(v)
	return catalog.SaveView(d.t, v)
}

func (d *Stmt) dropViews(x *ast.DropTableStmt) error {
	var missing []string
	var drop []*catalog.View
	for _, tn := range x.Tables {
		db := orDefault(tn.Schema.O, d.curDB())
		if db == "" {
			return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
		v, ok := d.cat.View(db, tn.Name.O)
		if !ok {
			if _, isTable := d.cat.Table(db, tn.Name.O); isTable {
				return sqlerr.New(sqlerr.ErrWrongObject, "'%s.%s' is not VIEW", db, tn.Name.O)
			}
			missing = append(missing, db+"."+tn.Name.O)
			continue
		}
		drop = append(drop, v)
	}
	if err := d.unknownTables(missing, x.IfExists); err != nil {
		return err
	}
	if len(drop) == 0 {
		d.noop = true
	}
	for _, v := range drop {
		d.dropView(v)
	}
	return nil
}

func (d *Stmt) dropView(v *catalog.View) {
	d.cat.RemoveView(v)
	d.t.Delete(rowenc.ViewDefKey(v.DB, v.Name))
}
