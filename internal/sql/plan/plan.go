package plan

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// conjunct is one AND-ed condition with the FROM levels it reads.
type conjunct struct {
	e    expr.Expr
	refs uint64
	node ast.ExprNode
}

// splitAnd flattens a AND b AND c.
func splitAnd(n ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	if n == nil {
		return out
	}
	if p, ok := n.(*ast.ParenthesesExpr); ok {
		return splitAnd(p.Expr, out)
	}
	if b, ok := n.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
		out = splitAnd(b.L, out)
		return splitAnd(b.R, out)
	}
	return append(out, n)
}

type fromItem struct {
	tn    *ast.TableName
	sub   ast.ResultSetNode
	alias string
	left  bool
	right bool // the left side of a RIGHT JOIN, turned into the LEFT-joined item
	on    ast.ExprNode
	using []*ast.ColumnName
}

// flattenFrom turns the join tree into nested-loop order. RIGHT JOIN is rewritten as a LEFT JOIN with
// the sides swapped.
func flattenFrom(n ast.ResultSetNode, out []fromItem) ([]fromItem, error) {
	switch x := n.(type) {
	case *ast.Join:
		if x.Right == nil {
			return flattenFrom(x.Left, out)
		}
		l, r := x.Left, x.Right
		leftJoin := x.Tp == ast.LeftJoin
		if x.Tp == ast.RightJoin {
			l, r = r, l
			leftJoin = true
		}
		var err error
		if out, err = flattenFrom(l, out); err != nil {
			return nil, err
		}
		if _, ok := r.(*ast.Join); ok && leftJoin {
			return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "LEFT JOIN of a nested join is not supported yet")
		}
		start := len(out)
		if out, err = flattenFrom(r, out); err != nil {
			return nil, err
		}
		last := &out[len(out)-1]
		if leftJoin {
			out[start].left = true
			out[start].right = x.Tp == ast.RightJoin
		}
		if x.On != nil {
			if last.on != nil {
				last.on = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: last.on, R: x.On.Expr}
			} else {
				last.on = x.On.Expr
			}
		}
		last.using = append(last.using, x.Using...)
		if x.NaturalJoin {
			last.using = append(last.using, &ast.ColumnName{}) // marker: natural join, resolved later
		}
		return out, nil
	case *ast.TableSource:
		switch s := x.Source.(type) {
		case *ast.TableName:
			alias := s.Name.O
			if x.AsName.O != "" {
				alias = x.AsName.O
			}
			return append(out, fromItem{tn: s, alias: alias}), nil
		case *ast.SelectStmt, *ast.SetOprStmt:
			if x.AsName.O == "" {
				return nil, sqlerr.New(sqlerr.ErrDerivedMustHaveAlias, "Every derived table must have its own alias")
			}
			return append(out, fromItem{sub: s, alias: x.AsName.O}), nil
		case *ast.Join:
			return flattenFrom(s, out)
		}
	}
	return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported FROM clause %T", n)
}

// Planner builds plans for one statement.
type Planner struct {
	Ctx    Context
	params *int
	// The depths are int32 so that the Planner, allocated once per statement, keeps the 48-byte
	// size class it had before it held an interface and Uses.
	viewDepth    int32 // nesting of views being planned (PlanView)
	selDepth     int16 // nesting of query blocks being planned (enterSelect); at most 63
	CreatingView bool  // CREATE VIEW checks its body: errors are reported as they are
	// cte holds the common table expressions in scope (cte.go); nil until a WITH is planned.
	// One pointer, packed with the depths above, keeps the Planner in its 48-byte size class.
	cte *cteScope
	// Uses is where the planner reads its catalog snapshot and records what it resolves. The planner
	// takes no metadata lock: its caller takes them afterwards from Uses and checks (Resolve) that
	// no DDL changed what was resolved in between. Planning a named table without Uses fails.
	Uses *Uses
}

// Uses is what planning calls resolved against one catalog snapshot.
type Uses struct {
	// Cat is the catalog the planner reads (Resolve sets it; nil: the Context's current catalog).
	Cat *catalog.Catalog
	// Tables are the names resolved, in resolution order (a name met twice is listed twice).
	Tables []TableUse
}

// TableUse is one name the planner resolved: to a base table, a view, or (both nil) to nothing —
// the statement fails on it, unless DDL creates it before the caller's metadata lock is taken.
type TableUse struct {
	DB, Name string
	Table    *catalog.Table
	View     *catalog.View
}

// catalog is the snapshot the planner resolves names in.
func (p *Planner) catalog() *catalog.Catalog {
	if p.Uses != nil && p.Uses.Cat != nil {
		return p.Uses.Cat
	}
	return p.Ctx.Catalog()
}

// resolved records a resolution for the caller's metadata locks (virtual databases need none).
func (p *Planner) resolved(u TableUse) error {
	if p.Ctx.IsVirtualDB(u.DB) {
		return nil
	}
	if p.Uses == nil {
		return sqlerr.New(sqlerr.ErrUnknownError, "internal error: table %s.%s planned without a Uses record (its metadata lock would not be taken)", u.DB, u.Name)
	}
	p.Uses.Tables = append(p.Uses.Tables, u)
	return nil
}

// Stale reports whether any resolution in u differs in cur: a table or view replaced, dropped or
// created under a name u resolved since u.Cat was read.
func (u *Uses) Stale(cur *catalog.Catalog) bool {
	if cur == u.Cat {
		return false
	}
	for _, r := range u.Tables {
		t, _ := cur.Table(r.DB, r.Name)
		if t != r.Table {
			return true
		}
		if r.Table == nil {
			if v, _ := cur.View(r.DB, r.Name); v != r.View {
				return true
			}
		}
	}
	return false
}

// MaxReplans bounds how often Resolve plans again because DDL kept changing what a statement
// resolved; past it the statement fails with ER_TABLE_DEF_CHANGED (1412), as MySQL's does.
const MaxReplans = 10

// Resolve runs build — planning calls recording into u — against the current catalog, then lock,
// the caller's metadata locks for what build resolved (u.Tables, in resolution order). If DDL
// changed any of it in between, build runs again: the locks now held keep what it resolved from
// changing again. build's own error is returned only after those locks are taken and it is known
// not to come from a stale snapshot (a table another session was creating, for example). This is
// how the facade and the statement runners take the locks the planner itself never takes.
func Resolve(ctx Context, u *Uses, lock func([]TableUse) error, build func() error) error {
	for try := 0; ; try++ {
		u.Cat, u.Tables = ctx.Catalog(), u.Tables[:0]
		err := build()
		if lerr := lock(u.Tables); lerr != nil {
			return lerr
		}
		if !u.Stale(ctx.Catalog()) {
			return err
		}
		if try == MaxReplans {
			return sqlerr.New(sqlerr.ErrTableDefChanged, "Table definition has changed, please retry transaction")
		}
	}
}

// VirtualTables is how the planner reaches information_schema, mysql.* and the cluster tables. Their
// rows are internal/sql/infoschema's (infoschema.VirtualTable); the facade's session implements this
// interface (show.go) by turning an infoschema.Table into a static *exec.Select.
type VirtualTables interface {
	// VirtualTable returns the plan of db.name, listing only what the session may see, or false if
	// db.name is no virtual table.
	VirtualTable(db, name string) (*exec.Select, bool)
	// IsVirtualDB reports a database whose tables are all virtual (information_schema, mysql,
	// performance_schema, sys): it takes no metadata lock and is never "unknown".
	IsVirtualDB(db string) bool
}

// Context is all the planner reads of the session: a small consumer-side interface, so the
// planner does not depend on the facade (issue 14). The facade's *Session implements it through
// its planSession type (internal/sql/plancontext.go).
type Context interface {
	VirtualTables
	// CurrentDB is the session's default database; SetCurrentDB changes it while a view's body is
	// planned (the view's own database is its default) and back.
	CurrentDB() string
	SetCurrentDB(db string)
	// Catalog is the current catalog (Resolve's snapshot; the planner reads Uses.Cat).
	Catalog() *catalog.Catalog
	// FullGroupBy reports sql_mode ONLY_FULL_GROUP_BY.
	FullGroupBy() bool
	// ConnCollation is collation_connection's collation.
	ConnCollation() *types.Collation
	// EnterExpr and LeaveExpr count the compiler's recursion depth for the whole statement (all
	// compilers of one statement share it): EnterExpr fails past the nesting limit.
	EnterExpr() error
	LeaveExpr()
	// LookupUserVar returns a user variable's value and whether it is set (its type is the type of
	// an expression reading it).
	LookupUserVar(name string) (types.Value, bool)
	// ParseSQL parses a stored statement (a view's body) with the session's parser.
	ParseSQL(sql string) ([]ast.StmtNode, error)
}

