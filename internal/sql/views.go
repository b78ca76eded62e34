package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Views: CREATE [OR REPLACE] VIEW, DROP VIEW, SHOW CREATE VIEW, and reads through them. A view is
// stored as its SELECT's text (restored by the parser, so it parses back the same) plus its
// column names, under its own catalog key; a query that names it plans that SELECT as a derived
// table, with the view's database as the default database, as MySQL resolves a view's body in the
// database it was created in. Views are read-only here: INSERT/UPDATE/DELETE through a view are
// not supported.

func restoreSQL(n ast.Node) (string, error) {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (d *ddlCtx) createView(x *ast.CreateViewStmt) error {
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
	v := &catalog.View{DB: db, Name: name, Select: text, Security: "DEFINER", Algorithm: "UNDEFINED", CheckOption: "NONE",
		Definer: catalog.QuoteAccount(d.s.acctUser, d.s.acctHost), Charset: "utf8mb4", Collation: d.s.connCollation().Name}
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
		self := x.Definer.Username == d.s.acctUser && strings.EqualFold(x.Definer.Hostname, d.s.acctHost)
		if !self && !d.s.hasAdmin("SET_USER_ID") {
			return specificDenied("SUPER or SET_USER_ID") // naming another account as definer, as MySQL
		}
		v.Definer = fmt.Sprintf("`%s`@`%s`", x.Definer.Username, x.Definer.Hostname)
	}
	// The body must plan now: unknown tables or columns are errors at CREATE time, as in MySQL.
	// The DDL holds the exclusive metadata locks of its databases: the planner must not wait for
	// a shared one on them.
	for _, n := range d.locked {
		if !d.s.mdl[n] {
			if d.s.mdl == nil {
				d.s.mdl = map[string]bool{}
			}
			d.s.mdl[n] = true
			defer delete(d.s.mdl, n)
		}
	}
	if _, err := (&planner{s: d.s, creatingView: true}).planView(v, 0); err != nil {
		return err
	}
	d.cat.PutView(v)
	return catalog.SaveView(d.t, v)
}

func (d *ddlCtx) dropViews(x *ast.DropTableStmt) error {
	var missing []string
	var drop []*catalog.View
	for _, tn := range x.Tables {
		db := orDefault(tn.Schema.O, d.s.CurDB)
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

func (d *ddlCtx) dropView(v *catalog.View) {
	d.cat.RemoveView(v)
	d.t.Delete(rowenc.ViewDefKey(v.DB, v.Name))
}

// maxViewDepth bounds views defined on views (and catches a cycle made with CREATE OR REPLACE).
const maxViewDepth = 32

// planView plans a view's SELECT as a derived table.
func (p *planner) planView(v *catalog.View, depth int) (*exec.Select, error) {
	if depth >= maxViewDepth {
		return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", v.DB, v.Name)
	}
	stmts, _, err := p.s.parser.ParseSQL(v.Select)
	if err != nil || len(stmts) != 1 {
		return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", v.DB, v.Name)
	}
	rs, ok := stmts[0].(ast.ResultSetNode)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' is not a SELECT", v.DB, v.Name)
	}
	if len(v.Columns) > 0 {
		sel := firstSelect(rs)
		if sel == nil || sel.Fields == nil || len(sel.Fields.Fields) != len(v.Columns) {
			return nil, sqlerr.New(sqlerr.ErrViewWrongList, "View's SELECT and view's field list have different column counts")
		}
		for i, f := range sel.Fields.Fields {
			if f.WildCard != nil {
				return nil, sqlerr.New(sqlerr.ErrViewWrongList, "View's SELECT and view's field list have different column counts")
			}
			f.AsName = ast.NewCIStr(v.Columns[i])
		}
	}
	saved := p.s.CurDB
	p.s.CurDB = v.DB
	p.viewDepth = depth + 1
	defer func() { p.s.CurDB = saved; p.viewDepth = depth }()
	sp, err := p.planResultSet(rs, nil)
	if err != nil {
		if depth > 0 || !p.creatingView {
			if e := sqlerr.As(err); e != nil && (e.Code == sqlerr.ErrNoSuchTable || e.Code == sqlerr.ErrBadField || e.Code == sqlerr.ErrViewInvalid) {
				return nil, sqlerr.New(sqlerr.ErrViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", v.DB, v.Name)
			}
		}
		return nil, err
	}
	seen := map[string]bool{}
	for i := 0; i < sp.NVisible; i++ {
		n := strings.ToLower(sp.Cols[i].Name)
		if seen[n] {
			return nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", sp.Cols[i].Name)
		}
		seen[n] = true
	}
	return sp, nil
}

func firstSelect(rs ast.ResultSetNode) *ast.SelectStmt {
	switch x := rs.(type) {
	case *ast.SelectStmt:
		return x
	case *ast.SetOprStmt:
		if x.SelectList != nil && len(x.SelectList.Selects) > 0 {
			if s, ok := x.SelectList.Selects[0].(ast.ResultSetNode); ok {
				return firstSelect(s)
			}
		}
	}
	return nil
}
