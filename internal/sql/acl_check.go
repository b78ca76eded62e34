package sql

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Privilege checks. One choke point: Session.authorize runs before every statement (text,
// prepared at each execution, and SQL-level EXECUTE), against the current catalog's accounts, so
// a GRANT or REVOKE applies to open sessions at their next statement, as in MySQL. It walks the
// statement for the tables it reads and writes (views included: their bodies are checked with the
// invoker's privileges, a simplification of MySQL's definer model) and compares each need with
// the session's account. Listings (SHOW, information_schema) are filtered where they are built.

// account is the session's account as of the current catalog (an empty one if it was dropped:
// no privileges).
func (s *Session) account() *catalog.Account {
	l := s.catalog().Accounts
	if s.acctCache != nil && s.acctOf == l {
		return s.acctCache // the accounts did not change since the last statement
	}
	a, ok := l.Get(s.acctUser, s.acctHost)
	if !ok {
		a = &catalog.Account{User: s.acctUser, Host: s.acctHost}
		a.Init()
	}
	s.acctCache, s.acctOf = a, l
	return a
}

// Account returns the session's authenticated account (CURRENT_USER()).
func (s *Session) Account() (user, host string) { return s.acctUser, s.acctHost }

// SetAccount sets the account the session's login authenticated as.
func (s *Session) SetAccount(user, host string) {
	s.acctUser, s.acctHost = user, host
	s.acctCache = nil
}

func (s *Session) dbDenied(db string) error {
	return sqlerr.New(sqlerr.ErrDBAccessDenied, "Access denied for user '%s'@'%s' to database '%s'", s.acctUser, s.Host, db)
}

func (s *Session) tableDenied(command, table string) error {
	return sqlerr.New(sqlerr.ErrTableAccessDenied, "%s command denied to user '%s'@'%s' for table '%s'", command, s.acctUser, s.Host, table)
}

func specificDenied(what string) error {
	return sqlerr.New(sqlerr.ErrSpecificAccessDenied, "Access denied; you need (at least one of) the %s privilege(s) for this operation", what)
}

// requireGlobal needs a global privilege (1227 without it).
func (s *Session) requireGlobal(p catalog.Priv) error {
	if s.account().Global&p == p {
		return nil
	}
	return specificDenied(p.First())
}

// hasAdmin reports a global privilege or a dynamic one that stands for it (SUPER or
// SYSTEM_VARIABLES_ADMIN, SUPER or CONNECTION_ADMIN).
func (s *Session) hasAdmin(dynamic string) bool {
	a := s.account()
	return a.Global&catalog.PrivSuper != 0 || a.HasDynamic(dynamic)
}

// CanSeeAllProcesses reports the PROCESS privilege (SHOW PROCESSLIST of other accounts' threads).
func (s *Session) CanSeeAllProcesses() bool { return s.account().Global&catalog.PrivProcess != 0 }

// mayKill checks KILL of a thread owned by owner (its login user name): one's own threads always;
// another user's with SUPER or CONNECTION_ADMIN, else 1095.
func (s *Session) mayKill(id uint32, owner string) error {
	if owner == s.User || s.hasAdmin("CONNECTION_ADMIN") {
		return nil
	}
	return sqlerr.New(sqlerr.ErrKillDenied, "You are not owner of thread %d", id)
}

// need is one privilege a statement needs.
type need struct {
	db, table string // table "" = database level; db "" = global
	priv      catalog.Priv
	command   string // the command named in 1142 (default: the first missing privilege)
}

// privGate is what a statement needs: tables and databases with privileges.
type privGate struct {
	s     *Session
	needs []need
	depth int
}

func (g *privGate) add(db, table string, p catalog.Priv) {
	g.needs = append(g.needs, need{db: db, table: table, priv: p})
}

func (g *privGate) dbOf(n string) string {
	if n == "" {
		return g.s.CurDB
	}
	return n
}

// tablesRead adds SELECT on every table a node reads (FROM items, subqueries), and expands views.
func (g *privGate) tablesRead(n ast.Node, skip map[*ast.TableName]bool) {
	if n == nil {
		return
	}
	v := &tableCollector{skip: skip}
	n.Accept(v)
	for _, tn := range v.tables {
		g.table(tn, catalog.PrivSelect)
	}
}

// table adds a need on a named table; a view's body is checked too (invoker's rights).
func (g *privGate) table(tn *ast.TableName, p catalog.Priv) {
	db := g.dbOf(tn.Schema.O)
	if db == "" || strings.EqualFold(db, "information_schema") || strings.EqualFold(db, "performance_schema") || strings.EqualFold(db, "sys") {
		return // no database: the statement fails with 1046 on its own; virtual schemas are filtered
	}
	if g.s.isTempName(tn) {
		return // the session's own temporary table: MySQL checks no privilege on it after CREATE
	}
	g.add(db, tn.Name.O, p)
	if p&catalog.PrivSelect != 0 && g.depth < plan.MaxViewDepth {
		if v, ok := g.s.catalog().View(db, tn.Name.O); ok {
			stmts, _, err := g.s.parser.ParseSQL(v.Select)
			if err == nil && len(stmts) == 1 {
				saved := g.s.CurDB
				g.s.CurDB = v.DB
				g.depth++
				g.tablesRead(stmts[0], nil)
				g.depth--
				g.s.CurDB = saved
			}
		}
	}
}

type tableCollector struct {
	skip   map[*ast.TableName]bool
	tables []*ast.TableName
	ctes   []cteFrame // the WITH clauses in scope, innermost last
}

// cteFrame is one WITH clause while its statement is visited: the CTEs whose bodies were visited
// (defined) are in scope, and inside a WITH RECURSIVE body also the CTE being visited (current).
type cteFrame struct {
	owner   ast.Node
	w       *ast.WithClause
	defined int
	current int
}

func (v *tableCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.TableName:
		if !v.skip[x] && !v.isCTE(x) {
			v.tables = append(v.tables, x)
		}
	case *ast.CommonTableExpression:
		if f := v.top(); f != nil {
			f.current = slices.Index(f.w.CTEs, x)
		}
	default:
		if w := withOf(n); w != nil {
			v.ctes = append(v.ctes, cteFrame{owner: n, w: w, current: -1})
		}
	}
	return n, false
}