// virtualTables returns the planner's virtual tables (the session's).
func (p *Planner) virtualTables() VirtualTables { return p.Ctx }

// PlanResultSet plans a SELECT (or UNION) with an optional enclosing scope for correlated references.
func (p *Planner) PlanResultSet(n ast.ResultSetNode, parent *Scope) (*exec.Select, error) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		return p.PlanSelect(x, parent)
	case *ast.SetOprStmt:
		return p.planUnion(x, parent)
	}
	return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported query %T", n)
}

func (p *Planner) NewCompiler(sc *Scope) *Compiler {
	return &Compiler{s: p.Ctx, sc: sc, params: p.params, planSub: func(c *Compiler, sel ast.ResultSetNode) (*subPlan, error) {
		sp, err := p.PlanResultSet(sel, c.sc)
		if err != nil {
			return nil, err
		}
		return &subPlan{plan: sp}, nil
	}}
}

// PlanSelect plans one SELECT query block (not a UNION), counting it against the nesting limit.
func (p *Planner) PlanSelect(sel *ast.SelectStmt, parent *Scope) (*exec.Select, error) {
	if err := p.enterSelect(); err != nil {
		return nil, err
	}
	defer func() { p.selDepth-- }()
	return p.planSelectOrdered(sel, parent, nil)
}

// enterSelect counts one more query block being planned inside the current one (subquery, derived
// table, view, UNION member): MySQL allows 63 (maxSelectNesting).
func (p *Planner) enterSelect() error {
	if p.selDepth >= maxSelectNesting {
		return errSelectNesting()
	}
	p.selDepth++
	return nil
}

// selectBuilder carries one query block's plan from step to step of planSelectOrdered. It lives on
// the planner's stack for one pass: nothing keeps it after the plan is returned. Small slices that
// one step hands to a later one (fieldProj) stay locals of planSelectOrdered instead of fields: a
// slice stored in the builder escapes to the heap with the pointers beside it, one more allocation
// per statement on the point-select path.
type selectBuilder struct {
	p      *Planner
	sel    *ast.SelectStmt
	parent *Scope // enclosing query block, for correlated references
	pl     *exec.Select
	sc     *Scope
	cat    *catalog.Catalog // the catalog as of the last metadata lock taken

	items []fromItem // FROM items in nested-loop order
	order []int      // order[level] is the FROM item's written position; nil: as written
	c     *Compiler  // compiles expressions over the joined row

	// levels[level]: the executor's node of each level (b.pl.Levels points into it) beside what
	// only the planner keeps of it.
	levels []plannedLevel

	aggNodes []*ast.AggregateFuncExpr
	winNodes []*ast.WindowFuncExpr // window function calls of the select list and ORDER BY
	winc     *Compiler             // post2 that also reads window results (nil: no window functions)
	post2    *Compiler             // compiles expressions over the aggregated row (c when not grouped)
	gc       *groupCheck           // ONLY_FULL_GROUP_BY, nil when off or not grouped

	outerAliases map[string]bool // lower-case aliases on an outer join's NULL side (nullFilled)
}

// levelPlan is what the planner keeps of one level beside the executor's node: the conditions
// placed at it and the FROM item's index hints (AST the executor never sees).
type levelPlan struct {
	conds []*conjunct
	hints []*ast.IndexHint
}

// plannedLevel allocates a level's node and its levelPlan together, all levels of a query block
// in one slice: no allocation more than when the conditions were fields of the level itself.
type plannedLevel struct {
	exec.Level
	levelPlan
}

// planSelectOrdered plans one query block with the FROM items in the given nested-loop order (nil:
// as written; step 4 may then choose a better order for inner joins and plan again). The steps, in
// the order they run (each reads what the earlier ones left in the selectBuilder):
//  1. Build levels (buildLevels): flatten the join tree, resolve each FROM item to a base table,
//     view, virtual table or derived table, and add its columns to the scope. Resolving a name
//     records it in Uses; the caller locks it after planning and plans again if DDL changed it.
//  2. USING and NATURAL joins become equality ON conditions (usingConditions).
//  3. Place conjuncts (placeConjuncts): each ON condition goes to its own level, or to the deepest
//     level it reads for inner joins; each WHERE conjunct to the first level that has all its
//     columns, or after the join when it reads a LEFT-joined level.
//  4. Order joins (joinOrder): for three or more inner-joined tables, pick an order where each new
//     level is connected to the placed ones by a condition, and plan again in that order.
//  5. Aggregation (planGroupBy, planAggregates): GROUP BY items (and, with ONLY_FULL_GROUP_BY, the
//     check they define), aggregate calls, and the compiler for expressions over the aggregated row;
//     window functions (planWindows), only when the block has some or a WINDOW clause.
//  6. Projection (planSelectList, checkSelectListGrouping): the select list with wildcards
//     expanded, and the ONLY_FULL_GROUP_BY check of it.
//  7. HAVING (planHaving), which may name select-list aliases; without grouping it filters rows.
//  8. Ordering, LIMIT and the locking clause (planOrderBy, planLimit, lockMode).
//  9. Choose the access path of each level and its filter (chooseLevelAccess). This runs last
//     because it depends on all of the above: the conditions placed at the level, the columns the
//     query reads (a covering index), and ORDER BY/LIMIT (an index that delivers the order).
func (p *Planner) planSelectOrdered(sel *ast.SelectStmt, parent *Scope, order []int) (*exec.Select, error) {
	if sel.Kind == ast.SelectStmtKindValues || sel.Kind == ast.SelectStmtKindTable {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "VALUES/TABLE statements are not supported yet")
	}
	if sel.With != nil && order == nil {
		restore, err := p.PushWith(sel.With)
		if err != nil {
			return nil, err
		}
		defer restore()
	}
	b := selectBuilder{p: p, sel: sel, parent: parent, pl: &exec.Select{Distinct: sel.Distinct}, sc: &Scope{parent: parent}, order: order}
	if err := b.buildLevels(); err != nil { // 1
		return nil, err
	}
	b.c = p.NewCompiler(b.sc)
	if err := b.usingConditions(); err != nil { // 2
		return nil, err
	}
	if err := b.placeConjuncts(); err != nil { // 3
		return nil, err
	}
	if order == nil && len(b.items) > 2 { // 4
		if o := joinOrder(b.items, b.levels); o != nil {
			return p.planSelectOrdered(sel, parent, o)
		}
	}
	if err := b.planGroupBy(); err != nil { // 5
		return nil, err
	}
	if err := b.planAggregates(); err != nil {
		return nil, err
	}
	if len(b.winNodes) > 0 || len(sel.WindowSpecs) > 0 {
		if err := b.planWindows(); err != nil {
			return nil, err
		}
	}
	fieldProj := make([]int, len(sel.Fields.Fields))    // projection index of each select field
	if err := b.planSelectList(fieldProj); err != nil { // 6
		return nil, err
	}
	if err := b.checkSelectListGrouping(); err != nil {
		return nil, err
	}
	if err := b.planHaving(); err != nil { // 7
		return nil, err
	}
	if err := b.planOrderBy(fieldProj); err != nil { // 8
		return nil, err
	}
	if err := b.planLimit(); err != nil {
		return nil, err
	}
	b.pl.Lock = lockMode(sel.LockInfo)
	b.chooseLevelAccess() // 9
	b.pl.Correlated = b.sc.correlated
	return b.pl, nil
}

// buildLevels is step 1: the FROM items, in nested-loop order (b.order), become levels of the plan.
func (b *selectBuilder) buildLevels() error {
	if b.sel.From != nil {
		var err error
		if b.items, err = flattenFrom(b.sel.From.TableRefs, nil); err != nil {
			return err
		}
	}
	if len(b.items) > 61 {
		return sqlerr.New(sqlerr.ErrTooManyTables, "Too many tables; MySQL can only use 61 tables in a join")
	}
	if b.order != nil {
		reordered := make([]fromItem, len(b.items))
		for li, oi := range b.order {
			reordered[li] = b.items[oi]
		}
		b.items = reordered
	}
	b.cat = b.p.catalog()
	b.levels = make([]plannedLevel, len(b.items))
	for li, it := range b.items {
		lv := &b.levels[li].Level
		*lv = exec.Level{Alias: it.alias, Off: len(b.sc.Cols), Left: it.left}
		if def, idx := b.p.lookupCTE(it.tn); def != nil {
			if err := b.cteLevel(lv, li, it, def, idx); err != nil {
				return err
			}
		} else if it.tn != nil {
			if err := b.namedLevel(lv, li, it); err != nil {
				return err
			}
		} else if doc, marker, ok := jsonTableSource(it.sub); ok {
			if err := b.jsonTableLevel(lv, li, it, doc, marker); err != nil {
				return err
			}
		} else {
			sub, err := b.p.PlanResultSet(it.sub, b.parent)
			if err != nil {
				return err
			}
			if sub.Correlated {
				// The derived table reads an enclosing query's row (MySQL 8.0.14's outer
				// references), reaching past this block's own scope, which its chain skips: this
				// block must then run again for each of that query's rows, not once and cached.
				b.sc.correlated = true
			}
			setSub(lv, b.sc, sub, "", it.alias, "", li)
		}
		b.pl.Levels = append(b.pl.Levels, lv)
	}
	b.pl.Width = len(b.sc.Cols)
	return nil
}