func (v *tableCollector) Leave(n ast.Node) (ast.Node, bool) {
	if f := v.top(); f != nil {
		switch {
		case f.owner == n:
			v.ctes = v.ctes[:len(v.ctes)-1]
		case f.current >= 0 && n == ast.Node(f.w.CTEs[f.current]):
			f.defined, f.current = f.current+1, -1
		}
	}
	return n, true
}

func (v *tableCollector) top() *cteFrame {
	if len(v.ctes) == 0 {
		return nil
	}
	return &v.ctes[len(v.ctes)-1]
}

// isCTE reports a table name that refers to a CTE in scope (it needs no privilege; a table the
// CTE shadows is not read). The scope is the planner's: the CTEs defined before, and under WITH
// RECURSIVE the one whose body this is.
func (v *tableCollector) isCTE(tn *ast.TableName) bool {
	if tn.Schema.O != "" {
		return false
	}
	for i := len(v.ctes) - 1; i >= 0; i-- {
		f := v.ctes[i]
		n := f.defined
		if f.current >= 0 && f.w.IsRecursive {
			n = f.current + 1
		}
		for _, c := range f.w.CTEs[:n] {
			if c.Name.L == tn.Name.L {
				return true
			}
		}
	}
	return false
}

// withOf is the WITH clause a statement or query carries, if any.
func withOf(n ast.Node) *ast.WithClause {
	switch x := n.(type) {
	case *ast.SelectStmt:
		return x.With
	case *ast.SetOprStmt:
		return x.With
	case *ast.UpdateStmt:
		return x.With
	case *ast.DeleteStmt:
		return x.With
	}
	return nil
}

// refsColumns reports whether expressions read columns (UPDATE/DELETE then need SELECT too).
func refsColumns(nodes ...ast.Node) bool {
	found := false
	for _, n := range nodes {
		if n == nil {
			continue
		}
		n.Accept(visitFunc(func(n ast.Node) bool {
			if _, ok := n.(*ast.ColumnNameExpr); ok {
				found = true
			}
			return !found
		}))
	}
	return found
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Enter(n ast.Node) (ast.Node, bool) { return n, !f(n) }
func (f visitFunc) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// targets lists the base tables of a DML statement's table references.
func targets(refs *ast.TableRefsClause) []*ast.TableName {
	if refs == nil {
		return nil
	}
	var out []*ast.TableName
	var walk func(n ast.ResultSetNode)
	walk = func(n ast.ResultSetNode) {
		switch x := n.(type) {
		case *ast.Join:
			if x.Left != nil {
				walk(x.Left)
			}
			if x.Right != nil {
				walk(x.Right)
			}
		case *ast.TableSource:
			if tn, ok := x.Source.(*ast.TableName); ok {
				out = append(out, tn)
			}
		}
	}
	walk(refs.TableRefs)
	return out
}

// grantTables are the mysql schema's grant tables, which Kiln serves from the accounts.
func isGrantTable(db, table string) bool {
	if !strings.EqualFold(db, "mysql") {
		return false
	}
	switch strings.ToLower(table) {
	case "user", "db", "tables_priv", "columns_priv", "procs_priv", "proxies_priv", "global_grants", "role_edges", "default_roles":
		return true
	}
	return false
}

// authorize checks a statement against the session's privileges before it runs.
func (s *Session) authorize(st ast.StmtNode) error {
	// Writes to the grant tables are refused for everyone: accounts change only through the
	// account statements (which replicate as catalog records).
	if err := s.refuseGrantTableWrite(st); err != nil {
		return err
	}
	a := s.account()
	if a.Global&(catalog.PrivAllGlobal&^catalog.PrivGrant) == catalog.PrivAllGlobal&^catalog.PrivGrant {
		return nil // every static privilege at the global level: every check below passes
	}
	g := &privGate{s: s}
	switch x := st.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		g.tablesRead(x, nil)
		if into := selectInto(x.(ast.ResultSetNode)); into != nil && into.Tp != ast.SelectIntoVars {
			if a.Global&catalog.PrivFile == 0 {
				return specificDenied("FILE")
			}
		}
	case *ast.InsertStmt:
		tabs := targets(x.Table)
		skip := map[*ast.TableName]bool{}
		p := catalog.PrivInsert
		if x.IsReplace {
			p |= catalog.PrivDelete
		}
		if len(x.OnDuplicate) > 0 {
			p |= catalog.PrivUpdate
		}
		for _, tn := range tabs {
			skip[tn] = true
			g.table(tn, p)
		}
		g.tablesRead(x, skip)
	case *ast.UpdateStmt:
		tabs := targets(x.TableRefs)
		skip := map[*ast.TableName]bool{}
		reads := x.Where != nil || x.Order != nil
		for _, as := range x.List {
			if refsColumns(as.Expr) {
				reads = true
			}
		}
		for _, tn := range tabs {
			skip[tn] = true
			p := catalog.PrivUpdate
			if reads || len(tabs) > 1 {
				p |= catalog.PrivSelect
			}
			g.table(tn, p)
		}
		g.tablesRead(x, skip)
	case *ast.DeleteStmt:
		tabs := targets(x.TableRefs)
		skip := map[*ast.TableName]bool{}
		for _, tn := range tabs {
			skip[tn] = true
			p := catalog.PrivDelete
			if x.Where != nil || len(tabs) > 1 {
				p |= catalog.PrivSelect
			}
			g.table(tn, p)
		}
		g.tablesRead(x, skip)
	case *ast.LoadDataStmt:
		if x.Table != nil {
			g.table(x.Table, catalog.PrivInsert)
		}
		if x.FileLocRef == ast.FileLocServerOrRemote && a.Global&catalog.PrivFile == 0 {
			return specificDenied("FILE")
		}
	case *ast.CreateDatabaseStmt:
		g.add(x.Name.O, "", catalog.PrivCreate)
	case *ast.DropDatabaseStmt:
		g.add(x.Name.O, "", catalog.PrivDrop)
	case *ast.AlterDatabaseStmt:
		g.add(g.dbOf(x.Name.O), "", catalog.PrivAlter)
	case *ast.CreateTableStmt:
		temp := x.TemporaryKeyword != ast.TemporaryNone
		if temp {
			// CREATE TEMPORARY TABLES, a database privilege, is all a temporary table needs.
			if db := g.dbOf(x.Table.Schema.O); db != "" {
				g.add(db, "", catalog.PrivCreateTmp)
			}
		} else {
			g.table(x.Table, catalog.PrivCreate)
		}
		if x.ReferTable != nil {
			g.table(x.ReferTable, catalog.PrivSelect)
		}
		if x.Select != nil {
			if !temp {
				g.table(x.Table, catalog.PrivInsert)
			}
			g.tablesRead(x.Select, nil)
		}
	case *ast.DropTableStmt:
		for _, tn := range x.Tables {
			g.table(tn, catalog.PrivDrop)
		}
	case *ast.TruncateTableStmt:
		g.table(x.Table, catalog.PrivDrop)
	case *ast.RenameTableStmt:
		for _, tt := range x.TableToTables {
			g.table(tt.OldTable, catalog.PrivAlter|catalog.PrivDrop)
			g.table(tt.NewTable, catalog.PrivCreate|catalog.PrivInsert)
		}
	case *ast.CreateIndexStmt:
		g.table(x.Table, catalog.PrivIndex)
	case *ast.DropIndexStmt:
		g.table(x.Table, catalog.PrivIndex)
	case *ast.AlterTableStmt:
		g.table(x.Table, catalog.PrivAlter|catalog.PrivCreate|catalog.PrivInsert)
		for _, spec := range x.Specs {
			if spec.Tp == ast.AlterTableRenameTable && spec.NewTable != nil {
				g.table(x.Table, catalog.PrivDrop)
				g.table(spec.NewTable, catalog.PrivCreate|catalog.PrivInsert)
			}
		}
	case *ast.CreateViewStmt:
		p := catalog.PrivCreateView
		if x.OrReplace {
			p |= catalog.PrivDrop
		}
		g.table(x.ViewName, p)
		g.tablesRead(x.Select, nil)
	case *ast.LockTablesStmt:
		// LOCK TABLES is a database-level privilege (1044 without it), plus SELECT on each table.
		for _, tl := range x.TableLocks {
			g.add(g.dbOf(tl.Table.Schema.O), "", catalog.PrivLockTables)
			g.table(tl.Table, catalog.PrivSelect)
		}
	case *ast.AnalyzeTableStmt:
		for _, tn := range x.TableNames {
			g.table(tn, catalog.PrivSelect|catalog.PrivInsert)
		}
	case *ast.FlushStmt:
		if a.Global&catalog.PrivReload == 0 {
			return specificDenied("RELOAD")
		}
	case *ast.SetStmt:
		for _, v := range x.Variables {
			if v.IsGlobal && !v.IsSystem {
				continue
			}
			if v.IsGlobal && !s.hasAdmin("SYSTEM_VARIABLES_ADMIN") {
				return specificDenied("SUPER or SYSTEM_VARIABLES_ADMIN")
			}
		}
	case *ast.ExplainStmt:
		return s.authorize(x.Stmt)
	case *ast.DoStmt:
		g.tablesRead(x, nil)
	case *ast.ShowStmt:
		return s.authorizeShow(x)
	case *ast.UseStmt:
		return s.authorizeUse(x.DBName)
	}
	return g.check()
}