// namedLevel resolves a FROM item that names a table: a base table, else a view, else a virtual
// table (information_schema and the like), recording what it resolves for the caller's metadata locks.
func (b *selectBuilder) namedLevel(lv *exec.Level, li int, it fromItem) error {
	p, sc := b.p, b.sc
	db := it.tn.Schema.O
	if db == "" {
		db = p.Ctx.CurrentDB()
		if db == "" {
			return sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
	}
	cat := b.cat
	tbl, ok := cat.Table(db, it.tn.Name.O)
	if !ok {
		if v, ok := cat.View(db, it.tn.Name.O); ok {
			if err := p.resolved(TableUse{DB: db, Name: it.tn.Name.O, View: v}); err != nil {
				return err
			}
			sub, err := p.PlanView(v, int(p.viewDepth))
			if err != nil {
				return err
			}
			setSub(lv, sc, sub, db, it.alias, v.Name, li)
			return nil
		}
		if vt, ok := p.virtualTables().VirtualTable(db, it.tn.Name.O); ok {
			lv.Sub = vt
			lv.Width = len(vt.Cols)
			for _, c := range vt.Cols {
				sc.Cols = append(sc.Cols, ScopeCol{db: db, table: it.alias, orgTable: it.tn.Name.O, Name: c.Name, T: ColTypeOf(c), level: li})
			}
			return nil
		}
		if err := p.resolved(TableUse{DB: db, Name: it.tn.Name.O}); err != nil {
			return err
		}
		return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, it.tn.Name.O)
	}
	if err := p.resolved(TableUse{DB: db, Name: it.tn.Name.O, Table: tbl}); err != nil {
		return err
	}
	for _, other := range b.pl.Levels {
		if strings.EqualFold(other.Alias, it.alias) {
			return sqlerr.New(sqlerr.ErrNonUniqTable, "Not unique table/alias: '%s'", it.alias)
		}
	}
	lv.Acc = &exec.Access{Tbl: tbl, Idx: tbl.Indexes[0], Kind: exec.AccFull}
	b.levels[li].hints = it.tn.IndexHints
	lv.Width = len(tbl.Columns)
	for _, c := range tbl.Columns {
		sc.Cols = append(sc.Cols, ScopeCol{db: tbl.DB, table: it.alias, orgTable: tbl.Name, Name: c.Name, T: c.Type, col: c, level: li, notNull: c.NotNull})
		if c.Hidden {
			sc.Cols[len(sc.Cols)-1].Name = "" // not addressable by name
		}
	}
	return nil
}

// usingConditions is step 2: USING / NATURAL joins become equality conditions ANDed to the ON
// condition of the joined item.
func (b *selectBuilder) usingConditions() error {
	sc, items := b.sc, b.items
	for li, it := range items {
		for _, u := range it.using {
			names := []string{u.Name.O}
			if u.Name.O == "" { // NATURAL: the named columns an earlier level also has
				names = nil
				for _, col := range sc.Cols {
					if col.level == li && col.Name != "" {
						for _, oc := range sc.Cols {
							if oc.level < li && strings.EqualFold(oc.Name, col.Name) {
								names = append(names, col.Name)
								break
							}
						}
					}
				}
			}
			for _, name := range names {
				var lIdx, rIdx = -1, -1
				for i, col := range sc.Cols {
					if strings.EqualFold(col.Name, name) {
						if col.level < li && lIdx < 0 {
							lIdx = i
						} else if col.level == li {
							rIdx = i
						}
					}
				}
				if lIdx < 0 || rIdx < 0 {
					return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'from clause'", name)
				}
				eq := &ast.BinaryOperationExpr{Op: opcode.EQ,
					L: &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(sc.Cols[lIdx].table), Name: ast.NewCIStr(sc.Cols[lIdx].Name)}},
					R: &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(sc.Cols[rIdx].table), Name: ast.NewCIStr(sc.Cols[rIdx].Name)}}}
				if items[li].on == nil {
					items[li].on = eq
				} else {
					items[li].on = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: items[li].on, R: eq}
				}
			}
		}
	}
	return nil
}

// placeConjuncts is step 3. ON conditions belong to their level (for an inner join, to the deepest
// level they read); WHERE conjuncts go to the first level that has all their columns, unless they
// read a LEFT-joined level (then they filter after the join: pl.where).
func (b *selectBuilder) placeConjuncts() error {
	pl, c := b.pl, b.c
	var post []expr.Expr
	for li, it := range b.items {
		for _, n := range splitAnd(it.on, nil) {
			c.refs = 0
			e, err := c.Compile(n)
			if err != nil {
				return err
			}
			target := li
			if !it.left {
				target = maxLevel(c.refs, li)
			}
			b.levels[target].conds = append(b.levels[target].conds, &conjunct{e: e, refs: c.refs, node: n})
		}
	}
	if b.sel.Where != nil {
		for _, n := range splitAnd(b.sel.Where, nil) {
			c.refs = 0
			e, err := c.Compile(n)
			if err != nil {
				return err
			}
			if len(pl.Levels) == 0 {
				post = append(post, e)
				continue
			}
			target := maxLevel(c.refs, 0)
			readsLeft := false
			for li := 0; li <= target; li++ {
				if pl.Levels[li].Left && c.refs&(1<<uint(li)) != 0 {
					readsLeft = true
				}
			}
			if readsLeft {
				post = append(post, e)
				continue
			}
			b.levels[target].conds = append(b.levels[target].conds, &conjunct{e: e, refs: c.refs, node: n})
		}
	}
	pl.Where = andAll(post)
	b.propagateConstants()
	return nil
}

// propagateConstants adds `a = v` wherever the conditions placed at inner-joined levels say
// `a = b` and `b = v`, for integer columns a and b and v a constant or a parameter (MySQL's
// equality propagation): the derived condition can then bound a's index. go-tpc's New-Order reads
// `FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?`, which
// without `c_w_id = ?` scanned the whole customer table. Integers only: numeric equality is
// transitive, while comparisons of strings in different collations, or of strings with numbers,
// are not. A level on the NULL-filled side of a LEFT JOIN takes no derived condition (its ON
// condition decides whether it matches; a WHERE condition on it stays after the join).
func (b *selectBuilder) propagateConstants() {
	sc := b.sc
	isInt := func(e expr.Expr) (*expr.Col, bool) {
		c, ok := e.(*expr.Col)
		if !ok || c.Idx >= len(sc.Cols) || b.levels[sc.Cols[c.Idx].level].Left {
			return nil, false
		}
		t := sc.Cols[c.Idx].T
		return c, t.IsInteger()
	}
	isValue := func(e expr.Expr) bool {
		switch e.(type) {
		case *expr.Const, *expr.Param:
			return true
		}
		return false
	}
	values := map[int]expr.Expr{} // scope index -> the value it equals
	type pair struct{ a, b *expr.Col }
	var pairs []pair
	for li := range b.levels {
		if b.levels[li].Left {
			continue
		}
		for _, cj := range b.levels[li].conds {
			c, ok := cj.e.(*expr.Cmp)
			if !ok || c.Op != opcode.EQ {
				continue
			}
			l, lok := isInt(c.L)
			r, rok := isInt(c.R)
			switch {
			case lok && rok:
				pairs = append(pairs, pair{l, r})
			case lok && isValue(c.R):
				if _, seen := values[l.Idx]; !seen {
					values[l.Idx] = c.R
				}
			case rok && isValue(c.L):
				if _, seen := values[r.Idx]; !seen {
					values[r.Idx] = c.L
				}
			}
		}
	}
	if len(pairs) == 0 || len(values) == 0 {
		return
	}
	for changed := true; changed; {
		changed = false
		for _, p := range pairs {
			for _, d := range [2][2]*expr.Col{{p.a, p.b}, {p.b, p.a}} {
				to, from := d[0], d[1]
				v, ok := values[from.Idx]
				if _, has := values[to.Idx]; !ok || has {
					continue
				}
				values[to.Idx] = v
				li := sc.Cols[to.Idx].level
				e := &expr.Cmp{Typed: expr.Typed{T: expr.TBool}, Op: opcode.EQ, L: to, R: v}
				b.levels[li].conds = append(b.levels[li].conds, &conjunct{e: e, refs: 1 << uint(li)})
				changed = true
			}
		}
	}
}

// findField finds the select field a name in GROUP BY / HAVING / ORDER BY refers to: an explicit
// alias first, then an unaliased plain column of that name. It returns -1 for none.
func findField(fields []*ast.SelectField, name string) int {
	for i, f := range fields {
		if f.WildCard != nil {
			continue
		}
		if f.AsName.O != "" && strings.EqualFold(f.AsName.O, name) {
			return i
		}
	}
	for i, f := range fields {
		if f.WildCard == nil && f.AsName.O == "" {
			if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok && strings.EqualFold(cn.Name.Name.O, name) {
				return i
			}
		}
	}
	return -1
}

// planGroupBy is step 5's first half: the GROUP BY items, where a position names a select field
// and a name that is no column of the scope names a select-list alias. With ONLY_FULL_GROUP_BY it
// also prepares the check (b.gc) that steps 6 and 8 apply to the select list and ORDER BY.
func (b *selectBuilder) planGroupBy() error {
	sel, pl, sc := b.sel, b.pl, b.sc
	b.aggNodes, b.winNodes = collectAggs(sel)
	pl.Grouped = len(b.aggNodes) > 0 || sel.GroupBy != nil
	var groupNodes []ast.ExprNode // GROUP BY items after alias and position resolution
	if sel.GroupBy != nil {
		fields := sel.Fields.Fields
		for _, item := range sel.GroupBy.Items {
			n := item.Expr
			if pos, ok := n.(*ast.PositionExpr); ok {
				if pos.N < 1 || pos.N > len(fields) || fields[pos.N-1].WildCard != nil {
					return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%d' in 'group statement'", pos.N)
				}
				n = fields[pos.N-1].Expr
			} else if cn, ok := n.(*ast.ColumnNameExpr); ok && cn.Name.Table.O == "" {
				if i, _ := sc.find("", "", cn.Name.Name.O); i < 0 {
					if fi := findField(fields, cn.Name.Name.O); fi >= 0 {
						n = fields[fi].Expr
					}
				}
			}
			if containsAgg(n) {
				return sqlerr.New(sqlerr.ErrWrongGroupField, "Can't group on '%s'", exprText(n))
			}
			e, err := b.c.Compile(n)
			if err != nil {
				return err
			}
			pl.GroupBy = append(pl.GroupBy, e)
			groupNodes = append(groupNodes, n)
		}
	}
	if pl.Grouped && b.p.Ctx.FullGroupBy() {
		b.gc = newGroupCheck(sc, pl, sel, groupNodes)
	}
	return nil
}

// planAggregates is step 5's second half: one exec.Agg per aggregate call, then the compiler for
// expressions over the aggregated row (the joined row followed by the aggregate results).
func (b *selectBuilder) planAggregates() error {
	pl := b.pl
	for _, a := range b.aggNodes {
		spec, err := b.aggregate(a)
		if err != nil {
			return err
		}
		pl.Aggs = append(pl.Aggs, spec)
	}
	b.post2 = b.c
	if pl.Grouped {
		b.post2 = b.p.NewCompiler(b.sc)
		b.post2.aggs = b.aggNodes
		b.post2.aggBase = int32(pl.Width)
		for _, a := range pl.Aggs {
			b.post2.aggTypes = append(b.post2.aggTypes, a.T)
		}
	}
	return nil
}

// aggregate compiles one aggregate call: its arguments, GROUP_CONCAT's separator and ORDER BY, and
// COUNT(constant) as COUNT(*).
func (b *selectBuilder) aggregate(a *ast.AggregateFuncExpr) (exec.Agg, error) {
	return b.aggregateWith(a, b.c)
}

// aggregateWith compiles an aggregate's arguments with c: the joined row's compiler for a GROUP
// BY aggregate, the aggregated row's for an aggregate OVER a window (which may hold aggregates).
func (b *selectBuilder) aggregateWith(a *ast.AggregateFuncExpr, c *Compiler) (exec.Agg, error) {
	spec := exec.Agg{Fn: strings.ToLower(a.F), Distinct: a.Distinct}
	args := a.Args
	if spec.Fn == "group_concat" {
		spec.Sep = ","
		if len(args) > 1 {
			if v, ok := args[len(args)-1].(*driver.ValueExpr); ok {
				spec.Sep = v.GetString()
			}
			args = args[:len(args)-1]
		}
	}
	if spec.Fn == "count" && len(args) == 1 {
		if v, ok := args[0].(*driver.ValueExpr); ok && v.Datum.Kind() != driver.KindNull && !a.Distinct {
			spec.Star = true
		}
	}
	for _, an := range args {
		if c == b.c && containsAgg(an) {
			return spec, sqlerr.New(sqlerr.ErrInvalidGroupFuncUse, "Invalid use of group function")
		}
		e, err := c.Compile(an)
		if err != nil {
			return spec, err
		}
		spec.Args = append(spec.Args, e)
	}
	if spec.Fn == "group_concat" && a.Order != nil {
		nArgs := len(spec.Args)
		for _, item := range a.Order.Items {
			// ORDER BY n names the n-th GROUP_CONCAT argument.
			if pos, ok := item.Expr.(*ast.PositionExpr); ok && pos.P == nil {
				if pos.N < 1 || pos.N > nArgs {
					return spec, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%d' in 'order clause'", pos.N)
				}
				spec.Order = append(spec.Order, exec.SortKey{Idx: pos.N - 1, Desc: item.Desc})
				continue
			}
			e, err := c.Compile(item.Expr)
			if err != nil {
				return spec, err
			}
			spec.Order = append(spec.Order, exec.SortKey{Idx: len(spec.Args), Desc: item.Desc})
			spec.Args = append(spec.Args, e)
		}
		spec.NOrder = len(spec.Args) - nArgs
	}
	spec.T = aggResultType(spec)
	return spec, nil
}

// planSelectList is step 6: the projection, with wildcards expanded in the FROM clause's written
// order, and the column definitions sent to the client.
func (b *selectBuilder) planSelectList(fieldProj []int) error {
	pl, sc, post2 := b.pl, b.sc, b.projCompiler()
	fields := b.sel.Fields.Fields
	var projNames []proto.Column
	for fi, f := range fields {
		fieldProj[fi] = len(pl.Proj)
		if f.WildCard != nil {
			n := 0
			for _, i := range writtenColumns(sc, len(b.items), b.order) {
				col := sc.Cols[i]
				if col.Name == "" {
					continue
				}
				if f.WildCard.Table.O != "" && !strings.EqualFold(col.table, f.WildCard.Table.O) {
					continue
				}
				if f.WildCard.Schema.O != "" && !strings.EqualFold(col.db, f.WildCard.Schema.O) {
					continue
				}
				sc.Cols[i].used = true
				pl.Proj = append(pl.Proj, &expr.Col{Typed: expr.Typed{T: col.T}, Idx: i, Name: col.Name})
				projNames = append(projNames, ResultColumn(col.Name, &sc.Cols[i], col.T))
				n++
			}
			if n == 0 {
				if f.WildCard.Table.O != "" {
					return sqlerr.New(sqlerr.ErrBadTable, "Unknown table '%s'", f.WildCard.Table.O)
				}
				if len(pl.Levels) == 0 {
					return sqlerr.New(sqlerr.ErrNoTablesUsed, "No tables used")
				}
			}
			continue
		}
		post2.refs = 0
		e, err := post2.Compile(f.Expr)
		if err != nil {
			return err
		}
		if pl.Grouped {
			if err := b.p.checkGroupedField(sc, f.Expr, e); err != nil {
				return err
			}
		}
		name := f.AsName.O
		if name == "" {
			name = fieldName(f)
		}
		var sc0 *ScopeCol
		if ce, ok := e.(*expr.Col); ok && !pl.Grouped || ok && ce.Idx < pl.Width {
			if _, isCol := f.Expr.(*ast.ColumnNameExpr); isCol {
				sc0 = &sc.Cols[ce.Idx]
			}
		}
		pl.Proj = append(pl.Proj, e)
		rc := ResultColumn(name, sc0, e.Type())
		if agg, ok := f.Expr.(*ast.AggregateFuncExpr); ok && strings.EqualFold(agg.F, ast.AggFuncCount) || sc0 == nil && b.exprNotNull(e) {
			rc.Flags |= uint16(mysql.NotNullFlag)
		}
		if sc0 != nil && (b.implicitGroup() || b.nullFilled(sc0)) {
			// Aggregates without GROUP BY give one row even over no rows: its columns are NULL.
			rc.Flags &^= uint16(mysql.NotNullFlag)
		}
		projNames = append(projNames, rc)
	}
	pl.NVisible = len(pl.Proj)
	pl.Cols = projNames
	return nil
}