// check compares every need with the account.
func (g *privGate) check() error {
	if len(g.needs) == 0 {
		return nil
	}
	a := g.s.account()
	for _, n := range g.needs {
		var have catalog.Priv
		switch {
		case n.db == "":
			have = a.Global
		case n.table == "":
			have = a.DBPrivs(n.db)
		default:
			have = a.TablePrivs(n.db, n.table)
		}
		if missing := n.priv &^ have; missing != 0 {
			if n.table == "" {
				return g.s.dbDenied(n.db)
			}
			if strings.EqualFold(n.db, "mysql") && !a.AnyInDB("mysql") && !isGrantTable(n.db, n.table) {
				return g.s.tableDenied(missing.First(), n.table)
			}
			return g.s.tableDenied(missing.First(), n.table)
		}
	}
	return nil
}

func (s *Session) refuseGrantTableWrite(st ast.StmtNode) error {
	var tabs []*ast.TableName
	switch x := st.(type) {
	case *ast.InsertStmt:
		tabs = targets(x.Table)
	case *ast.UpdateStmt:
		tabs = targets(x.TableRefs)
	case *ast.DeleteStmt:
		tabs = targets(x.TableRefs)
	case *ast.LoadDataStmt:
		if x.Table != nil {
			tabs = []*ast.TableName{x.Table}
		}
	case *ast.TruncateTableStmt:
		tabs = []*ast.TableName{x.Table}
	default:
		return nil
	}
	for _, tn := range tabs {
		db := tn.Schema.O
		if db == "" {
			db = s.CurDB
		}
		if isGrantTable(db, tn.Name.O) {
			return sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of Kiln doesn't yet support 'writing to the grant table mysql.%s; use CREATE USER, ALTER USER, GRANT and REVOKE'", strings.ToLower(tn.Name.O))
		}
	}
	return nil
}