// exprNotNull reports whether e cannot be NULL, as MySQL derives it (Item::maybe_null): a
// non-NULL literal, a NOT NULL column not on an outer join's NULL-filled side, and + - * unary
// minus and the functions of notNullFuncs over such arguments. Division and MOD (NULL for a zero
// divisor) and every other function stay NULL-able.
func (b *selectBuilder) exprNotNull(e expr.Expr) bool {
	switch x := e.(type) {
	case *expr.Const:
		return !x.V.IsNull()
	case *expr.Col:
		if x.Idx >= len(b.sc.Cols) || b.pl.Grouped && x.Idx >= b.pl.Width || b.implicitGroup() {
			return false
		}
		return b.sc.Cols[x.Idx].notNull && !b.nullFilled(&b.sc.Cols[x.Idx])
	case *expr.Arith:
		switch x.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul:
			return b.exprNotNull(x.L) && b.exprNotNull(x.R)
		}
	case *expr.Neg:
		return b.exprNotNull(x.E)
	case *expr.Func:
		if !notNullFuncs[x.Name()] {
			return false
		}
		for _, a := range x.Args {
			if !b.exprNotNull(a) {
				return false
			}
		}
		return true
	}
	return false
}

// nullFilled reports whether c belongs to a table on the NULL-filled side of an outer join of
// this query block (its NOT NULL then does not hold for the result).
func (b *selectBuilder) nullFilled(c *ScopeCol) bool {
	if b.sel.From == nil || c.table == "" {
		return false
	}
	if b.outerAliases == nil {
		b.outerAliases = map[string]bool{}
		OuterSides(b.sel.From.TableRefs, false, b.outerAliases)
	}
	return b.outerAliases[strings.ToLower(c.table)]
}

// OuterSides collects, by lower-case alias, the tables on the NULL-filled side of an outer join
// in n: their columns may be NULL whatever their definition says (the result metadata's NOT NULL
// and CREATE TABLE ... SELECT's column definitions both read it).
func OuterSides(n ast.ResultSetNode, nullable bool, out map[string]bool) {
	switch j := n.(type) {
	case *ast.Join:
		left, right := nullable, nullable
		switch j.Tp {
		case ast.LeftJoin:
			right = true
		case ast.RightJoin:
			left = true
		}
		OuterSides(j.Left, left, out)
		if j.Right != nil {
			OuterSides(j.Right, right, out)
		}
	case *ast.TableSource:
		name := j.AsName.L
		if tn, ok := j.Source.(*ast.TableName); ok && name == "" {
			name = tn.Name.L
		}
		if nullable && name != "" {
			out[name] = true
		}
		if inner, ok := j.Source.(*ast.Join); ok {
			OuterSides(inner, nullable, out)
		}
	}
}

// implicitGroup reports aggregation without GROUP BY.
func (b *selectBuilder) implicitGroup() bool {
	return b.pl.Grouped && (b.sel.GroupBy == nil || len(b.sel.GroupBy.Items) == 0)
}

// notNullFuncs are the builtins MySQL types NOT NULL when their arguments are.
var notNullFuncs = map[string]bool{
	"upper": true, "lower": true, "ucase": true, "lcase": true, "concat": true, "trim": true,
	"ltrim": true, "rtrim": true, "reverse": true, "length": true, "octet_length": true,
	"char_length": true, "character_length": true, "bit_length": true, "abs": true,
}

// checkSelectListGrouping is step 6's ONLY_FULL_GROUP_BY check of the select list (a wildcard
// checks each column it expands to).
func (b *selectBuilder) checkSelectListGrouping() error {
	if b.gc == nil {
		return nil
	}
	sc := b.sc
	for fi, f := range b.sel.Fields.Fields {
		if f.WildCard != nil {
			for _, i := range writtenColumns(sc, len(b.items), b.order) {
				col := sc.Cols[i]
				if col.Name == "" || f.WildCard.Table.O != "" && !strings.EqualFold(col.table, f.WildCard.Table.O) {
					continue
				}
				cn := &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(col.table), Name: ast.NewCIStr(col.Name)}}
				if err := b.gc.check(cn, "SELECT list", fi+1); err != nil {
					return err
				}
			}
			continue
		}
		if err := b.gc.check(f.Expr, "SELECT list", fi+1); err != nil {
			return err
		}
	}
	return nil
}

// planHaving is step 7. HAVING may name select-list aliases; an explicit alias wins over a column
// of the same name unless GROUP BY names that column (as in MySQL). Without grouping HAVING
// filters rows after the join.
func (b *selectBuilder) planHaving() error {
	sel, pl := b.sel, b.pl
	if sel.Having == nil {
		return nil
	}
	if len(b.winNodes) > 0 {
		if err := b.checkWindowAlias(sel.Having.Expr); err != nil {
			return err
		}
	}
	fields := sel.Fields.Fields
	hc := b.post2
	inAlias := false
	hc.aliases = func(name string) (expr.Expr, bool) {
		fi := findField(fields, name)
		if fi < 0 || inAlias {
			return nil, false
		}
		inAlias = true
		e, err := hc.Compile(fields[fi].Expr)
		inAlias = false
		return e, err == nil
	}
	hc.aliasFirst = func(name string) bool {
		explicit := false
		for _, f := range fields {
			if f.WildCard == nil && strings.EqualFold(f.AsName.O, name) {
				explicit = true
			}
		}
		if !explicit || sel.GroupBy == nil {
			return explicit
		}
		for _, item := range sel.GroupBy.Items {
			if cn, ok := item.Expr.(*ast.ColumnNameExpr); ok && strings.EqualFold(cn.Name.Name.O, name) {
				return false
			}
		}
		return true
	}
	h, err := hc.Compile(sel.Having.Expr)
	if err != nil {
		return err
	}
	hc.aliases, hc.aliasFirst = nil, nil
	if pl.Grouped {
		pl.Having = h
	} else {
		pl.Where = andAlso(pl.Where, h) // the post-join WHERE conjuncts, then HAVING
	}
	return nil
}

// planOrderBy is step 8's ORDER BY: each key is a sort key over the projection, reusing a visible
// column where it can and adding hidden ones otherwise. Whether a sort is needed at all is decided
// again in step 9 (an index may deliver the order).
func (b *selectBuilder) planOrderBy(fieldProj []int) error {
	sel, pl := b.sel, b.pl
	if sel.OrderBy == nil {
		return nil
	}
	for oi, item := range sel.OrderBy.Items {
		if pos, ok := item.Expr.(*ast.PositionExpr); ok {
			if pos.N < 1 || pos.N > pl.NVisible {
				return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%d' in 'order clause'", pos.N)
			}
			pl.Order = append(pl.Order, exec.SortKey{Idx: pos.N - 1, Desc: item.Desc})
			continue
		}
		if fi := b.orderByAlias(item.Expr); fi >= 0 {
			pl.Order = append(pl.Order, exec.SortKey{Idx: fieldProj[fi], Desc: item.Desc})
			continue
		}
		oc := b.projCompiler()
		oc.refs = 0
		e, err := oc.Compile(item.Expr)
		if err != nil {
			return err
		}
		if b.gc != nil {
			if err := b.gc.check(item.Expr, "ORDER BY clause", oi+1); err != nil {
				return err
			}
		}
		// Reuse a visible column when the ORDER BY expression is the same column.
		idx := -1
		if ce, ok := e.(*expr.Col); ok {
			for i := 0; i < pl.NVisible; i++ {
				if pe, ok := pl.Proj[i].(*expr.Col); ok && pe.Idx == ce.Idx {
					idx = i
					break
				}
			}
		}
		if idx < 0 {
			idx = len(pl.Proj)
			pl.Proj = append(pl.Proj, e)
		}
		pl.Order = append(pl.Order, exec.SortKey{Idx: idx, Desc: item.Desc})
	}
	// ENUM and SET sort by member index / bitmask, as in MySQL: sort on a hidden column.
	for i, k := range pl.Order {
		if tp := pl.Proj[k.Idx].Type().Tp; tp == mysql.TypeEnum || tp == mysql.TypeSet {
			pl.Order[i].Idx = len(pl.Proj)
			pl.Proj = append(pl.Proj, expr.NumericContext(pl.Proj[k.Idx]))
		}
	}
	pl.SortNeeded = len(pl.Order) > 0
	return nil
}

// orderByAlias returns the select field an unqualified ORDER BY name is the explicit alias of, or
// -1: an alias wins over a column of the same name in ORDER BY.
func (b *selectBuilder) orderByAlias(n ast.ExprNode) int {
	cn, ok := n.(*ast.ColumnNameExpr)
	if !ok || cn.Name.Table.O != "" {
		return -1
	}
	for i, f := range b.sel.Fields.Fields {
		if f.WildCard == nil && f.AsName.O != "" && strings.EqualFold(f.AsName.O, cn.Name.Name.O) {
			return i
		}
	}
	return -1
}

// planLimit is step 8's LIMIT and OFFSET, compiled over the joined row (they are constants or
// placeholders; the compiler rejects anything else).
func (b *selectBuilder) planLimit() error {
	lim := b.sel.Limit
	if lim == nil {
		return nil
	}
	var err error
	if lim.Count != nil {
		if b.pl.Limit, err = b.c.Compile(lim.Count); err != nil {
			return err
		}
	}
	if lim.Offset != nil {
		if b.pl.Offset, err = b.c.Compile(lim.Offset); err != nil {
			return err
		}
	}
	return nil
}

// lockMode is step 8's locking clause: FOR UPDATE locks exclusively, FOR SHARE (LOCK IN SHARE
// MODE) shared; no clause, no lock.
func lockMode(li *ast.SelectLockInfo) txn.LockMode {
	if li == nil {
		return 0
	}
	switch li.LockType {
	case ast.SelectLockForUpdate, ast.SelectLockForUpdateNoWait, ast.SelectLockForUpdateWaitN:
		return txn.LockExclusive
	case ast.SelectLockForShare, ast.SelectLockForShareNoWait:
		return txn.LockShared
	}
	return 0
}

// chooseLevelAccess is step 9: the access path of each base-table level (chooseAccess), then the
// level's filter, and whether the level is independent of the earlier ones.
func (b *selectBuilder) chooseLevelAccess() {
	pl, sc := b.pl, b.sc
	for li, lv := range pl.Levels {
		if lv.Acc != nil {
			b.p.chooseAccess(pl, li, sc, &b.levels[li].levelPlan)
			if pl.Lock != 0 {
				lv.Acc.Lock = pl.Lock
				lv.Acc.Latest = true
			} else {
				lv.Acc.ColPos = readColPos(lv, sc)
			}
		}
		var es []expr.Expr
		lv.Indep = lv.Acc != nil && lv.Acc.Lock == 0 && !lv.Left
		for _, cj := range b.levels[li].conds {
			es = append(es, cj.e)
			if cj.refs&^(1<<uint(li)) != 0 {
				lv.Indep = false
			}
		}
		if lv.Indep {
			lv.Indep = boundsIndependent(lv.Acc, sc)
		}
		lv.Filter = andAll(es)
		if li > 0 && lv.Acc == nil && (lv.Sub != nil || lv.Fn != nil && lv.Fn.Const) {
			lv.Keys = hashKeys(lv, b.levels[li].conds)
		}
		if li > 0 && lv.Acc != nil && !lv.Indep && lv.Acc.Lock == 0 && lv.Acc.Kind != exec.AccPoint && boundsIndependent(lv.Acc, sc) {
			// The access is the same for every outer row (a full scan, or bounds of constants)
			// while an equality joins it to the earlier levels: a hash join instead of a scan per
			// outer row (MySQL 8.0.18's hash join).
			if keys := hashKeys(lv, b.levels[li].conds); len(keys) > 0 {
				var local []expr.Expr
				for _, cj := range b.levels[li].conds {
					if cj.refs&^(1<<uint(li)) == 0 {
						local = append(local, cj.e)
					}
				}
				lv.Keys, lv.Local, lv.HashScan = keys, andAll(local), true
			}
		}
		if i := impliedByBounds(lv, es); i >= 0 {
			lv.Implied = true
			lv.Residual = andAll(slices.Delete(slices.Clone(es), i, i+1))
		}
	}
}

// hashKeys returns the equality conditions placed at an inner level whose rows are read once (a
// derived table, view, CTE or constant table function, or a base table read the same way for
// every outer row) that can look its rows up by hash
// (exec.Level.Keys): `col = v`, col one of the level's columns and v a column of an earlier level,
// of an enclosing query, a constant or a parameter, both integers or both character strings
// (compared in the condition's collation). MySQL adds an index to such a materialised table
// (<auto_key0>); scanning all its rows for each outer row made go-tpc's consistency check 3.3.2.6
// (orders LEFT JOIN a derived table grouped from order_line) quadratic.
func hashKeys(lv *exec.Level, conds []*conjunct) []exec.HashKey {
	var keys []exec.HashKey
	own := func(e expr.Expr) (*expr.Col, bool) {
		c, ok := e.(*expr.Col)
		return c, ok && c.Idx >= lv.Off && c.Idx < lv.Off+lv.Width
	}
	for _, cj := range conds {
		c, ok := cj.e.(*expr.Cmp)
		if !ok || c.Op != opcode.EQ {
			continue
		}
		col, ok := own(c.L)
		probe := c.R
		if !ok {
			if col, ok = own(c.R); !ok {
				continue
			}
			probe = c.L
		}
		switch x := probe.(type) {
		case *expr.Col:
			if x.Idx >= lv.Off {
				continue
			}
		case *expr.OuterCol, *expr.Const, *expr.Param:
		default:
			continue
		}
		ct, pt := col.Type(), probe.Type()
		k := exec.HashKey{Col: col.Idx - lv.Off, Probe: probe}
		switch {
		case ct.IsInteger() && pt.IsInteger():
		case plainString(ct) && plainString(pt) && c.Coll != nil && !c.Coll.IsBinary():
			k.Coll = c.Coll
		default:
			continue
		}
		keys = append(keys, k)
	}
	return keys
}

// plainString: CHAR or VARCHAR (not ENUM, SET or the BLOB/TEXT types).
func plainString(t types.ColType) bool {
	return t.Tp == mysql.TypeString || t.Tp == mysql.TypeVarchar || t.Tp == mysql.TypeVarString
}

// impliedByBounds returns the index of the conjunct of es that level lv's range scan makes
// redundant when its bounds are exact (exec.Level.Residual), or -1. On an integer column, after
// an equality prefix, that is `col BETWEEN lo AND hi` whose lo and hi are exactly the plain read's
// range bounds, or the OR of ranges a multi-range read was built from (`col BETWEEN a AND b OR
// col BETWEEN c AND d`, with =, <, <=, >, >= and IN leaves too: sysbench's select_random_ranges
// re-checked ten BETWEENs per index entry, two thirds of its CPU). At run time the access decides
// whether the bounds were exact (integer values, keyed without conversion); otherwise the whole
// filter runs.
func impliedByBounds(lv *exec.Level, es []expr.Expr) int {
	a := lv.Acc
	if a == nil || lv.Left || a.Lock != 0 || a.Latest || len(a.Eq) >= len(a.Idx.Offsets) ||
		a.Idx.Columns[len(a.Eq)].Prefix > 0 {
		return -1
	}
	co := a.Idx.Offsets[len(a.Eq)]
	if !a.Tbl.Columns[co].Type.IsInteger() {
		return -1
	}
	isCol := func(e expr.Expr) bool {
		c, ok := e.(*expr.Col)
		return ok && c.Idx == lv.Off+co
	}
	switch {
	case a.Kind == exec.AccRange && a.Lo != nil && a.Hi != nil && a.LoIncl && a.HiIncl:
		for i, e := range es {
			if b, ok := e.(*expr.Between); ok && !b.Not && b.Lo == a.Lo && b.Hi == a.Hi && isCol(b.E) {
				return i
			}
		}
	case a.Kind == exec.AccRanges:
		for i, e := range es {
			if l, ok := e.(*expr.Logic); ok && l.Op == opcode.LogicOr {
				if rest, ok := orRangesOf(l, isCol, a.Ors); ok && len(rest) == 0 {
					return i
				}
			}
		}
	}
	return -1
}