// authorizeUse is USE / COM_INIT_DB: any privilege on the database or on something in it (1044).
func (s *Session) authorizeUse(db string) error {
	if strings.EqualFold(db, "information_schema") || s.account().AnyInDB(db) {
		return nil
	}
	return s.dbDenied(db)
}

// authorizeShow checks SHOW statements that name one object; listings filter themselves.
func (s *Session) authorizeShow(x *ast.ShowStmt) error {
	a := s.account()
	if a.Global&(catalog.PrivAllGlobal&^catalog.PrivGrant) == catalog.PrivAllGlobal&^catalog.PrivGrant {
		return nil
	}
	db := x.DBName
	if x.Table != nil {
		db = x.Table.Schema.O
	}
	if db == "" {
		db = s.CurDB
	}
	switch x.Tp {
	case ast.ShowMasterStatus, ast.ShowBinlogStatus, ast.ShowReplicaStatus:
		if a.Global&(catalog.PrivSuper|catalog.PrivReplClient) == 0 {
			return specificDenied("SUPER, REPLICATION CLIENT")
		}
	case ast.ShowTables, ast.ShowTableStatus:
		if db != "" && !strings.EqualFold(db, "information_schema") && !a.AnyInDB(db) {
			return s.dbDenied(db)
		}
	case ast.ShowCreateDatabase:
		if !a.AnyInDB(x.DBName) {
			return s.dbDenied(x.DBName)
		}
	case ast.ShowCreateTable, ast.ShowColumns, ast.ShowIndex, ast.ShowCreateView:
		if x.Table == nil || db == "" || strings.EqualFold(db, "information_schema") {
			return nil
		}
		have := a.TablePrivs(db, x.Table.Name.O)
		if x.Tp == ast.ShowCreateView {
			if have&catalog.PrivShowView == 0 {
				return s.tableDenied("SHOW VIEW", x.Table.Name.O)
			}
			return nil
		}
		if have&^catalog.PrivGrant == 0 {
			cmd := "SELECT"
			if x.Tp == ast.ShowCreateTable {
				cmd = "SHOW"
			}
			return s.tableDenied(cmd, x.Table.Name.O)
		}
	}
	return nil
}

// visibleDB reports whether listings show a database to the session (SHOW DATABASES,
// information_schema.SCHEMATA): with SHOW DATABASES, or any privilege in it.
func (s *Session) visibleDB(db string) bool {
	a := s.account()
	if a.Global&catalog.PrivShowDB != 0 || strings.EqualFold(db, "information_schema") {
		return true
	}
	return a.AnyInDB(db)
}

// visibleTable reports whether listings show a table (SHOW TABLES, information_schema.TABLES, ...).
func (s *Session) visibleTable(db, table string) bool {
	return s.account().TablePrivs(db, table)&^catalog.PrivGrant != 0
}

// authorizeKill checks KILL [QUERY] id against the thread's owner (1094 for an unknown thread is
// the server's answer).
func (s *Session) authorizeKill(id uint32) error {
	if s.db.cfg.Processes == nil || id == s.ConnID {
		return nil
	}
	for _, p := range s.db.cfg.Processes() {
		if p.ID == id {
			return s.mayKill(id, p.User)
		}
	}
	return nil
}