// orRangesOf reports whether the leaves of the OR tree e, in order, are conditions on the column
// (isCol) that read as the first ranges of ors, the bounds being the very expressions (the shape
// accessChooser.leafRanges builds a multi-range read from); it returns the ranges left over.
func orRangesOf(e expr.Expr, isCol func(expr.Expr) bool, ors []exec.OrRange) ([]exec.OrRange, bool) {
	match := func(lo, hi expr.Expr, loIncl, hiIncl bool) bool {
		if len(ors) == 0 {
			return false
		}
		r := ors[0]
		if r.Lo != lo || r.Hi != hi || (lo != nil && r.LoIncl != loIncl) || (hi != nil && r.HiIncl != hiIncl) {
			return false
		}
		ors = ors[1:]
		return true
	}
	switch x := e.(type) {
	case *expr.Logic:
		if x.Op != opcode.LogicOr {
			return nil, false
		}
		rest, ok := orRangesOf(x.L, isCol, ors)
		if !ok {
			return nil, false
		}
		return orRangesOf(x.R, isCol, rest)
	case *expr.Between:
		if !x.Not && isCol(x.E) && match(x.Lo, x.Hi, true, true) {
			return ors, true
		}
	case *expr.Cmp:
		other, op := x.R, x.Op
		if !isCol(x.L) {
			if !isCol(x.R) {
				return nil, false
			}
			other, op = x.L, flipOp(x.Op)
		}
		ok := false
		switch op {
		case opcode.EQ:
			ok = match(other, other, true, true)
		case opcode.LT, opcode.LE:
			ok = match(nil, other, false, op == opcode.LE)
		case opcode.GT, opcode.GE:
			ok = match(other, nil, op == opcode.GE, false)
		}
		if ok {
			return ors, true
		}
	case *expr.In:
		if x.Not || !isCol(x.E) {
			return nil, false
		}
		for _, v := range x.List {
			if !match(v, v, true, true) {
				return nil, false
			}
		}
		return ors, true
	}
	return nil, false
}

// readColPos is the column map a plain read of level lv decodes its rows with (exec.Access's
// ColPos): the table's, with the columns the query never reads (Scope.used, final at step 9)
// mapped to -1. nil when the query reads every column.
func readColPos(lv *exec.Level, sc *Scope) []int {
	tbl := lv.Acc.Tbl
	var out []int
	for co, c := range tbl.Columns {
		if sc.Cols[lv.Off+co].used {
			continue
		}
		if out == nil {
			out = slices.Clone(tbl.ColPos)
		}
		out[c.ID] = -1
	}
	return out
}

// boundsIndependent reports whether an access path's bounds read nothing of the earlier levels, so
// that its rows are the same for every outer row (the level can then be read once per execution).
func boundsIndependent(a *exec.Access, sc *Scope) bool {
	bounds := append(append(append([]expr.Expr(nil), a.Eq...), a.In...), a.Lo, a.Hi)
	for _, r := range a.Ors {
		bounds = append(bounds, r.Lo, r.Hi)
	}
	for _, t := range a.Tuples {
		bounds = append(bounds, t...)
	}
	indep := true
	for _, b := range bounds {
		if b == nil {
			continue
		}
		if r, ok := refsOf(b, sc); !ok || r != 0 {
			indep = false
		}
	}
	return indep
}

func maxLevel(refs uint64, min int) int {
	m := min
	for i := 0; i < 64; i++ {
		if refs&(1<<uint(i)) != 0 && i > m {
			m = i
		}
	}
	return m
}

func andAll(es []expr.Expr) expr.Expr {
	if len(es) == 0 {
		return nil
	}
	e := es[0]
	for _, x := range es[1:] {
		e = &expr.Logic{Typed: expr.Typed{T: expr.TBool}, Op: opcode.LogicAnd, L: e, R: x}
	}
	return e
}

// andAlso is andAll(append(conjuncts, x)) for e = andAll(conjuncts): the same tree, built on e.
func andAlso(e, x expr.Expr) expr.Expr {
	if e == nil {
		return x
	}
	return &expr.Logic{Typed: expr.Typed{T: expr.TBool}, Op: opcode.LogicAnd, L: e, R: x}
}

// checkGroupedField enforces nothing yet: without ONLY_FULL_GROUP_BY a non-aggregated column takes
// the value of the group's first row, which is what the aggregation operator provides.
func (p *Planner) checkGroupedField(*Scope, ast.ExprNode, expr.Expr) error { return nil }

// ResultColumn describes a select-list column for the client.
func ResultColumn(name string, sc *ScopeCol, t types.ColType) proto.Column {
	col := proto.Column{Name: name, Type: wireType(t), Length: displayLength(t), Charset: collationID(t)}
	if t.Frac > 0 {
		col.Decimals = byte(t.Frac)
	} else if t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat || expr.IsStringType(t) {
		col.Decimals = 31
		if expr.IsStringType(t) {
			col.Decimals = 0
		}
	}
	if t.Unsigned {
		col.Flags |= uint16(mysql.UnsignedFlag)
	}
	if t.Collation == "binary" || !expr.IsStringType(t) {
		col.Flags |= uint16(mysql.BinaryFlag)
	}
	if sc != nil {
		col.Schema, col.Table, col.OrgTable, col.OrgName = sc.db, sc.table, sc.orgTable, sc.Name
		if sc.notNull {
			col.Flags |= uint16(mysql.NotNullFlag)
		}
		if sc.col != nil {
			col.Flags |= sc.col.KeyFlags
		}
	}
	if t.IsBlob() || t.Tp == mysql.TypeJSON {
		col.Flags |= uint16(mysql.BlobFlag)
	}
	switch t.Tp {
	case mysql.TypeEnum, mysql.TypeSet:
		// Sent as CHAR with ENUM_FLAG/SET_FLAG, and the longest member (list) as the length.
		n := 0
		for _, e := range t.Elems {
			if t.Tp == mysql.TypeEnum {
				n = max(n, utf8.RuneCountInString(e))
			} else {
				n += utf8.RuneCountInString(e) + 1
			}
		}
		col.Length = uint32(n) * 4
		if t.Tp == mysql.TypeEnum {
			col.Flags |= uint16(mysql.EnumFlag)
		} else {
			col.Flags |= uint16(mysql.SetFlag)
		}
	case mysql.TypeJSON:
		col.Length = 1<<32 - 1
		col.Flags |= uint16(mysql.BlobFlag | mysql.BinaryFlag)
	}
	return col
}

// wireType maps a column type to the type code sent to clients.
func wireType(t types.ColType) byte {
	switch t.Tp {
	case mysql.TypeVarchar:
		return mysql.TypeVarString
	case mysql.TypeEnum, mysql.TypeSet:
		return mysql.TypeString
	case mysql.TypeNull:
		return mysql.TypeNull
	}
	return t.Tp
}

func collationID(t types.ColType) uint16 {
	if !expr.IsStringType(t) || t.Collation == "binary" || t.Collation == "" {
		if expr.IsStringType(t) && t.Collation == "" {
			return 255
		}
		return 63
	}
	if c, ok := types.LookupCollation(t.Collation); ok {
		return c.ID
	}
	return 255
}

func ColTypeOf(c proto.Column) types.ColType {
	t := types.ColType{Tp: c.Type, Len: int(c.Length), Unsigned: c.Flags&uint16(mysql.UnsignedFlag) != 0}
	if c.Decimals != 31 {
		t.Frac = int(c.Decimals)
	}
	if c.Charset == 63 {
		t.Collation = "binary"
	} else if coll, ok := types.CollationByID(c.Charset); ok {
		t.Collation = coll.Name
		t.Charset = coll.Charset
	}
	if t.Tp == mysql.TypeVarString && c.Charset != 63 {
		// The metadata length is in bytes: displayLength's width per character of the charset.
		t.Len = int(c.Length) / int(max(displayLength(types.ColType{Tp: mysql.TypeVarString, Len: 1, Charset: t.Charset, Collation: t.Collation}), 1))
	}
	return t
}

// fieldName is the column name MySQL shows for an unaliased select expression: its text.
func fieldName(f *ast.SelectField) string {
	if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return cn.Name.Name.O
	}
	if v, ok := f.Expr.(*driver.ValueExpr); ok {
		// A literal's column is named by its value: SELECT 'it''s' gives it's.
		if v.Datum.Kind() == driver.KindString || v.Datum.Kind() == driver.KindBytes {
			return v.GetString()
		}
	}
	if t := strings.TrimSpace(f.Text()); t != "" {
		return t
	}
	return exprText(f.Expr)
}

func exprText(n ast.Node) string {
	if t := n.Text(); t != "" {
		return t
	}
	if v, ok := n.(*driver.ValueExpr); ok {
		return types.ToString(DatumValue(&v.Datum))
	}
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return ""
	}
	return sb.String()
}

// collectAggs finds the aggregate calls of a query block (not inside subqueries).
// The same walk collects the block's window function calls (b.winNodes), so a block without any
// pays nothing more for them.
func collectAggs(sel *ast.SelectStmt) ([]*ast.AggregateFuncExpr, []*ast.WindowFuncExpr) {
	v := &aggCollector{}
	for i := range sel.WindowSpecs {
		sel.WindowSpecs[i].Accept(v)
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(v)
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	return v.aggs, v.wins
}

type aggCollector struct {
	aggs []*ast.AggregateFuncExpr
	wins []*ast.WindowFuncExpr
}

func (v *aggCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		return n, true
	case *ast.AggregateFuncExpr:
		v.aggs = append(v.aggs, x)
		return n, true
	case *ast.WindowFuncExpr:
		// Its arguments and window may hold aggregates of the block (SUM(SUM(x)) OVER ()).
		v.wins = append(v.wins, x)
	}
	return n, false
}

func (v *aggCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func containsAgg(n ast.ExprNode) bool {
	v := &aggCollector{}
	n.Accept(v)
	return len(v.aggs) > 0
}

// decimalPrecision is the number of decimal digits of an integer or DECIMAL type, as MySQL counts
// them for SUM and AVG: an integer type's largest value's digits (INT 10, BIGINT 19 or 20
// UNSIGNED), a DECIMAL's declared precision (10 when not given).
func decimalPrecision(t types.ColType) int {
	switch t.Tp {
	case mysql.TypeNewDecimal:
		if t.Len > 0 {
			return t.Len
		}
		return 10
	case mysql.TypeTiny:
		return 3
	case mysql.TypeShort:
		return 5
	case mysql.TypeInt24:
		return 8
	case mysql.TypeLong:
		return 10
	case mysql.TypeYear:
		return 4
	case mysql.TypeBit:
		return 20
	case mysql.TypeLonglong:
		if t.Unsigned {
			return 20
		}
	}
	return 19
}

func aggResultType(a exec.Agg) types.ColType {
	var at types.ColType
	if len(a.Args) > 0 {
		at = a.Args[0].Type()
	}
	switch a.Fn {
	case "count":
		return expr.TInt
	case "sum":
		// MySQL's Item_sum_sum: DECIMAL(precision + 22, scale), at most 65 digits.
		if expr.IsIntType(at) || at.Tp == mysql.TypeNewDecimal {
			t := expr.TDecimal
			t.Frac = max(at.Frac, 0)
			if expr.IsIntType(at) {
				t.Frac = 0
			}
			t.Len = min(decimalPrecision(at)+22, 65)
			return t
		}
		return expr.TDouble
	case "avg":
		// MySQL's Item_sum_avg: DECIMAL(precision + 4, scale + 4), at most 65 and 30 digits.
		if expr.IsIntType(at) || at.Tp == mysql.TypeNewDecimal {
			t := expr.TDecimal
			t.Frac = max(at.Frac, 0) + 4
			if expr.IsIntType(at) {
				t.Frac = 4
			}
			t.Frac = min(t.Frac, 30)
			t.Len = min(decimalPrecision(at)+4, 65)
			return t
		}
		return expr.TDouble
	case "min", "max":
		return at
	case "group_concat":
		t := expr.TString
		for _, e := range a.Args[:len(a.Args)-a.NOrder] {
			if et := e.Type(); et.Collation == "binary" && expr.IsStringType(et) {
				t = expr.TBytes
			}
		}
		t.Len = 1024
		return t
	case "json_arrayagg", "json_objectagg":
		return expr.TJSON
	case "bit_and", "bit_or", "bit_xor":
		return expr.TUint
	case "std", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp":
		return expr.TDouble
	}
	return at
}

// writtenColumns lists scope columns in the FROM clause's written order: order[level] is the
// written position of the level's FROM item (nil: levels are in written order).
func writtenColumns(sc *Scope, nLevels int, order []int) []int {
	var out []int
	for pos := 0; pos < nLevels; pos++ {
		lvl := pos
		if order != nil {
			lvl = slices.Index(order, pos)
		}
		for i, c := range sc.Cols {
			if c.level == lvl {
				out = append(out, i)
			}
		}
	}
	return out
}

// joinOrder picks a nested-loop order for a FROM list of inner joins: start from a table with a
// condition of its own (a constant filter), then repeatedly add a table that a condition connects to
// the tables already placed, so each new level is a lookup or a filtered scan instead of a cross
// product. It returns nil when the written order is kept (outer joins, USING, or no better order).
func joinOrder(items []fromItem, levels []plannedLevel) []int {
	n := len(items)
	for i, it := range items {
		// A table function that reads the levels before it (lateral) keeps its place.
		if it.left || len(it.using) > 0 || levels[i].Fn != nil && !levels[i].Fn.Const {
			return nil
		}
	}
	var conds []uint64
	for _, lp := range levels {
		for _, cj := range lp.conds {
			conds = append(conds, cj.refs)
		}
	}
	placed := uint64(0)
	var order []int
	selfFilter := func(i int) bool {
		for _, r := range conds {
			if r == 1<<uint(i) {
				return true
			}
		}
		return false
	}
	connected := func(i int) bool {
		bit := uint64(1) << uint(i)
		for _, r := range conds {
			if r&bit != 0 && r&placed != 0 && r&^(placed|bit) == 0 {
				return true
			}
		}
		return false
	}
	for len(order) < n {
		pick := -1
		for i := 0; i < n && pick < 0; i++ {
			if placed&(1<<uint(i)) == 0 && len(order) > 0 && connected(i) {
				pick = i
			}
		}
		if pick < 0 && len(order) == 0 {
			for i := 0; i < n && pick < 0; i++ {
				if selfFilter(i) {
					pick = i
				}
			}
		}
		for i := 0; i < n && pick < 0; i++ {
			if placed&(1<<uint(i)) == 0 {
				pick = i
			}
		}
		order = append(order, pick)
		placed |= 1 << uint(pick)
	}
	for i, o := range order {
		if i != o {
			return order
		}
	}
	return nil
}

// displayLength is the column-definition length MySQL sends: the display width of numbers and
// temporal types, and for strings the maximum length in bytes (characters times the charset's
// widest character).
func displayLength(t types.ColType) uint32 {
	width := uint32(4)
	switch t.Charset {
	case "latin1", "ascii", "binary":
		width = 1
	case "utf8mb3", "utf8":
		width = 3
	}
	if t.Collation == "binary" {
		width = 1
	}
	n := uint32(max(t.Len, 0))
	switch t.Tp {
	case mysql.TypeTiny:
		return pickLen(t.Unsigned, 3, 4)
	case mysql.TypeShort:
		return pickLen(t.Unsigned, 5, 6)
	case mysql.TypeInt24:
		return pickLen(t.Unsigned, 8, 9)
	case mysql.TypeLong:
		return pickLen(t.Unsigned, 10, 11)
	case mysql.TypeLonglong:
		return 20
	case mysql.TypeNewDecimal:
		if t.Len <= 0 {
			return n
		}
		l := n
		if t.Frac > 0 {
			l++
		}
		if !t.Unsigned {
			l++
		}
		return l
	case mysql.TypeFloat:
		if t.Len > 0 {
			return n
		}
		return 12
	case mysql.TypeDouble:
		if t.Len > 0 {
			return n
		}
		return 22
	case mysql.TypeYear:
		return 4
	case mysql.TypeDate, mysql.TypeNewDate:
		return 10
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		if t.Frac > 0 {
			return 20 + uint32(t.Frac)
		}
		return 19
	case mysql.TypeDuration:
		if t.Frac > 0 {
			return 11 + uint32(t.Frac)
		}
		return 10
	case mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if t.Len > 0 {
			return n * width
		}
		return uint32(min(uint64(types.TextLimit(t.Tp))*uint64(width), 1<<32-1))
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString:
		return n * width
	}
	return n
}

func pickLen(unsigned bool, u, s uint32) uint32 {
	if unsigned {
		return u
	}
	return s
}

// setSub makes a derived table (a subquery in FROM, or a view) the level's source and adds its
// visible columns to the scope under alias.
func setSub(lv *exec.Level, sc *Scope, sub *exec.Select, db, alias, orgTable string, li int) {
	lv.Sub = sub
	lv.Width = sub.NVisible
	for i := 0; i < sub.NVisible; i++ {
		c := sub.Cols[i]
		// A view's or derived table's column keeps the NOT NULL of its select-list column.
		sc.Cols = append(sc.Cols, ScopeCol{db: db, table: alias, orgTable: orgTable, Name: c.Name, T: ColTypeOf(c), level: li,
			notNull: c.Flags&uint16(mysql.NotNullFlag) != 0})
	}
}
